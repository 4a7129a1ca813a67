package hostlimit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/politecrawl/robots/testkit/testutil"
)

// TestReady checks the hint a scheduler reads, against the gate's own
// decisions, on a fake clock: at is when the next permit comes, busy means
// an event must come first.
func TestReady(t *testing.T) {
	ctx := context.Background()
	const d = 80 * time.Millisecond
	cases := []struct {
		name    string
		spacing Spacing
		run     func(t *testing.T, l *Limiter, clk *testutil.FakeClock, host string)
		busy    bool
		at      time.Duration // from the clock's start; 0: now
	}{
		{name: "no state: ready now", run: func(*testing.T, *Limiter, *testutil.FakeClock, string) {}},
		{name: "end-to-start, in flight: busy", spacing: EndToStart, busy: true,
			run: func(t *testing.T, l *Limiter, _ *testutil.FakeClock, host string) { mustAcquire(t, l, host, d) }},
		{name: "end-to-start, released: the delay after the release", spacing: EndToStart, at: 10*time.Millisecond + d,
			run: func(t *testing.T, l *Limiter, clk *testutil.FakeClock, host string) {
				p := mustAcquire(t, l, host, d)
				p.Sent()
				clk.Advance(10 * time.Millisecond)
				p.Release()
			}},
		{name: "end-to-start, delay 0: never busy", spacing: EndToStart,
			run: func(t *testing.T, l *Limiter, _ *testutil.FakeClock, host string) { mustAcquire(t, l, host, 0) }},
		{name: "start-to-start, granted not sent: busy", spacing: StartToStart, busy: true,
			run: func(t *testing.T, l *Limiter, _ *testutil.FakeClock, host string) { mustAcquire(t, l, host, d) }},
		{name: "start-to-start, sent: the delay after the send", spacing: StartToStart, at: 10*time.Millisecond + d,
			run: func(t *testing.T, l *Limiter, clk *testutil.FakeClock, host string) {
				p := mustAcquire(t, l, host, d)
				clk.Advance(10 * time.Millisecond)
				p.Sent()
			}},
		{name: "paused: the end of the pause", spacing: EndToStart, at: time.Second,
			run: func(t *testing.T, l *Limiter, _ *testutil.FakeClock, host string) { l.Pause(host, time.Second) }},
		{name: "a caller queued in Wait: busy", spacing: StartToStart, busy: true, at: time.Second,
			run: func(t *testing.T, l *Limiter, clk *testutil.FakeClock, host string) {
				mustAcquire(t, l, host, time.Second).Sent() // nothing blocks but the spacing
				wctx, cancel := context.WithCancel(ctx)
				done := make(chan struct{})
				go func() { l.Wait(wctx, host, time.Second); close(done) }()
				t.Cleanup(func() { cancel(); <-done })
				clk.WaitTimers(t, 1)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l, clk := newFake(Config{Spacing: c.spacing})
			const host = "https://a.example"
			c.run(t, l, clk, host)
			at, busy := l.Ready(host)
			if busy != c.busy {
				t.Fatalf("busy = %v, want %v", busy, c.busy)
			}
			want := testutil.ClockStart.Add(c.at)
			if c.at == 0 {
				if at.After(clk.Now()) {
					t.Fatalf("at = %v from now, want now", at.Sub(clk.Now()))
				}
			} else if !at.Equal(want) {
				t.Fatalf("at = +%v, want +%v", at.Sub(testutil.ClockStart), c.at)
			}
			if _, ok := l.Stats("https://other.example"); ok {
				t.Fatal("state created")
			}
		})
	}
	l := New(Config{})
	if at, busy := l.Ready("https://never.example"); !at.IsZero() || busy {
		t.Fatalf("a host never used: %v %v", at, busy)
	}
	if l.hosts() != 0 {
		t.Fatal("Ready created state")
	}
}

// TestReadyMatchesGate: a caller that asks once Ready says so is granted
// at once, and not a nanosecond earlier.
func TestReadyMatchesGate(t *testing.T) {
	l, clk := newFake(Config{})
	const host, d = "https://b.example", 30 * time.Millisecond
	for i := range 3 {
		at, busy := l.Ready(host)
		if busy {
			t.Fatal("busy with nothing in flight")
		}
		if i > 0 {
			clk.AdvanceTo(at.Add(-time.Nanosecond))
			st0, _ := l.Stats(host)
			ch := goAcquire(context.Background(), l, clk, host, d)
			clk.WaitTimers(t, 1)
			pending(t, ch, "Acquire before Ready's time")
			clk.AdvanceTo(at)
			(<-ch).p.Release()
			if st, _ := l.Stats(host); st.Waits != st0.Waits+1 {
				t.Fatal("Acquire did not wait 1ns before Ready's time")
			}
			continue
		}
		mustAcquire(t, l, host, d).Release()
	}
	at, _ := l.Ready(host)
	clk.AdvanceTo(at)
	st0, _ := l.Stats(host)
	mustAcquire(t, l, host, d).Release()
	if st, _ := l.Stats(host); st.Waits != st0.Waits {
		t.Fatal("Acquire had to wait at Ready's time")
	}
}

func mustAcquire(t *testing.T, l *Limiter, host string, d time.Duration) Permit {
	t.Helper()
	p, err := l.Acquire(context.Background(), host, d)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A scheduler asks Ready which host may be asked now, instead of handing a
// worker a request that would wait at the gate.
func ExampleLimiter_Ready() {
	l := New(Config{})
	const a, b = "https://a.example", "https://b.example"
	p, _ := l.Acquire(context.Background(), a, time.Second) // a request to a is in flight
	for _, host := range []string{a, b} {
		at, busy := l.Ready(host)
		fmt.Printf("%s: now %v, busy %v\n", host, !at.After(time.Now()), busy)
	}
	p.Release()
	at, busy := l.Ready(a)
	fmt.Printf("%s after the release: in about %v, busy %v\n", a, time.Until(at).Round(time.Second), busy)
	// Output:
	// https://a.example: now true, busy true
	// https://b.example: now true, busy false
	// https://a.example after the release: in about 1s, busy false
}
