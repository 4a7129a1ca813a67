package redisfleet

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

// Jitter allowances of the server-observed gaps. End-to-start: none is
// needed in principle (a release reaches Redis after the server flushed
// the response, a request reaches the server after its grant); 1 ms covers
// the rate difference of the two clocks (Redis's wall clock, the server's
// monotonic clock). Start-to-start: the send mark reaches Redis after
// net/http wrote the request, but the server may read it a little later
// than the mark lands; 2 ms.
const (
	jitterE2S = time.Millisecond
	jitterS2S = 2 * time.Millisecond
)

// visit is one request as the server saw it.
type visit struct {
	start, end time.Time
	status     int
}

// site is a local server that logs the start and end of every request,
// answers after hold, and tracks how many requests overlap.
type site struct {
	*httptest.Server
	hold time.Duration

	mu       sync.Mutex
	visits   []visit
	inFlight int
	maxIn    int
	status   func(n int) (int, http.Header) // the n-th request's status (nil: 200)
	// holdFirst: the first response waits until the second request has
	// arrived (at most 10 s, a failure timeout).
	holdFirst bool
	second    chan struct{} // closed when the second request arrives

	grants grantLog // the permits of fleetRun's requests, seen by the client
}

func newSite(t testing.TB, hold time.Duration) *site {
	s := &site{hold: hold, second: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.mu.Lock()
		n := len(s.visits)
		s.visits = append(s.visits, visit{start: start})
		s.inFlight++
		s.maxIn = max(s.maxIn, s.inFlight)
		st := s.status
		if n == 1 {
			close(s.second)
		}
		holdFirst := s.holdFirst && n == 0
		s.mu.Unlock()
		if holdFirst {
			select {
			case <-s.second:
			case <-time.After(10 * time.Second):
			}
		}
		code := 200
		if st != nil {
			var h http.Header
			code, h = st(n)
			for k, v := range h {
				w.Header()[k] = v
			}
		}
		time.Sleep(s.hold)
		w.WriteHeader(code)
		w.Write([]byte("body"))
		w.(http.Flusher).Flush()
		end := time.Now()
		s.mu.Lock()
		s.visits[n].end = end
		s.visits[n].status = code
		s.inFlight--
		s.mu.Unlock()
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) log() []visit {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := append([]visit(nil), s.visits...)
	sort.Slice(v, func(i, j int) bool { return v[i].start.Before(v[j].start) })
	return v
}

// minGap returns the shortest end-to-start (or start-to-start) gap the
// server saw.
func minGap(v []visit, startToStart bool) time.Duration {
	g := time.Duration(1 << 62)
	for i := 1; i < len(v); i++ {
		from := v[i-1].end
		if startToStart {
			from = v[i-1].start
		}
		g = min(g, v[i].start.Sub(from))
	}
	return g
}

// get sends one request to u under a permit of l, reading the body to the
// end, as the plugin's transport does.
func get(ctx context.Context, l *Limiter, host, u string, delay time.Duration) (int, error) {
	return getLogged(ctx, l, host, u, delay, nil)
}

// getLogged is get recording the permit's grant and send in log (if not
// nil).
func getLogged(ctx context.Context, l *Limiter, host, u string, delay time.Duration, log *grantLog) (int, error) {
	if err := l.Wait(ctx, host, delay); err != nil {
		return 0, err
	}
	var p hostlimit.Permit
	p, err := l.Acquire(ctx, host, delay)
	if err != nil {
		return 0, err
	}
	if log != nil {
		p = log.add(p)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	resp, err := hostlimit.RoundTrip(http.DefaultTransport, req, p)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// grantLog records, in the client, when each permit was granted (Acquire
// returned) and when its send was marked (just before the mark goes to
// Redis). The limiter's start-to-start promise is about these: a grant
// comes no sooner than the delay after the previous permit's mark reached
// Redis, which is after the time recorded here. Unlike the server's view
// of when a request started (it may read a request late while the next
// one is read at once), these bounds hold however late a goroutine runs.
type grantLog struct {
	mu sync.Mutex
	v  []grantSpan
}

type grantSpan struct{ granted, sent time.Time }

func (g *grantLog) add(p hostlimit.Permit) hostlimit.Permit {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.v = append(g.v, grantSpan{granted: time.Now()})
	return &loggedPermit{Permit: p, log: g, i: len(g.v) - 1}
}

// minGap returns the shortest time from a permit's send to the next grant
// (in grant order).
func (g *grantLog) minGap() time.Duration {
	g.mu.Lock()
	v := append([]grantSpan(nil), g.v...)
	g.mu.Unlock()
	sort.Slice(v, func(i, j int) bool { return v[i].granted.Before(v[j].granted) })
	m := time.Duration(1 << 62)
	for i := 1; i < len(v); i++ {
		m = min(m, v[i].granted.Sub(v[i-1].sent))
	}
	return m
}

// loggedPermit records its send (or its release, for a request never
// sent: the release counts as the send) before passing it on.
type loggedPermit struct {
	hostlimit.Permit
	log  *grantLog
	i    int
	once sync.Once
}

func (p *loggedPermit) mark() {
	p.once.Do(func() {
		p.log.mu.Lock()
		p.log.v[p.i].sent = time.Now()
		p.log.mu.Unlock()
	})
}

func (p *loggedPermit) Sent()    { p.mark(); p.Permit.Sent() }
func (p *loggedPermit) Release() { p.mark(); p.Permit.Release() }

// fleetRun runs procs limiters (each on its own fleet handle and client,
// as separate processes have), each with workers goroutines sending n
// requests to s, and returns the Redis calls the limiters made per
// request.
func fleetRun(t *testing.T, srv redistest.Backend, s *site, procs, workers, n int, cfg LimiterConfig, delay time.Duration) float64 {
	t.Helper()
	var calls redistest.CallCounter
	lims := make([]*Limiter, procs)
	for i := range lims {
		c := newClient(t, srv)
		f, err := New(context.Background(), c, Config{Lease: 3 * time.Second, CallTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		c.AddHook(&calls)
		lims[i] = f.Limiter(cfg)
	}
	host := "http://" + s.Listener.Addr().String()
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, l := range lims {
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range n {
					if _, err := getLogged(ctx, l, host, s.URL+"/", delay, &s.grants); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	return float64(calls.N.Load()) / float64(procs*workers*n)
}

// TestLimiterEndToStartAcrossProcesses: three limiters on three clients,
// three goroutines each: the server never has two requests in flight and
// never sees a request start sooner than the delay after the previous one
// ended.
func TestLimiterEndToStartAcrossProcesses(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		s := newSite(t, 5*time.Millisecond)
		const d = 100 * time.Millisecond
		perReq := fleetRun(t, srv, s, 3, 3, 4, LimiterConfig{}, d)
		v := s.log()
		if len(v) != 36 {
			t.Fatalf("server saw %d requests, want 36", len(v))
		}
		if s.maxIn != 1 {
			t.Fatalf("%d requests in flight at once, want 1", s.maxIn)
		}
		g := minGap(v, false)
		t.Logf("shortest end-to-start gap %v for %v; %.1f Redis calls per request (9 contending callers)", g, d, perReq)
		if g < d-jitterE2S {
			t.Fatalf("shortest end-to-start gap %v, want ≥ %v - %v", g, d, jitterE2S)
		}
		// Wait, Acquire, Release, and about one look at the host before its
		// slot (4.1 measured); every waiter asking at each release would add
		// one call per waiting caller (up to 8 here). The bound leaves room for
		// scheduling.
		if perReq > 8 {
			t.Errorf("%.1f Redis calls per request: a polling herd", perReq)
		}
	})
}

// TestLimiterStartToStartAcrossProcesses: with start-to-start spacing the
// sends are spaced by the delay while slow responses overlap.
func TestLimiterStartToStartAcrossProcesses(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		s := newSite(t, 250*time.Millisecond)
		s.mu.Lock()
		s.holdFirst = true // the first response ends only once the second request came: an overlap is certain unless the limiter serialises
		s.mu.Unlock()
		const d = 100 * time.Millisecond
		fleetRun(t, srv, s, 3, 2, 3, LimiterConfig{Spacing: hostlimit.StartToStart}, d)
		v := s.log()
		if len(v) != 18 {
			t.Fatalf("server saw %d requests, want 18", len(v))
		}
		// The server's start-to-start gaps are reported, not asserted: on a
		// loaded machine the server may read a request late and the next one
		// at once. The assertion is on what the limiter promises, seen by the
		// client: each grant at least the delay after the previous send.
		g := s.grants.minGap()
		t.Logf("shortest send-to-grant gap %v for %v (server-observed start-to-start %v); up to %d requests in flight", g, d, minGap(v, true), s.maxIn)
		if g < d-jitterS2S {
			t.Fatalf("shortest send-to-next-grant gap %v, want ≥ %v - %v", g, d, jitterS2S)
		}
		if s.maxIn < 2 {
			t.Fatalf("start-to-start never let requests overlap (the first response waited 10 s for a second request, delay %v)", d)
		}
	})
}

// TestLimiterRetryAfterShared: a 429 with Retry-After seen by one process
// pauses the host for the others; WaitMax does not wait out a pause longer
// than its limit (2 s against 100 ms: the check holds on a loaded machine).
func TestLimiterRetryAfterShared(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		s := newSite(t, 0)
		s.status = func(n int) (int, http.Header) {
			if n == 0 {
				return 429, http.Header{"Retry-After": {"2"}}
			}
			return 200, nil
		}
		a, b := newFleet(t, srv).Limiter(LimiterConfig{}), newFleet(t, srv).Limiter(LimiterConfig{})
		host := "http://" + s.Listener.Addr().String()
		ctx := context.Background()
		if code, err := get(ctx, a, host, s.URL, 10*time.Millisecond); err != nil || code != 429 {
			t.Fatalf("first request: %d, %v", code, err)
		}
		_, err := b.WaitMax(ctx, host, 10*time.Millisecond, 100*time.Millisecond)
		var pe *hostlimit.PausedError
		if !errors.As(err, &pe) || pe.Host != host {
			t.Fatalf("WaitMax on a host paused for 2 s with maxPause 100 ms: %v", err)
		}
		if code, err := get(ctx, b, host, s.URL, 10*time.Millisecond); err != nil || code != 200 {
			t.Fatalf("second request: %d, %v", code, err)
		}
		v := s.log()
		if g := v[1].start.Sub(v[0].end); g < 2*time.Second-jitterE2S {
			t.Fatalf("another process asked %v after a 429 with Retry-After: 2", g)
		}
		if st, ok := a.Stats(host); !ok || st.Pauses != 1 || st.LastPause != 2*time.Second || st.Grants != 1 {
			t.Fatalf("stats of the process that saw the 429: %+v %v", st, ok)
		}
	})
}

// TestLimiterMaxEndsOnPauseWhileWaiting: a WaitMax or AcquireMax caller
// already waiting when a pause past its maxPause starts (another process's
// request answered 429, Retry-After 60) returns a *hostlimit.PausedError
// instead of waiting the pause out (as hostlimit does),
// and leaves the fleet's queue.
func TestLimiterMaxEndsOnPauseWhileWaiting(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	for _, tc := range []struct {
		name  string
		queue string // the fleet-wide queue the caller waits in
		call  func(ctx context.Context, l *Limiter, host string, d time.Duration) error
	}{
		{"WaitMax", kindEarly, func(ctx context.Context, l *Limiter, host string, d time.Duration) error {
			_, err := l.WaitMax(ctx, host, d, 2*time.Second)
			return err
		}},
		{"AcquireMax", kindWait, func(ctx context.Context, l *Limiter, host string, d time.Duration) error {
			p, err := l.AcquireMax(ctx, host, d, 2*time.Second)
			if p != nil {
				p.Release()
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fa, fb := newFleet(t, srv), newFleet(t, srv)
			a, b := fa.Limiter(LimiterConfig{}), fb.Limiter(LimiterConfig{})
			host, d := "https://paused-"+tc.name+".example", 10*time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			p, err := a.Acquire(ctx, host, d) // holds the host: b's call queues
			if err != nil {
				t.Fatal(err)
			}
			type result struct{ err error }
			done := make(chan result, 1)
			go func() { done <- result{tc.call(ctx, b, host, d)} }()
			rdb := newClient(t, srv)
			queue := fb.key(tc.queue, host)
			for n := int64(0); n == 0; {
				select {
				case r := <-done:
					t.Fatalf("returned while the host was held: %v", r.err)
				case <-time.After(10 * time.Millisecond):
				}
				n, _ = rdb.ZCard(ctx, queue).Result()
			}
			paused := time.Now()
			p.Observe(http.StatusTooManyRequests, http.Header{"Retry-After": {"60"}})
			p.Release()
			var r result
			select {
			case r = <-done:
			case <-ctx.Done():
				t.Fatal("waited out a 60 s pause that started while it waited (maxPause 2 s)")
			}
			var pe *hostlimit.PausedError
			if !errors.As(r.err, &pe) || pe.Until.Sub(paused) < 50*time.Second {
				t.Fatalf("%v, want a PausedError until about a minute from now", r.err)
			}
			if n, _ := rdb.ZCard(ctx, queue).Result(); n != 0 {
				t.Errorf("%d callers left in the fleet's queue after the call returned", n)
			}
		})
	}
}

// TestLimiterBackoffCountedFleetWide: 503s without Retry-After seen by two
// processes in turn double the pause: the run is counted in Redis.
func TestLimiterBackoffCountedFleetWide(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		s := newSite(t, 0)
		s.status = func(n int) (int, http.Header) {
			if n < 2 {
				return 503, nil
			}
			return 200, nil
		}
		cfg := LimiterConfig{BackoffBase: 200 * time.Millisecond}
		a, b := newFleet(t, srv).Limiter(cfg), newFleet(t, srv).Limiter(cfg)
		host := "http://" + s.Listener.Addr().String()
		ctx := context.Background()
		for i, l := range []*Limiter{a, b, a} {
			if _, err := get(ctx, l, host, s.URL, 0); err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
		}
		v := s.log()
		if g := v[1].start.Sub(v[0].end); g < 200*time.Millisecond-jitterE2S {
			t.Fatalf("gap after the first 503: %v, want ≥ 200 ms", g)
		}
		if g := v[2].start.Sub(v[1].end); g < 400*time.Millisecond-jitterE2S {
			t.Fatalf("gap after the second 503 in a row (another process): %v, want ≥ 400 ms", g)
		}
		c := newClient(t, srv)
		h, _ := a.f.hostKeys(host)
		if f, _ := c.HGet(context.Background(), h, "fail").Int(); f != 0 {
			t.Fatalf("a 200 after the run left fail = %d", f)
		}
	})
}

// TestLimiterObserveStatuses: 429 and every 5xx but 501 and 505 pause the
// host for the whole fleet (the backoff, here a minute: another process's
// WaitMax with a bound of a second refuses to wait it out); 501, 505 and
// the other statuses pause nothing.
func TestLimiterObserveStatuses(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	cfg := LimiterConfig{BackoffBase: time.Minute, BackoffMax: time.Minute}
	a, b := newFleet(t, srv).Limiter(cfg), newFleet(t, srv).Limiter(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		status int
		pause  bool
	}{
		{429, true}, {500, true}, {502, true}, {503, true}, {504, true}, {507, true}, {522, true}, {599, true},
		{501, false}, {505, false}, {200, false}, {304, false}, {404, false}, {408, false}, {600, false},
	} {
		host := "https://status-" + strconv.Itoa(tc.status) + ".example"
		p, err := a.Acquire(ctx, host, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := p.Observe(tc.status, nil)
		p.Release()
		if (got == time.Minute) != tc.pause || !tc.pause && got != 0 {
			t.Errorf("%d: Observe paused %v, want a pause: %v", tc.status, got, tc.pause)
		}
		_, err = b.WaitMax(ctx, host, 0, time.Second)
		var pe *hostlimit.PausedError
		if errors.As(err, &pe) != tc.pause || !tc.pause && err != nil {
			t.Errorf("%d: the other process's WaitMax: %v, want paused: %v", tc.status, err, tc.pause)
		}
	}
}

// TestLimiterZeroDelay: a delay of 0 neither spaces nor serialises.
func TestLimiterZeroDelay(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	s := newSite(t, 0)
	s.mu.Lock()
	s.holdFirst = true // the first response ends only once the second request came: an overlap is certain unless the limiter serialises
	s.mu.Unlock()
	fleetRun(t, srv, s, 2, 2, 1, LimiterConfig{}, 0)
	if s.maxIn < 2 {
		t.Fatalf("delay 0 serialised the requests (max %d in flight; the first response waited 10 s for a second request)", s.maxIn)
	}
}

// TestLimiterContextEnds: a caller waiting for a held host leaves when its
// context ends, with its error, and takes nothing.
func TestLimiterContextEnds(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a, b := newFleet(t, srv).Limiter(LimiterConfig{}), newFleet(t, srv).Limiter(LimiterConfig{})
	p, err := a.Acquire(context.Background(), "https://h.example", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := b.Acquire(ctx, "https://h.example", time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire on a held host with a 1 s context: %v", err)
	}
	p.Release()
	c := newClient(t, srv)
	_, hold := a.f.hostKeys("https://h.example")
	if n, _ := c.ZCard(context.Background(), hold).Result(); n != 0 {
		t.Fatalf("%d permits registered after the only one was released", n)
	}
	if n, _ := c.ZCard(context.Background(), a.f.key(kindWait, "https://h.example")).Result(); n != 0 {
		t.Fatalf("the caller that gave up is still in the host's queue (%d waiting)", n)
	}
	if st, _ := b.Stats("https://h.example"); st.Waits != 1 || st.Grants != 0 {
		t.Fatalf("stats of the caller that gave up: %+v", st)
	}
}

// TestLimiterPause: a pause set by one process holds the host for another
// (WaitMax does not wait out a pause longer than its limit), and Stats
// shows this process's grants and waits.
func TestLimiterPause(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a, b := newFleet(t, srv).Limiter(LimiterConfig{}), newFleet(t, srv).Limiter(LimiterConfig{})
	ctx := context.Background()
	const host, pause = "https://paused.example", 2 * time.Second
	start := time.Now() // the pause starts after this, at Redis
	if err := a.Pause(ctx, host, pause); err != nil {
		t.Fatal(err)
	}
	var pe *hostlimit.PausedError
	if _, err := b.WaitMax(ctx, host, 0, 100*time.Millisecond); !errors.As(err, &pe) {
		t.Fatalf("WaitMax on a host paused 2 s with maxPause 100 ms: %v", err)
	}
	p, err := b.Acquire(ctx, host, 0)
	if err != nil {
		t.Fatal(err)
	}
	p.Release()
	if el := time.Since(start); el < pause-jitterE2S {
		t.Fatalf("granted %v into a %v pause set by another process", el, pause)
	}
	st, ok := b.Stats(host)
	if !ok || st.Grants != 1 || st.Waits != 1 || st.InFlight != 0 || st.Queued != 0 {
		t.Fatalf("stats %+v, %v", st, ok)
	}
	if _, ok := b.Stats("https://never.example"); ok {
		t.Fatal("stats for a host never used")
	}
}

// TestLimiterLowerDelayKeepsSerialisation: a process passing a lower delay
// (a robots.txt fetch by a process that does not know the policy yet: delay
// 0) while another process's page, granted under 300 ms, is in flight
// waits for it to end, and then for the 300 ms it was granted under.
func TestLimiterLowerDelayKeepsSerialisation(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		s := newSite(t, 200*time.Millisecond)
		a, b := newFleet(t, srv).Limiter(LimiterConfig{}), newFleet(t, srv).Limiter(LimiterConfig{})
		host := "http://" + s.Listener.Addr().String()
		ctx := context.Background()
		const d = 300 * time.Millisecond
		done := make(chan error, 1)
		go func() {
			_, err := get(ctx, a, host, s.URL+"/page", d)
			done <- err
		}()
		redistest.WaitFor(t, 10*time.Second, "a's request at the server", func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return len(s.visits) == 1
		})
		if _, err := get(ctx, b, host, s.URL+"/robots.txt", 0); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		v := s.log()
		if len(v) != 2 || s.maxIn != 1 {
			t.Fatalf("%d requests, %d at once; want 2, one at a time", len(v), s.maxIn)
		}
		if g := v[1].start.Sub(v[0].end); g < d-jitterE2S {
			t.Fatalf("a delay-0 request went %v after a request granted under %v ended", g, d)
		}
	})
}
