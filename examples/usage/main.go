// Command usage crawls a small local site for a declared purpose, AI
// training, with Colly and the robots plugin: no network is needed, and
// nothing is trained. It shows the site's usage preferences honoured end to
// end:
//
//   - robots.txt states them per path: a Content-Signal line (Cloudflare's
//     managed robots.txt says ai-train=no for the whole site) and
//     Content-Usage rules of draft-ietf-aipref-attach (the longest path
//     wins: /open-data/ may train, /open-data/partners/ may not);
//   - a page answers a Content-Usage: train-ai=n response header, another
//     an X-Robots-Tag: noai header.
//
// The crawl declares robots.WithUsage(usage.Config{Purposes: []string{"train-ai"}}). It prints what was
// fetched and kept, what was fetched and then dropped because a header
// refused the purpose (a response cannot be unfetched: the plugin marks it,
// the spider drops it), what was never fetched with the robots.txt line
// that decided, and the requests the server saw.
//
//	go run ./examples/usage
package main

import (
	"context"
	"fmt"
	"github.com/politecrawl/robots/usage"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots"
)

// robotsTxt is the site's robots.txt: crawl everything but /drafts/; no
// training on the site (line 4) except its open data (line 5), and not on
// the partners' part of it (line 6).
const robotsTxt = `# notes.demo robots.txt
User-agent: *
Disallow: /drafts/
Content-Signal: search=yes, ai-train=no
Content-Usage: /open-data/ train-ai=y
Content-Usage: /open-data/partners/ train-ai=n
`

// pages maps each page to its links.
var pages = map[string][]string{
	"/":                        {"/open-data/", "/blog/hello"},
	"/blog/hello":              {"/"},
	"/open-data/":              {"/open-data/weather", "/open-data/photos", "/open-data/satellite", "/open-data/partners/maps", "/drafts/census-2027", "/blog/hello"},
	"/open-data/weather":       {"/open-data/"},
	"/open-data/photos":        {"/open-data/"},
	"/open-data/satellite":     {"/open-data/"},
	"/open-data/partners/maps": {},
	"/drafts/census-2027":      {},
}

// headers are the response headers of some pages that refuse training,
// whatever robots.txt says: the photos' photographers state it with
// Content-Usage, the satellite imagery's provider with X-Robots-Tag's noai.
var headers = map[string][2]string{
	"/open-data/photos":    {"Content-Usage", "train-ai=n"},
	"/open-data/satellite": {"X-Robots-Tag", "noai"},
}

// site serves notes.demo and logs the paths it is asked for.
type site struct {
	mu   sync.Mutex
	seen []string
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, r.URL.Path)
	s.mu.Unlock()
	if r.URL.Path == "/robots.txt" {
		io.WriteString(w, robotsTxt)
		return
	}
	links, ok := pages[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if h, ok := headers[r.URL.Path]; ok {
		w.Header().Set(h[0], h[1])
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<html><body><h1>notes.demo%s</h1>", r.URL.Path)
	for _, l := range links {
		fmt.Fprintf(w, `<a href="%s">%s</a> `, l, l)
	}
	io.WriteString(w, "</body></html>")
}

func main() { run(os.Stdout) }

// run crawls notes.demo for train-ai and writes the report to w.
func run(w io.Writer) {
	s := &site{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	// notes.demo goes to the local server.
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	transport := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialer.DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	defer transport.CloseIdleConnections()

	var stopped []robots.Block
	refused := 0
	c := colly.NewCollector(
		colly.UserAgent("Mozilla/5.0 (compatible; TrainBot/0.1; +https://example.com/trainbot)"),
		colly.AllowedDomains("notes.demo"),
	)
	p, err := robots.Attach(c,
		// Every response whose usage preference refuses the purpose.
		robots.WithUsage(usage.Config{Purposes: []string{"train-ai"}}, func(*colly.Response, robots.ResponseUsage) { refused++ }),
		robots.WithTransport(transport),
		// A local site: the default 1 s between two requests would only
		// make the example slow.
		robots.WithDefaultDelay(50*time.Millisecond),
		// Every request the plugin stops, robots.txt's crawl rules and its
		// usage preferences alike, with the line that decided.
		robots.WithOnBlocked(func(b robots.Block) { stopped = append(stopped, b) }),
	)
	if err != nil {
		fmt.Fprintln(w, err)
		return
	}
	kept, dropped := 0, 0
	// The spider keeps or drops each page for training here. The plugin's
	// mark is there for OnResponse callbacks registered after Attach, and
	// for every OnHTML, OnXML and OnScraped callback.
	c.OnResponse(func(r *colly.Response) {
		u, _ := robots.UsageOf(r)
		if u.Refused != "" {
			dropped++
			fmt.Fprintf(w, "  fetched, dropped  %-42s %s\n", r.Request.URL, u.Refused)
			return
		}
		kept++
		fmt.Fprintf(w, "  fetched, kept     %-42s %s\n", r.Request.URL, u.Usage)
	})
	// Links are followed from every page fetched, dropped ones included:
	// the purpose limits what is used, not where the crawler may go.
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })

	fmt.Fprintln(w, `crawling notes.demo for "train-ai" (robots.WithUsage)`)
	fmt.Fprintln(w)
	for _, start := range []string{"http://notes.demo/", "http://notes.demo/open-data/"} {
		c.Visit(start)
	}
	c.Wait()

	fmt.Fprintf(w, "\nnever fetched (%d):\n", len(stopped))
	sort.Slice(stopped, func(i, j int) bool { return stopped[i].URL < stopped[j].URL })
	for _, b := range stopped {
		fmt.Fprintf(w, "  %-16s %-42s %s\n", b.Kind, b.URL, b.Reason)
	}
	s.mu.Lock()
	seen := strings.Join(s.seen, " ")
	s.mu.Unlock()
	t := p.Totals()
	fmt.Fprintf(w, "\nkept for training: %d; dropped after the fetch: %d (WithUsage's function saw %d, Totals().UsageMarked %d)\n", kept, dropped, refused, t.UsageMarked)
	fmt.Fprintf(w, "never fetched: %d for the purpose (Totals().UsageDisallowed), %d by a crawl rule (Totals().Disallowed)\n", t.UsageDisallowed, t.Disallowed)
	fmt.Fprintf(w, "the server saw: %s\n", seen)
}
