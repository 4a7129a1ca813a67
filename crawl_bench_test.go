package robots_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/testkit/testutil"
)

// BenchmarkSitemapsThroughFrontier is a newcomer's spider: a sync
// collector with Colly's queue on the in-memory frontier, with and without
// WithSitemaps, on a site of 10 linked pages whose sitemap lists 17 (the
// 10 and 7 more), at a 0.3 s delay. It reports the crawl's wall time
// (sec/crawl), the pages fetched and the longest gap between two requests
// to the host: with sitemaps the crawl should take the extra pages'
// delays and no more.
//
//	go test -run '^$' -bench SitemapsThroughFrontier -benchtime 1x .
func BenchmarkSitemapsThroughFrontier(b *testing.B) {
	const delay = 300 * time.Millisecond
	var links, locs strings.Builder
	for i := range 17 {
		if i < 10 {
			fmt.Fprintf(&links, `<a href="/p%d">%d</a>`, i, i)
		}
		fmt.Fprintf(&locs, "<url><loc>http://shop.test/p%d</loc></url>", i)
	}
	for _, sitemaps := range []bool{false, true} {
		b.Run(fmt.Sprintf("sitemaps=%v", sitemaps), func(b *testing.B) {
			for b.Loop() {
				site := testutil.NewFarm(b, map[string]*testutil.Site{
					"shop.test": {Robots: "User-agent: *\nSitemap: http://shop.test/sitemap.xml\n", Handle: func(w http.ResponseWriter, r *http.Request) bool {
						switch r.URL.Path {
						case "/":
							io.WriteString(w, "<html><body>"+links.String()+"</body></html>")
						case "/sitemap.xml":
							io.WriteString(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+locs.String()+"</urlset>")
						default:
							return false
						}
						return true
					}},
				})
				opts := []robots.Option{robots.WithTransport(site.Transport()), robots.WithDefaultDelay(delay),
					robots.WithLogger(slog.New(slog.DiscardHandler))}
				if sitemaps {
					opts = append(opts, robots.WithSitemaps())
				}
				c := colly.NewCollector()
				p, err := robots.Attach(c, opts...)
				if err != nil {
					b.Fatal(err)
				}
				f := frontier.New(frontier.Config{Ready: p.Limiter().(frontier.Readiness)})
				robots.AttachFrontier(c, f)
				q, _ := queue.New(2, f)
				fetched := 0
				c.OnScraped(func(*colly.Response) { fetched++ })
				c.OnHTML("a[href]", func(e *colly.HTMLElement) { q.AddURL(e.Request.AbsoluteURL(e.Attr("href"))) })
				start := time.Now()
				q.AddURL("http://shop.test/")
				q.Run(c)
				took := time.Since(start)
				p.Close()
				hits := site.Pages("shop.test", true)
				var gap time.Duration
				for i := 1; i < len(hits); i++ {
					gap = max(gap, hits[i].At.Sub(hits[i-1].At))
				}
				if st := f.Stats(); st.Leased != 0 {
					b.Fatalf("%d leases never done", st.Leased)
				}
				b.ReportMetric(took.Seconds(), "sec/crawl")
				b.ReportMetric(float64(fetched), "pages")
				b.ReportMetric(gap.Seconds(), "max-gap-sec")
			}
		})
	}
}
