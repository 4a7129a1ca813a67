package redisfleet

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

// TestCollyTwoCollectorsShareRedis: two Colly collectors with plugins of
// their own (separate resolvers, separate limiters, separate Redis
// clients, as two processes have) crawl one site with Crawl-delay 0.2
// through one Redis: robots.txt is fetched once, every page once, and the
// site never sees a request sooner than 0.2 s after the previous one
// ended, nor two at once.
func TestCollyTwoCollectorsShareRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const d = 200 * time.Millisecond
	var robotsHits atomic.Int32
	var mu sync.Mutex
	var log []visit
	inFlight, maxIn := 0, 0
	pages := map[string]int{}
	srvSite := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		mu.Lock()
		inFlight++
		maxIn = max(maxIn, inFlight)
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			robotsHits.Add(1)
			time.Sleep(50 * time.Millisecond) // long enough for the other collector to ask too
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\nCrawl-delay: 0.2\n")
		} else {
			fmt.Fprint(w, "<html>page</html>")
		}
		w.(http.Flusher).Flush()
		mu.Lock()
		inFlight--
		log = append(log, visit{start: start, end: time.Now()})
		pages[r.URL.Path]++
		mu.Unlock()
	}))
	defer srvSite.Close()

	var fetched atomic.Int32
	var calls redistest.CallCounter
	collectors := make([]*colly.Collector, 2)
	for i := range collectors {
		f := newFleet(t, srv)
		f.rdb.AddHook(&calls)
		c := colly.NewCollector(colly.Async(true), colly.UserAgent("FleetBot/1.0"),
			robots.WithRobots(robots.WithLimiter(f.Limiter(LimiterConfig{})), robots.WithPolicy(policy.WithStore(f.Store()))))
		c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2})
		c.OnResponse(func(*colly.Response) { fetched.Add(1) })
		collectors[i] = c
	}
	for i := range 10 {
		collectors[i%2].Visit(fmt.Sprintf("%s/p%d", srvSite.URL, i))
	}
	collectors[0].Visit(srvSite.URL + "/private/x")
	done := make(chan struct{})
	go func() {
		for _, c := range collectors {
			c.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the crawl did not finish in a minute")
	}
	if n := robotsHits.Load(); n != 1 {
		t.Fatalf("robots.txt fetched %d times by two collectors sharing Redis, want 1", n)
	}
	if fetched.Load() != 10 {
		t.Fatalf("%d pages fetched, want 10", fetched.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	for p, n := range pages {
		if n != 1 {
			t.Errorf("%s fetched %d times", p, n)
		}
	}
	if pages["/private/x"] != 0 {
		t.Fatal("a disallowed page was fetched")
	}
	if maxIn != 1 {
		t.Fatalf("%d requests in flight at once", maxIn)
	}
	s := &site{}
	s.visits = log
	g := minGap(s.log(), false)
	t.Logf("robots.txt fetched once; shortest gap %v for Crawl-delay %v over %d requests; %.1f Redis calls per request (robots.txt, Store and lock included)",
		g, d, len(log), float64(calls.N.Load())/float64(len(log)))
	if g < d-jitterE2S {
		t.Fatalf("shortest gap %v, want ≥ %v", g, d)
	}
}
