package robots

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/testkit/testutil"
	"github.com/politecrawl/robots/usage"
)

// nofollowSite: pages whose X-Robots-Tag or robots meta element says
// nofollow (or none) for the crawler (ExampleBot), for another crawler, or
// nothing; each links to a page of its own below it.
func nofollowSite() map[string]*testutil.Site {
	html := func(w http.ResponseWriter, head string, links ...string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><head>%s</head><body>\n", head)
		for _, l := range links {
			fmt.Fprintf(w, "<a href=%q>x</a>\n", l)
		}
	}
	return map[string]*testutil.Site{"nf.test": {
		Robots: "User-agent: *\nAllow: /\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			switch r.URL.Path {
			case "/":
				html(w, "", "/xrt/", "/rt/", "/meta/", "/other/", "/mine/", "/ok/", "/json")
			case "/rt/":
				w.Header().Set("Robots-Tag", "otherbot;noindex, ExampleBot;nofollow")
				html(w, "", "/rt/a")
			case "/xrt/":
				w.Header().Set("X-Robots-Tag", "nofollow")
				html(w, "", "/xrt/a", "/xrt/b")
			case "/meta/":
				html(w, `<meta charset="utf-8"><META name="Robots" content="noindex, nofollow">`, "/meta/a")
			case "/other/": // for another crawler: followed
				w.Header().Set("X-Robots-Tag", "otherbot: none")
				html(w, `<meta name="otherbot" content="nofollow">`, "/other/a")
			case "/mine/":
				w.Header().Add("X-Robots-Tag", "otherbot: noindex")
				w.Header().Add("X-Robots-Tag", "noarchive, examplebot: none")
				html(w, "", "/mine/a")
			case "/ok/":
				html(w, `<meta name="robots" content="index, follow">`, "/ok/a")
			case "/json": // not HTML: its links are followed from an OnResponse callback
				w.Header().Set("X-Robots-Tag", "nofollow")
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"next": "/json/a"}`)
			default:
				html(w, "")
			}
			return true
		}}}
}

// The links followed with Request.Visit from a page whose X-Robots-Tag
// or robots meta element says nofollow or none for the crawler never reach
// the server, each reported once as a Nofollow stop (OnError with an error
// matching ErrBlocked, WithOnBlocked with its request, the counters); the
// directives of another crawler change nothing; sibling pages that share
// the Context are not concerned; the page's Context values stay readable;
// Collector.Visit of a nofollow page's link fetches it. Sync and Async.
func TestPluginNofollow(t *testing.T) {
	stopped := map[string]string{
		"/xrt/a":  "a link of http://nf.test/xrt/, whose X-Robots-Tag says nofollow",
		"/xrt/b":  "a link of http://nf.test/xrt/, whose X-Robots-Tag says nofollow",
		"/meta/a": "a link of http://nf.test/meta/, whose meta-robots says nofollow",
		"/rt/a":   "a link of http://nf.test/rt/, whose Robots-Tag says nofollow",
		"/mine/a": "a link of http://nf.test/mine/, whose X-Robots-Tag says nofollow",
		"/json/a": "a link of http://nf.test/json, whose X-Robots-Tag says nofollow",
	}
	fetched := []string{"/", "/json", "/meta/", "/mine/", "/ok/", "/ok/a", "/other/", "/other/a", "/rt/", "/xrt/", "/xrt/by-collector"}
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			f := testutil.NewFarm(t, nofollowSite())
			var blocks blockLog
			p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add))
			c := newCollector(async, p.opt(t))
			c.AllowURLRevisit = false
			var (
				mu      sync.Mutex
				errs    = map[string][]string{}
				noValue []string
			)
			c.OnRequest(func(r *colly.Request) {
				if r.Depth == 1 {
					r.Ctx.Put("root", "kept")
				}
			})
			c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
			c.OnResponse(func(r *colly.Response) {
				if r.Request.URL.Path == "/json" {
					_ = r.Request.Visit("/json/a")
				}
			})
			c.OnScraped(func(r *colly.Response) {
				if r.Request.URL.Path == "/xrt/" {
					_ = c.Visit(r.Request.AbsoluteURL("/xrt/by-collector")) // a new Context
				}
				if r.Ctx.Get("root") != "kept" && r.Request.URL.Path != "/xrt/by-collector" {
					mu.Lock()
					noValue = append(noValue, r.Request.URL.Path)
					mu.Unlock()
				}
			})
			c.OnError(func(r *colly.Response, err error) {
				mu.Lock()
				defer mu.Unlock()
				errs[r.Request.URL.Path] = append(errs[r.Request.URL.Path], err.Error())
				if !errors.Is(err, ErrBlocked) || errors.Is(err, colly.ErrRobotsTxtBlocked) {
					t.Errorf("%s: %v: matches ErrBlocked %v, colly.ErrRobotsTxtBlocked %v", r.Request.URL, err,
						errors.Is(err, ErrBlocked), errors.Is(err, colly.ErrRobotsTxtBlocked))
				}
			})
			returnsWithin(t, 30*time.Second, "the crawl", func() {
				if err := c.Visit("http://nf.test/"); err != nil {
					t.Error(err)
				}
				c.Wait()
			})

			got := f.Paths("nf.test")
			slices.Sort(got)
			if !slices.Equal(got, fetched) {
				t.Errorf("the server saw %v, want %v", got, fetched)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(noValue) > 0 {
				t.Errorf("pages that lost the Context value put before the plugin's hook: %v", noValue)
			}
			for path, reason := range stopped {
				if e := errs[path]; len(e) != 1 || !strings.Contains(e[0], "robots: nofollow: "+reason) {
					t.Errorf("%s: OnError got %q, want once %q", path, e, reason)
				}
			}
			if len(errs) != len(stopped) {
				t.Errorf("OnError got %v, want only %v", errs, stopped)
			}
			bs := blocks.all()
			for _, b := range bs {
				if b.Kind != Nofollow || b.Request == nil || b.Reason != stopped[b.Request.URL.Path] || b.Authority != "http://nf.test" {
					t.Errorf("block %+v", b)
				}
			}
			if len(bs) != len(stopped) {
				t.Errorf("%d blocks, want %d", len(bs), len(stopped))
			}
			if tot := p.Totals(); tot.Nofollow != int64(len(stopped)) || tot.Allowed != int64(len(fetched)) {
				t.Errorf("Totals: Nofollow %d, Allowed %d; want %d, %d", tot.Nofollow, tot.Allowed, len(stopped), len(fetched))
			}
		})
	}
}

// A page's Request.Retry is not a link of the page: a nofollow page
// answered 500 and retried by a callback is fetched again.
func TestPluginNofollowRetry(t *testing.T) {
	var answers int
	f := testutil.NewFarm(t, map[string]*testutil.Site{"nf.test": {
		Robots: "User-agent: *\nAllow: /\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			answers++
			w.Header().Set("X-Robots-Tag", "none")
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<p>answer %d</p>", answers)
			return true
		}}})
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0))
	c := newCollector(false, p.opt(t))
	retried := false
	c.OnScraped(func(r *colly.Response) {
		if !retried {
			retried = true
			if err := r.Request.Retry(); err != nil {
				t.Errorf("Retry: %v", err)
			}
		}
	})
	if err := c.Visit("http://nf.test/page"); err != nil {
		t.Fatal(err)
	}
	if got := f.Paths("nf.test"); !slices.Equal(got, []string{"/page", "/page"}) {
		t.Errorf("the server saw %v, want /page twice", got)
	}
	if n := p.Totals().Nofollow; n != 0 {
		t.Errorf("%d nofollow stops, want 0", n)
	}
}

// With WithUsage, noai in the X-Robots-Tag header or a robots meta
// element for the crawler refuses train-ai (and ai-input) on the response,
// with its source; noimageai refuses an image and flags a page
// (ResponseUsage.NoImageAI); another crawler's noai changes nothing.
func TestPluginRobotsTagsUsage(t *testing.T) {
	type mark struct {
		refused   string
		aiInput   dialect.Pref
		noImageAI bool
	}
	want := map[string]mark{
		"/":               {"", dialect.PrefUnknown, false},
		"/noai":           {"train-ai=n: X-Robots-Tag header: noai", dialect.PrefDisallow, false},
		"/meta-noai":      {`train-ai=n: meta <meta name="ExampleBot">: noai`, dialect.PrefDisallow, false},
		"/img.png":        {"train-ai=n: X-Robots-Tag header: noimageai", dialect.PrefDisallow, true},
		"/page-noimageai": {"", dialect.PrefUnknown, true},
		"/other-noai":     {"", dialect.PrefUnknown, false},
		"/both":           {"train-ai=n: Content-Usage header: train-ai=n", dialect.PrefDisallow, false},
	}
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			f := testutil.NewFarm(t, map[string]*testutil.Site{"ai.test": {
				Robots: "User-agent: *\nAllow: /\n",
				Handle: func(w http.ResponseWriter, r *http.Request) bool {
					h := w.Header()
					h.Set("Content-Type", "text/html")
					head := ""
					switch r.URL.Path {
					case "/":
						for p := range want {
							fmt.Fprintf(w, "<a href=%q>x</a>\n", p)
						}
						return true
					case "/noai":
						h.Set("X-Robots-Tag", "noai")
					case "/meta-noai":
						head = `<meta name="ExampleBot" content="noai">`
					case "/img.png":
						h.Set("Content-Type", "image/png")
						h.Set("X-Robots-Tag", "noimageai")
					case "/page-noimageai":
						head = `<meta name="robots" content="noimageai">`
					case "/other-noai":
						h.Set("X-Robots-Tag", "otherbot: noai")
						head = `<meta name="otherbot" content="noai">`
					case "/both":
						h.Set("Content-Usage", "train-ai=n")
						h.Set("X-Robots-Tag", "noai")
					}
					fmt.Fprintf(w, "<html><head>%s</head><body>x", head)
					return true
				}}})
			p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithUsage(usage.Config{Purposes: []string{"train-ai"}}))
			c := newCollector(async, p.opt(t))
			c.AllowURLRevisit = false
			c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
			var mu sync.Mutex
			got := map[string]mark{}
			c.OnScraped(func(r *colly.Response) {
				u, ok := UsageOf(r)
				if !ok {
					t.Errorf("%s: no usage mark", r.Request.URL)
				}
				mu.Lock()
				got[r.Request.URL.Path] = mark{u.Refused, u.Usage.Pref(dialect.AIInput), u.NoImageAI}
				mu.Unlock()
			})
			returnsWithin(t, 30*time.Second, "the crawl", func() {
				if err := c.Visit("http://ai.test/"); err != nil {
					t.Error(err)
				}
				c.Wait()
			})
			mu.Lock()
			defer mu.Unlock()
			for path, w := range want {
				if got[path] != w {
					t.Errorf("%s: mark %+v, want %+v", path, got[path], w)
				}
			}
			if len(got) != len(want) {
				t.Errorf("marks %v, want %v", got, want)
			}
			if n := p.Totals().UsageMarked; n != 4 {
				t.Errorf("UsageMarked %d, want 4", n)
			}
		})
	}
}
