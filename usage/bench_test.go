package usage

import (
	"context"
	"testing"

	"github.com/politecrawl/robots/dialect"
)

// BenchmarkResolverUsage is the per-request cost of the usage check
// before the fetch, robots.txt and tdmrep.json in memory: what a crawl
// with a declared purpose adds to every request.
func BenchmarkResolverUsage(b *testing.B) {
	site := newUsageSite(b, map[string]string{
		"/robots.txt": "User-agent: *\nAllow: /\nContent-Usage: /open/ train-ai=y\nContent-Signal: search=yes\n",
		tdmPath:       `[{"location": "/books/", "tdm-reservation": 1}, {"location": "/open/*.pdf$", "tdm-reservation": 0}]`,
	})
	r := newResolver(b)
	u := mustURL(b, site.URL+"/open/paper.pdf")
	ctx := context.Background()
	if _, err := Check(ctx, r, u, dialect.TrainAI); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Check(ctx, r, u, dialect.TrainAI); err != nil {
			b.Fatal(err)
		}
	}
}
