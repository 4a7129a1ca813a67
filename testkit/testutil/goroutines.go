package testutil

import (
	"bytes"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// GoroutineWait is how long CheckGoroutines waits, at the end of a test, for
// the goroutines the test started to end.
const GoroutineWait = 5 * time.Second

// CheckGoroutines fails t if it ends with more goroutines than it started
// with. Call it first in the test, before anything that starts goroutines:
// it records runtime.NumGoroutine() and, in a t.Cleanup, polls for up to
// GoroutineWait for the count to come back to at most that, then fails with
// the stacks of the goroutines that were not there at the start.
//
// Cleanups run last-registered first, so the test's own cleanups (closing
// servers, tr.CloseIdleConnections() on every http.Transport it used: idle
// keep-alive connections hold two goroutines each) run before the check.
// Use it in tests that do not call t.Parallel, and not in their parallel
// subtests: goroutines of other tests running at the same time would count.
func CheckGoroutines(t testing.TB) {
	t.Helper()
	checkGoroutines(t, GoroutineWait)
}

func checkGoroutines(t testing.TB, wait time.Duration) {
	t.Helper()
	start := runtime.NumGoroutine()
	before := goroutineIDs(allStacks())
	t.Cleanup(func() {
		deadline := time.Now().Add(wait)
		n := runtime.NumGoroutine()
		for pause := time.Millisecond; n > start && time.Now().Before(deadline); pause = min(2*pause, 100*time.Millisecond) {
			time.Sleep(pause)
			n = runtime.NumGoroutine()
		}
		if n <= start {
			return
		}
		var extra []string
		for _, g := range splitStacks(allStacks()) {
			if !before[goroutineID(g)] {
				extra = append(extra, g)
			}
		}
		t.Errorf("%d goroutines at the end, %d at the start (waited %s); not there at the start:\n\n%s",
			n, start, wait, strings.Join(extra, "\n\n"))
	})
}

// allStacks returns the stacks of every goroutine, as runtime.Stack
// writes them.
func allStacks() []byte {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// splitStacks splits runtime.Stack's dump into one string per goroutine,
// sorted.
func splitStacks(dump []byte) []string {
	var out []string
	for _, g := range bytes.Split(bytes.TrimSpace(dump), []byte("\n\n")) {
		if len(g) > 0 {
			out = append(out, string(g))
		}
	}
	sort.Strings(out)
	return out
}

func goroutineIDs(dump []byte) map[string]bool {
	ids := map[string]bool{}
	for _, g := range splitStacks(dump) {
		ids[goroutineID(g)] = true
	}
	return ids
}

// goroutineID returns the N of a stack's header line "goroutine N [state]:".
func goroutineID(stack string) string {
	s, ok := strings.CutPrefix(stack, "goroutine ")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(s, " ")
	return id
}
