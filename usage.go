package robots

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/usage"
)

// usageKey is the key of a request's usage mark in its Context: with the
// request's ID, because the requests a page makes with Request.Visit share
// its Context.
func usageKey(r *colly.Request) string { return "robots.usage#" + strconv.FormatUint(uint64(r.ID), 10) }

// ResponseUsage is what a site states about the use of a fetched
// response's content, for the purposes declared with [WithUsage]: the
// report of [usage.CheckResponse] (what was known before the fetch,
// combined with the response's headers and meta elements; noimageai
// counts as noai on an image response) and the verdict. It marshals to
// JSON with names (see docs/usage.md).
type ResponseUsage struct {
	usage.Report
	// Refused says why the content may not be used for a declared purpose
	// or at the declared use level, the deciding signal ("train-ai=n:
	// Content-Usage header: train-ai=n", "use=reference: robots.txt line 2:
	// Content-Signal: use=reference"), "" when nothing declared is refused.
	Refused string `json:"refused,omitempty"`
}

// usageMark is a request's usage, put in its Context before the fetch and
// read once, when the response is first asked about (by the plugin's
// OnResponse hook or a user's call of UsageOf, whichever comes first).
type usageMark struct {
	p    *core
	ctx  context.Context
	once sync.Once
	ru   ResponseUsage
}

func (m *usageMark) get(r *colly.Response) ResponseUsage {
	m.once.Do(func() { m.ru = m.p.responseUsage(m.ctx, r) })
	return m.ru
}

// UsageOf returns the [ResponseUsage] of r, and false when there is none
// (no WithUsage, or the request got no response). It may be called from
// any callback, registered before or after the plugin was attached.
func UsageOf(r *colly.Response) (ResponseUsage, bool) {
	if r == nil || r.Ctx == nil || r.Request == nil {
		return ResponseUsage{}, false
	}
	m, ok := r.Ctx.GetAny(usageKey(r.Request)).(*usageMark)
	if !ok {
		return ResponseUsage{}, false
	}
	return m.get(r), true
}

// refusal returns why rep refuses a declared purpose or the declared use
// level, "" when it refuses neither.
func (p *core) refusal(rep usage.Report) string {
	s, refused := rep.Refusal(p.cfg.purposes, p.cfg.useLevel, p.cfg.strictUsage)
	switch {
	case !refused:
		return ""
	case s.Carrier == usage.NoCarrier:
		return s.String() + " (WithUsage Strict)"
	}
	return s.String()
}

// usageStop returns the stop of u when what its site states before the
// fetch (robots.txt, tdmrep.json, robots.txt's licences) refuses a
// declared purpose (v, u's crawl verdict, allows it). With Reach, usage
// stops nothing: the response is marked refused after the fetch, where
// the same signals count.
func (p *core) usageStop(ctx context.Context, u *url.URL, v policy.Verdict) (Block, bool) {
	if !p.cfg.declaresUsage() || !v.Allowed || p.cfg.reach {
		return Block{}, false
	}
	rep, err := p.cfg.who.Check(ctx, p.resolver(), u, p.cfg.purposes...)
	if err != nil {
		return Block{Kind: Canceled, Verdict: v, Reason: "usage terms: " + err.Error()}, true
	}
	if why := p.refusal(rep); why != "" {
		return Block{Kind: UsageDisallowed, Verdict: v, Reason: why, Usage: &rep}, true
	}
	return Block{}, false
}

// responseUsage reads what the response r states. ctx is the collector's:
// the licences the response points to are fetched under it. A report that
// could not be read whole (ctx ended, robots.txt could not be resolved)
// refuses the response: a licence not read must not pass for a permission.
func (p *core) responseUsage(ctx context.Context, r *colly.Response) ResponseUsage {
	u := r.Request.URL
	var h http.Header
	if r.Headers != nil {
		h = *r.Headers
	}
	rep, err := p.cfg.who.CheckResponse(ctx, p.resolver(), u, h, r.Body, p.cfg.purposes...)
	ru := ResponseUsage{Report: rep, Refused: p.refusal(rep)}
	if err != nil {
		ru.Refused = "usage terms not read: " + err.Error()
		if ctx.Err() == nil {
			p.log.Warn("robots: the response's usage terms could not be read", slog.String("url", u.String()), slog.Any("error", err))
		}
	}
	return ru
}

// attachUsage registers the usage feature's OnResponse callback on c: a
// refused response is counted, and the onRefused function called.
func (p *core) attachUsage(c *colly.Collector) {
	c.OnResponse(func(r *colly.Response) {
		if !responded(r) {
			return
		}
		ru, ok := UsageOf(r)
		if !ok || ru.Refused == "" {
			return
		}
		authority, _ := policy.Authority(r.Request.URL)
		p.stats.record(authority, HostStats{UsageMarked: 1})
		if fn := p.cfg.onUsage; fn != nil {
			fn(r, ru)
		}
	})
}

// leaveUsageMark puts the mark UsageOf reads in the Context of r, a
// request the decision path let through; ctx is its collector's.
func (p *core) leaveUsageMark(r *colly.Request, ctx context.Context) {
	if p.cfg.declaresUsage() && r.Ctx != nil {
		r.Ctx.Put(usageKey(r), &usageMark{p: p, ctx: ctx})
	}
}
