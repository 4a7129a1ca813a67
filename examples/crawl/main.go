// Command crawl crawls one site politely with Colly and the robots plugin:
// robots.txt as the chosen dialect reads it, Crawl-delay honoured, every
// stopped request printed with its reason.
//
//	go run ./examples/crawl [-dialect D] [-agent UA] [-max N] [-min-delay D] URL
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/dialect"
)

func main() {
	dialectName := flag.String("dialect", "rfc9309", "robots.txt dialect: "+strings.Join(dialect.Names(), ", "))
	agent := flag.String("agent", "Mozilla/5.0 (compatible; PoliteCrawl/0.1; +https://github.com/politecrawl/robots)", "User-Agent header (its product token selects the robots.txt group)")
	maxPages := flag.Int("max", 50, "follow at most this many links")
	minDelay := flag.Duration("min-delay", time.Second, "least time between two requests to one host")
	verbose := flag.Bool("v", false, "log robots.txt fetches")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: crawl [-dialect D] [-agent UA] [-max N] [-min-delay D] URL")
		os.Exit(2)
	}
	start, err := url.Parse(flag.Arg(0))
	if err != nil || (start.Scheme != "http" && start.Scheme != "https") {
		fmt.Fprintln(os.Stderr, "crawl: need an http(s) URL")
		os.Exit(2)
	}
	d, err := dialect.Lookup(*dialectName)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crawl:", err)
		os.Exit(2)
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	p := robots.New(
		robots.WithDialect(d),
		robots.WithMinDelay(*minDelay),
		robots.WithLogger(log),
		robots.WithOnBlocked(func(b robots.Block) { fmt.Printf("stopped  %s: %s\n", b.URL, b.Reason) }),
	)
	c := colly.NewCollector(colly.UserAgent(*agent), colly.AllowedDomains(start.Hostname()), colly.Async(true), p.Option())
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4})
	var n atomic.Int64
	c.OnResponse(func(r *colly.Response) { fmt.Printf("fetched  %d %s\n", r.StatusCode, r.Request.URL) })
	c.OnError(func(r *colly.Response, err error) { fmt.Printf("error    %s: %v\n", r.Request.URL, err) })
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		if n.Add(1) <= int64(*maxPages) {
			e.Request.Visit(e.Attr("href"))
		}
	})
	c.Visit(start.String())
	c.Wait()
	for a, s := range p.Stats() {
		fmt.Printf("%s: allowed %d, disallowed %d, deferred %d, skipped %d, waited %s\n", a, s.Allowed, s.Disallowed, s.Deferred, s.Skipped, s.Waited.Round(time.Millisecond))
	}
}
