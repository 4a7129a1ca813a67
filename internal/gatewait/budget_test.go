package gatewait

import (
	"testing"
	"time"
)

// TestBudgetPausedTimeNotCounted: a budget paused for longer than it is
// does not fire while paused, fires once resumed and spent, and a Stop
// before that keeps cancel from being called.
func TestBudgetPausedTimeNotCounted(t *testing.T) {
	const total = 20 * time.Millisecond
	canceled := make(chan struct{})
	b := NewBudget(total, func() { close(canceled) })
	b.Pause()
	b.Pause() // nested: the clock stays stopped until the outer Resume
	time.Sleep(5 * total)
	b.Resume()
	if b.Spent() {
		t.Fatal("the budget fired while paused")
	}
	time.Sleep(3 * total)
	if b.Spent() {
		t.Fatal("the budget fired under a nested pause")
	}
	b.Resume()
	select {
	case <-canceled:
	case <-time.After(10 * time.Second):
		t.Fatal("cancel not called after the budget was spent")
	}
	if !b.Spent() {
		t.Fatal("Spent is false after cancel was called")
	}

	stopped := NewBudget(total, func() { t.Error("cancel called after Stop") })
	stopped.Stop()
	time.Sleep(3 * total)
	if stopped.Spent() {
		t.Fatal("a stopped budget reports spent")
	}
}
