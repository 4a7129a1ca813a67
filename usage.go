package robots

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
)

// UsageKey prefixes the key of a response's [ResponseUsage] in its
// request's Context, put there by the plugin when [WithPurposes] is set:
// the key is UsageKey and the request's ID, because the requests a page
// makes with Request.Visit share its Context. Read it with [UsageOf].
const UsageKey = "robots.usage#"

func usageKey(r *colly.Request) string { return UsageKey + strconv.FormatUint(uint64(r.ID), 10) }

// ResponseUsage is what a site states about the use of a fetched
// response's content, for the purposes declared with [WithPurposes].
type ResponseUsage struct {
	// Usage is the preference in force per purpose, the most restrictive
	// of the Signals: robots.txt's for the URL, tdmrep.json's (replaced by
	// a tdm-reservation header or meta element of the response), the RSL
	// licences robots.txt and the response point to, the response's
	// Content-Usage header, and what a noai directive implies (train-ai=n
	// and ai-input=n) from its Robots-Tag or X-Robots-Tag header or a
	// robots meta element of its HTML for the crawler; noimageai counts as
	// noai on an image response. Its use level is the lowest stated
	// (robots.txt's Content-Signal line, the Content-Signal header or meta
	// element).
	Usage dialect.Usage
	// Refused says why the content may not be used for a declared purpose
	// or at the declared use level, the deciding signal ("train-ai=n:
	// Content-Usage header: train-ai=n", "use=reference: robots.txt line 2:
	// Content-Signal: use=reference"), "" when nothing declared is refused.
	Refused string
	// NoImageAI is true when the response's robots directives for the
	// crawler say noimageai: the images the page shows may not be used for
	// AI. It refuses the response itself (as noai does) only when the
	// response is an image.
	NoImageAI bool
	// Signals are every statement seen, each with its carrier and value:
	// the record an operator keeps per fetched URL.
	Signals []policy.Signal
}

// UsageOf returns the [ResponseUsage] the plugin put in r's Context, and
// false when there is none (no WithPurposes, or the request got no
// response).
func UsageOf(r *colly.Response) (ResponseUsage, bool) {
	if r == nil || r.Ctx == nil || r.Request == nil {
		return ResponseUsage{}, false
	}
	u, ok := r.Ctx.GetAny(usageKey(r.Request)).(ResponseUsage)
	return u, ok
}

// refusal returns why rep refuses a declared purpose or the declared use
// level, "" when it refuses neither.
func (p *core) refusal(rep policy.UsageReport) string {
	s, refused := rep.Refusal(p.cfg.purposes, p.cfg.useLevel, p.cfg.strictUsage)
	switch {
	case !refused:
		return ""
	case s.Carrier == "":
		return s.String() + " (WithStrictPurposes)"
	}
	return s.String()
}

// usageStop returns the stop of u when what its site states before the
// fetch (robots.txt, tdmrep.json, robots.txt's licences) refuses a
// declared purpose (v, u's crawl verdict, allows it).
func (p *core) usageStop(ctx context.Context, u *url.URL, v policy.Verdict) (Block, bool) {
	if !p.cfg.declaresUsage() || !v.Allowed {
		return Block{}, false
	}
	rep, err := p.resolver().Usage(ctx, u, p.cfg.purposes...)
	if err != nil {
		return Block{Kind: Canceled, Verdict: v, Reason: "usage terms: " + err.Error()}, true
	}
	if why := p.refusal(rep); why != "" {
		return Block{Kind: UsageDisallowed, Verdict: v, Reason: why}, true
	}
	return Block{}, false
}

// attachUsage registers the usage feature's OnResponse callback on c: see
// markUsage.
func (p *core) attachUsage(c *colly.Collector) {
	c.OnResponse(func(r *colly.Response) {
		if responded(r) {
			p.markUsage(collectorContext(c), r)
		}
	})
}

// markUsage, from the OnResponse hook with WithPurposes, puts the
// response's usage report in its Context, counts a refused one and calls
// the WithOnUsageRefused function. ctx is the collector's: the licences
// the response points to are fetched under it. A report that could not
// be read whole (ctx ended, robots.txt could not be resolved) refuses the
// response: a licence not read must not pass for a permission.
func (p *core) markUsage(ctx context.Context, r *colly.Response) {
	u := r.Request.URL
	var h http.Header
	if r.Headers != nil {
		h = *r.Headers
	}
	rep, err := p.resolver().ResponseUsage(ctx, u, h, r.Body, p.cfg.purposes...)
	ru := ResponseUsage{Usage: rep.Usage, Refused: p.refusal(rep), NoImageAI: rep.NoImageAI, Signals: rep.Signals}
	if err != nil {
		ru.Refused = "usage terms not read: " + err.Error()
		if ctx.Err() == nil {
			p.log.Warn("robots: the response's usage terms could not be read", slog.String("url", u.String()), slog.Any("error", err))
		}
	}
	r.Ctx.Put(usageKey(r.Request), ru)
	if ru.Refused == "" {
		return
	}
	authority, _ := policy.Authority(u)
	p.stats.record(authority, HostStats{UsageMarked: 1})
	if fn := p.cfg.onUsage; fn != nil {
		fn(r, ru)
	}
}
