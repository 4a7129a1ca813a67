// Package gatewait lets a request carry a hook that a per-host gate calls
// around the time the request waits for its host's turn. The policy
// package's robots.txt fetch uses it to stop its timeout while it waits
// behind the host's own Crawl-delay or Retry-After pause; hostlimit's
// Transport and the plugin's gate call it.
package gatewait

import (
	"context"
	"sync"
	"time"
)

// Hook is told when a request starts and stops waiting at a gate. Calls
// may nest (a redirect hop passes the gate while an earlier one is
// accounted); implementations must be safe for concurrent use.
type Hook interface {
	Pause()
	Resume()
}

type key struct{}

// With returns ctx carrying h.
func With(ctx context.Context, h Hook) context.Context { return context.WithValue(ctx, key{}, h) }

// From returns the hook ctx carries, or nil.
func From(ctx context.Context) Hook {
	h, _ := ctx.Value(key{}).(Hook)
	return h
}

// Budget bounds the time a piece of work spends outside a gate: it calls
// cancel once total has passed, not counting the time between a Pause and
// its Resume (the gate calls them around its wait: a Budget is a Hook).
// Pauses may nest; the clock runs again when the outermost one ends. Safe
// for concurrent use.
type Budget struct {
	mu      sync.Mutex
	left    time.Duration // budget left when the timer was last (re)started
	started time.Time
	timer   *time.Timer
	paused  int
	fired   bool
}

// NewBudget starts a budget of total that calls cancel (once, on its own
// goroutine) when it is spent.
func NewBudget(total time.Duration, cancel func()) *Budget {
	b := &Budget{left: total, started: time.Now()}
	b.timer = time.AfterFunc(total, func() {
		b.mu.Lock()
		b.fired = true
		b.mu.Unlock()
		cancel()
	})
	return b
}

// Pause stops the clock (unless the budget is spent already).
func (b *Budget) Pause() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.paused++
	if b.paused == 1 && !b.fired && b.timer.Stop() {
		b.left -= time.Since(b.started)
	}
}

// Resume starts the clock again with what is left, once the outermost
// pause ends.
func (b *Budget) Resume() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.paused--
	if b.paused == 0 && !b.fired {
		b.started = time.Now()
		b.timer.Reset(max(b.left, 0))
	}
}

// Stop stops the budget: cancel is not called after Stop returns, unless
// it was running already.
func (b *Budget) Stop() { b.timer.Stop() }

// Spent reports whether the budget ran out and called cancel.
func (b *Budget) Spent() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fired
}
