package eventrun

import (
	"testing"
	"time"
)

// TestEventRun: events each within the gap of the previous one are one
// run; a longer silence starts a new one; a run is on until the gap
// passes after its latest event, and lasts from its first to its latest.
func TestEventRun(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const gap = 5 * time.Second
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	var r Run
	if _, on := r.Lasting(t0, gap); on {
		t.Fatal("an empty run is on")
	}
	steps := []struct {
		at      time.Duration
		fresh   bool
		n       int64
		lasting time.Duration
	}{
		{0, true, 1, 0},
		{4 * time.Second, false, 2, 4 * time.Second},
		{9 * time.Second, false, 3, 9 * time.Second}, // exactly the gap after the latest: the same run
		{14*time.Second + 1, true, 1, 0},             // just over the gap: a new run
		{15 * time.Second, false, 2, time.Second - 1},
	}
	for _, s := range steps {
		if got := r.Add(at(s.at), gap); got != s.fresh {
			t.Errorf("add at %v: fresh %v, want %v", s.at, got, s.fresh)
		}
		d, on := r.Lasting(at(s.at), gap)
		if !on || d != s.lasting || r.N != s.n {
			t.Errorf("after the event at %v: lasting %v (on %v), %d events; want %v, %d", s.at, d, on, r.N, s.lasting, s.n)
		}
	}
	if d, on := r.Lasting(at(20*time.Second), gap); !on || d != time.Second-1 {
		t.Errorf("at 20s: lasting %v (on %v), want the run on", d, on)
	}
	if _, on := r.Lasting(at(20*time.Second+1), gap); on {
		t.Error("at 20s+1ns, more than the gap after the latest event: still on")
	}
}
