package frontier_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/testkit/testutil"
)

// BenchmarkQueueEfficiency crawls 4 hosts × 6 pages at Crawl-delay 0.5 s
// with a Colly queue of 4 threads, the pages queued host after host, on the
// frontier and on Colly's InMemoryQueueStorage. efficiency is the time one
// host's requests need in series at the delay (robots.txt, then each page
// a delay after the previous request: pages × delay, the floor when the 4
// hosts run side by side) over the crawl's wall time. Run with
// -benchtime=1x: one crawl takes seconds.
func BenchmarkQueueEfficiency(b *testing.B) {
	hosts := []string{"a.example", "b.example", "c.example", "d.example"}
	const pages, delay = 6, 500 * time.Millisecond
	for _, s := range []struct {
		name string
		cfg  bool
	}{{"frontier", true}, {"colly-inmemory", false}} {
		b.Run(s.name, func(b *testing.B) {
			var total time.Duration
			for range b.N {
				var farmWall time.Duration
				if s.cfg {
					_, farmWall = crawl(b, 4, hosts, pages, "0.5", withFrontier(frontier.Config{}, nil))
				} else {
					_, farmWall = crawl(b, 4, hosts, pages, "0.5", nil)
				}
				total += farmWall
			}
			wall := total / time.Duration(b.N)
			b.ReportMetric(float64(pages*delay)/float64(wall), "efficiency")
			b.ReportMetric(wall.Seconds(), "s/crawl")
		})
	}
}

// BenchmarkFrontierCycle measures one request's way through the in-memory
// frontier (AddRequest, QueueSize, GetRequest, Done) with the plugin's
// limiter as readiness, while the given number of hosts have requests
// queued (GetRequest looks at each of them).
func BenchmarkFrontierCycle(b *testing.B) {
	for _, hosts := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("hosts=%d", hosts), func(b *testing.B) {
			f := frontier.New(frontier.Config{Ready: hostlimit.New(hostlimit.Config{})})
			for i := range hosts {
				f.AddRequest(testutil.CollyRequest(b, fmt.Sprintf("http://h%d.example/seed", i)))
			}
			reqs := make([][]byte, b.N)
			for i := range reqs {
				reqs[i] = testutil.CollyRequest(b, fmt.Sprintf("http://h%d.example/p%d", i%hosts, i))
			}
			c := colly.NewCollector()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := f.AddRequest(reqs[i]); err != nil {
					b.Fatal(err)
				}
				f.QueueSize()
				p, err := f.GetRequest()
				if err != nil {
					b.Fatal(err)
				}
				r, err := c.UnmarshalRequest(p)
				if err != nil {
					b.Fatal(err)
				}
				f.Done(leaseOf(r.Ctx))
			}
		})
	}
}

// BenchmarkGetRequestManyHosts measures a request's cycle (AddRequest,
// GetRequest, Colly's decoding, Done), and GetRequest alone
// (GetRequest-ns/op), when n hosts have requests queued and all but 10 are
// within a one-hour delay on the plugin's limiter: the frontier must not
// look at every host per call.
func BenchmarkGetRequestManyHosts(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			f, c := manyHosts(b, n)
			for range 10 { // the ready hosts' seeds; the others are looked at once
				p, err := f.GetRequest()
				if err != nil {
					b.Fatal(err)
				}
				r, _ := c.UnmarshalRequest(p)
				f.Done(leaseOf(r.Ctx))
			}
			reqs := make([][]byte, b.N)
			for i := range reqs {
				reqs[i] = testutil.CollyRequest(b, fmt.Sprintf("http://h%d.example/p%d", i%10, i))
			}
			var get time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := f.AddRequest(reqs[i]); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				p, err := f.GetRequest()
				get += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				r, err := c.UnmarshalRequest(p)
				if err != nil {
					b.Fatal(err)
				}
				f.Done(leaseOf(r.Ctx))
			}
			b.ReportMetric(float64(get.Nanoseconds())/float64(b.N), "GetRequest-ns/op")
		})
	}
}

// manyHosts returns a frontier with one request queued for each of n hosts
// h0.example … h(n-1).example, of which h0 to h9 are ready and the others
// within a one-hour delay on the limiter it reads (a permit taken and
// released with that delay), and a collector to decode what it hands out.
func manyHosts(tb testing.TB, n int) (*frontier.Frontier, *colly.Collector) {
	lim := hostlimit.New(hostlimit.Config{})
	f := frontier.New(frontier.Config{Ready: lim})
	ctx := context.Background()
	for i := range n {
		host := fmt.Sprintf("http://h%d.example", i)
		if i >= 10 {
			p, err := lim.Acquire(ctx, host, time.Hour)
			if err != nil {
				tb.Fatal(err)
			}
			p.Release()
		}
		if err := f.AddRequest(testutil.CollyRequest(tb, host+"/seed")); err != nil {
			tb.Fatal(err)
		}
	}
	return f, colly.NewCollector()
}
