package robots_test

// Hostile servers against a real Colly collector: a host
// that answers 429 forever, and a thousand first requests to one host at
// once. Time bounds are lower bounds, or generous upper bounds: other tests
// and fuzzers share the machine.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/testkit/testutil"
)

const hostileUA = "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"

// hostileBlocks collects what the plugin reports.
type hostileBlocks struct {
	mu sync.Mutex
	bs []robots.Block
}

func (l *hostileBlocks) add(b robots.Block) { l.mu.Lock(); l.bs = append(l.bs, b); l.mu.Unlock() }

func (l *hostileBlocks) all() []robots.Block {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]robots.Block(nil), l.bs...)
}

// hostileServer starts a loopback server running h, and a transport to it
// of the test's own; both are closed (the transport's idle connections
// first) when the test ends.
func hostileServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *http.Transport) {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return srv, tr
}

// TestHostile429Forever: every page answers 429, with "Retry-After: 1" or
// with none (then the plugin's exponential backoff). The crawl is paced by
// the pauses, on the limiter's clock (a fake one that jumps to its next
// timer: the server never sees two pages closer than the pause in force),
// c.Wait() returns once the collector's context ends (canceled once a few
// 429s have come back), and every page is fetched or reported,
// never both: none is lost.
//
// One more ending is possible on a starved machine: a page let through by
// the gate just before the cancel whose send then fails in net/http with
// the context's error. The plugin no longer holds it, so it reaches Colly's
// OnError only; it is counted as such (and logged), not as lost.
func TestHostile429Forever(t *testing.T) {
	testutil.CheckGoroutines(t)
	const pages, seen = 10, 4
	for _, tc := range []struct {
		name       string
		retryAfter string
		base, max  time.Duration // the limiter's backoff (hostlimit.Config)
		// pause is the least gap the server must see before page i+1 (i ≥ 1:
		// after the i-th 429).
		pause func(i int) time.Duration
	}{
		// The backoff (used when no Retry-After is read) is 20 ms: only the
		// header gives 1 s.
		{"Retry-After: 1", "1", 20 * time.Millisecond, 20 * time.Millisecond,
			func(int) time.Duration { return time.Second }},
		// 250 ms, 500 ms, 1 s, 1 s...
		{"no Retry-After (backoff from 250ms to 1s)", "", 250 * time.Millisecond, time.Second,
			func(i int) time.Duration { return min(250*time.Millisecond<<(i-1), time.Second) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := testutil.NewFakeClock()
			defer clock.Jump()()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var (
				mu    sync.Mutex
				hits  []time.Time
				paths []string
			)
			srv, tr := hostileServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
					return
				}
				mu.Lock()
				hits = append(hits, clock.Now())
				paths = append(paths, r.URL.Path)
				mu.Unlock()
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				http.Error(w, "slow down", http.StatusTooManyRequests)
			})
			var blocks hostileBlocks
			// WithMinDelay keeps one page in flight (end-to-start spacing), so
			// that each 429 is seen before the next page is let through.
			p := mustNew(t, robots.WithTransport(tr), robots.WithDefaultDelay(0), robots.WithOnBlocked(blocks.add), robots.WithRetries(0),
				robots.WithMinDelay(time.Millisecond), robots.WithLimiter(hostlimit.New(hostlimit.Config{BackoffBase: tc.base, BackoffMax: tc.max, Clock: clock})))
			c := colly.NewCollector(colly.UserAgent(hostileUA), colly.Async(true), colly.StdlibContext(ctx), attach(t, p))
			if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
				t.Fatal(err)
			}
			var statuses atomic.Int64
			var errsMu sync.Mutex
			failed := map[string]string{}   // path → error, for errors other than the 429s
			stoppedErr := map[string]bool{} // paths whose stop reached OnError
			c.OnError(func(r *colly.Response, err error) {
				if r != nil && r.StatusCode == http.StatusTooManyRequests {
					if statuses.Add(1) == seen {
						cancel() // the next page waits for its turn: it is stopped there
					}
					return
				}
				if errors.Is(err, robots.ErrBlocked) {
					// A stop reaches OnError too; it must also be reported.
					errsMu.Lock()
					stoppedErr[r.Request.URL.Path] = true
					errsMu.Unlock()
					return
				}
				errsMu.Lock()
				failed[r.Request.URL.Path] = err.Error()
				errsMu.Unlock()
			})

			for i := range pages {
				if err := c.Visit(fmt.Sprintf("%s/p%d", srv.URL, i)); err != nil {
					t.Fatal(err)
				}
			}
			c.Wait()

			mu.Lock()
			fetched := append([]time.Time(nil), hits...)
			sent := map[string]bool{}
			for _, p := range paths {
				sent[p] = true
			}
			mu.Unlock()
			bs := blocks.all()
			var gaps []string
			for i := 1; i < len(fetched); i++ {
				g := fetched[i].Sub(fetched[i-1])
				gaps = append(gaps, g.Round(time.Millisecond).String())
				if want := tc.pause(i); g < want {
					t.Errorf("page %d came %s after page %d, want at least %s", i+1, g, i, want)
				}
			}
			errsMu.Lock()
			defer errsMu.Unlock()
			t.Logf("%d pages fetched (gaps %s), %d reported, %d failed in net/http",
				len(fetched), strings.Join(gaps, " "), len(bs), len(failed))
			if len(fetched) < seen || len(fetched) == pages {
				t.Errorf("%d pages fetched: want the %d before the cancel (and perhaps one in flight), not all", len(fetched), seen)
			}
			reported := map[string]bool{}
			for _, b := range bs {
				path := strings.TrimPrefix(b.URL, srv.URL)
				if sent[path] {
					t.Errorf("%s was reported stopped, and the server saw it: %s", path, b)
				}
				reported[path] = true
			}
			for i := range pages {
				path := fmt.Sprintf("/p%d", i)
				if _, ok := failed[path]; !sent[path] && !reported[path] && !ok {
					t.Errorf("%s lost: neither fetched, nor reported, nor failed", path)
				}
				if _, ok := failed[path]; ok && reported[path] {
					t.Errorf("%s reported, and failed in net/http: %s", path, failed[path])
				}
				if reported[path] != stoppedErr[path] {
					t.Errorf("%s: reported %v, reached OnError with ErrBlocked %v; want both or neither", path, reported[path], stoppedErr[path])
				}
			}
			if len(failed) > 0 {
				t.Logf("failed in net/http: %q", failed)
			}
			if n := statuses.Load(); n != int64(len(fetched)) {
				t.Errorf("%d 429s reached OnError, the server sent %d", n, len(fetched))
			}
			for _, b := range bs {
				if b.Kind != robots.Canceled {
					t.Errorf("reported %s, want canceled: %s", b.Kind, b)
				}
			}
			if got := p.Totals().Canceled; got != int64(len(bs)) {
				t.Errorf("Totals().Canceled %d, %d reported", got, len(bs))
			}
		})
	}
}

// TestHostileConcurrentFirstCrawl: 1,000 pages of one host visited at once
// by an Async collector (Parallelism 50), before robots.txt is known:
// robots.txt is fetched once, and every page once.
func TestHostileConcurrentFirstCrawl(t *testing.T) {
	testutil.CheckGoroutines(t)
	const pages = 1000
	var robotsFetches, pageHits atomic.Int64
	visited := make(chan struct{}) // closed once every page was visited
	srv, tr := hostileServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robotsFetches.Add(1)
			<-visited // the pages pile up behind it
			_, _ = io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		pageHits.Add(1)
		_, _ = io.WriteString(w, "<html><body>ok</body></html>")
	})
	var blocks hostileBlocks
	p := mustNew(t, robots.WithTransport(tr), robots.WithDefaultDelay(0), robots.WithOnBlocked(blocks.add))
	c := colly.NewCollector(colly.UserAgent(hostileUA), colly.Async(true), attach(t, p))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 50}); err != nil {
		t.Fatal(err)
	}
	var responses atomic.Int64
	c.OnResponse(func(*colly.Response) { responses.Add(1) })
	start := time.Now()
	for i := range pages {
		if err := c.Visit(fmt.Sprintf("%s/page/%d", srv.URL, i)); err != nil {
			t.Fatal(err)
		}
	}
	close(visited)
	c.Wait()
	t.Logf("%d pages crawled in %s; robots.txt fetched %d time(s)", pages, time.Since(start).Round(time.Millisecond), robotsFetches.Load())
	if n := robotsFetches.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1", n)
	}
	if n, r := pageHits.Load(), responses.Load(); n != pages || r != pages {
		t.Errorf("server saw %d pages, %d responses; want %d", n, r, pages)
	}
	if bs := blocks.all(); len(bs) != 0 {
		t.Errorf("%d requests stopped, the first: %s", len(bs), bs[0])
	}
	if tot := p.Totals(); tot.Allowed != pages {
		t.Errorf("Totals().Allowed %d, want %d", tot.Allowed, pages)
	}
}

// stalledRedirect crawls one page whose answer redirects to another host
// whose robots.txt never answers, with a collector whose context ends after
// deadline. It returns the plugin, what it reported, how long after the
// deadline c.Wait() returned, and the target's authority.
func stalledRedirect(t *testing.T, deadline time.Duration) (p *robots.Plugin, bs []robots.Block, late time.Duration, target string) {
	stop := make(chan struct{})
	stalled, tr := hostileServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(stop) }) // before the server closes
	first, _ := hostileServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		http.Redirect(w, r, stalled.URL+"/page", http.StatusFound)
	})
	var blocks hostileBlocks
	// The robots.txt fetch outlasts the deadline (and ends when the test
	// does, with the stalled server).
	p = mustNew(t, robots.WithTransport(tr), robots.WithDefaultDelay(0), robots.WithOnBlocked(blocks.add), robots.WithPolicy(policy.WithTimeout(10*time.Second)))
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	c := colly.NewCollector(colly.UserAgent(hostileUA), colly.StdlibContext(ctx), attach(t, p))
	dl, _ := ctx.Deadline()
	_ = c.Visit(first.URL + "/start") // fails: the redirect hop is stopped
	c.Wait()
	return p, blocks.all(), time.Since(dl), "http://" + stalled.Listener.Addr().String()
}

// TestHostileRedirectToStalledRobots: a page redirects to a host whose
// robots.txt never answers, and the crawl's context ends while the hop
// waits for it: the hop is reported canceled (nothing is lost) and c.Wait()
// returns at the deadline. The deadline is the context's, on the wall
// clock: a second, for the first page and its redirect on a loaded
// machine.
func TestHostileRedirectToStalledRobots(t *testing.T) {
	testutil.CheckGoroutines(t)
	const deadline = time.Second
	p, bs, late, target := stalledRedirect(t, deadline)
	t.Logf("c.Wait() returned %s after the deadline; reported %q", late.Round(time.Millisecond), bs)
	if late < 0 || late > 5*time.Second {
		t.Errorf("c.Wait() returned %s after the %s deadline, want at it", late, deadline)
	}
	if len(bs) != 1 || bs[0].Kind != robots.Canceled || !bs[0].Redirect || bs[0].URL != target+"/page" {
		t.Fatalf("reported %q, want the redirect hop to %s/page, canceled", bs, target)
	}
	if got := p.Totals().Canceled; got != 1 {
		t.Errorf("Totals().Canceled %d, want 1", got)
	}
}

// TestHostileRedirectToStalledRobotsAuthority: the report of that hop, and
// the statistics, name the authority it was stopped for.
func TestHostileRedirectToStalledRobotsAuthority(t *testing.T) {
	testutil.CheckGoroutines(t)
	p, bs, _, target := stalledRedirect(t, time.Second)
	if len(bs) != 1 || bs[0].Authority != target {
		t.Errorf("reported %q with authority %q, want %s", bs, bs[0].Authority, target)
	}
	st := p.Stats()
	if _, ok := st[""]; ok {
		t.Errorf("Stats() has an entry for the empty authority: %+v", st[""])
	}
	if st[target].Canceled != 1 {
		t.Errorf("Stats()[%s].Canceled %d, want 1", target, st[target].Canceled)
	}
}

// mustNew is robots.New, failing the test on an error.
func mustNew(t testing.TB, opts ...robots.Option) *robots.Plugin {
	t.Helper()
	p, err := robots.New(opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// attach is a Colly option attaching p, failing the test on an error.
func attach(t testing.TB, p *robots.Plugin) colly.CollectorOption {
	return func(c *colly.Collector) {
		if err := p.Attach(c); err != nil {
			t.Errorf("Attach: %v", err)
		}
	}
}
