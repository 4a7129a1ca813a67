package robots_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots"
)

func ExampleWithRobots() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\nCrawl-delay: 0.1\n")
			return
		}
		fmt.Fprint(w, "<html></html>")
	}))
	defer site.Close()

	c := colly.NewCollector(
		colly.UserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"),
		robots.WithRobots(robots.WithOnBlocked(func(b robots.Block) {
			fmt.Println("stopped:", b.Kind, b.Reason)
		})),
	)
	c.OnResponse(func(r *colly.Response) { fmt.Println("fetched:", r.Request.URL.Path) })
	c.Visit(site.URL + "/public")
	c.Visit(site.URL + "/private/report")
	c.Wait()
	// Output:
	// fetched: /public
	// stopped: disallowed line 2: Disallow: /private
}

func ExampleAttach() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: examplebot\nDisallow: /\n")
			return
		}
		fmt.Fprint(w, "<html></html>")
	}))
	defer site.Close()

	c := colly.NewCollector(colly.UserAgent("ExampleBot/2.0"))
	p := robots.Attach(c) // one line for a collector that already exists
	c.Visit(site.URL + "/page")
	c.Wait()
	for authority, s := range p.Stats() {
		fmt.Println(authority == site.URL, "allowed", s.Allowed, "disallowed", s.Disallowed)
	}
	// Output:
	// true allowed 0 disallowed 1
}
