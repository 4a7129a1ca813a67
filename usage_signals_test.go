package robots

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/testkit/testutil"
	"github.com/politecrawl/robots/usage"
)

const tdmPath = "/.well-known/tdmrep.json"

// tdmSite reserves TDM rights on /reserved/ in tdmrep.json; its pages
// under /lic/ point with a Link header to a licence that prohibits
// ai-train; /hdr/ reserves them with a tdm-reservation header.
func tdmSite() map[string]*testutil.Site {
	return map[string]*testutil.Site{"tdm.test": {
		Robots: "User-agent: *\nAllow: /\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			switch {
			case r.URL.Path == tdmPath:
				fmt.Fprint(w, `[{"location": "/reserved/", "tdm-reservation": 1}]`)
			case r.URL.Path == "/lic.xml":
				fmt.Fprint(w, `<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license>`+
					`<prohibits type="usage">ai-train</prohibits></license></content></rsl>`)
			case strings.HasPrefix(r.URL.Path, "/lic/"):
				w.Header().Set("Link", `</lic.xml>; rel="license"; type="application/rsl+xml"`)
				return false
			case strings.HasPrefix(r.URL.Path, "/hdr/"):
				w.Header().Set("tdm-reservation", "1")
				return false
			default:
				return false
			}
			return true
		}}}
}

// With a declared purpose, tdmrep.json is fetched once and a URL it
// reserves is stopped before the fetch, with the rule as its reason; a
// licence a response points to is fetched once and refuses the content
// after the fetch, with its URL as evidence, and so does a
// tdm-reservation header. Without a
// declared purpose, neither file is asked for.
func TestPluginUsageSignals(t *testing.T) {
	pages := []string{"/reserved/a", "/lic/a", "/lic/b", "/open"}
	for _, purposes := range [][]string{{"train-ai"}, nil} {
		t.Run(fmt.Sprint(purposes), func(t *testing.T) {
			f := testutil.NewFarm(t, tdmSite())
			var blocks blockLog
			opts := []Option{WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add)}
			if purposes != nil {
				opts = append(opts, WithUsage(usage.Config{Purposes: purposes}))
			}
			p := mustNew(t, opts...)
			c := newCollector(false, p.opt(t))
			var mu sync.Mutex
			marks := map[string]ResponseUsage{}
			c.OnScraped(func(r *colly.Response) {
				mu.Lock()
				defer mu.Unlock()
				marks[r.Request.URL.Path], _ = UsageOf(r)
			})
			returnsWithin(t, 30*time.Second, "the crawl", func() {
				for _, u := range append(pages, "/hdr/a") {
					_ = c.Visit("http://tdm.test" + u)
				}
			})
			got := f.Paths("tdm.test")
			count := func(path string) int {
				n := 0
				for _, g := range got {
					if g == path {
						n++
					}
				}
				return n
			}
			if purposes == nil {
				if count(tdmPath)+count("/lic.xml") != 0 || len(blocks.all()) != 0 {
					t.Fatalf("without a purpose: server saw %v, blocks %v", got, blocks.all())
				}
				return
			}
			if count(tdmPath) != 1 || count("/lic.xml") != 1 {
				t.Errorf("tdmrep.json fetched %d times, the licence %d, want once each (server saw %v)", count(tdmPath), count("/lic.xml"), got)
			}
			if slices.Contains(got, "/reserved/a") {
				t.Errorf("/reserved/a reached the server")
			}
			bs := blocks.all()
			if len(bs) != 1 || bs[0].Kind != UsageDisallowed || bs[0].Reason != "train-ai=n: tdmrep.json rule 0 (location /reserved/): 1" {
				t.Errorf("blocks %v", bs)
			}
			wantLic := "train-ai=n: license http://tdm.test/lic.xml (Link header), content \"/\": not licensed"
			for _, path := range []string{"/lic/a", "/lic/b"} {
				if m := marks[path]; m.Refused != wantLic {
					t.Errorf("%s: refused %q, want %q", path, m.Refused, wantLic)
				}
			}
			hdr := marks["/hdr/a"]
			if hdr.Refused != "train-ai=n: tdm-reservation header: 1" || hdr.Usage.Pref(dialect.AIInput) != dialect.PrefDisallow || len(hdr.Signals) != 2 {
				t.Errorf("/hdr/a: %+v, want refused by its tdm-reservation header, for train-ai and ai-input", hdr)
			}
			if m := marks["/open"]; m.Refused != "" || len(m.Signals) != 0 {
				t.Errorf("/open: %+v, want no signal", m)
			}
			if tot := p.Totals(); tot.UsageDisallowed != 1 || tot.UsageMarked != 3 {
				t.Errorf("totals %+v", tot)
			}
		})
	}
}

// A declared use level: a site whose robots.txt level is below the crawler's is
// not fetched; a response whose Content-Signal header states a lower
// level than the crawler's is refused; no tdmrep.json is asked for.
func TestPluginUseLevel(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{
		"ref.test": {Robots: "User-agent: *\nAllow: /\nContent-Signal: search=yes, use=reference\n"},
		"any.test": {Robots: "User-agent: *\nAllow: /\n", Handle: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/imm" {
				w.Header().Set("Content-Signal", "use=immediate")
			}
			return false
		}},
	})
	var blocks blockLog
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add), WithUsage(usage.Config{Use: "reference"}))
	c := newCollector(false, p.opt(t))
	marks := map[string]string{}
	c.OnScraped(func(r *colly.Response) {
		u, _ := UsageOf(r)
		marks[r.Request.URL.String()] = u.Refused
	})
	for _, u := range []string{"http://ref.test/a", "http://any.test/imm", "http://any.test/plain"} {
		_ = c.Visit(u)
	}
	if len(blocks.all()) != 0 || marks["http://ref.test/a"] != "" || marks["http://any.test/plain"] != "" ||
		marks["http://any.test/imm"] != "use=immediate: Content-Signal header: use=immediate" {
		t.Errorf("level reference: blocks %v, marks %q", blocks.all(), marks)
	}

	blocks = blockLog{}
	p = mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add), WithUsage(usage.Config{Use: "full"}))
	c = newCollector(false, p.opt(t))
	_ = c.Visit("http://ref.test/b")
	bs := blocks.all()
	if len(bs) != 1 || bs[0].Kind != UsageDisallowed || bs[0].Reason != "use=reference: robots.txt line 3: Content-Signal: search=yes, use=reference" {
		t.Errorf("level full: blocks %v", bs)
	}
	if got := f.Paths("ref.test"); slices.Contains(got, "/b") || slices.Contains(got, tdmPath) {
		t.Errorf("ref.test saw %v", got)
	}
}

// A licence a response points to is fetched under the collector's
// context: when that context ends while the licence has not answered, the
// response is refused at once (what it may be used for could not be read)
// instead of waiting out the resolver's fetch timeout and counting as read.
func TestPluginUsageLicenceUnderCollectorContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	release := make(chan struct{}) // the licence's answer never comes before the test ends
	f := testutil.NewFarm(t, map[string]*testutil.Site{"lic.test": {
		Robots: "User-agent: *\nAllow: /\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			switch r.URL.Path {
			case tdmPath:
				http.NotFound(w, r)
			case "/lic.xml":
				cancel() // the crawl ends while the licence is asked for
				select {
				case <-r.Context().Done():
				case <-release:
				}
			default:
				w.Header().Set("Link", `</lic.xml>; rel="license"; type="application/rsl+xml"`)
				return false
			}
			return true
		}}})
	t.Cleanup(func() { close(release) }) // before the farm closes
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithUsage(usage.Config{Purposes: []string{"train-ai"}}),
		WithPolicy(policy.WithTimeout(time.Hour)))
	c := newCollector(false, p.opt(t), colly.StdlibContext(ctx))
	var got ResponseUsage
	var marked bool
	c.OnResponse(func(r *colly.Response) { got, marked = UsageOf(r) })
	returnsWithin(t, 30*time.Second, "the page's usage mark", func() {
		if err := c.Visit("http://lic.test/page"); err != nil {
			t.Errorf("Visit: %v", err)
		}
	})
	if !marked || !strings.HasPrefix(got.Refused, "usage terms not read: ") || !strings.Contains(got.Refused, "context canceled") {
		t.Fatalf("usage mark %+v (marked %v); want refused as not read, the collector's context canceled", got, marked)
	}
}
