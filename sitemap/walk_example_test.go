package sitemap_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/politecrawl/robots/sitemap"
)

// A walker follows an index to its sitemaps and hands over each page URL
// in scope as it is read; every document gets a report.
func ExampleWalker_Walk() {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sitemap.xml":
			fmt.Fprintf(w, `<sitemapindex><sitemap><loc>%[1]s/posts.xml</loc></sitemap><sitemap><loc>%[1]s/private/old.xml</loc></sitemap></sitemapindex>`, srv.URL)
		case "/posts.xml":
			fmt.Fprintf(w, `<urlset><url><loc>%[1]s/posts/1</loc><lastmod>2025-05-01</lastmod></url><url><loc>/posts/2</loc></url><url><loc>https://elsewhere.example/x</loc></url></urlset>`, srv.URL)
		}
	}))
	defer srv.Close()

	w := sitemap.NewWalker(sitemap.Config{
		UserAgent: "ExampleBot/1.0 (+https://example.com/bot)",
		// The robots.txt check, here a stand-in for a policy.Resolver's.
		Allow: func(_ context.Context, u *url.URL) (bool, string) {
			if strings.HasPrefix(u.Path, "/private/") {
				return false, "Disallow: /private/"
			}
			return true, ""
		},
	})
	reports := w.Walk(context.Background(), srv.URL, []string{srv.URL + "/sitemap.xml"}, func(p sitemap.Page) error {
		fmt.Println("page", strings.TrimPrefix(p.Loc, srv.URL), p.LastMod.Format("2006-01-02"))
		return nil
	})
	for _, r := range reports {
		msg := "<nil>"
		if r.Err != nil {
			msg = strings.ReplaceAll(r.Err.Error(), srv.URL, "SITE")
		}
		fmt.Printf("%s: %s found %d, handed %d, rejected %v, error: %s\n",
			strings.TrimPrefix(r.URL, srv.URL), r.Format, r.Found, r.Handed, r.Rejected, msg)
	}
	// Output:
	// page /posts/1 2025-05-01
	// page /posts/2 0001-01-01
	// /posts.xml: urlset found 3, handed 2, rejected map[other host:1], error: <nil>
	// /private/old.xml: unknown found 0, handed 0, rejected map[], error: sitemap: SITE/private/old.xml not fetched: disallowed: Disallow: /private/
	// /sitemap.xml: sitemapindex found 2, handed 0, rejected map[], error: <nil>
}
