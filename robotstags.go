package robots

import (
	"hash/fnv"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/storage"
	whatwg "github.com/nlnwa/whatwg-url/url"

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
//     fetch a nofollow page's links on purpose. A stopped link leaves its
//     URL unvisited for Colly (see visits): linked from a page without
//     the directive, or given to Collector.Visit, it is fetched.
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

// maxForgotten bounds the visited marks a collector's visits forgets.
const maxForgotten = 100_000

// visits is the visited store the plugin puts in front of a collector's
// own when it is attached (Colly's public SetStorage). Colly marks a URL
// visited before any OnRequest callback runs, so a link the plugin stops
// as nofollow would stay "already visited"; visits forgets that mark, so
// that the URL is fetched when a page without the directive links it or
// when it is given to c.Visit. Everything else goes to the collector's
// store. A store set with SetStorage after Attach is used as it is: a
// nofollow stop then leaves its URL visited.
type visits struct {
	storage.Storage
	mu     sync.Mutex
	forgot map[uint64]struct{} // Colly's request hashes of the marks forgotten
}

// wrapVisits puts c's visited store behind a visits, keeping c's cookie
// jar (SetStorage makes a new one), and returns it; nil when c's store
// cannot be read. A clone of an attached collector shares its visits.
func wrapVisits(c *colly.Collector) *visits {
	s := collyStore(c)
	cl := collyClient(c)
	if s == nil || cl == nil {
		return nil
	}
	if v, ok := s.(*visits); ok {
		return v
	}
	v := &visits{Storage: s, forgot: map[uint64]struct{}{}}
	jar := cl.Jar
	if err := c.SetStorage(v); err != nil {
		return nil
	}
	c.SetCookieJar(jar)
	return v
}

// IsVisited is the collector's store's answer, false for a forgotten mark.
func (v *visits) IsVisited(id uint64) (bool, error) {
	v.mu.Lock()
	_, forgot := v.forgot[id]
	v.mu.Unlock()
	if forgot {
		return false, nil
	}
	return v.Storage.IsVisited(id)
}

// Visited marks id visited again.
func (v *visits) Visited(id uint64) error {
	v.mu.Lock()
	delete(v.forgot, id)
	v.mu.Unlock()
	return v.Storage.Visited(id)
}

// forget forgets the visited mark of r, a GET Colly marked before the
// plugin stopped it. A nil visits does nothing.
func (v *visits) forget(r *colly.Request) {
	if v == nil || r.Method != http.MethodGet {
		return
	}
	id := visitHash(r.URL.String())
	v.mu.Lock()
	if len(v.forgot) < maxForgotten {
		v.forgot[id] = struct{}{}
	}
	v.mu.Unlock()
}

// collyURLs parses URLs as Colly does before it hashes them.
var collyURLs = whatwg.NewParser(whatwg.WithPercentEncodeSinglePercentSign())

// visitHash is the key under which Colly marks a GET of u visited: FNV-1a
// of the URL as its WHATWG parser writes it.
func visitHash(u string) uint64 {
	if p, err := collyURLs.Parse(u); err == nil {
		u = p.String()
	}
	h := fnv.New64a()
	h.Write([]byte(u))
	return h.Sum64()
}
