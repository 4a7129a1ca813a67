package robots_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/frontier"
)

// A Colly queue on the in-memory per-host frontier: AttachFrontier reports
// each request done (fetched or stopped), which frees its host for the
// next one. Disallowed requests are stopped by the plugin and reported done
// too; a URL queued twice is refused with frontier.ErrSeen.
func ExampleAttachFrontier() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\nCrawl-delay: 0.05\n")
			return
		}
		fmt.Fprint(w, "<html></html>")
	}))
	defer site.Close()

	var mu sync.Mutex
	var log []string
	note := func(s string) { mu.Lock(); log = append(log, s); mu.Unlock() }

	c := colly.NewCollector(colly.UserAgent("ExampleBot/1.0"))
	p, err := robots.Attach(c, robots.WithOnBlocked(func(b robots.Block) { note("stopped: " + strings.TrimPrefix(b.URL, site.URL)) }))
	if err != nil {
		fmt.Println(err)
		return
	}
	c.OnResponse(func(r *colly.Response) { note("fetched: " + r.Request.URL.Path) })
	f := frontier.New(frontier.Config{Ready: p.Limiter().(frontier.Readiness)})
	robots.AttachFrontier(c, f)
	q, _ := queue.New(2, f)
	for _, path := range []string{"/", "/a", "/private/b", "/a"} {
		if err := q.AddURL(site.URL + path); err != nil {
			fmt.Println(path, err)
		}
	}
	q.Run(c)
	slices.Sort(log)
	for _, s := range log {
		fmt.Println(s)
	}
	n, _ := f.QueueSize()
	fmt.Println("left in the frontier:", n)
	// Output:
	// /a frontier: the request was queued before
	// fetched: /
	// fetched: /a
	// stopped: /private/b
	// left in the frontier: 0
}
