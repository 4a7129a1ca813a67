package robots_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/sitemap"
)

// With WithSitemaps, the pages a site's sitemaps list are crawled too, even
// when no link reaches them; each request's Context says which sitemap
// listed it and its lastmod.
func ExampleWithSitemaps() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\nSitemap: /sitemap.xml\n")
		case "/sitemap.xml":
			fmt.Fprint(w, `<urlset><url><loc>/unlinked</loc><lastmod>2025-05-01</lastmod></url><url><loc>/private/x</loc></url><url><loc>/old</loc><lastmod>2019-01-01</lastmod></url></urlset>`)
		default:
			fmt.Fprint(w, "<html></html>")
		}
	}))
	defer site.Close()

	c := colly.NewCollector(colly.UserAgent("ExampleBot/1.0"), robots.WithRobots(
		robots.WithDefaultDelay(0), // a local site: no spacing needed here
		robots.WithSitemaps(robots.SitemapWalk(sitemap.Config{
			Since: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
			OnReport: func(r sitemap.Report) {
				fmt.Printf("sitemap: found %d, handed over %d, filtered %v\n", r.Found, r.Handed, r.Filtered)
			},
		})),
		robots.WithOnBlocked(func(b robots.Block) { fmt.Println("stopped:", b.Reason) }),
	))
	c.OnResponse(func(r *colly.Response) {
		lastmod, _ := r.Ctx.GetAny(robots.CtxLastMod).(time.Time)
		_, fromSitemap := r.Ctx.GetAny(robots.CtxSitemap).(string)
		fmt.Println("fetched:", r.Request.URL.Path, "from a sitemap:", fromSitemap, lastmod.Format("2006-01-02"))
	})
	c.Visit(site.URL + "/")
	c.Wait()
	// Output:
	// fetched: /unlinked from a sitemap: true 2025-05-01
	// stopped: line 2: Disallow: /private/
	// sitemap: found 3, handed over 2, filtered map[not modified since:1]
	// fetched: / from a sitemap: false 0001-01-01
}

// SitemapWalk's OnReport receives each sitemap document's report as soon as
// it is final: a child's before its index's, and one for a sitemap
// robots.txt does not let the crawler fetch.
func ExampleSitemapWalk() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\nSitemap: /index.xml\nSitemap: /private/sitemap.xml\n")
		case "/index.xml":
			fmt.Fprint(w, `<sitemapindex><sitemap><loc>/products.xml</loc></sitemap><sitemap><loc>https://elsewhere.example/s.xml</loc></sitemap></sitemapindex>`)
		case "/products.xml":
			fmt.Fprint(w, `<urlset><url><loc>/p/1</loc></url><url><loc>/p/2</loc></url></urlset>`)
		default:
			fmt.Fprint(w, "<html></html>")
		}
	}))
	defer site.Close()
	short := strings.NewReplacer(site.URL, "") // the test server's address varies

	report := func(r sitemap.Report) {
		if r.Err != nil {
			fmt.Printf("%s: not read: %v\n", short.Replace(r.URL), errors.Is(r.Err, sitemap.ErrDisallowed))
			return
		}
		fmt.Printf("%s (%s, depth %d): found %d, handed over %d, children %d, rejected %v\n",
			short.Replace(r.URL), r.Format, r.Depth, r.Found, r.Handed, r.Children, r.Rejected)
	}
	c := colly.NewCollector(colly.UserAgent("ExampleBot/1.0"), robots.WithRobots(
		robots.WithDefaultDelay(0), // a local site: no spacing needed here
		robots.WithSitemaps(robots.SitemapWalk(sitemap.Config{OnReport: report})),
	))
	c.Visit(site.URL + "/")
	c.Wait()
	// Output:
	// /products.xml (urlset, depth 1): found 2, handed over 2, children 0, rejected map[]
	// /index.xml (sitemapindex, depth 0): found 2, handed over 0, children 1, rejected map[other host:1]
	// /private/sitemap.xml: not read: true
}

// SitemapTotals sums every report: what the sitemaps listed, what was
// handed to the collector, and what was left out, by reason.
func ExamplePlugin_SitemapTotals() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nSitemap: /sitemap.xml\n")
		case "/sitemap.xml":
			fmt.Fprint(w, `<urlset><url><loc>/a</loc></url><url><loc>/b</loc></url><url><loc>/a</loc></url><url><loc>/skip/c</loc></url></urlset>`)
		default:
			fmt.Fprint(w, "<html></html>")
		}
	}))
	defer site.Close()

	c := colly.NewCollector()
	p, err := robots.Attach(c,
		robots.WithDefaultDelay(0),
		robots.WithSitemaps(robots.SitemapWalk(sitemap.Config{
			Keep: func(pg sitemap.Page) bool { return !strings.Contains(pg.Loc, "/skip/") },
		})),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	c.Visit(site.URL + "/")
	c.Wait()
	t := p.SitemapTotals()
	fmt.Printf("sitemaps %d (failed %d), found %d, handed over %d\n", t.Sitemaps, t.Failed, t.Found, t.Handed)
	fmt.Println("filtered:", t.Filtered)
	// Output:
	// sitemaps 1 (failed 0), found 4, handed over 2
	// filtered: map[already visited:1 refused by the predicate:1]
}
