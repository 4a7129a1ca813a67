package redisfleet

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/internal/testutil"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

// TestEventRun: events each within the gap of the previous one are one
// run; a longer silence starts a new one; a run is on until the gap
// passes after its latest event, and lasts from its first to its latest.
func TestEventRun(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const gap = 5 * time.Second
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	var r eventRun
	if _, on := r.lasting(t0, gap); on {
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
		if got := r.add(at(s.at), gap); got != s.fresh {
			t.Errorf("add at %v: fresh %v, want %v", s.at, got, s.fresh)
		}
		d, on := r.lasting(at(s.at), gap)
		if !on || d != s.lasting || r.n != s.n {
			t.Errorf("after the event at %v: lasting %v (on %v), %d events; want %v, %d", s.at, d, on, r.n, s.lasting, s.n)
		}
	}
	if d, on := r.lasting(at(20*time.Second), gap); !on || d != time.Second-1 {
		t.Errorf("at 20s: lasting %v (on %v), want the run on", d, on)
	}
	if _, on := r.lasting(at(20*time.Second+1), gap); on {
		t.Error("at 20s+1ns, more than the gap after the latest event: still on")
	}
}

// restartFleet is a fleet process whose frontier knows every partition
// (a request queued in each), logging at Info and above to logs.
func restartFleet(t *testing.T, srv *redistest.Server, logs *testutil.Buffer) *Frontier {
	t.Helper()
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	f := frFleet(t, srv, Config{Logger: log, CallTimeout: time.Second, Lease: 3 * time.Second})
	q := frOpen(t, f, FrontierConfig{MaxWait: 100 * time.Millisecond})
	covered := map[int]bool{}
	for h := 0; len(covered) < f.cfg.partitions; h++ {
		host := fmt.Sprintf("http://h%d.example", h)
		if p := f.part(host); !covered[p] {
			covered[p] = true
			if err := q.AddRequest(testutil.CollyRequest(t, host+"/")); err != nil {
				t.Fatal(err)
			}
		}
	}
	return q
}

// lines returns the log lines of level (WARN, INFO) that contain s.
func lines(logs *testutil.Buffer, level, s string) []string {
	var out []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "level="+level) && strings.Contains(l, s) && l != "" {
			out = append(out, l)
		}
	}
	return out
}

// TestRestartOneWarning: a Redis restarted empty is one incident, one
// warning per process, and the data lost is one line, summed over the 16
// partitions (each had a request of this process, queued again). Seen as
// an outage (a call failed meanwhile), the warning is the outage's, and
// Redis answering again and the loss follow at Info; when no call failed
// (a restart between two calls), the loss line is the warning. Without
// a failing call of its own the test cannot rule out one of the lease
// renewal's: either way, one warning.
func TestRestartOneWarning(t *testing.T) {
	const summed = "partitions=16 emptied=0 dropped=0 requeued=16 leases=0"
	for _, seen := range []bool{true, false} {
		t.Run(map[bool]string{true: "seen as an outage", false: "between two calls"}[seen], func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			var logs testutil.Buffer
			q := restartFleet(t, srv, &logs)
			srv.Stop()
			if seen {
				if _, err := q.GetRequest(); err == nil {
					t.Fatal("GetRequest with Redis down: no error")
				}
			}
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			// QueueSize finds the loss; the recovery may be the lease
			// renewal's, still running when QueueSize returns.
			if _, err := q.QueueSize(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 10*time.Second, "the loss line", func() bool { return len(lines(&logs, "", "lost the frontier's data")) > 0 })
			if n, err := q.QueueSize(); err != nil || n != 16 {
				t.Fatalf("QueueSize after the recovery: %d, %v; want the 16 requests queued again", n, err)
			}
			warn, loss := lines(&logs, "WARN", ""), lines(&logs, "", "lost the frontier's data")
			if len(warn) != 1 || len(loss) != 1 || !strings.Contains(loss[0], summed) {
				t.Fatalf("warnings %q, loss lines %q; want one each, the loss summed over the 16 partitions\n%s", warn, loss, logs.String())
			}
			outage := strings.Contains(warn[0], "Redis is unavailable")
			if seen && !outage || outage == strings.Contains(loss[0], "level=WARN") {
				t.Fatalf("the warning is %q, the loss line %q: want the outage's warning and the loss at Info, or the loss as the warning\n%s", warn[0], loss[0], logs.String())
			}
		})
	}
}
