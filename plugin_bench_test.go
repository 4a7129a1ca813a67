package robots

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/testkit/testutil"
	"github.com/politecrawl/robots/usage"
)

// The plugin's benchmarks.
//
// BenchmarkPluginScale crawls many hosts side by side and reports
// efficiency: the slowest host's bound divided by the makespan. A host that
// asks for delay d and gets n pages sees n+1 requests (robots.txt first), so
// no crawl that keeps the delay can finish it in less than n·d: that is the
// host's bound. An efficiency of 1 means the crawl took no longer than its
// slowest host had to; the goal is at least 0.9. It also reports the heap the
// plugin holds per host once the crawl is over (policy cache entry, limiter
// state, statistics, and what the collector holds for the crawl: the heap
// that becomes garbage when both are dropped, less that of a plugin and
// collector that crawled nothing). Run it once per size:
//
//	go test -run '^$' -bench PluginScale -benchtime 1x .
//
// BenchmarkPluginOverhead compares a loopback request through a collector
// with and without the plugin (cached policy, no delay), and
// BenchmarkPluginPerRequest measures the plugin's own work per request
// (OnRequest hook and transport check, no I/O):
//
//	go test -run '^$' -bench 'PluginOverhead|PluginPerRequest' -benchmem -count 10 .

// BenchmarkPluginScale: 20 hosts × 10 pages at Crawl-delay 0.2 s under a
// Colly Parallelism of 4, and 1,000 hosts × 10 pages with delays of 0.1 to
// 0.5 s under a Parallelism of 32.
func BenchmarkPluginScale(b *testing.B) {
	if testing.Short() {
		b.Skip("takes seconds")
	}
	b.Run("hosts=20/parallelism=4", func(b *testing.B) {
		benchScale(b, 20, 10, 4, func(int) time.Duration { return 200 * time.Millisecond })
	})
	b.Run("hosts=1000/parallelism=32", func(b *testing.B) {
		delays := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 500 * time.Millisecond}
		benchScale(b, 1000, 10, 32, func(i int) time.Duration { return delays[i%len(delays)] })
	})
}

func benchScale(b *testing.B, hosts, pages, parallelism int, delay func(int) time.Duration) {
	sites := map[string]*testutil.Site{}
	var bound time.Duration
	for i := 0; i < hosts; i++ {
		d := delay(i)
		sites[fmt.Sprintf("h%d.test", i)] = &testutil.Site{Robots: fmt.Sprintf("User-agent: *\nDisallow: /private\nCrawl-delay: %g\n", d.Seconds())}
		bound = max(bound, time.Duration(pages)*d)
	}
	var makespan time.Duration
	var perHost float64
	for b.Loop() {
		f := testutil.NewFarm(b, sites)
		tr := f.Transport()
		tr.MaxIdleConnsPerHost = 2
		fixed := testutil.Retained(func() any { // a plugin and collector that crawled nothing
			p := mustNew(b, WithTransport(tr))
			c := newCollector(true, p.opt(b))
			p.resolver() // created on the first request
			return [2]any{p, c}
		})
		p := mustNew(b, WithTransport(tr))
		c := newCollector(true, p.opt(b))
		c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: parallelism})
		start := time.Now()
		for j := 0; j < pages; j++ {
			for i := 0; i < hosts; i++ {
				c.Visit(fmt.Sprintf("http://h%d.test/p%d", i, j))
			}
		}
		c.Wait()
		makespan = time.Since(start)
		tr.CloseIdleConnections()
		f.Server.CloseClientConnections()
		with := testutil.HeapInUse()
		runtime.KeepAlive(p)
		runtime.KeepAlive(c)
		p, c = nil, nil // what they alone hold becomes garbage
		perHost = float64(int64(with)-int64(testutil.HeapInUse())-fixed) / float64(hosts)
		for i := 0; i < hosts; i++ {
			h := fmt.Sprintf("h%d.test", i)
			hs := f.Pages(h, true)
			if len(hs) != pages+1 {
				b.Fatalf("%s: %d requests, want %d", h, len(hs), pages+1)
			}
			if g := testutil.MinGap(hs); g < delay(i) {
				b.Fatalf("%s: gap %s under its delay %s", h, g, delay(i))
			}
		}
	}
	b.ReportMetric(float64(bound)/float64(makespan), "efficiency")
	b.ReportMetric(makespan.Seconds(), "s/crawl")
	b.ReportMetric(perHost, "B/host")
}

// BenchmarkPluginOverhead: one page fetched from a loopback server by a sync
// collector, without the plugin and with it (robots.txt cached, no delay).
func BenchmarkPluginOverhead(b *testing.B) {
	f := testutil.NewFarm(b, map[string]*testutil.Site{"a.test": {Robots: "User-agent: *\nDisallow: /private\n"}})
	for _, with := range []bool{false, true} {
		name := "without"
		if with {
			name = "with"
		}
		b.Run(name, func(b *testing.B) {
			tr := f.Transport()
			defer tr.CloseIdleConnections()
			var c *colly.Collector
			if with {
				c = newCollector(false, WithRobots(WithTransport(tr), WithDefaultDelay(0)))
			} else {
				c = newCollector(false)
				c.WithTransport(tr)
			}
			visitPages(b, c)
		})
	}
}

// visitPages visits http://a.test/warm once (robots.txt, the connection),
// then http://a.test/page b.N times, timed, and fails unless every visit
// got its response.
func visitPages(b *testing.B, c *colly.Collector) {
	pages := 0
	c.OnResponse(func(*colly.Response) { pages++ })
	if err := c.Visit("http://a.test/warm"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.Visit("http://a.test/page"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if pages != b.N+1 {
		b.Fatalf("%d pages for %d visits", pages, b.N+1)
	}
}

// cannedSite answers robots.txt and every page from memory.
type cannedSite struct{ robots string }

func (s cannedSite) RoundTrip(req *http.Request) (*http.Response, error) {
	body := "ok"
	if req.URL.Path == "/robots.txt" {
		body = s.robots
	}
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// benchRT is the bare round trip's transport, called through an interface
// the compiler cannot see through.
var benchRT http.RoundTripper

// BenchmarkPluginPerRequest: the plugin's work for one allowed request on a
// cached policy, without I/O: the OnRequest hook (policy, verdict, delay,
// early wait, statistics) and the transport's check and gate around a
// canned round trip. "bare" is the canned round trip alone; the plugin's
// allocations per request are the difference (one: the gate's permit).
func BenchmarkPluginPerRequest(b *testing.B) {
	site := cannedSite{robots: testutil.TypicalRobots}
	u, _ := url.Parse("https://example.com/products/item-42?ref=home")
	b.Run("bare", func(b *testing.B) {
		req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
		// Through the interface, as the plugin calls it: the response then
		// escapes alike, and the difference in allocs/op is the plugin's.
		benchRT = site
		b.ReportAllocs()
		for b.Loop() {
			resp, _ := benchRT.RoundTrip(req)
			resp.Body.Close()
		}
	})
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"plugin/min-delay=0s", []Option{WithDefaultDelay(0)}},
		{"plugin/min-delay=1ns", []Option{WithDefaultDelay(0), WithMinDelay(time.Nanosecond)}},
		// The defaults' path (a default delay, here 1 ns so that no
		// iteration waits) with a crawler-wide cap that never binds.
		{"plugin/default-delay+max-rate", []Option{WithDefaultDelay(time.Nanosecond), WithMaxRate(1e9, 1e6)}},
		// A declared purpose: the usage check before the fetch, once, in the
		// decision path (tdmrep.json in memory).
		{"plugin/purposes=train-ai", []Option{WithDefaultDelay(0), WithUsage(usage.Config{Purposes: []string{"train-ai"}})}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			p := mustNew(b, append([]Option{WithTransport(site), WithAgents("examplebot")}, tc.opts...)...)
			c := newCollector(false, p.opt(b))
			// A request as Colly's client sends it: its context carries the
			// client's timeout (a deadline the collector's Context has not).
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
			r := &colly.Request{URL: u, Method: http.MethodGet, Ctx: colly.NewContext(), Headers: &req.Header}
			req.Header.Set("User-Agent", c.UserAgent)
			cs := (*p.handoff.slots.Load())[0]
			p.onRequest(c, cs, r) // fetches robots.txt
			if r.IsAbort() {
				b.Fatal("aborted")
			}
			resp, err := p.coll.RoundTrip(req) // takes the early pass
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
			b.ReportAllocs()
			for b.Loop() {
				p.onRequest(c, cs, r)
				resp, err := p.coll.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
			if r.IsAbort() {
				b.Fatal("aborted")
			}
		})
	}
}

// BenchmarkPluginStatsBytes reports the heap the statistics hold per
// authority.
func BenchmarkPluginStatsBytes(b *testing.B) {
	const n = 100_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("https://host-%06d.example.com", i)
	}
	for b.Loop() {
		p := mustNew(b, WithStatsCapacity(n))
		before := testutil.HeapInUse()
		for _, k := range keys {
			p.stats.record(k, HostStats{Allowed: 1})
		}
		after := testutil.HeapInUse()
		if p.Totals().Allowed != n {
			b.Fatal(p.Totals())
		}
		b.ReportMetric(float64(int64(after)-int64(before))/n, "B/authority")
	}
}

// BenchmarkPluginOnResponse: the plugin's OnResponse hook on a 20 KB HTML
// page with a robots meta element that restricts nothing for the crawler
// (X-Robots-Tag read, the head scanned for meta robots): no allocation.
func BenchmarkPluginOnResponse(b *testing.B) {
	p := mustNew(b, WithAgents("examplebot"))
	u, _ := url.Parse("https://example.com/products/item-42")
	body := []byte(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Item 42</title>` +
		`<script>window.x = "<meta name=robots content=nofollow>";</script>` +
		`<meta name="viewport" content="width=device-width"><meta name="robots" content="index, follow, max-snippet: 50">` +
		`<meta name="otherbot" content="noindex"><link rel="stylesheet" href="/s.css"></head><body>` +
		strings.Repeat(`<div class="row"><a href="/products/item-43">Item 43</a></div>`, 300) + `</body></html>`)
	h := http.Header{"Content-Type": {"text/html; charset=utf-8"}, "X-Robots-Tag": {"otherbot: noai, max-image-preview: large"}}
	r := &colly.Response{StatusCode: 200, Body: body, Headers: &h, Ctx: colly.NewContext(),
		Request: &colly.Request{URL: u, Method: http.MethodGet, Depth: 1}}
	r.Request.Ctx = r.Ctx
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		p.onNofollowResponse(r)
	}
	if r.Ctx.Get(nofollowKey) != "" {
		b.Fatal("marked nofollow")
	}
}
