package policy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/politecrawl/robots/testkit/testutil"
)

// loopbackResolver returns a resolver whose fetches of any host go to one
// test server, so that it can hold many authorities.
func loopbackResolver(tb testing.TB, h http.HandlerFunc, opts ...Option) (*Resolver, *http.Transport) {
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
		MaxIdleConns: 64, MaxIdleConnsPerHost: 1,
	}
	tb.Cleanup(tr.CloseIdleConnections)
	return newResolver(tb, append([]Option{WithHTTPClient(&http.Client{Transport: tr})}, opts...)...), tr
}

// fill asks for the policies of n authorities h0.test ... with 16 goroutines.
func fill(tb testing.TB, r *Resolver, n int) []*url.URL {
	return fillFrom(tb, r, 0, n)
}

// fillFrom is fill for the authorities h<from>.test ... h<from+n-1>.test.
func fillFrom(tb testing.TB, r *Resolver, from, n int) []*url.URL {
	urls := make([]*url.URL, n)
	for i := range urls {
		urls[i], _ = url.Parse(fmt.Sprintf("http://h%d.test/private/page-%d?x=1", from+i, from+i))
	}
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += 16 {
				if _, err := r.Policy(context.Background(), urls[i]); err != nil {
					tb.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	return urls
}

var benchOnce struct {
	sync.Once
	r    *Resolver
	urls []*url.URL
}

// benchResolver returns a resolver holding the policies of 10,000
// authorities (filled once per process) and a URL of each.
func benchResolver(b *testing.B) (*Resolver, []*url.URL) {
	benchOnce.Do(func() {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(testutil.TypicalRobots))
		}))
		addr := srv.Listener.Addr().String()
		tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}, MaxIdleConns: 64, MaxIdleConnsPerHost: 1}
		benchOnce.r = newResolver(b, WithHTTPClient(&http.Client{Transport: tr}), WithAgents("examplebot"), WithCapacity(10000))
		benchOnce.urls = fill(b, benchOnce.r, 10000)
		tr.CloseIdleConnections()
		srv.Close()
	})
	if benchOnce.r.Len() != len(benchOnce.urls) {
		b.Fatalf("%d cached", benchOnce.r.Len())
	}
	return benchOnce.r, benchOnce.urls
}

// BenchmarkCachedPolicy: policy lookup and check for a URL among 10,000
// cached authorities.
func BenchmarkCachedPolicy(b *testing.B) {
	r, urls := benchResolver(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	disallowed := 0
	for i := 0; i < b.N; i++ {
		u := urls[(i*7919)%len(urls)]
		p, err := r.Policy(ctx, u)
		if err != nil {
			b.Fatal(err)
		}
		if !p.Check(u).Allowed {
			disallowed++
		}
	}
	if disallowed != b.N {
		b.Fatalf("%d of %d disallowed", disallowed, b.N)
	}
}

// BenchmarkCachedPolicyParallel is BenchmarkCachedPolicy from GOMAXPROCS
// goroutines.
func BenchmarkCachedPolicyParallel(b *testing.B) {
	r, urls := benchResolver(b)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			u := urls[(i*7919)%len(urls)]
			p, _ := r.Policy(context.Background(), u)
			p.Check(u)
			i++
		}
	})
}

// TestCachedPolicyDoesNotAllocate: the cached path, lookup and check.
func TestCachedPolicyDoesNotAllocate(t *testing.T) {
	r, _ := loopbackResolver(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(testutil.TypicalRobots))
	}, WithAgents("examplebot"))
	urls := fill(t, r, 10)
	ctx := context.Background()
	n := testing.AllocsPerRun(1000, func() {
		for _, u := range urls {
			p, _ := r.Policy(ctx, u)
			if p.Check(u).Allowed {
				t.Fatal("allowed")
			}
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per 10 lookups", n)
	}
}

// bytesPerEntryCases are the robots.txt files of BenchmarkBytesPerEntry and
// TestCacheBytesTracksHeap; ceiling is the test's bound on the heap per
// entry (about twice the figure measured in November 2026).
var bytesPerEntryCases = []struct {
	name    string
	status  int
	body    string
	ceiling float64
}{
	{"404", 404, "", 800},                          // no robots.txt
	{"small", 200, rulesBody, 3000},                // 2 lines
	{"typical", 200, testutil.TypicalRobots, 8000}, // 600 bytes, 16 rules
}

// heapPerEntry fills a new resolver with the policies of 2n authorities that
// all answer status and body, and returns what the second n hold: the growth
// of the heap (after GC) divided by n, and the growth of the resolver's own
// estimate (Resolver.Bytes) divided by n. The first n take the one-time
// costs (the cache's first tables) out of the figure; the answers come from
// memory (cannedBody), so that no connection buffers or server goroutines
// blur it.
func heapPerEntry(tb testing.TB, status int, body string, n int) (heap, estimate float64) {
	r := newResolver(tb, WithHTTPClient(&http.Client{Transport: cannedBody(status, body)}), WithAgents("examplebot"), WithCapacity(2*n))
	fillFrom(tb, r, 0, n)
	before, estBefore := testutil.HeapInUse(), r.Bytes()
	fillFrom(tb, r, n, n)
	after, estAfter := testutil.HeapInUse(), r.Bytes()
	if r.Len() != 2*n {
		tb.Fatalf("%d policies cached, want %d", r.Len(), 2*n)
	}
	runtime.KeepAlive(r)
	return float64(int64(after)-int64(before)) / float64(n), float64(estAfter-estBefore) / float64(n)
}

// cannedBody returns a RoundTripper that answers every request with status
// and a text/plain body, from memory.
func cannedBody(status int, body string) roundTripFunc {
	return func(req *http.Request) (*http.Response, error) {
		return &http.Response{
			StatusCode: status, Status: http.StatusText(status),
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header:        http.Header{"Content-Type": {"text/plain"}},
			Body:          io.NopCloser(strings.NewReader(body)),
			ContentLength: int64(len(body)),
			Request:       req,
		}, nil
	}
}

// BenchmarkBytesPerEntry measures the memory an authority's policy takes in
// the cache: heap after GC, divided by the number of entries (the last
// 5,000 of 10,000 per run), reported as B/entry (see doc.go and the README). Run it with
//
//	go test -run '^$' -bench BytesPerEntry -benchtime 1x ./policy
func BenchmarkBytesPerEntry(b *testing.B) {
	for _, c := range bytesPerEntryCases {
		b.Run(c.name, func(b *testing.B) {
			var heap, est float64
			for b.Loop() {
				h, e := heapPerEntry(b, c.status, c.body, 5000)
				heap += h
				est += e
			}
			b.ReportMetric(heap/float64(b.N), "B/entry")
			b.ReportMetric(est/float64(b.N), "estimated-B/entry")
		})
	}
}

// The cache's byte estimate (WithCacheBytes, Resolver.Bytes) tracks the heap
// the policies really hold, within [0.7, 1.3] of it per entry, and that heap
// stays under its ceiling, for an authority without robots.txt, a small file
// and a typical one.
func TestCacheBytesTracksHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	for _, c := range bytesPerEntryCases {
		heap, est := heapPerEntry(t, c.status, c.body, 500)
		t.Logf("%s: %.0f bytes per entry on the heap, %.0f estimated", c.name, heap, est)
		if heap > c.ceiling {
			t.Errorf("%s: %.0f bytes per entry on the heap, more than %.0f", c.name, heap, c.ceiling)
		}
		if ratio := est / heap; ratio < 0.7 || ratio > 1.3 {
			t.Errorf("%s: estimate %.0f bytes per entry for %.0f on the heap (ratio %.2f)", c.name, est, heap, ratio)
		}
	}
}

// BenchmarkCachedPolicyLookup is the lookup of BenchmarkCachedPolicy alone.
func BenchmarkCachedPolicyLookup(b *testing.B) {
	r, urls := benchResolver(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Policy(ctx, urls[(i*7919)%len(urls)]); err != nil {
			b.Fatal(err)
		}
	}
}

// roundTripFunc is a RoundTripper written as a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
