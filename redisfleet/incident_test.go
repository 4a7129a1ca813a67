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
	f := frFleet(t, srv, Config{Logger: log, CallTimeout: 200 * time.Millisecond, Lease: time.Second})
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
		if strings.Contains(l, "level="+level) && strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// TestRestartOneWarning: a Redis restarted empty while the process calls
// it is one incident: one warning (Redis is unavailable), then, at Info,
// Redis answering again and one line for the data lost, summed over the
// 16 partitions (each had a request of this process, queued again).
func TestRestartOneWarning(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var logs testutil.Buffer
	q := restartFleet(t, srv, &logs)
	srv.Stop()
	if _, err := q.GetRequest(); err == nil {
		t.Fatal("GetRequest with Redis down: no error")
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if n, err := q.QueueSize(); err != nil || n != 16 {
		t.Fatalf("QueueSize after the restart: %d, %v; want the 16 requests queued again", n, err)
	}
	if w := lines(&logs, "WARN", ""); len(w) != 1 || !strings.Contains(w[0], "Redis is unavailable") {
		t.Fatalf("warnings: %q; want one, the outage\n%s", w, logs.String())
	}
	loss := lines(&logs, "INFO", "lost the frontier's data")
	if len(loss) != 1 || !strings.Contains(loss[0], "partitions=16 emptied=0 dropped=0 requeued=16 leases=0") {
		t.Fatalf("loss lines: %q; want one at Info, summed over the 16 partitions\n%s", loss, logs.String())
	}
}

// TestSilentRestartOneWarning: a Redis restarted empty between two calls
// (no call failed) is one incident too: the loss found is its one
// warning, summed over the partitions.
func TestSilentRestartOneWarning(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var logs testutil.Buffer
	q := restartFleet(t, srv, &logs)
	srv.Stop()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if n, err := q.QueueSize(); err != nil || n != 16 {
		t.Fatalf("QueueSize after the restart: %d, %v; want the 16 requests queued again", n, err)
	}
	w := lines(&logs, "WARN", "")
	if len(w) != 1 || !strings.Contains(w[0], "lost the frontier's data") || !strings.Contains(w[0], "partitions=16 emptied=0 dropped=0 requeued=16") {
		t.Fatalf("warnings: %q; want one, the loss summed over the 16 partitions\n%s", w, logs.String())
	}
}
