package hostlimit

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestReady checks the hint a scheduler reads, against the gate's own
// decisions: at is when the next permit comes, busy means an event must
// come first.
func TestReady(t *testing.T) {
	ctx := context.Background()
	const d = 80 * time.Millisecond
	cases := []struct {
		name    string
		spacing Spacing
		delay   time.Duration
		run     func(t *testing.T, l *Limiter, host string) (before, after time.Time) // the bracket of the event at is counted from
		busy    bool
		gap     time.Duration // at is within [before+gap, after+gap]
	}{
		{name: "no state: ready now", run: func(*testing.T, *Limiter, string) (time.Time, time.Time) { return time.Time{}, time.Time{} }},
		{name: "end-to-start, in flight: busy", spacing: EndToStart, delay: d, busy: true,
			run: func(t *testing.T, l *Limiter, host string) (time.Time, time.Time) {
				mustAcquire(t, l, host, d)
				return time.Time{}, time.Time{}
			}},
		{name: "end-to-start, released: the delay after the release", spacing: EndToStart, delay: d, gap: d,
			run: func(t *testing.T, l *Limiter, host string) (time.Time, time.Time) {
				p := mustAcquire(t, l, host, d)
				p.Sent()
				before := time.Now()
				p.Release()
				return before, time.Now()
			}},
		{name: "end-to-start, delay 0: never busy", spacing: EndToStart, delay: 0,
			run: func(t *testing.T, l *Limiter, host string) (time.Time, time.Time) {
				mustAcquire(t, l, host, 0)
				return time.Time{}, time.Time{}
			}},
		{name: "start-to-start, granted not sent: busy", spacing: StartToStart, delay: d, busy: true,
			run: func(t *testing.T, l *Limiter, host string) (time.Time, time.Time) {
				mustAcquire(t, l, host, d)
				return time.Time{}, time.Time{}
			}},
		{name: "start-to-start, sent: the delay after the send", spacing: StartToStart, delay: d, gap: d,
			run: func(t *testing.T, l *Limiter, host string) (time.Time, time.Time) {
				p := mustAcquire(t, l, host, d)
				before := time.Now()
				p.Sent()
				return before, time.Now()
			}},
		{name: "paused: the end of the pause", spacing: EndToStart, delay: 0, gap: time.Second,
			run: func(t *testing.T, l *Limiter, host string) (time.Time, time.Time) {
				before := time.Now()
				l.Pause(host, time.Second)
				return before, time.Now()
			}},
		{name: "a caller queued in Wait: busy", spacing: StartToStart, delay: time.Second, busy: true,
			run: func(t *testing.T, l *Limiter, host string) (time.Time, time.Time) {
				mustAcquire(t, l, host, time.Second).Sent() // nothing blocks but the spacing
				wctx, cancel := context.WithCancel(ctx)
				done := make(chan struct{})
				go func() { l.Wait(wctx, host, time.Second); close(done) }()
				t.Cleanup(func() { cancel(); <-done })
				waitFor(t, func() bool { st, _ := l.Stats(host); return st.Queued == 1 })
				return time.Time{}, time.Time{}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := New(Config{Spacing: c.spacing})
			const host = "https://a.example"
			before, after := c.run(t, l, host)
			at, busy := l.Ready(host)
			if busy != c.busy {
				t.Fatalf("busy = %v, want %v", busy, c.busy)
			}
			if before.IsZero() {
				if c.busy {
					return
				}
				if at.After(time.Now()) {
					t.Fatalf("at = %v from now, want now", time.Until(at))
				}
				return
			}
			if at.Before(before.Add(c.gap)) || at.After(after.Add(c.gap)) {
				t.Fatalf("at is %v after the event, want %v", at.Sub(before), c.gap)
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
	if l.Len() != 0 {
		t.Fatal("Ready created state")
	}
}

// TestReadyMatchesGate: a caller that asks once Ready says so is granted
// at once.
func TestReadyMatchesGate(t *testing.T) {
	l := New(Config{})
	const host, d = "https://b.example", 30 * time.Millisecond
	for range 3 {
		at, busy := l.Ready(host)
		if busy {
			t.Fatal("busy with nothing in flight")
		}
		time.Sleep(time.Until(at))
		st0, _ := l.Stats(host)
		p := mustAcquire(t, l, host, d)
		if st, _ := l.Stats(host); st.Waits != st0.Waits {
			t.Fatal("Acquire had to wait after Ready's time")
		}
		p.Release()
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

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5 s")
		}
	}
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
