// Command demo crawls a small local site with Colly and the robots plugin:
// no network is needed. It prints what was fetched and when, what was
// stopped and why, the spacing kept between requests to each host, and what
// the sitemap that shop.demo's robots.txt announces added: pages no link
// reaches, found only through it.
//
//	go run ./examples/demo [-dialect rfc9309|google|coccoc|koster1994]
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/sitemap"
)

// The site: two hosts served by one local server.
var robotsTxt = map[string]string{
	"shop.demo": `# shop.demo robots.txt
User-agent: *
Disallow: /cart
Disallow: /account/
Allow: /account/help
Crawl-delay: 0.3

User-agent: demobot-images
Disallow: /

Sitemap: http://shop.demo/sitemap.xml
`,
	"blog.demo": `User-agent: *
Disallow: /drafts/
Disallow: /*?preview=
Crawl-delay: 0.2
`,
}

var pages = map[string][]string{
	"shop.demo/":             {"/products/1", "/products/2", "/cart", "/account/orders", "/account/help", "http://blog.demo/"},
	"shop.demo/products/1":   {"/products/2", "/cart?add=1"},
	"shop.demo/products/2":   {"/products/1", "/old-offer"},
	"shop.demo/old-offer":    {},
	"shop.demo/account/help": {"/"},
	"shop.demo/products/3":   {"/products/1"},
	"shop.demo/products/4":   {},
	"blog.demo/":             {"/posts/hello", "/posts/robots", "/drafts/secret", "/posts/hello?preview=1"},
	"blog.demo/posts/hello":  {"/posts/robots"},
	"blog.demo/posts/robots": {"/", "http://shop.demo/products/1"},
}

// The sitemaps of shop.demo: an index, and a gzipped urlset listing two
// products that no link reaches, one the crawl finds anyway, a page
// robots.txt disallows and a page on another host (refused: a sitemap
// lists its own host's pages).
const sitemapIndex = `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>http://shop.demo/sitemap-products.xml.gz</loc><lastmod>2026-11-01</lastmod></sitemap>
</sitemapindex>`

const productSitemap = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://shop.demo/products/1</loc></url>
  <url><loc>http://shop.demo/products/3</loc><lastmod>2026-11-20</lastmod></url>
  <url><loc>http://shop.demo/products/4</loc><lastmod>2026-10-02</lastmod></url>
  <url><loc>http://shop.demo/account/orders</loc></url>
  <url><loc>http://blog.demo/posts/hidden</loc></url>
</urlset>`

func gzipped(s string) []byte {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write([]byte(s))
	z.Close()
	return b.Bytes()
}

// arrivals records when the server saw each request, per host.
var (
	arrivalsMu sync.Mutex
	arrivals   = map[string][]time.Time{}
)

func site(w http.ResponseWriter, r *http.Request) {
	host, _, _ := net.SplitHostPort(r.Host)
	if host == "" {
		host = r.Host
	}
	arrivalsMu.Lock()
	arrivals[host] = append(arrivals[host], time.Now())
	arrivalsMu.Unlock()
	switch {
	case r.URL.Path == "/robots.txt":
		fmt.Fprint(w, robotsTxt[host])
		return
	case host == "shop.demo" && r.URL.Path == "/old-offer":
		http.Redirect(w, r, "/cart/expired", http.StatusMovedPermanently) // a redirect into a disallowed path
		return
	case host == "shop.demo" && r.URL.Path == "/sitemap.xml":
		fmt.Fprint(w, sitemapIndex)
		return
	case host == "shop.demo" && r.URL.Path == "/sitemap-products.xml.gz":
		w.Write(gzipped(productSitemap))
		return
	}
	links, ok := pages[host+r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	fmt.Fprintf(w, "<html><body><h1>%s%s</h1>", host, r.URL.Path)
	for _, l := range links {
		fmt.Fprintf(w, `<a href="%s">%s</a> `, l, l)
	}
	fmt.Fprint(w, "</body></html>")
}

func main() {
	dialectName := flag.String("dialect", "rfc9309", "robots.txt dialect: "+strings.Join(dialect.Names(), ", "))
	flag.Parse()
	d, err := dialect.Lookup(*dialectName)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(2)
	}
	run(os.Stdout, d)
}

// run crawls the demo site under dialect d and writes the report to w.
func run(w io.Writer, d *dialect.Dialect) {
	arrivalsMu.Lock()
	arrivals = map[string][]time.Time{}
	arrivalsMu.Unlock()

	srv := httptest.NewServer(http.HandlerFunc(site))
	defer srv.Close()
	// Every *.demo host name goes to the local server.
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	transport := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialer.DialContext(ctx, network, srv.Listener.Addr().String())
	}}

	start := time.Now()
	var mu sync.Mutex
	var blocked []robots.Block
	var reports []sitemap.Report
	fetchedURLs := map[string]bool{}

	c := colly.NewCollector(
		colly.UserAgent("Mozilla/5.0 (compatible; DemoBot/1.0; +https://example.com/demobot)"),
		colly.AllowedDomains("shop.demo", "blog.demo"),
		colly.Async(true),
	)
	p, err := robots.Attach(c,
		robots.WithDialect(d),
		robots.WithTransport(transport),
		robots.WithOnBlocked(func(b robots.Block) {
			mu.Lock()
			blocked = append(blocked, b)
			mu.Unlock()
		}),
		robots.WithSitemaps(robots.SitemapWalk(sitemap.Config{OnReport: func(r sitemap.Report) {
			mu.Lock()
			reports = append(reports, r)
			mu.Unlock()
		}})),
	)
	if err != nil {
		fmt.Fprintln(w, err)
		return
	}
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4})
	c.OnResponse(func(r *colly.Response) {
		via := ""
		if sm, ok := r.Ctx.GetAny(robots.CtxSitemap).(string); ok && r.Request.Depth == 1 {
			via = "  (from sitemap " + sm + ")"
		}
		mu.Lock()
		fetchedURLs[r.Request.URL.String()] = true
		fmt.Fprintf(w, "%6.2fs  fetched  %d %s%s\n", time.Since(start).Seconds(), r.StatusCode, r.Request.URL, via)
		mu.Unlock()
	})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	c.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		fmt.Fprintf(w, "%6.2fs  error    %s: %v\n", time.Since(start).Seconds(), r.Request.URL, err)
		mu.Unlock()
	})

	fmt.Fprintf(w, "crawling shop.demo and blog.demo as DemoBot, dialect %s\n\n", d)
	c.Visit("http://shop.demo/")
	c.Wait()

	fmt.Fprintf(w, "\nstopped by robots.txt (%d):\n", len(blocked))
	sort.Slice(blocked, func(i, j int) bool { return blocked[i].URL < blocked[j].URL })
	for _, b := range blocked {
		fmt.Fprintf(w, "  %-10s %-36s %s\n", b.Kind, b.URL, b.Reason)
	}

	fmt.Fprintln(w, "\nsitemaps (announced by robots.txt, read as a stream, fed back into the collector):")
	for _, r := range reports {
		fmt.Fprintf(w, "  %-42s %-12s found %d, handed over %d", r.URL, r.Format, r.Found, r.Handed)
		for _, k := range slices.Sorted(maps.Keys(r.Filtered)) {
			fmt.Fprintf(w, ", filtered %d (%s)", r.Filtered[k], k)
		}
		for _, k := range slices.Sorted(maps.Keys(r.Rejected)) {
			fmt.Fprintf(w, ", rejected %d (%s)", r.Rejected[k], k)
		}
		if r.Err != nil {
			fmt.Fprintf(w, ", error: %v", r.Err)
		}
		fmt.Fprintln(w)
	}
	linked := map[string]bool{}
	for page, links := range pages {
		host, _, _ := strings.Cut(page, "/")
		for _, l := range links {
			if strings.HasPrefix(l, "/") {
				l = "http://" + host + l
			}
			linked[l] = true
		}
	}
	fmt.Fprintln(w, "  found only through the sitemap (no link reaches them):")
	for _, l := range strings.Split(productSitemap, "<loc>")[1:] {
		u, _, _ := strings.Cut(l, "</loc>")
		if !linked[u] && fetchedURLs[u] {
			fmt.Fprintf(w, "    %s\n", u)
		}
	}

	fmt.Fprintln(w, "\nper host (the server's own log gives the gaps; robots.txt counts as a request):")
	stats := p.Stats()
	for _, a := range slices.Sorted(maps.Keys(stats)) {
		s := stats[a]
		u, _ := url.Parse(a)
		pol, err := p.Resolver().Policy(context.Background(), u)
		if err != nil {
			continue
		}
		cd, _ := pol.CrawlDelay()
		fmt.Fprintf(w, "  %-18s crawl-delay %-6s allowed %d, stopped %d, waited %s\n", a, cd, s.Allowed, s.Disallowed+s.Deferred+s.Skipped, s.Waited.Round(time.Millisecond))
		if r := pol.Robots(); r != nil {
			for _, sm := range r.Sitemaps() {
				fmt.Fprintf(w, "  %-18s sitemap %s (line %d)\n", "", sm.URL, sm.Line)
			}
		}
	}
	arrivalsMu.Lock()
	for _, host := range []string{"shop.demo", "blog.demo"} {
		ts := arrivals[host]
		shortest := time.Duration(1 << 62)
		for i := 1; i < len(ts); i++ {
			shortest = min(shortest, ts[i].Sub(ts[i-1]))
		}
		fmt.Fprintf(w, "  %-18s the server saw %d requests, the shortest gap between two: %s\n", host, len(ts), shortest.Round(time.Millisecond))
	}
	arrivalsMu.Unlock()
	fmt.Fprintf(w, "\ndone in %s\n", time.Since(start).Round(time.Millisecond))
}
