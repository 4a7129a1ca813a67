package robots_test

import (
	"fmt"
	"github.com/politecrawl/robots/usage"
	"net/http"
	"net/http/httptest"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots"
)

// A crawler that trains AI models declares it: pages whose robots.txt says
// train-ai=n are not fetched, and a fetched page whose Content-Usage header
// says train-ai=n is marked so that the spider drops it.
func ExampleWithUsage() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nContent-Signal: search=yes, ai-train=no\nContent-Usage: /open/ train-ai=y\n")
		case "/open/private-notes":
			w.Header().Set("Content-Usage", "train-ai=n")
			fmt.Fprint(w, "<html>notes</html>")
		default:
			fmt.Fprint(w, "<html>page</html>")
		}
	}))
	defer site.Close()

	c := colly.NewCollector(
		colly.UserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"),
		robots.WithRobots(robots.WithUsage(usage.Config{Purposes: []string{"train-ai"}}), robots.WithOnBlocked(func(b robots.Block) {
			fmt.Println("not fetched:", b.Kind, b.Reason)
		})),
	)
	c.OnScraped(func(r *colly.Response) {
		if u, _ := robots.UsageOf(r); u.Refused != "" {
			fmt.Println("dropped:", r.Request.URL.Path, "-", u.Refused)
			return
		}
		fmt.Println("kept for training:", r.Request.URL.Path)
	})
	c.Visit(site.URL + "/blog/post")
	c.Visit(site.URL + "/open/dataset")
	c.Visit(site.URL + "/open/private-notes")
	c.Wait()
	// Output:
	// not fetched: usage-disallowed train-ai=n: robots.txt line 2: Content-Signal: search=yes, ai-train=no
	// kept for training: /open/dataset
	// dropped: /open/private-notes - train-ai=n: Content-Usage header: train-ai=n
}

// A crawler that reproduces content in full declares it; a site whose
// Content-Signal says use=reference is not crawled.
func ExampleWithUsage_useLevel() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nContent-Signal: search=yes, use=reference\nAllow: /\n")
			return
		}
		fmt.Fprint(w, "<html>page</html>")
	}))
	defer site.Close()

	c := colly.NewCollector(
		colly.UserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"),
		robots.WithRobots(robots.WithUsage(usage.Config{Use: "full"}), robots.WithOnBlocked(func(b robots.Block) {
			fmt.Println("not fetched:", b.Kind, b.Reason)
		})),
	)
	c.OnResponse(func(r *colly.Response) { fmt.Println("fetched", r.Request.URL.Path) })
	c.Visit(site.URL + "/article")
	// Output:
	// not fetched: usage-disallowed use=reference: robots.txt line 2: Content-Signal: search=yes, use=reference
}
