package robots

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/testkit/testutil"
)

// BenchmarkSitemapFeed50k feeds a 50,000-URL sitemap into an Async
// collector and reports the peak goroutines and heap while it runs: with
// the default window, and with a window as large as the sitemap (what
// feeding without backpressure costs).
func BenchmarkSitemapFeed50k(b *testing.B) {
	for _, w := range []int{sitemapWindow, 50_000} {
		b.Run(fmt.Sprintf("window=%d", w), func(b *testing.B) { benchSitemapFeed(b, w) })
	}
}

func benchSitemapFeed(b *testing.B, window int) {
	const n = 50_000
	locs := make([]string, n)
	for i := range locs {
		locs[i] = fmt.Sprintf("http://a.test/page/%d", i)
	}
	doc := testutil.URLSet(locs...)
	for range b.N {
		f := testutil.NewFarm(b, map[string]*testutil.Site{"a.test": {
			Robots: "User-agent: *\nSitemap: http://a.test/sitemap.xml\n",
			Handle: func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path == "/sitemap.xml" {
					fmt.Fprint(w, doc)
					return true
				}
				return false
			},
		}})
		tr := f.Transport()
		p := mustNew(b, WithTransport(tr), WithDefaultDelay(0), WithSitemaps(), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		p.sitemaps.window = window
		c := colly.NewCollector(colly.Async(true), p.opt(b))
		base := runtime.NumGoroutine()
		runtime.GC()
		var m0 runtime.MemStats
		runtime.ReadMemStats(&m0)
		var peakG atomic.Int64
		var peakHeap atomic.Uint64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				if g := int64(runtime.NumGoroutine()); g > peakG.Load() {
					peakG.Store(g)
				}
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peakHeap.Load() {
					peakHeap.Store(m.HeapAlloc)
				}
			}
		}()
		c.Visit("http://a.test/")
		c.Wait()
		close(stop)
		wg.Wait()
		if tot := p.SitemapTotals(); tot.Handed != n {
			b.Fatalf("handed %d", tot.Handed)
		}
		if hs := f.Pages("a.test", false); len(hs) != n+2 {
			b.Fatalf("%d requests, want %d (the home page, the sitemap, its pages)", len(hs), n+2)
		}
		b.ReportMetric(float64(peakG.Load()-int64(base)), "peak-goroutines")
		b.ReportMetric(float64(peakHeap.Load()-m0.HeapAlloc)/(1<<20), "peak-heap-MiB")
		tr.CloseIdleConnections()
		f.Server.Close()
	}
}
