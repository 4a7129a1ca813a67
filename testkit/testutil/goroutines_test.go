package testutil

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// recordingTB is a testing.TB whose Cleanup and Errorf are recorded, so
// that a failing check can be observed without failing the test.
type recordingTB struct {
	testing.TB // nil: only the methods below are called
	cleanups   []func()
	errors     []string
}

func (r *recordingTB) Helper()                   {}
func (r *recordingTB) Cleanup(f func())          { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Errorf(f string, a ...any) { r.errors = append(r.errors, fmt.Sprintf(f, a...)) }

func (r *recordingTB) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// leakyWorker blocks until stop is closed; its name is looked for in the
// dump.
func leakyWorker(stop chan struct{}, started chan<- struct{}) {
	close(started)
	<-stop
}

func TestCheckGoroutinesReportsALeak(t *testing.T) {
	rec := &recordingTB{}
	checkGoroutines(rec, 200*time.Millisecond)
	stop, started := make(chan struct{}), make(chan struct{})
	go leakyWorker(stop, started)
	<-started
	begin := time.Now()
	rec.runCleanups()
	close(stop)
	if waited := time.Since(begin); waited < 200*time.Millisecond {
		t.Errorf("gave up after %s, want at least the 200ms wait", waited)
	}
	if len(rec.errors) != 1 {
		t.Fatalf("%d errors, want 1: %q", len(rec.errors), rec.errors)
	}
	msg := rec.errors[0]
	if !strings.Contains(msg, "leakyWorker") {
		t.Errorf("the dump does not name the leaked goroutine:\n%s", msg)
	}
	if n := strings.Count(msg, "\ngoroutine "); n != 1 {
		t.Errorf("the dump holds %d goroutines, want only the leaked one:\n%s", n, msg)
	}
}

func TestCheckGoroutinesWaitsForGoroutinesToEnd(t *testing.T) {
	rec := &recordingTB{}
	checkGoroutines(rec, GoroutineWait)
	done := make(chan struct{})
	go func() {
		time.Sleep(100 * time.Millisecond) // still running when the check starts
		close(done)
	}()
	rec.runCleanups()
	<-done
	if len(rec.errors) != 0 {
		t.Errorf("a goroutine that ended within the wait was reported: %q", rec.errors)
	}
}

func TestCheckGoroutinesOnTheRealT(t *testing.T) {
	CheckGoroutines(t)
	done := make(chan struct{})
	go func() { close(done) }()
	<-done
}

func TestGoroutineID(t *testing.T) {
	for in, want := range map[string]string{
		"goroutine 17 [running]:\nmain.f()":        "17",
		"goroutine 3 [chan receive, 2 minutes]:\n": "3",
		"created by x": "",
	} {
		if got := goroutineID(in); got != want {
			t.Errorf("goroutineID(%q) = %q, want %q", in, got, want)
		}
	}
}
