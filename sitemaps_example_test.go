package robots_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
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

	p := robots.New(
		robots.WithDefaultDelay(0), // a local site: no spacing needed here
		robots.WithSitemaps(robots.SitemapsSince(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))),
		robots.WithOnSitemap(func(r sitemap.Report) {
			fmt.Printf("sitemap: found %d, handed over %d, filtered %v\n", r.Found, r.Handed, r.Filtered)
		}),
		robots.WithOnBlocked(func(b robots.Block) { fmt.Println("stopped:", b.Reason) }),
	)
	c := colly.NewCollector(colly.UserAgent("ExampleBot/1.0"), p.Option())
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
