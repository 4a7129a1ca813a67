package robots

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/testkit/testutil"
	"github.com/politecrawl/robots/usage"
)

// The documents a site names are fetched only from hosts the collector
// may visit, never from a metadata or link-local host: a licence on a
// host outside AllowedDomains, or on 169.254.169.254, and a tdmrep.json
// redirected to metadata.google.internal are not asked for (the farm
// answers for every name, so it would see them); a licence that cannot be
// fetched so refuses as one that cannot be obtained.
func TestPluginDocumentsWithinCollectorHosts(t *testing.T) {
	lic := `<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license>` +
		`<permits type="usage">ai-train</permits></license></content></rsl>`
	sites := func() map[string]*testutil.Site {
		return map[string]*testutil.Site{
			"site.test": {
				Robots: "User-agent: *\nAllow: /\nLicense: http://lic.test/lic.xml\n",
				Handle: func(w http.ResponseWriter, r *http.Request) bool {
					if r.URL.Path == tdmPath {
						http.Redirect(w, r, "http://metadata.google.internal/computeMetadata/v1/", http.StatusFound)
						return true
					}
					return false
				}},
			"meta.test": {
				Robots: "User-agent: *\nAllow: /\nLicense: http://169.254.169.254/latest/meta-data/\n",
			},
			"lic.test": {Handle: func(w http.ResponseWriter, r *http.Request) bool {
				fmt.Fprint(w, lic)
				return true
			}},
		}
	}
	for _, c := range []struct {
		name    string
		domains []string
		page    string
		reason  string // "" : fetched
	}{
		{"outside AllowedDomains", []string{"site.test"}, "http://site.test/a", "not fetched: lic.test is not a host the crawler may visit"},
		{"within AllowedDomains", []string{"site.test", "lic.test"}, "http://site.test/a", ""},
		{"metadata address", nil, "http://meta.test/a", "not fetched: 169.254.169.254 is a link-local or cloud-metadata host"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := testutil.NewFarm(t, sites())
			var blocks blockLog
			p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add),
				WithUsage(usage.Config{Purposes: []string{"train-ai"}}))
			col := newCollector(false, p.opt(t), colly.AllowedDomains(append(c.domains, "meta.test")...))
			if c.domains == nil {
				col.AllowedDomains = nil
			}
			returnsWithin(t, 30*time.Second, "the crawl", func() { _ = col.Visit(c.page) })
			for _, h := range []string{"metadata.google.internal", "169.254.169.254"} {
				if hits := f.Pages(h, true); len(hits) != 0 {
					t.Errorf("%s asked: %v", h, hits)
				}
			}
			bs := blocks.all()
			if c.reason == "" {
				if len(bs) != 0 || len(f.Pages("lic.test", true)) != 1 {
					t.Errorf("blocks %v, licence hits %v; want the licence fetched once and the page fetched", bs, f.Pages("lic.test", true))
				}
				return
			}
			if len(f.Pages("lic.test", true)) != 0 {
				t.Errorf("licence host asked: %v", f.Pages("lic.test", true))
			}
			if len(bs) != 1 || bs[0].Kind != UsageDisallowed || !strings.Contains(bs[0].Reason, c.reason) {
				t.Errorf("blocks %v; want one usage refusal saying %q", bs, c.reason)
			}
		})
	}
}

// A page's licences are read within one budget, the resolver's timeout,
// even when they are on one host, whose gate spaces them by its
// Crawl-delay (2 s): six licences that never answer cost the page's check
// 2 s, not 12 of spacing and 2 of waiting. The crawl takes 4 s before it
// (robots.txt, tdmrep.json, the page, spaced).
func TestPluginLicencesWithinOneBudget(t *testing.T) {
	release := make(chan struct{})
	const n = 6
	var links []string
	for i := range n {
		links = append(links, fmt.Sprintf(`</l%d.xml>; rel="license"; type="application/rsl+xml"`, i))
	}
	f := testutil.NewFarm(t, map[string]*testutil.Site{"slow.test": {
		Robots: "User-agent: *\nAllow: /\nCrawl-delay: 2\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			switch {
			case r.URL.Path == tdmPath:
				http.NotFound(w, r)
			case strings.HasPrefix(r.URL.Path, "/l"):
				select { // never answers while the test runs
				case <-r.Context().Done():
				case <-release:
				}
			default:
				w.Header().Set("Link", strings.Join(links, ", "))
				return false
			}
			return true
		}}})
	t.Cleanup(func() { close(release) }) // before the farm closes
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithUsage(usage.Config{Purposes: []string{"train-ai"}}),
		WithPolicy(policy.WithTimeout(2*time.Second)))
	c := newCollector(false, p.opt(t))
	var got ResponseUsage
	c.OnResponse(func(r *colly.Response) { got, _ = UsageOf(r) })
	start := time.Now()
	returnsWithin(t, 60*time.Second, "the page", func() { _ = c.Visit("http://slow.test/page") })
	if took := time.Since(start); took > 11*time.Second {
		t.Errorf("the page took %s; want about 6 s", took)
	}
	if !strings.Contains(got.Refused, "unobtainable") {
		t.Errorf("refused %q; want the licences unobtainable", got.Refused)
	}
}

// A document's URL passes a collector's filters as a visit would.
func TestCollectorMayVisit(t *testing.T) {
	c := colly.NewCollector(colly.AllowedDomains("a.test", "b.test"), colly.DisallowedDomains("b.test"),
		colly.URLFilters(regexp.MustCompile(`^https?://[ab]\.test/`)), colly.DisallowedURLFilters(regexp.MustCompile(`/private/`)))
	for u, want := range map[string]bool{
		"http://a.test/lic.xml":         true,
		"http://b.test/lic.xml":         false, // disallowed domain
		"http://c.test/lic.xml":         false, // not allowed
		"http://a.test/private/lic.xml": false, // disallowed URL
		"http://a.test:8080/lic.xml":    false, // no URL filter matches
		"https://a.test/licences/x.xml": true,
	} {
		pu, _ := url.Parse(u)
		if got := collectorMayVisit(c, pu.String(), pu.Hostname()); got != want {
			t.Errorf("%s: %v, want %v", u, got, want)
		}
	}
}
