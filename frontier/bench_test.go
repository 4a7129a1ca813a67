package frontier_test

import (
	"testing"
	"time"

	"github.com/politecrawl/robots/frontier"
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
