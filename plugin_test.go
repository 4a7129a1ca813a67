package robots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/testkit/testutil"
)

type blockLog struct {
	mu sync.Mutex
	bs []Block
}

func (l *blockLog) add(b Block) { l.mu.Lock(); l.bs = append(l.bs, b); l.mu.Unlock() }

func (l *blockLog) all() []Block {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Block(nil), l.bs...)
}

func newCollector(async bool, opts ...colly.CollectorOption) *colly.Collector {
	o := append([]colly.CollectorOption{colly.UserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)")}, opts...)
	if async {
		o = append(o, colly.Async(true))
	}
	c := colly.NewCollector(o...)
	c.AllowURLRevisit = true
	return c
}

func TestPluginEnforcesRulesSyncAndAsync(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			f := testutil.NewFarm(t, map[string]*testutil.Site{
				"a.test": {Robots: "User-agent: *\nDisallow: /private\n\nUser-agent: examplebot\nDisallow: /bot-only\nAllow: /private/press\nDisallow: /private\n"},
			})
			var blocks blockLog
			c := newCollector(async, WithRobots(WithTransport(f.Transport()), WithDefaultDelay(0), WithOnBlocked(blocks.add)))
			var fetched sync.Map
			c.OnResponse(func(r *colly.Response) { fetched.Store(r.Request.URL.Path, true) })
			// Every stop reaches OnError with a complete *BlockedError, and a
			// sync Visit returns it, as Colly's own check returns its error.
			var onError sync.Map
			c.OnError(func(r *colly.Response, err error) {
				var be *BlockedError
				if !errors.As(err, &be) || !errors.Is(err, ErrBlocked) || !errors.Is(err, colly.ErrRobotsTxtBlocked) || be.Block.Authority != "http://a.test" || be.Block.Dialect != "rfc9309" || be.Block.Verdict.Rule == (dialect.Rule{}) {
					t.Errorf("OnError(%s): %v (%+v)", r.Request.URL, err, be)
				}
				onError.Store(r.Request.URL.Path, true)
			})
			for _, p := range []string{"/", "/private/x", "/private/press/1", "/bot-only", "/public"} {
				err := c.Visit("http://a.test" + p)
				stopped := p == "/private/x" || p == "/bot-only"
				if !async && stopped != errors.Is(err, ErrBlocked) {
					t.Errorf("sync Visit(%s) = %v", p, err)
				}
				if async && err != nil {
					t.Errorf("async Visit(%s) = %v", p, err)
				}
			}
			c.Wait()
			for _, p := range []string{"/private/x", "/bot-only"} {
				if _, ok := onError.Load(p); !ok {
					t.Errorf("%s never reached OnError", p)
				}
			}
			if got := strings.Join(f.Paths("a.test"), " "); got != "/ /private/press/1 /public" {
				t.Errorf("server saw %q", got)
			}
			bs := blocks.all()
			sort.Slice(bs, func(i, j int) bool { return bs[i].URL < bs[j].URL })
			if len(bs) != 2 || bs[0].URL != "http://a.test/bot-only" || bs[0].Verdict.Rule == (dialect.Rule{}) || bs[0].Verdict.Rule.Line != 5 ||
				bs[1].Reason != "line 7: Disallow: /private" || bs[1].Kind != Disallowed || bs[1].Request == nil || bs[1].Dialect != "rfc9309" {
				t.Errorf("blocks: %v", bs)
			}
			if _, ok := fetched.Load("/private/x"); ok {
				t.Error("a disallowed page reached OnResponse")
			}
		})
	}
}

func TestPluginSpacingEndToStart(t *testing.T) {
	cases := []struct {
		name    string
		d       *dialect.Dialect
		robots  string
		n       int
		want    time.Duration // least gap, robots.txt included
		below   time.Duration // every gap under it; 0: no upper bound
		workers int
	}{
		{"rfc9309 0.2s", dialect.RFC9309, "User-agent: *\nCrawl-delay: 0.2\n", 6, 200 * time.Millisecond, 0, 8},
	}
	for _, tc := range cases {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/async=%v", tc.name, async), func(t *testing.T) {
				if testing.Short() && tc.want > time.Second {
					t.Skip("slow")
				}
				t.Parallel()
				clock := jumpingClock(t)
				f := testutil.NewFarm(t, map[string]*testutil.Site{"d.test": {Robots: tc.robots}})
				f.Now = clock.Now // gaps on the gate's clock
				c := newCollector(async, WithRobots(WithTransport(f.Transport()), WithDefaultDelay(0), WithDialect(tc.d),
					WithLimiter(hostlimit.New(hostlimit.Config{Clock: clock}))))
				c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: tc.workers})
				for i := 0; i < tc.n; i++ {
					c.Visit(fmt.Sprintf("http://d.test/p%d", i))
				}
				c.Wait()
				hs := f.Pages("d.test", true)
				if len(hs) != tc.n+1 {
					t.Fatalf("server saw %d requests, want %d", len(hs), tc.n+1)
				}
				if g := testutil.MinGap(hs); g < tc.want {
					t.Errorf("shortest gap the server saw: %s, want at least %s", g, tc.want)
				}
				if g := testutil.MaxGap(hs); tc.below > 0 && g >= tc.below {
					t.Errorf("longest gap the server saw: %s, want under %s", g, tc.below)
				}
				t.Logf("server-observed gaps %s..%s (delay %s)", testutil.MinGap(hs), testutil.MaxGap(hs), tc.want)
			})
		}
	}
}

// coccoc reads Crawl-delay 100 as 10 s, not as the plugin's 30 s cap
// (DefaultMaxCrawlDelay): the page after robots.txt waits exactly 10 s at
// the host's gate, on the limiter's clock.
func TestPluginCocCocDelayCap(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			f := testutil.NewFarm(t, map[string]*testutil.Site{"d.test": {Robots: "User-agent: *\nCrawl-delay: 100\n"}})
			clock := testutil.NewFakeClock()
			lim := hostlimit.New(hostlimit.Config{Clock: clock})
			c := newCollector(async, WithRobots(WithTransport(f.Transport()), WithDefaultDelay(0), WithDialect(dialect.CocCoc), WithLimiter(lim)))
			done := make(chan error, 1)
			go func() { done <- c.Visit("http://d.test/p"); c.Wait() }()
			clock.WaitTimers(t, 1) // the page waits for its turn
			next, _ := clock.Next()
			if d := next.Sub(clock.Now()); d != 10*time.Second || lim.Delay("http://d.test") != 10*time.Second {
				t.Errorf("the page waits %s for a delay of %s, want 10s", d, lim.Delay("http://d.test"))
			}
			if n := len(f.Pages("d.test", false)); n != 0 {
				t.Fatalf("the page was fetched before its turn")
			}
			clock.Advance(10 * time.Second)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			c.Wait()
			if got := f.Paths("d.test"); len(got) != 1 {
				t.Errorf("server saw %q, want /p", got)
			}
		})
	}
}

// The page after robots.txt waits the host's Crawl-delay, 1 s, not the
// default delay (5 s here): robots.txt is fetched before the delay is
// known, and its fetch owes the host no gap of its own.
func TestPluginFirstPageWaitsCrawlDelay(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			f := testutil.NewFarm(t, map[string]*testutil.Site{"cd.test": {Robots: "User-agent: *\nCrawl-delay: 1\n"}})
			clock := testutil.NewFakeClock()
			lim := hostlimit.New(hostlimit.Config{Clock: clock})
			c := newCollector(async, WithRobots(WithTransport(f.Transport()), WithDefaultDelay(5*time.Second), WithLimiter(lim)))
			done := make(chan error, 1)
			go func() { done <- c.Visit("http://cd.test/p"); c.Wait() }()
			clock.WaitTimers(t, 1) // the page waits for its turn
			next, _ := clock.Next()
			if next.Sub(clock.Now()) != time.Second {
				t.Errorf("the page waits %s after robots.txt, want the Crawl-delay, 1s", next.Sub(clock.Now()))
			}
			clock.AdvanceTo(next)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			c.Wait()
			if got := f.Paths("cd.test"); len(got) != 1 {
				t.Errorf("server saw %q, want /p", got)
			}
		})
	}
}

// sendLog is a RoundTripper that timestamps each send, on the clock now,
// right before it goes to the network.
type sendLog struct {
	next http.RoundTripper
	now  func() time.Time
	mu   sync.Mutex
	at   map[string][]time.Time
}

func (s *sendLog) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.at[r.URL.Hostname()] = append(s.at[r.URL.Hostname()], s.now())
	s.mu.Unlock()
	return s.next.RoundTrip(r)
}

func TestPluginSpacingStartToStart(t *testing.T) {
	for _, tc := range []struct {
		async      bool
		goroutines int
	}{{false, 1}, {true, 1}, {true, 10}, {true, 100}} {
		goroutines := tc.goroutines
		t.Run(fmt.Sprintf("async=%v/%d", tc.async, goroutines), func(t *testing.T) {
			t.Parallel()
			clock := jumpingClock(t) // gaps on the gate's clock
			f := testutil.NewFarm(t, map[string]*testutil.Site{"s.test": {Robots: "User-agent: *\nCrawl-delay: 0.05\n"}})
			sl := &sendLog{next: f.Transport(), now: clock.Now, at: map[string][]time.Time{}}
			c := newCollector(tc.async, WithRobots(WithTransport(sl), WithDefaultDelay(0),
				withLimiterConfig(hostlimit.Config{Spacing: hostlimit.StartToStart, Clock: clock})))
			c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: goroutines})
			for i := 0; i < 12; i++ {
				c.Visit(fmt.Sprintf("http://s.test/p%d", i))
			}
			c.Wait()
			sends := sl.at["s.test"]
			if len(sends) != 13 {
				t.Fatalf("%d sends", len(sends))
			}
			for i := 1; i < len(sends); i++ {
				if g := sends[i].Sub(sends[i-1]); g < 50*time.Millisecond {
					t.Errorf("gap %d between sends: %s, want at least 50ms", i, g)
				}
			}
		})
	}
}

func TestPluginHostsProceedSideBySide(t *testing.T) {
	t.Parallel() // real time: it waits out 20 hosts' Crawl-delays
	sites := map[string]*testutil.Site{}
	for i := 0; i < 20; i++ {
		sites[fmt.Sprintf("h%d.test", i)] = &testutil.Site{Robots: "User-agent: *\nCrawl-delay: 0.2\n"}
	}
	f := testutil.NewFarm(t, sites)
	c := newCollector(true, WithRobots(WithTransport(f.Transport()), WithDefaultDelay(0)))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4})
	start := time.Now()
	for j := 0; j < 10; j++ {
		for i := 0; i < 20; i++ {
			c.Visit(fmt.Sprintf("http://h%d.test/p%d", i, j))
		}
	}
	c.Wait()
	took := time.Since(start)
	share := 9 * 200 * time.Millisecond // one host's 10 requests need 9 gaps
	for i := 0; i < 20; i++ {
		h := fmt.Sprintf("h%d.test", i)
		if n := len(f.Pages(h, false)); n != 10 {
			t.Fatalf("%s: %d pages", h, n)
		}
		if g := testutil.MinGap(f.Pages(h, true)); g < 200*time.Millisecond {
			t.Errorf("%s: gap %s", h, g)
		}
	}
	if took > 3*share {
		t.Errorf("20 hosts took %s; one host's share is %s (serialised: %s)", took, share, 20*share)
	}
	t.Logf("20 hosts x 10 requests: %s (one host's share %s, efficiency %.2f)", took, share, float64(share)/float64(took))
}

func TestPluginRobots503(t *testing.T) {
	for _, tc := range []struct {
		d         *dialect.Dialect
		wantPages int
	}{{dialect.RFC9309, 0}, {dialect.CocCoc, 3}, {dialect.Google, 0}} {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/async=%v", tc.d.Name(), async), func(t *testing.T) {
				f := testutil.NewFarm(t, map[string]*testutil.Site{"e.test": {RobotsStatus: 503}})
				var blocks blockLog
				p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0), WithDialect(tc.d), WithOnBlocked(blocks.add), WithDeferWait(0),
					withLimiterConfig(hostlimit.Config{MaxRetryAfter: 0, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond}))
				c := newCollector(async, p.opt(t))
				for i := 0; i < 3; i++ {
					c.Visit(fmt.Sprintf("http://e.test/p%d", i))
				}
				c.Wait()
				if n := len(f.Pages("e.test", false)); n != tc.wantPages {
					t.Errorf("server saw %d pages, want %d", n, tc.wantPages)
				}
				bs := blocks.all()
				if len(bs)+tc.wantPages != 3 {
					t.Fatalf("blocks %v", bs)
				}
				for _, b := range bs {
					if b.Kind != Deferred || !strings.Contains(b.Reason, "503") || !strings.Contains(b.Reason, "complete disallow until") || b.Request == nil {
						t.Errorf("block %v", b)
					}
				}
				if len(bs) > 0 {
					if d := p.Deferred(); len(d) != 3 {
						t.Errorf("%d deferred requests kept", len(d))
					}
					if s := p.Stats()["http://e.test"]; s.Deferred != 3 {
						t.Errorf("stats %+v", s)
					}
				}
			})
		}
	}
}

func TestPluginDeferredRequestsAreRetried(t *testing.T) {
	site := &testutil.Site{RobotsStatus: 503, Robots: "User-agent: *\nDisallow: /no\n"}
	f := testutil.NewFarm(t, map[string]*testutil.Site{"r.test": site})
	clock := testutil.NewStepClock()
	p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0), WithDeferWait(0), withClock(clock), withLimiterConfig(hostlimit.Config{MaxRetryAfter: 0, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond}))
	c := newCollector(false, p.opt(t))
	c.Visit("http://r.test/yes")
	c.Visit("http://r.test/no")
	c.Wait()
	if n := len(f.Pages("r.test", false)); n != 0 {
		t.Fatalf("pages fetched while robots.txt was 503: %d", n)
	}
	f.SetRobotsStatus("r.test", 200)
	clock.Advance(time.Hour) // past the retry time
	if n := p.RetryDeferred(); n != 2 {
		t.Fatalf("retried %d", n)
	}
	c.Wait()
	if got := strings.Join(f.Paths("r.test"), " "); got != "/yes" {
		t.Errorf("after the retry the server saw %q, want /yes only", got)
	}
}

func TestPluginDeferWaitsForRetry(t *testing.T) {
	var mu sync.Mutex
	fails := 1
	site := &testutil.Site{Robots: "User-agent: *\nDisallow: /no\n"}
	f := testutil.NewFarm(t, map[string]*testutil.Site{"w.test": site})
	f.Server.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fail := r.URL.Path == "/robots.txt" && fails > 0
		if fail {
			fails--
		}
		mu.Unlock()
		if fail {
			w.WriteHeader(503)
			return
		}
		f.ServeHTTP(w, r)
	})
	clock := testutil.NewStepClock()
	p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0), WithDeferWait(time.Hour), withClock(clock), withLimiterConfig(hostlimit.Config{MaxRetryAfter: 0, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond}))
	c := newCollector(true, p.opt(t))
	c.Visit("http://w.test/yes")
	// Once the 503 is in the policy, the request waits for its retry time
	// (rfc9309: 10 minutes after a 5xx), within WithDeferWait.
	testutil.WaitUntil(t, func() bool { return p.res.Load() != nil && p.res.Load().Cached("http://w.test") != nil })
	clock.Advance(11 * time.Minute)
	c.Wait()
	if got := strings.Join(f.Paths("w.test"), " "); got != "/yes" {
		t.Errorf("server saw %q", got)
	}
}

// TestPluginRetryAfter: the request after a 429 or 503 waits out its
// Retry-After (seconds or an HTTP date, capped by MaxRetryAfter), else the
// backoff. The pauses are exact on the limiter's clock, which the server
// reads too: an HTTP date names a whole second of that clock.
func TestPluginRetryAfter(t *testing.T) {
	fixed := func(v string) func(time.Time) string { return func(time.Time) string { return v } }
	// The backoff without a Retry-After is set far below every Retry-After
	// here (the default, 1 s, equals "Retry-After: 1"): only a header that
	// is read gives the pauses below.
	const base = 20 * time.Millisecond
	cases := []struct {
		name   string
		status int
		header func(now time.Time) string // the Retry-After of the first page, sent at now; "" none
		maxRA  time.Duration              // WithRetryAfter's cap; 0 the default
		min    time.Duration              // least gap the server sees after the 429/503
		below  time.Duration              // loose upper bound on that gap
	}{
		{"429 seconds", http.StatusTooManyRequests, fixed("1"), 0, time.Second, 10 * time.Second},
		{"503 seconds", http.StatusServiceUnavailable, fixed("1"), 0, time.Second, 10 * time.Second},
		// The second 2 s on: at least 1 s, however far into its second the
		// 429 is sent.
		{"429 http-date", http.StatusTooManyRequests, func(now time.Time) string {
			return now.Truncate(time.Second).Add(2 * time.Second).Format(http.TimeFormat)
		}, 0, time.Second, 10 * time.Second},
		{"503 above the cap", http.StatusServiceUnavailable, fixed("3600"), time.Second, time.Second, 10 * time.Second},
		// No header: the backoff base, not the 1 s default, which shows
		// that WithRetryAfter is applied and the cases above discriminate.
		{"429 backoff", http.StatusTooManyRequests, fixed(""), 0, base, 800 * time.Millisecond},
	}
	for _, tc := range cases {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/async=%v", tc.name, async), func(t *testing.T) {
				t.Parallel()
				clock := jumpingClock(t)
				var mu sync.Mutex
				var at []time.Time // the pages' arrivals, on the limiter's clock
				// A Crawl-delay keeps one request in flight (end-to-start), so
				// that in async mode the second page is not sent before the
				// 429/503 comes back: a pause holds back later permits only.
				site := &testutil.Site{Robots: "User-agent: *\nAllow: /\nCrawl-delay: 0.01\n", Handle: func(w http.ResponseWriter, r *http.Request) bool {
					if r.URL.Path == "/robots.txt" {
						return false
					}
					now := clock.Now()
					mu.Lock()
					at = append(at, now)
					first := len(at) == 1
					mu.Unlock()
					if !first {
						return false
					}
					if v := tc.header(now); v != "" {
						w.Header().Set("Retry-After", v)
					}
					w.WriteHeader(tc.status)
					return true
				}}
				f := testutil.NewFarm(t, map[string]*testutil.Site{"ra.test": site})
				// An uncapped pause fails the test by this deadline instead of
				// hanging it.
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				defer cancel()
				c := newCollector(async, colly.StdlibContext(ctx),
					WithRobots(WithTransport(f.Transport()), WithDefaultDelay(0), WithRetries(0),
						withLimiterConfig(hostlimit.Config{Clock: clock, MaxRetryAfter: tc.maxRA, BackoffBase: base, BackoffMax: 0})))
				c.Visit("http://ra.test/a")
				c.Visit("http://ra.test/b")
				c.Wait()
				mu.Lock()
				defer mu.Unlock()
				if len(at) != 2 {
					t.Fatalf("server saw %d pages, want 2 (the second canceled by the 15 s deadline: a pause not capped?)", len(at))
				}
				g := at[1].Sub(at[0])
				if g < tc.min {
					t.Errorf("request after a %d came %s later, want at least %s", tc.status, g, tc.min)
				}
				if g >= tc.below {
					t.Errorf("request after a %d came %s later, want under %s", tc.status, g, tc.below)
				}
				t.Logf("gap after the %d: %s", tc.status, g)
			})
		}
	}
}

func TestPluginRedirectIntoDisallowedPath(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			site := &testutil.Site{Robots: "User-agent: *\nDisallow: /secret\n", Handle: func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path == "/go" {
					http.Redirect(w, r, "/secret/page", http.StatusFound)
					return true
				}
				if r.URL.Path == "/elsewhere" {
					http.Redirect(w, r, "http://other.test/private", http.StatusFound)
					return true
				}
				return false
			}}
			f := testutil.NewFarm(t, map[string]*testutil.Site{"rd.test": site, "other.test": {Robots: "User-agent: *\nDisallow: /private\n"}})
			var blocks blockLog
			c := newCollector(async, WithRobots(WithTransport(f.Transport()), WithDefaultDelay(0), WithOnBlocked(blocks.add)))
			var (
				mu   sync.Mutex
				errs []error
			)
			c.OnError(func(_ *colly.Response, err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() })
			c.Visit("http://rd.test/go")
			c.Visit("http://rd.test/elsewhere")
			c.Wait()
			if got := strings.Join(f.Paths("rd.test"), " "); got != "/elsewhere /go" {
				t.Errorf("rd.test saw %q", got)
			}
			if got := f.Paths("other.test"); len(got) != 0 {
				t.Errorf("other.test saw %q", got)
			}
			bs := blocks.all()
			sort.Slice(bs, func(i, j int) bool { return bs[i].URL < bs[j].URL })
			if len(bs) != 2 ||
				!bs[0].Redirect || bs[0].URL != "http://other.test/private" || bs[0].Kind != Disallowed ||
				!strings.Contains(bs[0].Reason, "redirect from http://rd.test/elsewhere not followed: line 2: Disallow: /private") ||
				!bs[1].Redirect || bs[1].URL != "http://rd.test/secret/page" || bs[1].Kind != Disallowed ||
				!strings.Contains(bs[1].Reason, "redirect from http://rd.test/go not followed: line 2: Disallow: /secret") {
				t.Errorf("blocks %v", bs)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(errs) != 2 || !errors.Is(errs[0], ErrBlocked) || !errors.Is(errs[1], ErrBlocked) {
				t.Errorf("OnError got %v", errs)
			}
		})
	}
}

func TestPluginCrawlDelayAboveMax(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{"slow.test": {Robots: "User-agent: *\nCrawl-delay: 120\n"}})
	var blocks blockLog
	c := newCollector(false, WithRobots(WithTransport(f.Transport()), WithDefaultDelay(0), WithMaxCrawlDelay(time.Minute, SkipHost), WithOnBlocked(blocks.add)))
	c.Visit("http://slow.test/a")
	c.Visit("http://slow.test/b")
	c.Wait()
	if n := len(f.Pages("slow.test", false)); n != 0 {
		t.Errorf("%d pages fetched from a skipped host", n)
	}
	bs := blocks.all()
	if len(bs) != 2 || bs[0].Kind != Skipped || !strings.Contains(bs[0].Reason, "2m0s") {
		t.Errorf("blocks %v", bs)
	}
	// Capped: the limiter gets the largest honoured delay.
	p := mustNew(t, WithMaxCrawlDelay(50*time.Millisecond, CapDelay), WithMinDelay(10*time.Millisecond), WithTransport(f.Transport()), WithDefaultDelay(0))
	c2 := newCollector(false, p.opt(t))
	c2.Visit("http://slow.test/c")
	c2.Wait()
	if d := p.Limiter().(*hostlimit.Limiter).Delay("http://slow.test"); d != 50*time.Millisecond {
		t.Errorf("capped delay %s", d)
	}
}

func TestPluginMinDelayNeverLowered(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			t.Parallel()
			f := testutil.NewFarm(t, map[string]*testutil.Site{"m.test": {Robots: "User-agent: *\nCrawl-delay: 0.01\n"}})
			p := mustNew(t, WithMinDelay(150*time.Millisecond), WithTransport(f.Transport()), WithDefaultDelay(0))
			c := newCollector(async, p.opt(t))
			for i := 0; i < 3; i++ {
				c.Visit(fmt.Sprintf("http://m.test/%d", i))
			}
			c.Wait()
			hs := f.Pages("m.test", true)
			if len(hs) != 4 {
				t.Fatalf("server saw %d requests, want 4", len(hs))
			}
			if g := testutil.MinGap(hs); g < 150*time.Millisecond {
				t.Errorf("gap %s below the user's minimum", g)
			}
		})
	}
}

// TestPluginWithCollyLimitRuleDelay: a LimitRule's Delay and the plugin's
// Crawl-delay both hold, whichever is longer, and c.Wait returns.
func TestPluginWithCollyLimitRuleDelay(t *testing.T) {
	cases := []struct {
		crawlDelay string
		plugin     time.Duration // the Crawl-delay
		rule       time.Duration // the LimitRule's Delay
	}{
		{"0.05", 50 * time.Millisecond, 150 * time.Millisecond},
		{"0.15", 150 * time.Millisecond, 50 * time.Millisecond},
	}
	const n = 4
	for _, tc := range cases {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("crawl-delay=%s/rule=%s/async=%v", tc.plugin, tc.rule, async), func(t *testing.T) {
				t.Parallel()
				f := testutil.NewFarm(t, map[string]*testutil.Site{"lr.test": {Robots: "User-agent: *\nCrawl-delay: " + tc.crawlDelay + "\n"}})
				c := newCollector(async, WithRobots(WithTransport(f.Transport()), WithDefaultDelay(0)))
				if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Delay: tc.rule}); err != nil {
					t.Fatal(err)
				}
				done := make(chan struct{})
				go func() {
					defer close(done)
					for i := 0; i < n; i++ {
						c.Visit(fmt.Sprintf("http://lr.test/p%d", i))
					}
					c.Wait()
				}()
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					t.Fatal("the visits and c.Wait did not return")
				}
				pages := f.Pages("lr.test", false)
				if len(pages) != n {
					t.Fatalf("server saw %d pages, want %d", len(pages), n)
				}
				want := max(tc.plugin, tc.rule)
				if g := testutil.MinGap(pages); g < want {
					t.Errorf("shortest gap between pages: %s, want at least %s", g, want)
				}
				// The LimitRule does not see robots.txt; the plugin spaces it too.
				if g := testutil.MinGap(f.Pages("lr.test", true)); g < tc.plugin {
					t.Errorf("shortest gap, robots.txt included: %s, want at least %s", g, tc.plugin)
				}
			})
		}
	}
}

func TestPluginWarnsWithoutProductToken(t *testing.T) {
	const msg = "robots: no product token could be derived from the User-Agent; only the * groups of robots.txt apply (set robots.WithAgents)"
	cases := []struct {
		name  string
		ua    string
		opts  []Option
		warn  bool
		paths string // what the server sees of /star and /bot
	}{
		{"no token", "12345", nil, true, "/bot"},
		{"browser-like", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36", nil, true, "/bot"},
		{"token", "ExampleBot/1.0", nil, false, "/star"},
		{"no token, WithAgents", "12345", []Option{WithAgents("examplebot")}, false, "/star"},
	}
	for _, tc := range cases {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/async=%v", tc.name, async), func(t *testing.T) {
				f := testutil.NewFarm(t, map[string]*testutil.Site{"tk.test": {Robots: "User-agent: *\nDisallow: /star\n\nUser-agent: examplebot\nDisallow: /bot\n"}})
				var buf testutil.Buffer
				log := slog.New(slog.NewJSONHandler(&buf, nil))
				p := mustNew(t, append([]Option{WithTransport(f.Transport()), WithDefaultDelay(0), WithLogger(log)}, tc.opts...)...)
				o := []colly.CollectorOption{colly.UserAgent(tc.ua), p.opt(t)}
				if async {
					o = append(o, colly.Async(true))
				}
				c := colly.NewCollector(o...)
				for _, path := range []string{"/star", "/bot", "/star", "/bot"} {
					c.Visit("http://tk.test" + path)
				}
				c.Wait()
				if got := strings.Join(f.Paths("tk.test"), " "); got != tc.paths {
					t.Errorf("server saw %q, want %q", got, tc.paths)
				}
				var warnings int
				for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
					var rec struct {
						Level     string `json:"level"`
						Msg       string `json:"msg"`
						UserAgent string `json:"user_agent"`
					}
					if line == "" {
						continue
					}
					if err := json.Unmarshal([]byte(line), &rec); err != nil {
						t.Fatalf("log line %q: %v", line, err)
					}
					if rec.Msg != msg {
						continue
					}
					warnings++
					if rec.Level != "WARN" || rec.UserAgent != tc.ua {
						t.Errorf("warning %s", line)
					}
				}
				if want := map[bool]int{true: 1, false: 0}[tc.warn]; warnings != want {
					t.Errorf("%d warnings, want %d; log:\n%s", warnings, want, buf.String())
				}
			})
		}
	}
}

func TestPluginCloneAndAttach(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{"cl.test": {Robots: "User-agent: *\nDisallow: /private\n"}})
	var blocks blockLog
	c := colly.NewCollector(colly.UserAgent("ExampleBot/1.0"))
	p := mustAttach(t, c, WithTransport(f.Transport()), WithDefaultDelay(0), WithOnBlocked(blocks.add))
	clone := c.Clone()
	var cloneErr error
	clone.OnError(func(_ *colly.Response, err error) { cloneErr = err })
	clone.Visit("http://cl.test/private/1") // not attached: stopped at the transport
	attached := c.Clone()
	if err := p.Attach(attached); err != nil {
		t.Fatal(err)
	}
	attached.Visit("http://cl.test/private/2") // attached: aborted in OnRequest
	attached.Visit("http://cl.test/ok")
	if got := strings.Join(f.Paths("cl.test"), " "); got != "/ok" {
		t.Errorf("server saw %q", got)
	}
	if !errors.Is(cloneErr, ErrBlocked) {
		t.Errorf("clone's request error: %v", cloneErr)
	}
	bs := blocks.all()
	if len(bs) != 2 || bs[0].Request != nil || bs[1].Request == nil {
		t.Errorf("blocks %v", bs)
	}
	st := p.Stats()["http://cl.test"]
	if st.Allowed != 1 || st.Disallowed != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestPluginTokensFromUserAgent(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{"ua.test": {Robots: "User-agent: examplebot\nDisallow: /\n"}})
	c := newCollector(false, WithRobots(WithTransport(f.Transport()), WithDefaultDelay(0)))
	c.Visit("http://ua.test/x")
	c2 := colly.NewCollector(colly.UserAgent("otherbot/2"), WithRobots(WithTransport(f.Transport()), WithDefaultDelay(0)))
	c2.Visit("http://ua.test/y")
	if got := strings.Join(f.Paths("ua.test"), " "); got != "/y" {
		t.Errorf("server saw %q", got)
	}
}

func TestPluginContextCancelWhileWaiting(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{"cc.test": {Robots: "User-agent: *\nCrawl-delay: 10\n"}})
	var blocks blockLog
	ctx, cancel := context.WithCancel(context.Background())
	p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0), WithOnBlocked(blocks.add))
	c := newCollector(true, colly.StdlibContext(ctx), p.opt(t))
	c.Visit("http://cc.test/1")
	c.Visit("http://cc.test/2")
	time.AfterFunc(300*time.Millisecond, cancel)
	c.Wait()
	// robots.txt itself is a request to the host: both pages owe it 10 s.
	if n := len(f.Pages("cc.test", false)); n != 0 {
		t.Errorf("%d pages", n)
	}
	if bs := blocks.all(); len(bs) != 2 || bs[0].Kind != Canceled || bs[1].Kind != Canceled {
		t.Errorf("blocks %v", bs)
	}
	// Every stop is counted too, per authority and in the totals.
	if s, tot := p.Stats()["http://cc.test"], p.Totals(); s.Canceled != 2 || tot.Canceled != 2 || tot.Allowed != 0 {
		t.Errorf("stats %+v, totals %+v: want 2 canceled", s, tot)
	}
}

func TestPluginStatsCapacity(t *testing.T) {
	sites := map[string]*testutil.Site{}
	for i := 0; i < 50; i++ {
		sites[fmt.Sprintf("s%d.test", i)] = &testutil.Site{Robots: "User-agent: *\nDisallow: /private\n"}
	}
	f := testutil.NewFarm(t, sites)
	for _, async := range []bool{false, true} {
		p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0), WithStatsCapacity(10))
		c := newCollector(async, p.opt(t))
		c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
		for i := 0; i < 50; i++ {
			c.Visit(fmt.Sprintf("http://s%d.test/a", i))
			c.Visit(fmt.Sprintf("http://s%d.test/private/x", i))
		}
		c.Wait()
		st := p.Stats()
		limit := 10
		if async {
			limit += 8 // updates may run beside a fold: a few over
		}
		if len(st) > limit || len(st) == 0 {
			t.Errorf("async=%v: %d authorities in Stats, capacity 10", async, len(st))
		}
		if !async {
			if s := st["http://s49.test"]; s.Allowed != 1 || s.Disallowed != 1 {
				t.Errorf("the latest authority: %+v", s)
			}
		}
		if tot := p.Totals(); tot.Allowed != 50 || tot.Disallowed != 50 {
			t.Errorf("async=%v: totals %+v, want 50 allowed and 50 disallowed", async, tot)
		}
	}
}
