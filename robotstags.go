package robots

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/internal/robotstag"
)

// The robots directives of a response (X-Robots-Tag, meta robots), read by
// the plugin's OnResponse hook for the crawler's product tokens:
//
//   - nofollow (or none): the links followed from the page with Colly's
//     Request.Visit are stopped as [Nofollow]. Request.Visit keeps the
//     page's Context, so the hook gives the page a Context of its own, a
//     copy of the one it had with a mark added, and its Request and
//     Response carry it from then on: the callbacks that run after the
//     hook (OnHTML, OnXML, OnScraped, OnResponse callbacks registered after
//     the plugin) see the copy, and a value they Put there is not seen by
//     the other requests that shared the page's Context. A request in a
//     marked Context is stopped when its depth is above the page's (a link
//     of the page, or of a page fetched from the page despite the mark);
//     the page's own Request.Retry is not. Collector.Visit starts a new
//     Context: a URL given to it is not concerned, which is the way to
//     fetch a nofollow page's links on purpose.
//   - noai and noimageai (with [WithPurposes]): see [ResponseUsage].

// nofollowKey is the Context key of a nofollow page's mark: "DEPTH SOURCE
// URL", the page's depth, the directive's source ("X-Robots-Tag" or
// "meta-robots") and its URL. A string, so that it survives a queue
// storage's serialisation of the Context.
const nofollowKey = "robots.nofollow"

// responseTags returns the directives r states for the crawler, and which
// of them its X-Robots-Tag header states (the others come from meta
// elements of an HTML body).
func (p *Plugin) responseTags(r *colly.Response) (all, header robotstag.Directives) {
	agents := p.agents()
	if r.Headers != nil {
		header = robotstag.Header(r.Headers.Values("X-Robots-Tag"), agents)
	}
	all = header
	if len(r.Body) > 0 && isHTML(r.Headers) {
		all |= robotstag.Meta(r.Body, agents)
	}
	return all, header
}

// isHTML reports whether h's Content-Type holds "html" in any case, the
// test Colly applies before it calls OnHTML callbacks.
func isHTML(h *http.Header) bool {
	if h == nil {
		return false
	}
	ct := h.Get("Content-Type")
	for i := 0; i+4 <= len(ct); i++ {
		if strings.EqualFold(ct[i:i+4], "html") {
			return true
		}
	}
	return false
}

// isImage reports whether h's Content-Type is image/*.
func isImage(h *http.Header) bool {
	if h == nil {
		return false
	}
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && strings.HasPrefix(mt, "image/")
}

// onResponse is the plugin's OnResponse hook: the response's robots
// directives (nofollow, and the usage mark with WithPurposes).
func (p *Plugin) onResponse(r *colly.Response) {
	if r.Request == nil || r.Request.URL == nil || r.Ctx == nil {
		return
	}
	tags, header := p.responseTags(r)
	if tags&robotstag.NoFollow != 0 {
		source := "meta-robots"
		if header&robotstag.NoFollow != 0 {
			source = "X-Robots-Tag"
		}
		markNofollow(r, source)
	}
	if len(p.cfg.purposes) > 0 {
		p.markUsage(r, tags, header)
	}
}

// markNofollow gives the page of r a copy of its Context with the
// nofollow mark.
func markNofollow(r *colly.Response, source string) {
	ctx := colly.NewContext()
	r.Ctx.ForEach(func(k string, v any) any {
		ctx.Put(k, v)
		return nil
	})
	ctx.Put(nofollowKey, strconv.Itoa(r.Request.Depth)+" "+source+" "+r.Request.URL.String())
	r.Ctx = ctx
	r.Request.Ctx = ctx
}

// nofollowStop returns the stop of r when its Context carries the mark of
// a nofollow page at a lower depth.
func nofollowStop(r *colly.Request) (Block, bool) {
	if r.Ctx == nil {
		return Block{}, false
	}
	mark := r.Ctx.Get(nofollowKey)
	if mark == "" {
		return Block{}, false
	}
	depth, rest, _ := strings.Cut(mark, " ")
	source, page, _ := strings.Cut(rest, " ")
	if d, err := strconv.Atoi(depth); err != nil || r.Depth <= d {
		return Block{}, false
	}
	return Block{Kind: Nofollow, Reason: "a link of " + page + ", whose " + source + " says nofollow"}, true
}
