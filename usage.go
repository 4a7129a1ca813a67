package robots

import (
	"context"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/internal/robotstag"
	"github.com/politecrawl/robots/policy"
)

// UsageKey prefixes the key of a response's [ResponseUsage] in its
// request's Context, put there by the plugin when [WithPurposes] is set:
// the key is UsageKey and the request's ID, because the requests a page
// makes with Request.Visit share its Context. Read it with [UsageOf].
const UsageKey = "robots.usage#"

func usageKey(r *colly.Request) string { return UsageKey + strconv.FormatUint(uint64(r.ID), 10) }

// ResponseUsage is the usage preference of a fetched response.
type ResponseUsage struct {
	// Usage is robots.txt's preference for the URL combined with the
	// response's Content-Usage header, per category the most restrictive,
	// and with what a noai directive implies: train-ai=n and ai-input=n.
	// noai counts from the response's X-Robots-Tag header and from a
	// robots meta element of its HTML (<meta name="robots"> or the
	// crawler's product token), for the crawler; noimageai counts as noai
	// on an image response.
	Usage dialect.Usage
	// Refused says why the content may not be used for a declared purpose
	// ("train-ai=n: Content-Usage header"), "" when no declared purpose is
	// refused.
	Refused string
	// NoImageAI is true when the response's X-Robots-Tag, or a robots meta
	// element of its HTML for the crawler, says noimageai: the images the
	// page shows may not be used for AI. It refuses the response itself
	// (as noai does) only when the response is an image.
	NoImageAI bool
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

// refuses returns the first declared purpose p refuses, and false when it
// refuses none.
func (p *Plugin) refuses(u dialect.Usage) (dialect.Category, bool) {
	for _, c := range p.cfg.purposes {
		switch u.Pref(c) {
		case dialect.PrefDisallow:
			return c, true
		case dialect.PrefUnknown:
			if p.cfg.strictUsage {
				return c, true
			}
		}
	}
	return 0, false
}

// usageStop returns the stop of u when robots.txt refuses a declared
// purpose for it (v, u's crawl verdict, allows it).
func (p *Plugin) usageStop(pol *policy.Policy, u *url.URL, v policy.Verdict) (Block, bool) {
	if len(p.cfg.purposes) == 0 || !v.Allowed {
		return Block{}, false
	}
	uv := pol.Usage(u)
	c, refused := p.refuses(uv.Usage)
	if !refused {
		return Block{}, false
	}
	reason := c.String() + "=" + uv.Usage.Pref(c).String()
	if uv.Usage.Pref(c) == dialect.PrefUnknown {
		reason += " (WithStrictPurposes)"
	}
	return Block{Kind: UsageDisallowed, Verdict: v, Reason: reason + ": " + uv.Explain(c)}, true
}

// aiRefused is the usage preference noai states: no AI use, neither
// training nor input at answer time.
var aiRefused = dialect.Usage(0).With(dialect.TrainAI, dialect.PrefDisallow).With(dialect.AIInput, dialect.PrefDisallow)

// markUsage, from the OnResponse hook with WithPurposes, puts the
// response's usage preference in its Context, counts a refused one and
// calls the WithOnUsageRefused function. tags are the response's robots
// directives, header those of its X-Robots-Tag.
func (p *Plugin) markUsage(r *colly.Response, tags, header robotstag.Directives) {
	u := r.Request.URL
	var uv policy.UsageVerdict
	pol, err := p.resolver().Policy(context.Background(), u)
	if err == nil {
		uv = pol.Usage(u)
	}
	ru := ResponseUsage{Usage: uv.Usage, NoImageAI: tags&robotstag.NoImageAI != 0}
	var fromHeader dialect.Usage // the Content-Usage header's alone
	if r.Headers != nil {
		fromHeader = policy.UsageVerdict{}.WithHeader(*r.Headers)
		ru.Usage = uv.Usage.Combine(fromHeader)
	}
	noAI := tags & robotstag.NoAI
	if noAI == 0 && ru.NoImageAI && isImage(r.Headers) {
		noAI = robotstag.NoImageAI
	}
	if noAI != 0 {
		ru.Usage = ru.Usage.Combine(aiRefused)
	}
	if c, refused := p.refuses(ru.Usage); refused {
		pref := ru.Usage.Pref(c)
		ru.Refused = c.String() + "=" + pref.String() + ": "
		switch {
		case pref == dialect.PrefUnknown:
			ru.Refused += "nothing stated (WithStrictPurposes)"
		case uv.Usage.Pref(c) == pref:
			ru.Refused += "robots.txt, " + uv.Explain(c)
		case fromHeader.Pref(c) == pref:
			ru.Refused += "Content-Usage header"
		case header&noAI != 0:
			ru.Refused += "X-Robots-Tag " + noAI.String()
		default:
			ru.Refused += "meta robots " + noAI.String()
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

// isImage reports whether h's Content-Type is image/*.
func isImage(h *http.Header) bool {
	if h == nil {
		return false
	}
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && strings.HasPrefix(mt, "image/")
}

// usage stops a URL whose robots.txt refuses a declared purpose.
func (f *flow) usage() bool {
	if b, refused := f.p.usageStop(f.pol, f.r.URL, f.v); refused {
		return f.stop(b)
	}
	return true
}
