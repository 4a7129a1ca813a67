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

// onNofollowResponse marks the page of r when its robots directives say
// nofollow for the crawler: in a Robots-Tag or X-Robots-Tag field, or in a
// meta element of an HTML body ("meta-robots").
func (p *core) onNofollowResponse(r *colly.Response) {
	if !responded(r) {
		return
	}
	var h http.Header
	if r.Headers != nil {
		h = *r.Headers
	}
	if c, ok := usage.Nofollow(h, r.Body, p.agents()); ok {
		source := c.String()
		if c == usage.MetaElement {
			source = "meta-robots"
		}
		markNofollow(r, source)
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

// nofollowLink stops a link of a nofollow page, a request whose Context
// carries the mark of a nofollow page at a lower depth, leaving its URL
// unvisited for Colly (see visits).
func (f *flow) nofollowLink() outcome {
	if f.r.Ctx == nil || f.r.Ctx.Get(nofollowKey) == "" {
		return goOn // unmarked, as most requests are: no Atoi error to allocate
	}
	depth, rest, _ := strings.Cut(f.r.Ctx.Get(nofollowKey), " ")
	source, page, _ := strings.Cut(rest, " ")
	if d, err := strconv.Atoi(depth); err != nil || f.r.Depth <= d {
		return goOn
	}
	f.stop(Block{Kind: Nofollow, Reason: "a link of " + page + ", whose " + source + " says nofollow"})
	if !f.c.AllowURLRevisit {
		f.cs.visits.forget(f.r)
	}
	return halted
}
