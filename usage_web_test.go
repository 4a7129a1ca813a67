package robots

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/usage"
)

// webSite is an httptest site of fixed pages that counts the requests of
// each path. A page's head function sets its headers and returns its body.
type webSite struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newWebSite(t *testing.T, pages map[string]func(h http.Header) string) *webSite {
	s := &webSite{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		page, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		body := page(w.Header())
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		fmt.Fprint(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *webSite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func text(body string) func(http.Header) string {
	return func(h http.Header) string { h.Set("Content-Type", "text/plain"); return body }
}

func page(body string) func(http.Header) string { return func(http.Header) string { return body } }

// crawl visits the start paths of site with a collector whose plugin has
// opts, following the links of every page, and returns the usage of each
// response that reached OnScraped.
func crawl(t *testing.T, site *webSite, start []string, opts ...Option) (map[string]ResponseUsage, *Plugin) {
	t.Helper()
	p := mustNew(t, append([]Option{WithDefaultDelay(0)}, opts...)...)
	c := newCollector(false, p.opt(t))
	c.AllowURLRevisit = false
	var mu sync.Mutex
	seen := map[string]ResponseUsage{}
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
	c.OnScraped(func(r *colly.Response) {
		mu.Lock()
		defer mu.Unlock()
		seen[r.Request.URL.Path], _ = UsageOf(r)
	})
	returnsWithin(t, 30*time.Second, "the crawl", func() {
		for _, path := range start {
			_ = c.Visit(site.URL + path)
		}
	})
	return seen, p
}

const ccLicense = "/licenses/by/4.0/"

// A crawl for search, train-ai and ai-input of pages that link a Creative
// Commons licence (Link header, <link> element) fetches and keeps them,
// never fetches the licence, and records it; a link typed
// application/rsl+xml still decides.
func TestPluginCreativeCommonsLinks(t *testing.T) {
	site := newWebSite(t, map[string]func(http.Header) string{
		"/robots.txt": text("User-agent: *\nAllow: /\n"),
		ccLicense:     page("<html><head><title>CC BY 4.0</title></head><body>Deed</body></html>"),
		"/lic.xml": text(`<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license>` +
			`<prohibits type="usage">ai-train</prohibits></license></content></rsl>`),
		"/header": func(h http.Header) string {
			h.Set("Link", `<`+ccLicense+`>; rel="license"`)
			return "<html><body>header</body></html>"
		},
		"/element": page(`<html><head><link rel="license" href="` + ccLicense + `"></head><body>element</body></html>`),
		"/rsl": func(h http.Header) string {
			h.Add("Link", `<`+ccLicense+`>; rel="license"`)
			h.Add("Link", `</lic.xml>; rel="license"; type="application/rsl+xml"`)
			return "<html><body>rsl</body></html>"
		},
	})
	var blocks blockLog
	var refused []string
	seen, p := crawl(t, site, []string{"/header", "/element", "/rsl"},
		WithOnBlocked(blocks.add),
		WithUsage(usage.Config{Purposes: []string{"search", "train-ai", "ai-input"}}, func(r *colly.Response, u ResponseUsage) {
			refused = append(refused, r.Request.URL.Path+": "+u.Refused)
		}))
	if n := site.count(ccLicense); n != 0 {
		t.Errorf("the Creative Commons licence was fetched %d times", n)
	}
	if bs := blocks.all(); len(bs) != 0 {
		t.Errorf("stops %v", bs)
	}
	for _, path := range []string{"/header", "/element"} {
		u, ok := seen[path]
		if !ok || u.Refused != "" {
			t.Errorf("%s: kept %v, refused %q", path, ok, u.Refused)
			continue
		}
		var recorded int
		for _, s := range u.Signals {
			if s.Carrier == usage.LicenseDocument && s.License != nil && s.License.URL == site.URL+ccLicense &&
				strings.HasSuffix(s.Value, "not an RSL licence (no type)") {
				recorded++
			}
		}
		if recorded != 3 {
			t.Errorf("%s: the licence link recorded %d times, want once per purpose: %v", path, recorded, u.Signals)
		}
	}
	want := []string{"/rsl: train-ai=n: license " + site.URL + `/lic.xml (Link header), content "/": not licensed`}
	if strings.Join(refused, "\n") != strings.Join(want, "\n") || seen["/rsl"].Refused != strings.TrimPrefix(want[0], "/rsl: ") {
		t.Errorf("refused %q, want %q", refused, want)
	}
	if site.count("/lic.xml") != 1 {
		t.Errorf("the RSL licence was fetched %d times, want once", site.count("/lic.xml"))
	}
	if tot := p.Totals(); tot.UsageMarked != 1 || tot.UsageDisallowed != 0 {
		t.Errorf("totals %+v", tot)
	}
}

// RSL's user and geo terms: a crawler that declares no user, or one the
// licence does not permit, is refused with the term not met; one that
// meets them is licensed.
func TestPluginRSLUserGeo(t *testing.T) {
	site := newWebSite(t, map[string]func(http.Header) string{
		"/robots.txt": text("License: /lic.xml\nUser-agent: *\nAllow: /\n"),
		"/lic.xml": text(`<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license>` +
			`<permits type="usage">all</permits><permits type="user">education non-commercial</permits>` +
			`<prohibits type="geo">US</prohibits></license></content></rsl>`),
		"/page": page("<html><body>page</body></html>"),
	})
	lic := "train-ai=n: license " + site.URL + `/lic.xml (robots.txt line 1), content "/": not licensed: `
	for _, tc := range []struct {
		user, geo, want string
	}{
		{"", "", lic + "user not declared (permits education non-commercial)"},
		{"commercial", "FR", lic + "user commercial not permitted (permits education non-commercial)"},
		{"Education", "", lic + "geo not declared (prohibits US)"},
		{"education", "us", lic + "geo US prohibited (prohibits US)"},
		{"education", "fr", ""},
	} {
		var blocks blockLog
		before := site.count("/page")
		seen, _ := crawl(t, site, []string{"/page"}, WithOnBlocked(blocks.add),
			WithUsage(usage.Config{Purposes: []string{"train-ai"}, User: tc.user, Geo: tc.geo}))
		bs := blocks.all()
		switch {
		case tc.want == "" && (len(bs) != 0 || seen["/page"].Refused != "" || site.count("/page") != before+1):
			t.Errorf("%s/%s: stops %v, usage %+v", tc.user, tc.geo, bs, seen["/page"])
		case tc.want != "" && (len(bs) != 1 || bs[0].Kind != UsageDisallowed || bs[0].Reason != tc.want || site.count("/page") != before):
			t.Errorf("%s/%s: stops %v, want %q before the fetch", tc.user, tc.geo, bs, tc.want)
		}
	}
	for _, cfg := range []usage.Config{
		{Purposes: []string{"train-ai"}, User: "robot"},
		{Purposes: []string{"train-ai"}, Geo: "France"},
		{Purposes: []string{"train-ai"}, Geo: "EU"},
		{Use: "reference", User: "commercial"},
	} {
		if _, err := New(WithUsage(cfg)); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

// Reach without use: a training crawl of a site whose home page alone is
// reserved reaches /press/ and /blog/, which reserve nothing, with Reach;
// the home page is fetched and marked refused. Without Reach the home
// page is stopped and nothing behind it is reached.
func TestPluginUsageReach(t *testing.T) {
	for _, reach := range []bool{true, false} {
		t.Run(fmt.Sprint("reach=", reach), func(t *testing.T) {
			site := newWebSite(t, map[string]func(http.Header) string{
				"/robots.txt": text("User-agent: *\nDisallow: /private/\n"),
				tdmPath: func(h http.Header) string {
					h.Set("Content-Type", "application/json")
					return `[{"location": "/$", "tdm-reservation": 1}]`
				},
				"/":         page(`<html><body><a href="/press/">press</a> <a href="/blog/">blog</a> <a href="/private/">x</a></body></html>`),
				"/press/":   page("<html><body>press</body></html>"),
				"/blog/":    page("<html><body>blog</body></html>"),
				"/private/": page("<html><body>private</body></html>"),
			})
			var blocks blockLog
			var refused []string
			seen, p := crawl(t, site, []string{"/"}, WithOnBlocked(blocks.add),
				WithUsage(usage.Config{Purposes: []string{"train-ai"}, Reach: reach}, func(r *colly.Response, u ResponseUsage) {
					refused = append(refused, r.Request.URL.Path+": "+u.Refused)
				}))
			why := "train-ai=n: tdmrep.json rule 0 (location /$): 1"
			if !reach {
				bs := blocks.all()
				if len(bs) != 1 || bs[0].Kind != UsageDisallowed || bs[0].Reason != why {
					t.Errorf("stops %v", bs)
				}
				if n := site.count("/") + site.count("/press/") + site.count("/blog/"); n != 0 || len(seen) != 0 {
					t.Errorf("%d pages fetched without Reach", n)
				}
				return
			}
			for _, path := range []string{"/", "/press/", "/blog/"} {
				if site.count(path) != 1 {
					t.Errorf("%s fetched %d times, want once", path, site.count(path))
				}
			}
			if strings.Join(refused, "\n") != "/: "+why || seen["/"].Refused != why {
				t.Errorf("refused %q, home %q", refused, seen["/"].Refused)
			}
			for _, path := range []string{"/press/", "/blog/"} {
				if u, ok := seen[path]; !ok || u.Refused != "" {
					t.Errorf("%s: kept %v, refused %q", path, ok, u.Refused)
				}
			}
			// robots.txt still decides where the crawler goes.
			bs := blocks.all()
			if site.count("/private/") != 0 || len(bs) != 1 || bs[0].Kind != Disallowed {
				t.Errorf("/private/ fetched %d times, stops %v", site.count("/private/"), bs)
			}
			if tot := p.Totals(); tot.UsageMarked != 1 || tot.UsageDisallowed != 0 {
				t.Errorf("totals %+v", tot)
			}
		})
	}
}
