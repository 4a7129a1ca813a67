package robots

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/usage"
)

// nofollowKey is the Context key of a nofollow page's mark: "DEPTH SOURCE
// URL", the page's depth, the directive's source ("X-Robots-Tag" or
// "meta-robots") and its URL. A string, so that it survives a queue
// storage's serialisation of the Context.
const nofollowKey = "robots.nofollow"

// attachNofollow registers the nofollow feature's OnResponse callback on
// c: the Context of a page whose robots directives say nofollow for the
// crawler is marked, and the plugin's OnRequest hook stops the links made
// from it (flow.nofollowLink).
func (p *core) attachNofollow(c *colly.Collector) { c.OnResponse(p.onNofollowResponse) }

func (p *core) onNofollowResponse(r *colly.Response) {
	if responded(r) {
		if source := p.nofollowSource(r); source != "" {
			markNofollow(r, source)
		}
	}
}

// nofollowSource returns the carrier of the nofollow (or none) r states
// for the crawler: "Robots-Tag", "X-Robots-Tag" or "meta-robots" (a meta
// element of an HTML body), "" when it states none.
func (p *core) nofollowSource(r *colly.Response) string {
	var h http.Header
	if r.Headers != nil {
		h = *r.Headers
	}
	c, ok := usage.Nofollow(h, r.Body, p.agents())
	switch {
	case !ok:
		return ""
	case c == usage.MetaElement:
		return "meta-robots"
	}
	return c.String()
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

// nofollowLink stops a link of a nofollow page, leaving its URL unvisited for
// Colly (see visits).
func (f *flow) nofollowLink() outcome {
	b, stop := nofollowStop(f.r)
	if !stop {
		return goOn
	}
	f.stop(b)
	if !f.c.AllowURLRevisit {
		f.cs.visits.forget(f.r)
	}
	return halted
}
