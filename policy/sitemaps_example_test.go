package policy_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
)

// A policy lists the sitemaps its robots.txt announces, resolved against
// the robots.txt URL, each once; SitemapWarnings says what was resolved or
// left out.
func ExamplePolicy_Sitemaps() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\nSitemap: /sitemap.xml\nSitemap: https://cdn.example/s.xml.gz\nSitemap: /sitemap.xml\nSitemap: ftp://x/y.xml\n")
		}
	}))
	defer site.Close()

	r, err := policy.NewResolver(policy.WithUserAgent("ExampleBot/1.0"))
	if err != nil {
		fmt.Println(err)
		return
	}
	u, _ := url.Parse(site.URL + "/")
	pol, err := r.Policy(context.Background(), u)
	if err != nil {
		fmt.Println(err)
		return
	}
	site2 := strings.NewReplacer(site.URL, "SITE") // the test server's address varies
	for _, s := range pol.Sitemaps() {
		fmt.Println("sitemap:", site2.Replace(s))
	}
	for _, w := range pol.SitemapWarnings() {
		fmt.Println("warning:", site2.Replace(w))
	}
	// Output:
	// sitemap: SITE/sitemap.xml
	// sitemap: https://cdn.example/s.xml.gz
	// warning: line 3: relative Sitemap "/sitemap.xml" resolved to SITE/sitemap.xml
	// warning: line 5: Sitemap SITE/sitemap.xml repeats line 3; left out
	// warning: line 6: Sitemap "ftp://x/y.xml" is not an http(s) URL; left out
}

// ResolveSitemaps resolves the Sitemap lines of a robots.txt read from
// somewhere else (a file, a cache) against the URL it came from.
func ExampleResolveSitemaps() {
	robots := dialect.RFC9309.ParseString("User-agent: *\nSitemap: /sitemap.xml\nSitemap: sitemaps/news.xml?lang=en\nSitemap: https://example.com/sitemap.xml\n")
	urls, warnings := policy.ResolveSitemaps("https://example.com/robots.txt", robots.Sitemaps())
	for _, u := range urls {
		fmt.Println(u)
	}
	for _, w := range warnings {
		fmt.Println("warning:", w)
	}
	// Output:
	// https://example.com/sitemap.xml
	// https://example.com/sitemaps/news.xml?lang=en
	// warning: line 2: relative Sitemap "/sitemap.xml" resolved to https://example.com/sitemap.xml
	// warning: line 3: relative Sitemap "sitemaps/news.xml?lang=en" resolved to https://example.com/sitemaps/news.xml?lang=en
	// warning: line 4: Sitemap https://example.com/sitemap.xml repeats line 2; left out
}
