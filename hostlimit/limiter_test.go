package hostlimit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/robots/testkit/testutil"
)

// The tests run the Limiter on a fake clock (testutil.FakeClock): time
// moves only when a test advances it, so every instant the limiter decides
// on is known exactly. A grant is checked to come exactly when due: not a
// nanosecond before (the spacing guarantee, zero tolerance) and not later
// (no needless wait). Nothing sleeps; a test waits only for goroutines to
// reach a known state (asleep on the clock, queued at a gate).

func newFake(cfg Config) (*Limiter, *testutil.FakeClock) {
	clk := testutil.NewFakeClock()
	cfg.Clock = clk
	return New(cfg), clk
}

// outcome is what a call made on another goroutine returned.
type outcome struct {
	p   Permit
	d   time.Duration // WaitMax's wait
	err error
	at  time.Time // the clock's time when it returned
}

func goAcquire(ctx context.Context, l *Limiter, clk *testutil.FakeClock, host string, delay time.Duration) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		p, err := l.Acquire(ctx, host, delay)
		ch <- outcome{p: p, err: err, at: clk.Now()}
	}()
	return ch
}

func goAcquireMax(ctx context.Context, l *Limiter, clk *testutil.FakeClock, host string, delay, maxPause time.Duration) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		p, err := l.AcquireMax(ctx, host, delay, maxPause)
		ch <- outcome{p: p, err: err, at: clk.Now()}
	}()
	return ch
}

func goWait(ctx context.Context, l *Limiter, clk *testutil.FakeClock, host string, delay time.Duration) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		d, err := l.WaitMax(ctx, host, delay, -1)
		ch <- outcome{d: d, err: err, at: clk.Now()}
	}()
	return ch
}

// queued waits until n callers are queued on host.
func queued(t *testing.T, l *Limiter, host string, n int) {
	t.Helper()
	testutil.WaitUntil(t, func() bool { st, _ := l.Stats(host); return st.Queued == n })
}

// pending fails t if ch has a result: the call must still be blocked.
// Deterministic once the caller is known to be asleep: nothing but the
// clock, a notification or its context wakes it.
func pending(t *testing.T, ch <-chan outcome, what string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s returned early, at %v: %+v", what, r.at.Sub(testutil.ClockStart), r)
	default:
	}
}

// dueAt checks that the call behind ch, asleep on the clock (with timers
// pending in all, the earliest at want), is released exactly at want: still
// blocked at want-1ns, returned at want.
func dueAt(t *testing.T, clk *testutil.FakeClock, ch <-chan outcome, timers int, want time.Time) outcome {
	t.Helper()
	// A caller woken by a notification replaces its timer: wait for the
	// one it sleeps on now.
	testutil.WaitUntil(t, func() bool { next, _ := clk.Next(); return clk.Timers() == timers && next.Equal(want) })
	clk.AdvanceTo(want.Add(-time.Nanosecond))
	pending(t, ch, "a waiting call")
	clk.AdvanceTo(want)
	r := <-ch
	if r.err != nil {
		t.Fatalf("returned %v", r.err)
	}
	return r
}

// at is the fake clock's start plus d.
func at(d time.Duration) time.Time { return testutil.ClockStart.Add(d) }

const host = "https://a.example"

// TestLimiterGate checks the gate's decisions, exactly, step by step.
func TestLimiterGate(t *testing.T) {
	ctx := context.Background()
	const d = 80 * time.Millisecond
	cases := []struct {
		name string
		cfg  Config
		run  func(t *testing.T, l *Limiter, clk *testutil.FakeClock)
	}{
		{"end-to-start: one in flight, the next the delay after the release", Config{}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			p := mustAcquire(t, l, host, d)
			ch := goAcquire(ctx, l, clk, host, d)
			queued(t, l, host, 1)
			clk.Advance(time.Second) // a long request: no timer, the caller waits for the release
			if clk.Timers() != 0 {
				t.Fatal("a timer while the permit is out")
			}
			pending(t, ch, "Acquire while a permit is out")
			p.Release()
			r := dueAt(t, clk, ch, 1, at(time.Second+d))
			r.p.Release()
			st, _ := l.Stats(host)
			if st.Grants != 2 || st.Waits != 1 || st.WaitTime != time.Second+d || st.InFlight != 0 || st.Queued != 0 {
				t.Errorf("stats %+v", st)
			}
		}},
		{"start-to-start: the delay after the send, overlapping", Config{Spacing: StartToStart}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			p := mustAcquire(t, l, host, d)
			ch := goAcquire(ctx, l, clk, host, d)
			queued(t, l, host, 1)
			clk.Advance(10 * time.Millisecond)
			if clk.Timers() != 0 {
				t.Fatal("a timer while the permit is unsent")
			}
			p.Sent() // at +10ms
			r := dueAt(t, clk, ch, 1, at(10*time.Millisecond+d))
			if st, _ := l.Stats(host); st.InFlight != 2 {
				t.Errorf("InFlight %d, want 2: requests overlap", st.InFlight)
			}
			p.Release()
			r.p.Release() // never marked sent: the release counts as the send
			ch = goAcquire(ctx, l, clk, host, d)
			dueAt(t, clk, ch, 1, at(10*time.Millisecond+2*d)).p.Release()
		}},
		{"delay 0: no serialisation, a pause still holds", Config{}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			l.SetDelay(host, -time.Second)
			if got := l.Delay(host); got != 0 {
				t.Fatalf("Delay after SetDelay(-1s) = %v", got)
			}
			var ps []Permit
			for range 10 {
				ps = append(ps, mustAcquire(t, l, host, KeepDelay))
			}
			for _, p := range ps {
				p.Release()
			}
			if st, _ := l.Stats(host); st.Waits != 0 {
				t.Fatalf("waited with delay 0: %+v", st)
			}
			l.Pause(host, 80*time.Millisecond)
			l.Pause(host, 0) // does nothing
			l.Pause(host, 30*time.Millisecond)
			dueAt(t, clk, goAcquire(ctx, l, clk, host, KeepDelay), 1, at(80*time.Millisecond)).p.Release()
		}},
		{"hosts do not wait for each other", Config{}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			const other = "https://b.example"
			mustAcquire(t, l, host, d).Release()
			mustAcquire(t, l, other, d).Release()
			a, b := goAcquire(ctx, l, clk, host, d), goAcquire(ctx, l, clk, other, d)
			clk.WaitTimers(t, 2)
			clk.AdvanceTo(at(d))
			(<-a).p.Release()
			(<-b).p.Release()
		}},
		{"raising the delay moves a waiting caller", Config{}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			const lo, hi = 30 * time.Millisecond, 120 * time.Millisecond
			mustAcquire(t, l, host, lo).Release()
			ch := goAcquire(ctx, l, clk, host, KeepDelay)
			clk.WaitTimers(t, 1)
			clk.Advance(10 * time.Millisecond)
			l.SetDelay(host, hi)
			dueAt(t, clk, ch, 1, at(hi)).p.Release()
		}},
		{"raising the delay, start-to-start", Config{Spacing: StartToStart}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			const lo, hi = 30 * time.Millisecond, 120 * time.Millisecond
			p := mustAcquire(t, l, host, lo)
			p.Sent()
			ch := goAcquire(ctx, l, clk, host, KeepDelay)
			clk.WaitTimers(t, 1)
			l.SetDelay(host, hi)
			dueAt(t, clk, ch, 1, at(hi)).p.Release()
			p.Release()
		}},
		{"lowering the delay keeps the gap owed after a release under the higher one", Config{}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			const hi, lo = 150 * time.Millisecond, 10 * time.Millisecond
			mustAcquire(t, l, host, hi).Release()
			l.SetDelay(host, lo)
			r := dueAt(t, clk, goAcquire(ctx, l, clk, host, KeepDelay), 1, at(hi))
			r.p.Release()
			dueAt(t, clk, goAcquire(ctx, l, clk, host, KeepDelay), 1, at(hi+lo)).p.Release()
		}},
		{"the early Wait: one caller at a time, spaced like the gate", Config{}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			if err := l.Wait(ctx, host, d); err != nil {
				t.Fatal(err)
			}
			w := goWait(ctx, l, clk, host, d)
			queued(t, l, host, 1)
			if clk.Timers() != 1 {
				t.Fatal("the second Wait caller does not wait for the first one's claim")
			}
			p := mustAcquire(t, l, host, d) // the first caller reaches the gate
			queued(t, l, host, 1)           // the second now waits for the release
			clk.Advance(5 * time.Millisecond)
			p.Release()
			r := dueAt(t, clk, w, 1, at(5*time.Millisecond+d))
			if r.d != 5*time.Millisecond+d {
				t.Errorf("WaitMax reports %v of waiting, want %v", r.d, 5*time.Millisecond+d)
			}
			if st, _ := l.Stats(host); st.InFlight != 0 || st.Waits != 1 {
				t.Errorf("Wait holds something: %+v", st)
			}
		}},
		{"a Wait caller that never reaches the gate holds the others for WaitClaim", Config{WaitClaim: 50 * time.Millisecond}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			if err := l.Wait(ctx, host, 20*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			dueAt(t, clk, goWait(ctx, l, clk, host, KeepDelay), 1, at(50*time.Millisecond))
		}},
		{"a lower delay while a permit granted under a higher one is out (end-to-start)", Config{}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			const hi = 150 * time.Millisecond
			p := mustAcquire(t, l, host, hi)
			if _, busy := l.Ready(host); !busy {
				t.Error("Ready: not busy while a permit granted under a delay blocks the host")
			}
			ch := goAcquire(ctx, l, clk, host, 0) // a robots.txt fetch, say
			queued(t, l, host, 1)
			clk.Advance(20 * time.Millisecond)
			pending(t, ch, "Acquire with delay 0 while a permit granted under a higher delay is out")
			p.Release()
			dueAt(t, clk, ch, 1, at(20*time.Millisecond+hi)).p.Release()
		}},
		{"a lower delay while a permit granted under a higher one is unsent (start-to-start)", Config{Spacing: StartToStart}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			const hi = 150 * time.Millisecond
			p := mustAcquire(t, l, host, hi)
			ch := goAcquire(ctx, l, clk, host, 0)
			queued(t, l, host, 1)
			clk.Advance(20 * time.Millisecond)
			pending(t, ch, "Acquire with delay 0 while a permit granted under a higher delay is unsent")
			p.Sent()
			dueAt(t, clk, ch, 1, at(20*time.Millisecond+hi)).p.Release()
			p.Release()
		}},
		{"DelayFactor: a multiple of the response time", Config{DelayFactor: 2}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			p := mustAcquire(t, l, host, KeepDelay)
			p.Sent()
			clk.Advance(100 * time.Millisecond) // the answer takes 100 ms
			p.Release()
			if st, _ := l.Stats(host); st.Delay != 200*time.Millisecond {
				t.Errorf("delay in force %v, want 200ms", st.Delay)
			}
			p = dueAt(t, clk, goAcquire(ctx, l, clk, host, KeepDelay), 1, at(300*time.Millisecond)).p
			p.Sent()
			clk.Advance(200 * time.Millisecond) // slower: weighted 0.3
			p.Release()
			if st, _ := l.Stats(host); st.Delay != 260*time.Millisecond {
				t.Errorf("delay in force %v, want 2 × (0.7 × 100ms + 0.3 × 200ms)", st.Delay)
			}
		}},
		{"cancellation takes nothing and leaves the gate as it was", Config{}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			mustAcquire(t, l, host, d).Release()
			cctx, cancel := context.WithCancel(ctx)
			ch := goAcquire(cctx, l, clk, host, KeepDelay)
			w := goWait(cctx, l, clk, host, KeepDelay)
			queued(t, l, host, 2)
			cancel()
			for _, c := range []<-chan outcome{ch, w} {
				if r := <-c; !errors.Is(r.err, context.Canceled) || r.p != nil {
					t.Fatalf("cancelled call = %+v; want context.Canceled", r)
				}
			}
			if _, err := l.Acquire(cctx, "https://free.example", KeepDelay); !errors.Is(err, context.Canceled) {
				t.Fatalf("Acquire with a done context on a free host = %v", err)
			}
			if st, _ := l.Stats(host); st.InFlight != 0 || st.Queued != 0 {
				t.Fatalf("after cancellations: %+v", st)
			}
			if clk.Timers() != 0 {
				t.Fatalf("%d timers left behind", clk.Timers())
			}
			p := dueAt(t, clk, goAcquire(ctx, l, clk, host, KeepDelay), 1, at(d)).p
			p.Release()
			p.Release() // idempotent
			p.Sent()    // after Release: nothing
			if st, _ := l.Stats(host); st.InFlight != 0 {
				t.Fatalf("after a double release: %+v", st)
			}
		}},
		{"WaitMax: a long pause is not waited out, a short one is", Config{}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			const paused = "https://paused.example"
			l.Pause(paused, time.Hour)
			_, err := l.WaitMax(ctx, paused, 0, time.Minute)
			var pe *PausedError
			if !errors.As(err, &pe) || pe.Host != paused || !pe.Until.Equal(at(time.Hour)) {
				t.Fatalf("WaitMax over an hour's pause: %v", err)
			}
			if clk.Timers() != 0 {
				t.Fatal("WaitMax waited")
			}
			l.Pause(host, 50*time.Millisecond)
			ch := make(chan outcome, 1)
			go func() {
				w, err := l.WaitMax(ctx, host, 0, time.Minute)
				ch <- outcome{d: w, err: err}
			}()
			if r := dueAt(t, clk, ch, 1, at(50*time.Millisecond)); r.d != 50*time.Millisecond {
				t.Fatalf("WaitMax over a short pause: waited %v", r.d)
			}
		}},
		{"WaitMax: a long pause that starts while callers wait ends their waits at once", Config{}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			const busy = "https://busy.example"
			p, err := l.Acquire(ctx, busy, time.Second) // in flight: WaitMax callers queue behind it
			if err != nil {
				t.Fatal(err)
			}
			ch := make(chan outcome, 3)
			for range 3 {
				go func() {
					w, err := l.WaitMax(ctx, busy, time.Second, 2*time.Second)
					ch <- outcome{d: w, err: err}
				}()
			}
			testutil.WaitUntil(t, func() bool { st, _ := l.Stats(busy); return st.Queued == 3 })
			p.Observe(http.StatusTooManyRequests, http.Header{"Retry-After": {"5"}})
			p.Release()
			for range 3 {
				var r outcome
				select { // no clock move: the pause, longer than 2 s, ends each wait at once
				case r = <-ch:
				case <-time.After(10 * time.Second):
					t.Fatal("WaitMax callers wait out a pause that started while they waited")
				}
				var pe *PausedError
				if !errors.As(r.err, &pe) || !pe.Until.Equal(at(5*time.Second)) || r.d != 0 {
					t.Fatalf("WaitMax during a 5 s pause (bound 2 s): %v after %v", r.err, r.d)
				}
			}
		}},

		{"AcquireMax: a long pause, present or started while callers wait, ends their waits; a short one is waited out", Config{}, func(t *testing.T, l *Limiter, clk *testutil.FakeClock) {
			const paused, busy = "https://paused.example", "https://busy.example"
			l.Pause(paused, time.Hour)
			var pe *PausedError
			if p, err := l.AcquireMax(ctx, paused, 0, time.Minute); !errors.As(err, &pe) || p != nil || !pe.Until.Equal(at(time.Hour)) {
				t.Fatalf("AcquireMax over an hour's pause: %v, %v", p, err)
			}
			p, err := l.Acquire(ctx, busy, time.Second) // in flight: AcquireMax callers queue behind it
			if err != nil {
				t.Fatal(err)
			}
			ch := make(chan outcome, 3)
			for range 3 {
				go func() {
					p, err := l.AcquireMax(ctx, busy, time.Second, 2*time.Second)
					ch <- outcome{p: p, err: err}
				}()
			}
			queued(t, l, busy, 3)
			p.Observe(http.StatusTooManyRequests, http.Header{"Retry-After": {"5"}})
			p.Release()
			for range 3 {
				var r outcome
				select { // no clock move: the pause, longer than 2 s, ends each wait at once
				case r = <-ch:
				case <-time.After(10 * time.Second):
					t.Fatal("AcquireMax callers wait out a pause that started while they waited")
				}
				if !errors.As(r.err, &pe) || r.p != nil || !pe.Until.Equal(at(5*time.Second)) {
					t.Fatalf("AcquireMax during a 5 s pause (bound 2 s): %v, %v", r.p, r.err)
				}
			}
			if st, _ := l.Stats(busy); st.InFlight != 0 || st.Queued != 0 {
				t.Fatalf("after the refused waits: %+v", st)
			}
			// A pause within the bound is waited out, then the permit granted.
			l.Pause(host, 50*time.Millisecond)
			dueAt(t, clk, goAcquireMax(ctx, l, clk, host, 0, time.Minute), 1, at(50*time.Millisecond)).p.Release()
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l, clk := newFake(c.cfg)
			c.run(t, l, clk)
		})
	}
}

// TestLimiterResponses checks the pauses 429 and 5xx responses start:
// Retry-After (seconds, date, capped), else exponential backoff, reset by a
// success; the next grant comes exactly at the end of the pause (or the
// delay after the release, when later).
func TestLimiterResponses(t *testing.T) {
	const d = 10 * time.Millisecond
	type step struct {
		status int
		ra     string        // Retry-After; "+1100ms" is an HTTP date that far from now
		after  time.Duration // how long the request takes before its response
		pause  time.Duration // the pause wanted (Observe's result)
	}
	cases := []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{"retry-after seconds", Config{}, []step{{429, "1", 0, time.Second}, {200, "", 0, 0}}},
		{"retry-after date", Config{}, []step{{503, "+1100ms", 0, time.Second}, {200, "", 0, 0}}}, // a date has whole seconds
		{"retry-after date, later response", Config{}, []step{{503, "+3s", 500 * time.Millisecond, 2500 * time.Millisecond}, {200, "", 0, 0}}},
		{"retry-after capped", Config{MaxRetryAfter: 150 * time.Millisecond}, []step{{429, "3600", 0, 150 * time.Millisecond}, {200, "", 0, 0}}},
		{"backoff, capped, reset by a success", Config{BackoffBase: 40 * time.Millisecond, BackoffMax: 200 * time.Millisecond}, []step{
			{503, "", 0, 40 * time.Millisecond}, {429, "", 0, 80 * time.Millisecond}, {503, "", 0, 160 * time.Millisecond},
			{503, "", 0, 200 * time.Millisecond}, {200, "", 0, 0}, {429, "", 0, 40 * time.Millisecond}, {200, "", 0, 0}}},
		{"every 5xx but 501 and 505 backs off like 503, in the same run", Config{BackoffBase: 40 * time.Millisecond, BackoffMax: time.Second}, []step{
			{500, "", 0, 40 * time.Millisecond}, {502, "", 0, 80 * time.Millisecond}, {504, "", 0, 160 * time.Millisecond},
			{501, "", 0, 0}, {505, "", 0, 0}, {522, "", 0, 320 * time.Millisecond}, {404, "", 0, 0},
			{200, "", 0, 0}, {500, "", 0, 40 * time.Millisecond}, {304, "", 0, 0}, {502, "2", 0, 2 * time.Second}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l, clk := newFake(c.cfg)
			ctx := context.Background()
			p := mustAcquire(t, l, host, d)
			pauses := 0
			for i, s := range c.steps {
				clk.Advance(s.after)
				h := http.Header{}
				switch {
				case len(s.ra) > 0 && s.ra[0] == '+':
					off, _ := time.ParseDuration(s.ra[1:])
					h.Set("Retry-After", clk.Now().Add(off).UTC().Format(http.TimeFormat))
				case s.ra != "":
					h.Set("Retry-After", s.ra)
				}
				if got := p.Observe(s.status, h); got != s.pause {
					t.Fatalf("step %d: %d (Retry-After %q) paused %v, want %v", i, s.status, h.Get("Retry-After"), got, s.pause)
				}
				if s.pause > 0 {
					pauses++
				}
				st, _ := l.Stats(host)
				if s.pause > 0 && (st.LastPause != s.pause || !st.PausedUntil.Equal(clk.Now().Add(s.pause))) {
					t.Fatalf("step %d: stats %+v", i, st)
				}
				released := clk.Now()
				p.Release()
				if i == len(c.steps)-1 {
					break
				}
				ch := goAcquire(ctx, l, clk, host, KeepDelay)
				p = dueAt(t, clk, ch, 1, released.Add(max(s.pause, d))).p
			}
			if st, _ := l.Stats(host); st.Pauses != int64(pauses) {
				t.Errorf("Pauses = %d, want %d", st.Pauses, pauses)
			}
		})
	}
}

// TestBackoffStatus: 429 and every 5xx but 501 and 505 ask to back off.
func TestBackoffStatus(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   bool
	}{
		{429, true}, {500, true}, {502, true}, {503, true}, {504, true},
		{507, true}, {508, true}, {511, true}, {520, true}, {522, true}, {524, true}, {599, true},
		{501, false}, {505, false}, // the request, not the server's state
		{0, false}, {-503, false}, {100, false}, {200, false}, {301, false}, {304, false},
		{400, false}, {404, false}, {408, false}, {428, false}, {430, false}, {499, false},
		{600, false}, {1503, false},
	} {
		if got := BackoffStatus(tc.status); got != tc.want {
			t.Errorf("BackoffStatus(%d) = %v, want %v", tc.status, got, tc.want)
		}
	}
}

func TestLimiterObserveParsing(t *testing.T) {
	l, clk := newFake(Config{BackoffBase: time.Hour, BackoffMax: time.Hour})
	past := clk.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
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
		{500, "5", 5 * time.Second}, // every 5xx but 501 and 505, as 503
		{502, "", time.Hour},
		{501, "5", 0}, // other statuses do nothing
		{505, "5", 0},
		{404, "", 0},
		{408, "5", 0},
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

// TestLimiterConcurrent runs many goroutines on a few hosts, each request
// taking some (fake) time, and checks every gap between the events the
// goroutines saw, with zero tolerance: the send is read after Acquire
// returns, the end before Release, so the limiter's own instants lie
// within them. A driver advances the clock to the next timer whenever the
// goroutines have settled; however it interleaves, the gaps must hold.
func TestLimiterConcurrent(t *testing.T) {
	const d, hold, hosts = 20 * time.Millisecond, 50 * time.Millisecond, 3
	for _, mode := range []Spacing{EndToStart, StartToStart} {
		for _, tc := range []struct{ per, k int }{{1, 8}, {10, 2}, {100, 1}} {
			t.Run(fmt.Sprintf("%v/goroutines=%d", mode, tc.per), func(t *testing.T) {
				t.Parallel()
				l, clk := newFake(Config{Spacing: mode, Delay: func(string) time.Duration { return d }})
				type event struct{ send, end time.Time }
				var mu sync.Mutex
				events := map[string][]event{}
				var steps atomic.Int64
				var wg sync.WaitGroup
				for h := range hosts {
					name := fmt.Sprintf("https://h%d.example", h)
					for range tc.per {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for range tc.k {
								p, err := l.Acquire(context.Background(), name, KeepDelay)
								if err != nil {
									t.Error(err)
									return
								}
								steps.Add(1)
								send := clk.Now()
								p.Sent()
								c, stop := clk.After(hold) // the request takes hold
								<-c
								stop()
								end := clk.Now()
								p.Release()
								steps.Add(1)
								mu.Lock()
								events[name] = append(events[name], event{send, end})
								mu.Unlock()
							}
						}()
					}
				}
				done := make(chan struct{})
				go func() { wg.Wait(); close(done) }()
				driveClock(clk, &steps, done)
				for name, evs := range events {
					if len(evs) != tc.per*tc.k {
						t.Fatalf("%s: %d requests, want %d", name, len(evs), tc.per*tc.k)
					}
					for i := 1; i < len(evs); i++ {
						for j := range i {
							a, b := evs[j], evs[i]
							if b.send.Before(a.send) {
								a, b = b, a
							}
							from := a.end
							if mode == StartToStart {
								from = a.send
							}
							if g := b.send.Sub(from); g < d {
								t.Errorf("%s: a send %v after the previous %v; want ≥ %v", name, g, map[bool]string{true: "send", false: "end"}[mode == StartToStart], d)
							}
						}
					}
					st, _ := l.Stats(name)
					if st.InFlight != 0 || st.Queued != 0 || st.Grants != int64(tc.per*tc.k) {
						t.Errorf("%s: stats %+v", name, st)
					}
				}
			})
		}
	}
}

// driveClock advances clk to its next timer each time the goroutines have
// settled (steps unchanged and the same timers pending over a few polls),
// until done is closed. Advancing too early only delays some event, which
// no lower bound on a gap can mind.
func driveClock(clk *testutil.FakeClock, steps *atomic.Int64, done <-chan struct{}) {
	last, lastTimers, still := int64(-1), -1, 0
	for {
		select {
		case <-done:
			return
		default:
		}
		s, n := steps.Load(), clk.Timers()
		if s == last && n == lastTimers {
			still++
		} else {
			last, lastTimers, still = s, n, 0
		}
		if next, ok := clk.Next(); ok && still >= 3 {
			clk.AdvanceTo(next)
			still = 0
		}
		time.Sleep(20 * time.Microsecond)
	}
}

func TestLimiterEviction(t *testing.T) {
	const ttl = 30 * time.Millisecond
	var evicted atomic.Int64
	l, clk := newFake(Config{IdleTTL: ttl, OnEvict: func(string, Stats) { evicted.Add(1) }})
	ctx := context.Background()
	for i := range 1000 {
		h := fmt.Sprintf("http://idle%d.test", i)
		l.SetDelay(h, 5*time.Millisecond)
		mustAcquire(t, l, h, KeepDelay).Release()
	}
	busy := mustAcquire(t, l, "http://busy.test", KeepDelay) // in flight
	l.Pause("http://paused.test", time.Hour)
	l.SetDelay("http://slow.test", time.Hour)
	mustAcquire(t, l, "http://slow.test", KeepDelay).Release() // spacing pending for an hour
	wctx, cancel := context.WithCancel(ctx)
	queued := goAcquire(wctx, l, clk, "http://paused.test", KeepDelay) // a waiter on the paused host
	clk.WaitTimers(t, 1)
	clk.Advance(ttl - time.Nanosecond)
	if n := l.sweepAll(); n != 0 {
		t.Fatalf("Sweep dropped %d hosts before their TTL", n)
	}
	clk.Advance(time.Nanosecond)
	if n := l.sweepAll(); n != 1000 {
		t.Errorf("Sweep dropped %d hosts, want the 1000 idle ones", n)
	}
	if n := l.hosts(); n != 3 {
		t.Errorf("Len = %d after the sweep, want 3 (busy, paused, slow): %v", n, l.snapshot())
	}
	if n := evicted.Load(); n != 1000 {
		t.Errorf("OnEvict called %d times, want 1000", n)
	}
	busy.Release()
	cancel()
	<-queued
	clk.Advance(ttl)
	l.sweepAll()
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
	l2, clk2 := newFake(Config{IdleTTL: ttl})
	for i := range 1000 {
		l2.SetDelay(fmt.Sprintf("http://old%d.test", i), time.Millisecond)
	}
	clk2.Advance(ttl)
	for i := range 1000 {
		l2.SetDelay(fmt.Sprintf("http://new%d.test", i), time.Millisecond)
	}
	if n := l2.hosts(); n != 1000 {
		t.Errorf("Len after the lazy sweep = %d, want 1000", n)
	}
}

// TestLimiterSweepFrees checks that sweeping every host gives its memory
// back, the maps included (Go maps never shrink by themselves). The bytes
// held per host are measured by BenchmarkLimiterBytesPerHost.
func TestLimiterSweepFrees(t *testing.T) {
	const n = 100_000
	l, clk := newFake(Config{IdleTTL: time.Hour})
	before := testutil.HeapInUse()
	for i := range n {
		l.SetDelay(fmt.Sprintf("https://host-%06d.example.com", i), time.Second)
	}
	if l.hosts() != n {
		t.Fatal(l.hosts())
	}
	clk.Advance(time.Hour)
	if got := l.sweepAll(); got != n {
		t.Fatalf("Sweep dropped %d hosts, want %d", got, n)
	}
	if left := float64(int64(testutil.HeapInUse())-int64(before)) / n; left > 16 {
		t.Errorf("%.1f bytes per host left after the sweep", left)
	}
}
