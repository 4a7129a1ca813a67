package testutil

import (
	"sort"
	"sync"
	"testing"
	"time"
)

// FakeClock is a controllable clock with timers (hostlimit.Clock): time
// moves only through Advance and AdvanceTo, which fire the timers that come
// due, earliest first. Safe for concurrent use.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]struct{}
}

type fakeTimer struct {
	at time.Time
	c  chan time.Time
}

// NewFakeClock returns a FakeClock at ClockStart.
func NewFakeClock() *FakeClock {
	return &FakeClock{now: ClockStart, timers: map[*fakeTimer]struct{}{}}
}

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After returns a channel that receives the clock's time once it has
// moved d on (at once if d ≤ 0), and a function that drops the timer.
func (c *FakeClock) After(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- c.now
		return t.c, func() {}
	}
	c.timers[t] = struct{}{}
	return t.c, func() {
		c.mu.Lock()
		delete(c.timers, t)
		c.mu.Unlock()
	}
}

// Advance moves the clock d on.
func (c *FakeClock) Advance(d time.Duration) { c.AdvanceTo(c.Now().Add(d)) }

// AdvanceTo moves the clock to t (never back) and fires the timers due by
// then.
func (c *FakeClock) AdvanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	var due []*fakeTimer
	for tm := range c.timers {
		if !tm.at.After(c.now) {
			due = append(due, tm)
		}
	}
	sort.Slice(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, tm := range due {
		delete(c.timers, tm)
		tm.c <- c.now
	}
}

// Timers returns the number of pending timers.
func (c *FakeClock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Next returns the earliest pending timer's time, and false if none is
// pending.
func (c *FakeClock) Next() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var next time.Time
	for tm := range c.timers {
		if next.IsZero() || tm.at.Before(next) {
			next = tm.at
		}
	}
	return next, !next.IsZero()
}

// condWait bounds WaitUntil: long enough for a loaded machine, so that
// only a deadlock reaches it.
const condWait = 30 * time.Second

// WaitTimers waits until n timers are pending: until n goroutines are
// asleep on the clock. It fails t if that does not happen within
// 30 s (a deadlock, not a slow machine).
func (c *FakeClock) WaitTimers(t testing.TB, n int) {
	t.Helper()
	WaitUntil(t, func() bool { return c.Timers() == n })
}

// WaitUntil polls cond until it holds, and fails t if it does not within
// 30 s (a deadlock, not a slow machine).
func WaitUntil(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(condWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not reached in %v", condWait)
		}
		time.Sleep(50 * time.Microsecond)
	}
}
