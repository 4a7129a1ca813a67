package hostlimit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/robots/internal/testutil"
)

// The spacing tests use real time, real sends and a real loopback server;
// their assertions are lower bounds with zero tolerance.

// limSrvRec is what the server saw of one request: when it arrived and when
// the server started writing the response's body (before the client can
// possibly have read its end).
type limSrvRec struct {
	path        string
	arrive, end time.Time
}

// limServer is one loopback server standing for many hosts: requests are
// told apart by their Host header.
type limServer struct {
	srv *httptest.Server
	mu  sync.Mutex
	rec map[string][]limSrvRec
	n   map[string]int
	// script, if set, runs after the arrival was recorded; it may set
	// headers and sleep, and returns the status (0 means 200).
	script func(host string, n int, w http.ResponseWriter, r *http.Request) int
}

func newLimServer(t *testing.T, script func(host string, n int, w http.ResponseWriter, r *http.Request) int) *limServer {
	s := &limServer{rec: map[string][]limSrvRec{}, n: map[string]int{}, script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrive := time.Now()
		s.mu.Lock()
		n := s.n[r.Host]
		s.n[r.Host]++
		s.mu.Unlock()
		status := 0
		if s.script != nil {
			status = s.script(r.Host, n, w, r)
		}
		if status == 0 {
			status = http.StatusOK
		}
		w.Header().Set("Content-Length", "3")
		w.WriteHeader(status)
		end := time.Now()
		s.mu.Lock()
		s.rec[r.Host] = append(s.rec[r.Host], limSrvRec{r.URL.Path, arrive, end})
		s.mu.Unlock()
		w.Write([]byte("ok\n"))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// records returns host's requests in arrival order.
func (s *limServer) records(host string) []limSrvRec {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := append([]limSrvRec(nil), s.rec[host]...)
	sort.Slice(r, func(i, j int) bool { return r[i].arrive.Before(r[j].arrive) })
	return r
}

// limSend is what the client saw of one request, recorded by the RoundTripper
// under the limiter's: right before it calls the network, and when the body
// hit its end or was closed (or the round trip failed), before the limiter's
// wrapper saw it.
type limSend struct {
	host      string
	send, end time.Time
}

type limRecorder struct {
	base  http.RoundTripper
	mu    sync.Mutex
	sends []*limSend
}

type limRecBody struct {
	io.ReadCloser
	s    *limSend
	once sync.Once
}

func (b *limRecBody) mark() { b.once.Do(func() { b.s.end = time.Now() }) }

func (b *limRecBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.mark()
	}
	return n, err
}

func (b *limRecBody) Close() error {
	b.mark()
	return b.ReadCloser.Close()
}

func (r *limRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	s := &limSend{host: req.URL.Host}
	s.send = time.Now()
	r.mu.Lock()
	r.sends = append(r.sends, s)
	r.mu.Unlock()
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		s.end = time.Now()
		return nil, err
	}
	resp.Body = &limRecBody{ReadCloser: resp.Body, s: s}
	return resp, nil
}

// bySend returns host's client-side records in send order.
func (r *limRecorder) bySend(host string) []*limSend {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*limSend
	for _, s := range r.sends {
		if s.host == host {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].send.Before(out[j].send) })
	return out
}

// limClient returns a client whose every host name resolves to the server,
// through l's transport over a recorder.
func limClient(s *limServer, l *Limiter) (*http.Client, *limRecorder) {
	addr := s.srv.Listener.Addr().String()
	base := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConnsPerHost: 200,
	}
	rec := &limRecorder{base: base}
	return &http.Client{Transport: l.Transport(rec)}, rec
}

func limGet(ctx context.Context, c *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err
}

func limHostName(i int) string { return "h" + strconv.Itoa(i) + ".test" }

// limMinGap tracks the shortest gap seen.
type limMinGap struct{ d time.Duration }

func (m *limMinGap) see(d time.Duration) {
	if m.d == 0 || d < m.d {
		m.d = d
	}
}

// limCheckEndToStart asserts, for one host, that every request arrived at
// least d after the previous one, at least d after the server started
// sending the previous response, and that every send started at least d
// after the previous response ended on the client.
func limCheckEndToStart(t *testing.T, s *limServer, rec *limRecorder, host string, want int, d time.Duration, arr, srvEnd, cli *limMinGap) {
	t.Helper()
	rs := s.records(host)
	if len(rs) != want {
		t.Fatalf("%s: server saw %d requests, want %d", host, len(rs), want)
	}
	for i := 1; i < len(rs); i++ {
		g1, g2 := rs[i].arrive.Sub(rs[i-1].arrive), rs[i].arrive.Sub(rs[i-1].end)
		arr.see(g1)
		srvEnd.see(g2)
		if g1 < d || g2 < d {
			t.Errorf("%s: request %d arrived %v after the previous arrival, %v after its response started; want ≥ %v", host, i, g1, g2, d)
		}
	}
	ss := rec.bySend(host)
	if len(ss) != want {
		t.Fatalf("%s: client sent %d requests, want %d", host, len(ss), want)
	}
	for i := 1; i < len(ss); i++ {
		g := ss[i].send.Sub(ss[i-1].end)
		cli.see(g)
		if g < d {
			t.Errorf("%s: send %d started %v after the previous response ended on the client; want ≥ %v", host, i, g, d)
		}
	}
}

// limRun runs per goroutines on each host, each doing k GETs, and returns
// the first error. It may run on any goroutine.
func limRun(c *http.Client, hosts, per, k int) error {
	var wg sync.WaitGroup
	errs := make(chan error, hosts*per*k)
	for h := 0; h < hosts; h++ {
		for g := 0; g < per; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < k; j++ {
					if _, err := limGet(context.Background(), c, "http://"+limHostName(h)+"/p"+strconv.Itoa(g)); err != nil {
						errs <- err
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func TestLimiterEndToStart(t *testing.T) {
	const d = 20 * time.Millisecond
	for _, tc := range []struct{ per, k int }{{1, 8}, {10, 2}, {100, 1}} {
		t.Run(fmt.Sprintf("goroutines=%d", tc.per), func(t *testing.T) {
			s := newLimServer(t, nil)
			l := New(Config{Delay: func(string) time.Duration { return d }})
			c, rec := limClient(s, l)
			const hosts = 3
			if err := limRun(c, hosts, tc.per, tc.k); err != nil {
				t.Fatal(err)
			}
			var arr, srvEnd, cli limMinGap
			for h := 0; h < hosts; h++ {
				limCheckEndToStart(t, s, rec, limHostName(h), tc.per*tc.k, d, &arr, &srvEnd, &cli)
				st, _ := l.Stats("http://" + limHostName(h))
				if st.InFlight != 0 || st.Queued != 0 || st.Grants != int64(tc.per*tc.k) {
					t.Errorf("%s: stats %+v", limHostName(h), st)
				}
			}
			t.Logf("delay %v: shortest gaps: arrival→arrival %v, server response start→arrival %v, client end→send %v", d, arr.d, srvEnd.d, cli.d)
		})
	}
}

func TestLimiterStartToStart(t *testing.T) {
	const d = 20 * time.Millisecond
	for _, tc := range []struct{ per, k int }{{1, 8}, {10, 2}, {100, 1}} {
		t.Run(fmt.Sprintf("goroutines=%d", tc.per), func(t *testing.T) {
			// The server holds each request 50 ms, longer than the delay,
			// so requests overlap when the limiter lets them.
			s := newLimServer(t, func(string, int, http.ResponseWriter, *http.Request) int {
				time.Sleep(50 * time.Millisecond)
				return 0
			})
			l := New(Config{Spacing: StartToStart, Delay: func(string) time.Duration { return d }})
			c, rec := limClient(s, l)
			const hosts = 3
			if err := limRun(c, hosts, tc.per, tc.k); err != nil {
				t.Fatal(err)
			}
			var gap, arr limMinGap
			overlap := false
			for h := 0; h < hosts; h++ {
				ss := rec.bySend(limHostName(h))
				if len(ss) != tc.per*tc.k {
					t.Fatalf("client sent %d requests, want %d", len(ss), tc.per*tc.k)
				}
				for i := 1; i < len(ss); i++ {
					g := ss[i].send.Sub(ss[i-1].send)
					gap.see(g)
					if g < d {
						t.Errorf("%s: send %d started %v after the previous send; want ≥ %v", limHostName(h), i, g, d)
					}
					if ss[i].send.Before(ss[i-1].end) {
						overlap = true
					}
				}
				rs := s.records(limHostName(h))
				for i := 1; i < len(rs); i++ {
					arr.see(rs[i].arrive.Sub(rs[i-1].arrive))
				}
			}
			if tc.per > 1 && !overlap {
				t.Errorf("no two requests to a host were in flight together")
			}
			t.Logf("delay %v: shortest send→send gap %v (server arrival→arrival, not guaranteed: %v), overlapping requests: %v", d, gap.d, arr.d, overlap)
		})
	}
}

func TestLimiterHostsInParallel(t *testing.T) {
	const d, hosts, n = 100 * time.Millisecond, 5, 5
	s := newLimServer(t, nil)
	l := New(Config{Delay: func(string) time.Duration { return d }})
	c, rec := limClient(s, l)
	start := time.Now()
	if err := limRun(c, hosts, 1, n); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	share := (n - 1) * d
	if took >= 3*share {
		t.Errorf("%d hosts × %d requests took %v; one host's share is %v, serial would be ≥ %v", hosts, n, took, share, hosts*share)
	}
	var arr, srvEnd, cli limMinGap
	for h := 0; h < hosts; h++ {
		limCheckEndToStart(t, s, rec, limHostName(h), n, d, &arr, &srvEnd, &cli)
	}
	t.Logf("%d hosts × %d requests at %v: %v (one host's share %v); shortest gap %v", hosts, n, d, took, share, srvEnd.d)
}

func TestLimiterRedirectHop(t *testing.T) {
	const d = 100 * time.Millisecond
	s := newLimServer(t, func(_ string, _ int, w http.ResponseWriter, r *http.Request) int {
		if r.URL.Path == "/r" {
			w.Header().Set("Location", "/final")
			return http.StatusFound
		}
		return 0
	})
	l := New(Config{Delay: func(string) time.Duration { return d }})
	c, _ := limClient(s, l)
	if _, err := limGet(context.Background(), c, "http://"+limHostName(0)+"/r"); err != nil {
		t.Fatal(err)
	}
	rs := s.records(limHostName(0))
	if len(rs) != 2 || rs[1].path != "/final" {
		t.Fatalf("server saw %+v", rs)
	}
	if g := rs[1].arrive.Sub(rs[0].end); g < d {
		t.Errorf("redirect hop arrived %v after the redirect; want ≥ %v", g, d)
	}
}

func TestLimiterCancel(t *testing.T) {
	const d = 300 * time.Millisecond
	const host = "http://a.test"
	l := New(Config{})
	l.SetDelay(host, d)
	p, err := l.Acquire(context.Background(), host, KeepDelay)
	if err != nil {
		t.Fatal(err)
	}
	p.Release()
	released := time.Now()

	t.Run("Acquire", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(30*time.Millisecond, cancel)
		start := time.Now()
		p, err := l.Acquire(ctx, host, KeepDelay)
		if !errors.Is(err, context.Canceled) || p != nil {
			t.Fatalf("Acquire = %v, %v; want context.Canceled", p, err)
		}
		if took := time.Since(start); took > 250*time.Millisecond {
			t.Errorf("cancelled Acquire returned after %v", took)
		}
	})
	t.Run("Wait", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		if err := l.Wait(ctx, host, KeepDelay); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait = %v; want context.DeadlineExceeded", err)
		}
	})
	t.Run("AlreadyDone", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := l.Acquire(ctx, "http://free.test", KeepDelay); !errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire = %v", err)
		}
	})
	st, _ := l.Stats(host)
	if st.InFlight != 0 || st.Queued != 0 {
		t.Fatalf("after cancellations: %+v", st)
	}
	// Nothing leaked: the gate still opens, and not before the delay.
	p, err = l.Acquire(context.Background(), host, KeepDelay)
	if err != nil {
		t.Fatal(err)
	}
	if g := time.Since(released); g < d {
		t.Errorf("granted %v after the release; want ≥ %v", g, d)
	}
	p.Release()
	p.Release() // idempotent

	t.Run("Transport", func(t *testing.T) {
		s := newLimServer(t, nil)
		c, _ := limClient(s, l)
		h := "http://" + limHostName(0)
		l.SetDelay(h, d)
		if _, err := limGet(context.Background(), c, h+"/1"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := limGet(ctx, c, h+"/2")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("GET = %v; want context.DeadlineExceeded", err)
		}
		if took := time.Since(start); took > 250*time.Millisecond {
			t.Errorf("cancelled GET returned after %v", took)
		}
		if n := len(s.records(limHostName(0))); n != 1 {
			t.Errorf("server saw %d requests, want 1", n)
		}
		if st, _ := l.Stats(h); st.InFlight != 0 || st.Queued != 0 {
			t.Errorf("after cancellation: %+v", st)
		}
	})
}

func TestLimiterZeroDelay(t *testing.T) {
	l := New(Config{})
	const host = "http://z.test"
	l.SetDelay(host, -time.Second)
	if got := l.Delay(host); got != 0 {
		t.Fatalf("Delay after SetDelay(-1s) = %v", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// No serialisation: ten permits at once.
	var ps []Permit
	for i := 0; i < 10; i++ {
		p, err := l.Acquire(ctx, host, KeepDelay)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	for _, p := range ps {
		p.Release()
	}
	// A pause still applies.
	const pause = 80 * time.Millisecond
	l.Pause(host, pause)
	start := time.Now()
	p, err := l.Acquire(ctx, host, KeepDelay)
	if err != nil {
		t.Fatal(err)
	}
	p.Release()
	if g := time.Since(start); g < pause {
		t.Errorf("granted %v into a %v pause", g, pause)
	}
}

// TestLimiterWaitEarly checks that the early Wait lets callers of one host
// through one at a time, spaced like the gate, and holds nothing.
func TestLimiterWaitEarly(t *testing.T) {
	const d = 80 * time.Millisecond
	s := newLimServer(t, nil)
	l := New(Config{Delay: func(string) time.Duration { return d }})
	c, rec := limClient(s, l)
	host := "http://" + limHostName(0)
	var mu sync.Mutex
	var passed []time.Time
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Wait(context.Background(), host, KeepDelay); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			passed = append(passed, time.Now())
			mu.Unlock()
			if _, err := limGet(context.Background(), c, host+"/"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	sort.Slice(passed, func(i, j int) bool { return passed[i].Before(passed[j]) })
	for i := 1; i < len(passed); i++ {
		if g := passed[i].Sub(passed[i-1]); g < d {
			t.Errorf("Wait let caller %d through %v after the previous one; want ≥ %v", i, g, d)
		}
	}
	var arr, srvEnd, cli limMinGap
	limCheckEndToStart(t, s, rec, limHostName(0), 5, d, &arr, &srvEnd, &cli)
	st, _ := l.Stats(host)
	if st.Waits == 0 || st.WaitTime < 4*d {
		t.Errorf("stats %+v: want waits counted, ≥ %v waited", st, 4*d)
	}

	// A caller that passes Wait and never comes to the gate holds the
	// others back for WaitClaim at most.
	const claim = 50 * time.Millisecond
	l2 := New(Config{WaitClaim: claim})
	l2.SetDelay(host, 20*time.Millisecond)
	if err := l2.Wait(context.Background(), host, KeepDelay); err != nil {
		t.Fatal(err)
	}
	first := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l2.Wait(ctx, host, KeepDelay); err != nil {
		t.Fatalf("second Wait: %v", err)
	}
	if g := time.Since(first); g < claim {
		t.Errorf("second Wait returned %v after the first; want ≥ %v", g, claim)
	}
}

// TestLimiterRetryAfter checks that 429 and 503 with Retry-After pause the
// host until then, capped.
func TestLimiterRetryAfter(t *testing.T) {
	var date time.Time // parsed HTTP date the server sent
	cases := []struct {
		name   string
		status int
		value  func() string
		max    time.Duration
		want   func() time.Duration // pause wanted from the 429/503's end
	}{
		{"seconds", 429, func() string { return "1" }, 0, func() time.Duration { return time.Second }},
		{"date", 503, func() string {
			v := time.Now().Add(1100 * time.Millisecond).UTC().Format(http.TimeFormat)
			date, _ = http.ParseTime(v)
			return v
		}, 0, nil},
		{"capped", 429, func() string { return "3600" }, 150 * time.Millisecond, func() time.Duration { return 150 * time.Millisecond }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newLimServer(t, func(_ string, n int, w http.ResponseWriter, _ *http.Request) int {
				if n == 0 {
					w.Header().Set("Retry-After", tc.value())
					return tc.status
				}
				return 0
			})
			l := New(Config{MaxRetryAfter: tc.max, Delay: func(string) time.Duration { return 20 * time.Millisecond }})
			c, _ := limClient(s, l)
			host := limHostName(0)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if code, err := limGet(ctx, c, "http://"+host+"/"); err != nil || code != tc.status {
				t.Fatalf("first GET: %d, %v", code, err)
			}
			st, _ := l.Stats("http://" + host)
			if st.Pauses != 1 || st.PausedUntil.IsZero() {
				t.Fatalf("stats after %d: %+v", tc.status, st)
			}
			if code, err := limGet(ctx, c, "http://"+host+"/"); err != nil || code != 200 {
				t.Fatalf("second GET: %d, %v", code, err)
			}
			rs := s.records(host)
			if tc.want != nil {
				if g := rs[1].arrive.Sub(rs[0].end); g < tc.want() {
					t.Errorf("next request %v after the %d; want ≥ %v", g, tc.status, tc.want())
				}
				if st.LastPause != tc.want() {
					t.Errorf("LastPause %v, want %v", st.LastPause, tc.want())
				}
			} else if rs[1].arrive.Before(date) {
				t.Errorf("next request at %v, before Retry-After %v", rs[1].arrive, date)
			}
			t.Logf("%s: gap after the %d: %v", tc.name, tc.status, rs[1].arrive.Sub(rs[0].end))
		})
	}
}

// TestLimiterBackoff checks exponential backoff without Retry-After, its cap,
// and its reset after a success.
func TestLimiterBackoff(t *testing.T) {
	const base, limit = 40 * time.Millisecond, 200 * time.Millisecond
	statuses := []int{503, 429, 503, 503, 200, 429, 200}
	wantPause := []time.Duration{40, 80, 160, 200, 0, 40, 0}
	s := newLimServer(t, func(_ string, n int, _ http.ResponseWriter, _ *http.Request) int {
		return statuses[n]
	})
	l := New(Config{BackoffBase: base, BackoffMax: limit, Delay: func(string) time.Duration { return 10 * time.Millisecond }})
	c, _ := limClient(s, l)
	host := limHostName(0)
	for i, want := range statuses {
		code, err := limGet(context.Background(), c, "http://"+host+"/")
		if err != nil || code != want {
			t.Fatalf("GET %d: %d, %v; want %d", i, code, err, want)
		}
		st, _ := l.Stats("http://" + host)
		if w := wantPause[i] * time.Millisecond; w != 0 && st.LastPause != w {
			t.Errorf("after response %d (%d): LastPause %v, want %v", i, code, st.LastPause, w)
		}
	}
	rs := s.records(host)
	for i := 1; i < len(rs); i++ {
		want := max(wantPause[i-1]*time.Millisecond, 10*time.Millisecond)
		if g := rs[i].arrive.Sub(rs[i-1].end); g < want {
			t.Errorf("request %d arrived %v after response %d (%d); want ≥ %v", i, g, i-1, statuses[i-1], want)
		}
	}
	if st, _ := l.Stats("http://" + host); st.Pauses != 5 {
		t.Errorf("Pauses = %d, want 5", st.Pauses)
	}
}

func TestLimiterObserveParsing(t *testing.T) {
	l := New(Config{BackoffBase: time.Hour, BackoffMax: time.Hour})
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		status int
		ra     string
		want   time.Duration
	}{
		{429, "0", 0},
		{503, past, 0},
		{429, "120", 2 * time.Minute},
		{429, "99999999999999999999", 10 * time.Minute}, // default cap
		{503, "soon", time.Hour},                        // unusable: backoff
		{429, "-5", time.Hour},
		{500, "5", 0}, // other statuses do nothing
		{404, "", 0},
	} {
		h := http.Header{}
		if tc.ra != "" {
			h.Set("Retry-After", tc.ra)
		}
		if got := l.Observe("http://o.test", tc.status, h); got != tc.want {
			t.Errorf("Observe(%d, Retry-After %q) = %v, want %v", tc.status, tc.ra, got, tc.want)
		}
	}
}

// TestLimiterRaiseDelay raises the delay while requests are queued: no gap
// after a request that ended under the higher delay may be shorter.
func TestLimiterRaiseDelay(t *testing.T) {
	const lo, hi = 30 * time.Millisecond, 120 * time.Millisecond
	for _, mode := range []Spacing{EndToStart, StartToStart} {
		t.Run(mode.String(), func(t *testing.T) {
			arrived, resume := make(chan struct{}), make(chan struct{})
			s := newLimServer(t, func(_ string, n int, _ http.ResponseWriter, _ *http.Request) int {
				if n == 1 {
					close(arrived)
					<-resume
				}
				return 0
			})
			l := New(Config{Spacing: mode, Delay: func(string) time.Duration { return lo }})
			c, rec := limClient(s, l)
			host := limHostName(0)
			done := make(chan struct{})
			go func() {
				if err := limRun(c, 1, 8, 1); err != nil {
					t.Error(err)
				}
				close(done)
			}()
			<-arrived
			raised := time.Now()
			l.SetDelay("http://"+host, hi)
			close(resume)
			<-done
			ss := rec.bySend(host)
			var short limMinGap
			for i := 1; i < len(ss); i++ {
				from := ss[i-1].end // EndToStart: from the previous end
				if mode == StartToStart {
					from = ss[i-1].send
				}
				want := lo
				if from.After(raised) {
					want = hi
				}
				g := ss[i].send.Sub(from)
				if want == hi {
					short.see(g)
				}
				if g < want {
					t.Errorf("send %d came %v after the previous %s; want ≥ %v", i, g, map[bool]string{true: "send", false: "end"}[mode == StartToStart], want)
				}
			}
			t.Logf("shortest gap after the raise to %v: %v", hi, short.d)
		})
	}
}

// TestLimiterLowerDelay lowers the delay after a request ended under a high
// delay: the gap after that request still honours the high delay.
func TestLimiterLowerDelay(t *testing.T) {
	const hi, lo = 150 * time.Millisecond, 10 * time.Millisecond
	s := newLimServer(t, nil)
	l := New(Config{Delay: func(string) time.Duration { return hi }})
	c, _ := limClient(s, l)
	host := limHostName(0)
	if _, err := limGet(context.Background(), c, "http://"+host+"/first"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		if err := limRun(c, 1, 5, 1); err != nil {
			t.Error(err)
		}
		close(done)
	}()
	time.Sleep(20 * time.Millisecond)
	l.SetDelay("http://"+host, lo)
	<-done
	rs := s.records(host)
	if g := rs[1].arrive.Sub(rs[0].end); g < hi {
		t.Errorf("first request after the lowering came %v after the previous response; want ≥ %v", g, hi)
	}
	for i := 2; i < len(rs); i++ {
		if g := rs[i].arrive.Sub(rs[i-1].end); g < lo {
			t.Errorf("request %d came %v after the previous response; want ≥ %v", i, g, lo)
		}
	}
	t.Logf("gap kept after lowering %v → %v: %v", hi, lo, rs[1].arrive.Sub(rs[0].end))
}

// TestLimiterLowerDelayWhileOut: a caller passing a lower delay (0, as a
// robots.txt fetch before the policy is known) while a permit granted
// under a higher one blocks the host waits for it, and then for the
// higher delay, as the fleet's limiter does (redisfleet's hd).
func TestLimiterLowerDelayWhileOut(t *testing.T) {
	const hi = 150 * time.Millisecond
	const host = "http://lower.test"
	for _, mode := range []Spacing{EndToStart, StartToStart} {
		t.Run(mode.String(), func(t *testing.T) {
			l := New(Config{Spacing: mode})
			ctx := context.Background()
			p, err := l.Acquire(ctx, host, hi)
			if err != nil {
				t.Fatal(err)
			}
			if _, busy := l.Ready(host); !busy {
				t.Error("Ready: not busy while a permit granted under a delay blocks the host")
			}
			got := make(chan time.Time, 1)
			go func() {
				q, err := l.Acquire(ctx, host, 0)
				got <- time.Now()
				if err == nil {
					q.Release()
				}
			}()
			time.Sleep(50 * time.Millisecond)
			select {
			case <-got:
				t.Fatal("a caller passing delay 0 was granted while the permit granted under a higher delay was out")
			default:
			}
			var from time.Time
			if mode == StartToStart {
				from = time.Now()
				p.Sent()
			}
			time.Sleep(20 * time.Millisecond)
			if mode == EndToStart {
				from = time.Now()
			}
			p.Release()
			if g := (<-got).Sub(from); g < hi {
				t.Errorf("granted %v after the %s of the permit granted under %v; want ≥ %v", g, map[bool]string{true: "send", false: "end"}[mode == StartToStart], hi, hi)
			}
		})
	}
}

func TestLimiterEviction(t *testing.T) {
	const ttl = 30 * time.Millisecond
	var evicted atomic.Int64
	l := New(Config{IdleTTL: ttl, OnEvict: func(string, Stats) { evicted.Add(1) }})
	ctx := context.Background()
	for i := 0; i < 1000; i++ {
		h := fmt.Sprintf("http://idle%d.test", i)
		l.SetDelay(h, 5*time.Millisecond)
		p, err := l.Acquire(ctx, h, KeepDelay)
		if err != nil {
			t.Fatal(err)
		}
		p.Release()
	}
	busy, err := l.Acquire(ctx, "http://busy.test", KeepDelay) // in flight
	if err != nil {
		t.Fatal(err)
	}
	l.Pause("http://paused.test", time.Hour)
	l.SetDelay("http://slow.test", time.Hour)
	p, _ := l.Acquire(ctx, "http://slow.test", KeepDelay)
	p.Release() // spacing pending for an hour
	queued := make(chan error, 1)
	go func() { // a waiter on the paused host
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		time.AfterFunc(300*time.Millisecond, cancel)
		_, err := l.Acquire(wctx, "http://paused.test", KeepDelay)
		queued <- err
	}()
	time.Sleep(3 * ttl)
	// Lazy sweeps may already have dropped some (the loop above can take
	// longer than the TTL on a loaded machine): OnEvict counts both.
	if n := l.Sweep(); n > 1000 {
		t.Errorf("Sweep dropped %d hosts of 1000 idle ones", n)
	}
	if n := l.Len(); n != 3 {
		t.Errorf("Len = %d after the sweep, want 3 (busy, paused, slow): %v", n, l.Snapshot())
	}
	if n := evicted.Load(); n != 1000 {
		t.Errorf("OnEvict called %d times, want 1000", n)
	}
	busy.Release()
	<-queued
	time.Sleep(3 * ttl)
	l.Sweep()
	if _, ok := l.Stats("http://busy.test"); ok {
		t.Error("busy host kept after its release and the TTL")
	}
	if _, ok := l.Stats("http://paused.test"); !ok {
		t.Error("paused host evicted during its pause")
	}
	if _, ok := l.Stats("http://slow.test"); !ok {
		t.Error("host evicted while its delay was pending")
	}

	// The lazy sweep: touching other hosts after the TTL drops idle ones.
	l2 := New(Config{IdleTTL: ttl})
	for i := 0; i < 1000; i++ {
		l2.SetDelay(fmt.Sprintf("http://old%d.test", i), time.Millisecond)
	}
	time.Sleep(3 * ttl)
	for i := 0; i < 1000; i++ {
		l2.SetDelay(fmt.Sprintf("http://new%d.test", i), time.Millisecond)
	}
	if n := l2.Len(); n != 1000 {
		t.Errorf("Len after the lazy sweep = %d, want 1000", n)
	}
}

// TestLimiterBytesPerHost reports the memory held per host.
func TestLimiterBytesPerHost(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	const n = 100_000
	l := New(Config{IdleTTL: time.Hour})
	before := testutil.HeapInUse()
	for i := 0; i < n; i++ {
		l.SetDelay(fmt.Sprintf("https://host-%06d.example.com", i), time.Second)
	}
	after := testutil.HeapInUse()
	per := float64(int64(after)-int64(before)) / n
	t.Logf("%d hosts: %.0f bytes per host (key of %d bytes included)", n, per, len("https://host-000000.example.com"))
	if per > 1024 {
		t.Errorf("%.0f bytes per host", per)
	}
	if l.Len() != n {
		t.Fatal(l.Len())
	}
	// Once idle past the TTL, all of it goes, the maps included.
	l.idleTTL = int64(time.Millisecond) // single goroutine: safe to set here
	time.Sleep(5 * time.Millisecond)
	if got := l.Sweep(); got != n {
		t.Fatalf("Sweep dropped %d hosts, want %d", got, n)
	}
	left := float64(int64(testutil.HeapInUse())-int64(before)) / n
	t.Logf("after sweeping them all: %.1f bytes per former host still held", left)
	if left > 16 {
		t.Errorf("%.1f bytes per host left after the sweep", left)
	}
	runtime.KeepAlive(l)
}

// WaitMax does not wait out a pause longer than asked: it says when the
// pause ends; a shorter one is waited out.
func TestLimiterWaitMax(t *testing.T) {
	l := New(Config{})
	ctx := context.Background()
	const host = "http://paused.test"
	l.Pause(host, time.Hour)
	start := time.Now()
	_, err := l.WaitMax(ctx, host, 0, time.Minute)
	var pe *PausedError
	if !errors.As(err, &pe) || pe.Host != host || pe.Until.Before(start.Add(59*time.Minute)) || time.Since(start) > time.Second {
		t.Fatalf("WaitMax over an hour's pause: %v after %s", err, time.Since(start))
	}
	const short = "http://short.test"
	paused := time.Now()
	l.Pause(short, 50*time.Millisecond)
	w, err := l.WaitMax(ctx, short, 0, time.Minute)
	if err != nil || w <= 0 || time.Since(paused) < 50*time.Millisecond {
		t.Fatalf("WaitMax over a short pause: waited %s, %v, returned %s after the pause began", w, err, time.Since(paused))
	}
}

// With a DelayFactor, a host that answers slowly is spaced by a multiple
// of its response time, measured between the actual events: here each
// answer takes 100 ms, so with a factor of 2 the next request starts at
// least 200 ms after the previous one ended (300 ms between arrivals).
func TestLimiterDelayFactor(t *testing.T) {
	s := newLimServer(t, func(host string, n int, w http.ResponseWriter, r *http.Request) int {
		time.Sleep(100 * time.Millisecond)
		return 0
	})
	l := New(Config{DelayFactor: 2})
	c, _ := limClient(s, l)
	for range 3 {
		if _, err := limGet(context.Background(), c, "http://slow.test/"); err != nil {
			t.Fatal(err)
		}
	}
	recs := s.records("slow.test")
	if len(recs) != 3 {
		t.Fatalf("%d requests", len(recs))
	}
	for i := 1; i < len(recs); i++ {
		if g := recs[i].arrive.Sub(recs[i-1].arrive); g < 300*time.Millisecond {
			t.Errorf("arrivals %d and %d are %s apart, want ≥ 100 ms answer + 2 × 100 ms", i-1, i, g)
		}
	}
	if st, _ := l.Stats("http://slow.test"); st.Delay < 200*time.Millisecond {
		t.Errorf("delay in force %s, want ≥ 200 ms", st.Delay)
	}
}
