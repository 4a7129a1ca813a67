package robots

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/testkit/testutil"
)

// A robots.txt fetched again after its policy expired waits at the host's
// gate like any request; its total timeout must not run while it waits
// there, or a host's own Crawl-delay would make its robots.txt "no answer".
// The gate's clock is held still while the refetch waits on it, and the
// test sleeps past the timeout: the timeout runs on the wall clock, so
// this wait is real. The timeout is a second, the fetch's own time after
// the gate, on a loaded machine included.
func TestPluginRefetchWaitsAtGateWithoutTimingOut(t *testing.T) {
	t.Parallel()
	const timeout = time.Second
	f := testutil.NewFarm(t, map[string]*testutil.Site{"g.test": {Robots: "User-agent: *\nDisallow: /private\n"}})
	clock := testutil.NewStepClock()
	gate := testutil.NewFakeClock()
	var blocks blockLog
	p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0), WithDialect(dialect.Google), withClock(clock),
		WithLimiter(hostlimit.New(hostlimit.Config{Clock: gate})),
		WithMinDelay(10*time.Second), WithPolicy(policy.WithTimeout(timeout)), WithOnBlocked(blocks.add))
	c := newCollector(false, p.opt(t))
	visit := func(u string) chan error {
		done := make(chan error, 1)
		go func() { done <- c.Visit(u) }()
		return done
	}
	a := visit("http://g.test/a")
	gate.WaitTimers(t, 1) // /a waits 10 s after robots.txt
	gate.Advance(10 * time.Second)
	if err := <-a; err != nil {
		t.Fatal(err)
	}
	clock.Advance(25 * time.Hour) // the policy has expired: robots.txt is fetched again
	b := visit("http://g.test/b")
	gate.WaitTimers(t, 1)                      // robots.txt waits 10 s after /a
	time.Sleep(timeout + 250*time.Millisecond) // its timeout would have run out by now
	gate.Advance(10 * time.Second)
	gate.WaitTimers(t, 1) // /b waits 10 s after robots.txt
	gate.Advance(10 * time.Second)
	if err := <-b; err != nil {
		t.Fatal(err)
	}
	if bs := blocks.all(); len(bs) != 0 {
		t.Fatalf("stopped: %v", bs)
	}
	if got := strings.Join(f.Paths("g.test"), " "); got != "/a /b" {
		t.Fatalf("server saw %q, want /a /b", got)
	}
	if n := len(f.Pages("g.test", true)); n != 4 {
		t.Fatalf("%d requests, want 4 (robots.txt twice)", n)
	}
}

// A redirect hop into an authority whose robots.txt is unreachable for now
// is stopped at the transport as Deferred; the Colly request behind it is
// kept, and RetryDeferred sends it again once robots.txt answers.
func TestPluginRedirectHopDeferredIsRetried(t *testing.T) {
	for _, async := range []bool{false, true} {
		down := &testutil.Site{RobotsStatus: 503, Robots: "User-agent: *\nDisallow: /no\n"}
		f := testutil.NewFarm(t, map[string]*testutil.Site{
			"a.test": {Handle: func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path == "/go" {
					http.Redirect(w, r, "http://b.test/landing", http.StatusFound)
					return true
				}
				return false
			}},
			"b.test": down,
		})
		clock := testutil.NewStepClock()
		var blocks blockLog
		p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0), WithDeferWait(0), withClock(clock), WithOnBlocked(blocks.add),
			withLimiterConfig(hostlimit.Config{MaxRetryAfter: 0, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond}))
		c := newCollector(async, p.opt(t))
		var onErr []error
		var mu sync.Mutex
		c.OnError(func(_ *colly.Response, err error) { mu.Lock(); onErr = append(onErr, err); mu.Unlock() })
		c.Visit("http://a.test/go")
		c.Wait()
		if len(f.Paths("b.test")) != 0 {
			t.Fatalf("async=%v: b.test served a page while its robots.txt answered 503", async)
		}
		bs := blocks.all()
		if len(bs) != 1 || bs[0].Kind != Deferred || !bs[0].Redirect || bs[0].URL != "http://b.test/landing" {
			t.Fatalf("async=%v: blocks %v, want one deferred redirect to b.test/landing", async, bs)
		}
		if len(onErr) != 1 || !errors.Is(onErr[0], ErrBlocked) {
			t.Fatalf("async=%v: OnError got %v, want one ErrBlocked", async, onErr)
		}
		until, ok := p.DeferredUntil()
		if want := testutil.ClockStart.Add(10 * time.Minute); !ok || !until.Equal(want) {
			t.Fatalf("async=%v: DeferredUntil = %s, %v; want %s (rfc9309 retries a 503 after 10 minutes)", async, until, ok, want)
		}
		f.SetRobotsStatus("b.test", 200)
		clock.Advance(time.Hour) // past the retry time
		if n := p.RetryDeferred(); n != 1 {
			t.Fatalf("async=%v: RetryDeferred sent %d, want 1", async, n)
		}
		c.Wait()
		if got := strings.Join(f.Paths("b.test"), " "); got != "/landing" {
			t.Fatalf("async=%v: after the retry b.test saw %q, want /landing", async, got)
		}
		if _, ok := p.DeferredUntil(); ok {
			t.Errorf("async=%v: requests still kept after the retry", async)
		}
	}
}

// A redirect hop that gives up waiting at its host's gate (the collector's
// context ended) is reported as Canceled, once to WithOnBlocked and once to
// OnError, with an error that wraps ErrBlocked and the context's error.
func TestPluginCanceledAtGateIsReported(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{
		"a.test": {Handle: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/go" {
				http.Redirect(w, r, "http://slow.test/x", http.StatusFound)
				return true
			}
			return false
		}},
		"slow.test": {Robots: "User-agent: *\nCrawl-delay: 1\n"},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := testutil.NewFakeClock()
	var blocks blockLog
	p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0), WithOnBlocked(blocks.add),
		WithLimiter(hostlimit.New(hostlimit.Config{Clock: clock})))
	c := newCollector(false, p.opt(t), colly.StdlibContext(ctx))
	var onError []error
	c.OnError(func(_ *colly.Response, err error) { onError = append(onError, err) })
	first := make(chan error, 1)
	go func() { first <- c.Visit("http://slow.test/first") }()
	clock.WaitTimers(t, 1) // /first waits 1 s after robots.txt
	clock.Advance(time.Second)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	hop := make(chan error, 1)
	go func() { hop <- c.Visit("http://a.test/go") }()
	clock.WaitTimers(t, 1) // the hop to slow.test waits at its gate
	cancel()
	err := <-hop
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrBlocked) {
		t.Fatalf("Visit: %v, want ErrBlocked and context.Canceled", err)
	}
	bs := blocks.all()
	if len(bs) != 1 || bs[0].Kind != Canceled || !bs[0].Redirect || bs[0].URL != "http://slow.test/x" {
		t.Fatalf("blocks %v, want one canceled redirect hop to slow.test/x", bs)
	}
	if bs[0].Request == nil || bs[0].Request.URL.Path != "/go" {
		t.Errorf("the hop's report does not carry the request redirected (/go): %+v", bs[0].Request)
	}
	if got := p.Totals().Allowed; got != 1 {
		t.Errorf("Totals().Allowed %d, want 1 (/first; /go ended stopped)", got)
	}
	if !strings.Contains(bs[0].Reason, "waiting for the host's turn") {
		t.Errorf("reason %q does not say it was waiting for the host's turn", bs[0].Reason)
	}
	var be *BlockedError
	if len(onError) != 1 || !errors.As(onError[0], &be) || be.Block.Kind != Canceled || be.Block.Request == nil {
		t.Errorf("OnError saw %v, want the stop once, with its request", onError)
	}
	if got := p.Totals().Canceled; got != 1 {
		t.Errorf("Totals().Canceled %d, want 1", got)
	}
}

// A request OnRequest let through, waiting for a Colly LimitRule slot when
// the collector's context ends, is stopped at the transport: reported once
// to WithOnBlocked with its Colly request, counted Canceled and not Allowed,
// and never sent.
func TestPluginCanceledWaitingForLimitRuleSlot(t *testing.T) {
	holding := make(chan struct{})
	f := testutil.NewFarm(t, map[string]*testutil.Site{
		"a.test": {Handle: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/hold" {
				close(holding)
				<-r.Context().Done() // until the crawl is canceled
				return true
			}
			return false
		}},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var blocks blockLog
	p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0), WithOnBlocked(blocks.add))
	c := newCollector(true, p.opt(t), colly.StdlibContext(ctx))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 1}); err != nil {
		t.Fatal(err)
	}
	passed := make(chan struct{})
	c.OnRequest(func(r *colly.Request) { // after the plugin's hook
		if r.URL.Path == "/next" {
			close(passed)
		}
	})
	var (
		mu      sync.Mutex
		onError = map[string]error{}
	)
	c.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		onError[r.Request.URL.Path] = err
		mu.Unlock()
	})
	if err := c.Visit("http://a.test/hold"); err != nil {
		t.Fatal(err)
	}
	<-holding // /hold has the only slot
	if err := c.Visit("http://a.test/next"); err != nil {
		t.Fatal(err)
	}
	<-passed // /next is past OnRequest: Colly holds it for a slot
	cancel()
	c.Wait()

	bs := blocks.all()
	if len(bs) != 1 || bs[0].Kind != Canceled || bs[0].URL != "http://a.test/next" {
		t.Fatalf("blocks %v, want /next canceled once", bs)
	}
	if bs[0].Request == nil || bs[0].Request.URL.Path != "/next" {
		t.Errorf("WithOnBlocked report without its Colly request: %+v", bs[0])
	}
	if err := onError["/next"]; !errors.Is(err, ErrBlocked) || !errors.Is(err, context.Canceled) {
		t.Errorf("OnError for /next: %v, want ErrBlocked and context.Canceled", err)
	}
	if err := onError["/hold"]; err == nil || errors.Is(err, ErrBlocked) {
		t.Errorf("OnError for /hold: %v, want the canceled fetch's own error", err)
	}
	if tot := p.Totals(); tot.Allowed != 1 || tot.Canceled != 1 {
		t.Errorf("Totals Allowed %d Canceled %d, want 1 (/hold) and 1 (/next)", tot.Allowed, tot.Canceled)
	}
	if paths := f.Paths("a.test"); slices.Contains(paths, "/next") {
		t.Errorf("/next reached the server: %v", paths)
	}
}

// COLLY_IGNORE_ROBOTSTXT=no turns Colly's own check back on after the
// options: the plugin says so when it is attached.
func TestPluginWarnsWhenCollyEnvTurnsItsCheckOn(t *testing.T) {
	t.Setenv("COLLY_IGNORE_ROBOTSTXT", "no")
	var buf bytes.Buffer
	c := newCollector(false, WithRobots(WithLogger(slog.New(slog.NewTextHandler(&buf, nil)))))
	if c.IgnoreRobotsTxt {
		t.Fatal("Colly did not apply COLLY_IGNORE_ROBOTSTXT=no")
	}
	if !strings.Contains(buf.String(), "COLLY_IGNORE_ROBOTSTXT=no") {
		t.Errorf("no warning logged: %q", buf.String())
	}
}

// A request answered 429 or a 5xx other than 501 and 505 is sent again
// once its host's pause is over, up to WithRetries times (default 2),
// unseen by Colly's callbacks; out of retries, its last answer reaches
// OnError; a pause longer than WithDeferWait hands it back as Deferred,
// reported once. A 501 or 505 neither pauses the host nor is sent again.
// Sync and Async alike; the pauses are exact on the limiter's clock.
func TestPluginRetriesBackoffStatuses(t *testing.T) {
	cases := []struct {
		name       string
		opts       []Option
		status     int
		retryAfter string
		failures   int // answers before a 200; -1: never a 200
		hits       int // the server's, for /p
		fetched    bool
		onError    int // the status that reaches OnError, 0: none
		deferred   bool
		retried    int64
	}{
		{"429 twice then 200", nil, 429, "5", 2, 3, true, 0, false, 2},
		{"503 once then 200", nil, 503, "", 1, 2, true, 0, false, 1},
		{"429 forever: out of retries", nil, 429, "1", -1, 3, false, 429, false, 2},
		{"WithRetries(0)", []Option{WithRetries(0)}, 429, "1", -1, 1, false, 429, false, 0},
		{"WithRetries(4)", []Option{WithRetries(4)}, 503, "1", 3, 4, true, 0, false, 3},
		{"a pause past WithDeferWait: deferred", []Option{WithDeferWait(10 * time.Second)}, 503, "120", -1, 1, false, 0, true, 0},
		{"502 once then 200", nil, 502, "", 1, 2, true, 0, false, 1},
		{"500 once then 200", nil, 500, "", 1, 2, true, 0, false, 1},
		{"504 twice then 200, Retry-After", nil, 504, "1", 2, 3, true, 0, false, 2},
		{"522 forever: out of retries", nil, 522, "", -1, 3, false, 522, false, 2},
		{"501: not sent again", nil, 501, "", -1, 1, false, 501, false, 0},
		{"505: not sent again", nil, 505, "", -1, 1, false, 505, false, 0},
	}
	for _, tc := range cases {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/async=%v", tc.name, async), func(t *testing.T) {
				clock := testutil.NewFakeClock()
				defer clock.Jump()()
				var mu sync.Mutex
				var at []time.Time
				f := testutil.NewFarm(t, map[string]*testutil.Site{"r.test": {Handle: func(w http.ResponseWriter, r *http.Request) bool {
					if r.URL.Path != "/p" {
						return false
					}
					mu.Lock()
					at = append(at, clock.Now())
					n := len(at)
					mu.Unlock()
					if tc.failures < 0 || n <= tc.failures {
						if tc.retryAfter != "" {
							w.Header().Set("Retry-After", tc.retryAfter)
						}
						w.WriteHeader(tc.status)
						return true
					}
					return false
				}}})
				var blocks blockLog
				lim := hostlimit.New(hostlimit.Config{Clock: clock, BackoffBase: time.Second})
				opts := append([]Option{WithTransport(f.Transport()), WithDefaultDelay(0), WithOnBlocked(blocks.add),
					WithLimiter(lim)}, tc.opts...)
				p := mustNew(t, opts...)
				c := newCollector(async, p.opt(t))
				var fetched atomic.Bool
				var errMu sync.Mutex
				var errs []string
				c.OnResponse(func(r *colly.Response) { fetched.Store(r.Request.URL.Path == "/p") })
				c.OnError(func(r *colly.Response, err error) {
					errMu.Lock()
					errs = append(errs, fmt.Sprintf("%d %v", r.StatusCode, err))
					errMu.Unlock()
				})
				c.Visit("http://r.test/p")
				c.Wait()
				mu.Lock()
				defer mu.Unlock()
				if len(at) != tc.hits {
					t.Errorf("the server saw /p %d times, want %d", len(at), tc.hits)
				}
				if fetched.Load() != tc.fetched {
					t.Errorf("fetched %v, want %v", fetched.Load(), tc.fetched)
				}
				errMu.Lock()
				defer errMu.Unlock()
				switch {
				case tc.onError != 0 && (len(errs) != 1 || !strings.HasPrefix(errs[0], strconv.Itoa(tc.onError)+" ")):
					t.Errorf("OnError saw %q, want one %d", errs, tc.onError)
				case tc.deferred && (len(errs) != 1 || !strings.Contains(errs[0], "deferred")):
					t.Errorf("OnError saw %q, want one deferral", errs)
				case tc.onError == 0 && !tc.deferred && len(errs) != 0:
					t.Errorf("OnError saw %q, want nothing", errs)
				}
				bs := blocks.all()
				if tc.deferred != (len(bs) == 1 && bs[0].Kind == Deferred) || !tc.deferred && len(bs) != 0 {
					t.Errorf("reports %v", bs)
				}
				if tc.deferred && len(p.Deferred()) != 1 {
					t.Error("the deferred request was not kept for RetryDeferred")
				}
				if got := p.Totals().Retried; got != tc.retried {
					t.Errorf("Totals().Retried %d, want %d", got, tc.retried)
				}
				backoff := tc.status != 501 && tc.status != 505
				if st, _ := lim.Stats("http://r.test"); (st.Pauses > 0) != backoff {
					t.Errorf("%d answers paused the host %d times, want pauses: %v", tc.status, st.Pauses, backoff)
				}
				// Each retry waited out the host's pause, on the limiter's clock.
				for i := 1; i < len(at); i++ {
					pause := time.Second // the backoff's base, or Retry-After: 1
					if tc.retryAfter == "5" {
						pause = 5 * time.Second
					}
					if g := at[i].Sub(at[i-1]); g < pause {
						t.Errorf("retry %d sent %s after the answer, want at least the pause, %s", i, g, pause)
					}
				}
			})
		}
	}
}

// Requests already waiting for their host's turn when a long pause starts
// (a 429 with Retry-After: 5, WithDeferWait 2 s) are handed back at once,
// not held for the pause: sync and Async alike, every request deferred,
// the server asked at most twice (Async: one request may already be at
// the gate), on the limiter's clock. With a CacheDir the early wait is
// skipped and the requests wait at the transport's gate (AcquireMax), two
// at a time under the LimitRule: they too are handed back, not sent once
// the pause is over.
func TestPluginLongPauseWhileWaiting(t *testing.T) {
	for _, mode := range []string{"sync", "async", "async+cachedir"} {
		t.Run(mode, func(t *testing.T) {
			async := mode != "sync"
			var hits atomic.Int64
			f := testutil.NewFarm(t, map[string]*testutil.Site{"busy.test": {Handle: func(w http.ResponseWriter, r *http.Request) bool {
				hits.Add(1)
				w.Header().Set("Retry-After", "5")
				w.WriteHeader(http.StatusTooManyRequests)
				return true
			}}})
			clock := testutil.NewFakeClock()
			defer clock.Jump()()
			var blocks blockLog
			p := mustNew(t, WithTransport(f.Transport()), WithMinDelay(time.Second), WithDeferWait(2*time.Second), WithOnBlocked(blocks.add),
				WithLimiter(hostlimit.New(hostlimit.Config{Clock: clock})))
			opts := []colly.CollectorOption{p.opt(t)}
			if mode == "async+cachedir" {
				opts = append(opts, colly.CacheDir(t.TempDir()))
			}
			c := newCollector(async, opts...)
			if mode == "async+cachedir" {
				if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2}); err != nil {
					t.Fatal(err)
				}
			}
			returnsWithin(t, 30*time.Second, "the crawl", func() {
				for i := range 5 {
					c.Visit(fmt.Sprintf("http://busy.test/%d", i))
				}
				c.Wait()
			})
			bs := blocks.all()
			deferred := 0
			for _, b := range bs {
				if b.Kind == Deferred {
					deferred++
				}
			}
			if deferred != 5 || len(bs) != 5 || len(p.Deferred()) != 5 {
				t.Errorf("%d reports (%d deferred), want 5 deferred: %v", len(bs), deferred, bs)
			}
			if n := hits.Load(); n > 2 {
				t.Errorf("the server was asked %d times during a pause, want at most 2", n)
			}
		})
	}
}

// A request whose collector's context reaches its deadline while the
// request waits at its host's gate is reported as canceled, once. The
// client's Timeout (Colly's request timeout, 1 s) ended before, while the
// request waited: it does not stop the wait (see
// TestPluginGateWaitOutsideClientTimeout), but net/http then hands OnError
// an error of its own that wraps nothing: the plugin's OnError hook finds
// the stop the transport held for the request all the same, and reports it
// with its request. CacheDir skips the early wait, so
// both requests wait at the gate, 5 s behind the robots.txt fetch
// (Crawl-delay).
func TestPluginDeadlineAtGateIsReported(t *testing.T) {
	t.Parallel() // real time: the deadline and the client's timeout run on the wall clock
	f := testutil.NewFarm(t, map[string]*testutil.Site{"slow.test": {Robots: "User-agent: *\nCrawl-delay: 5\n"}})
	var blocks blockLog
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithOnBlocked(blocks.add))
	c := newCollector(true, p.opt(t), colly.CacheDir(t.TempDir()))
	c.SetRequestTimeout(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c.Context = ctx
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var errs []string
	c.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		errs = append(errs, r.Request.URL.Path+": "+err.Error())
		mu.Unlock()
	})
	returnsWithin(t, 30*time.Second, "the crawl", func() {
		c.Visit("http://slow.test/a")
		c.Visit("http://slow.test/b")
		c.Wait()
	})
	bs := blocks.all()
	if len(bs) != 2 {
		t.Fatalf("reports %v (OnError: %q), want two canceled", bs, errs)
	}
	for _, b := range bs {
		if b.Kind != Canceled || !strings.Contains(b.Reason, "deadline exceeded") || b.Request == nil {
			t.Errorf("report %v (request %v)", b, b.Request)
		}
	}
	if tot := p.Totals(); tot.Canceled != 2 || tot.Allowed != 0 {
		t.Errorf("totals %+v", tot)
	}
	if len(errs) != 2 {
		t.Errorf("OnError %q, want each request once", errs)
	}
}

// An Async crawl under a LimitRule whose page is answered 429 once: the
// retry waits out the pause at the host's gate, holding its LimitRule slot,
// and is sent as soon as the pause is over, not behind the host's other
// requests waiting in OnRequest (40 pages at 0.2 s each: long enough for
// Colly's request timeout to cancel a retry queued behind them, and the
// page to be lost to OnError). The limiter's clock jumps, and the server
// reads it: the retry is seen within the pause and a few delays of the
// 429, every page is fetched, nothing reaches OnError.
func TestPluginAsyncRetryDoesNotQueueBehindWaiters(t *testing.T) {
	const (
		pages = 40
		delay = 200 * time.Millisecond
	)
	clock := jumpingClock(t)
	var mu sync.Mutex
	var busy []time.Time // the arrivals of /p/3, on the limiter's clock
	f := testutil.NewFarm(t, map[string]*testutil.Site{"busy.test": {
		Robots: "User-agent: *\nCrawl-delay: 0.2\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			switch {
			case r.URL.Path == "/":
				w.Header().Set("Content-Type", "text/html")
				for i := range pages {
					fmt.Fprintf(w, `<a href="/p/%d">p</a>`, i)
				}
				return true
			case r.URL.Path == "/p/3":
				mu.Lock()
				busy = append(busy, clock.Now())
				first := len(busy) == 1
				mu.Unlock()
				if first {
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(http.StatusTooManyRequests)
				}
				return first
			}
			return false
		}}})
	p := mustNew(t, WithTransport(f.Transport()), WithLimiter(hostlimit.New(hostlimit.Config{Clock: clock})))
	c := newCollector(true, p.opt(t))
	c.SetRequestTimeout(4 * time.Second)
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2}); err != nil {
		t.Fatal(err)
	}
	scraped := map[string]bool{}
	var errs []string
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	c.OnScraped(func(r *colly.Response) {
		mu.Lock()
		scraped[r.Request.URL.Path] = true
		mu.Unlock()
	})
	c.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		errs = append(errs, r.Request.URL.Path+": "+err.Error())
		mu.Unlock()
	})
	if err := c.Visit("http://busy.test/"); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 0 {
		t.Errorf("OnError saw %q", errs)
	}
	if len(scraped) != pages+1 || !scraped["/p/3"] {
		t.Errorf("scraped %d pages (the 429 page: %v), want %d", len(scraped), scraped["/p/3"], pages+1)
	}
	if got := p.Totals().Retried; got != 1 {
		t.Errorf("Totals().Retried %d, want 1", got)
	}
	// Behind the waiting pages, the retry would come some 35 delays later.
	if len(busy) != 2 {
		t.Fatalf("the server saw /p/3 %d times, want 2 (the 429, the retry)", len(busy))
	}
	if g := busy[1].Sub(busy[0]); g < time.Second || g > time.Second+5*delay {
		t.Errorf("the retry came %s after the 429, want from the pause (1 s) to the pause and 5 delays", g)
	}
}

// The time a request waits for its host's turn at the transport's gate
// does not count against Colly's request timeout (net/http's
// Client.Timeout, which covers the whole round trip): the exchange gets
// the whole timeout once the gate lets it through. With a CacheDir there
// is no early wait in OnRequest, so the page waits at the gate, inside
// Colly's client call, for the Crawl-delay after robots.txt; the gate's
// clock is held still while the test sleeps past the timeout: the
// timeout runs on the wall clock, so this wait is real. The timeout is a
// second, the exchange's own time after the gate, on a loaded machine
// included.
func TestPluginGateWaitOutsideClientTimeout(t *testing.T) {
	t.Parallel()
	const timeout = time.Second
	f := testutil.NewFarm(t, map[string]*testutil.Site{"slow.test": {Robots: "User-agent: *\nCrawl-delay: 5\n"}})
	gate := testutil.NewFakeClock()
	var blocks blockLog
	p := mustNew(t, WithTransport(f.Transport()), WithLimiter(hostlimit.New(hostlimit.Config{Clock: gate})), WithOnBlocked(blocks.add))
	c := newCollector(false, p.opt(t))
	c.CacheDir = t.TempDir()
	c.SetRequestTimeout(timeout)
	var onError []string
	c.OnError(func(r *colly.Response, err error) { onError = append(onError, err.Error()) })
	done := make(chan error, 1)
	go func() { done <- c.Visit("http://slow.test/a") }()
	gate.WaitTimers(t, 1)                      // /a waits 5 s after robots.txt
	time.Sleep(timeout + 250*time.Millisecond) // the client's timeout would have run out by now
	gate.Advance(5 * time.Second)
	if err := <-done; err != nil {
		t.Errorf("Visit: %v", err)
	}
	if bs := blocks.all(); len(bs) != 0 || len(onError) != 0 {
		t.Errorf("stopped: %v; OnError %q", bs, onError)
	}
	if got := strings.Join(f.Paths("slow.test"), " "); got != "/a" {
		t.Errorf("server saw %q, want /a", got)
	}
}

// A request the plugin stops in OnRequest keeps its error for the
// transport; when a callback after the plugin's aborts the request, the
// transport never takes it, and the entry goes once the Colly request is
// collected.
func TestAbortedStopForgotten(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{"ab.test": {Robots: "User-agent: *\nDisallow: /private\n"}})
	p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0))
	c := newCollector(false, p.opt(t))
	c.OnRequest(func(r *colly.Request) { r.Abort() })
	const n = 20
	for i := range n {
		c.Visit(fmt.Sprintf("http://ab.test/private/%d", i))
	}
	if got := p.Totals().Disallowed; got != n {
		t.Fatalf("%d requests stopped, want %d", got, n)
	}
	kept := func() (k int) {
		p.handoff.stops.Range(func(any, any) bool { k++; return true })
		return k
	}
	for deadline := time.Now().Add(10 * time.Second); kept() > 0 && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if k := kept(); k != 0 {
		t.Errorf("%d stops of aborted requests still kept after their requests were collected", k)
	}
}
