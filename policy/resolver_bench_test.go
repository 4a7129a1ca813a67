package policy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"sync"
	"testing"

	"github.com/politecrawl/robots/internal/testutil"
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
	return NewResolver(append([]Option{WithHTTPClient(&http.Client{Transport: tr})}, opts...)...), tr
}

// fill asks for the policies of n authorities h0.test ... with 16 goroutines.
func fill(tb testing.TB, r *Resolver, n int) []*url.URL {
	urls := make([]*url.URL, n)
	for i := range urls {
		urls[i], _ = url.Parse(fmt.Sprintf("http://h%d.test/private/page-%d?x=1", i, i))
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
		benchOnce.r = NewResolver(WithHTTPClient(&http.Client{Transport: tr}), WithAgents("examplebot"), WithCapacity(10000))
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

// TestBytesPerEntry measures the memory an authority's policy takes in the
// cache (heap after GC, divided by the number of entries); see doc.go.
func TestBytesPerEntry(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 5,000 authorities")
	}
	for _, c := range []struct {
		name   string
		status int
		body   string
	}{{"404 (no robots.txt)", 404, ""}, {"small robots.txt (2 lines)", 200, rulesBody}, {"typical robots.txt (600 bytes, 16 rules)", 200, testutil.TypicalRobots}} {
		r, tr := loopbackResolver(t, text(c.status, c.body), WithAgents("examplebot"))
		const n = 5000
		before := testutil.HeapInUse()
		fill(t, r, n)
		tr.CloseIdleConnections()
		after := testutil.HeapInUse()
		per := float64(after-before) / n
		t.Logf("%s: %.0f bytes per cache entry", c.name, per)
		if per > 64<<10 {
			t.Errorf("%s: %.0f bytes per entry", c.name, per)
		}
		runtime.KeepAlive(r)
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
