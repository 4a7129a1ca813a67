package fleetfrontier

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/link"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// restartFleet is a fleet process whose frontier knows every partition
// (a request queued in each), logging at Info and above to logs.
func restartFleet(t *testing.T, srv *redistest.Server, logs *testutil.Buffer) *Frontier {
	t.Helper()
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	f := frFleet(t, srv, redisfleet.Config{Logger: log, CallTimeout: time.Second, Lease: 3 * time.Second})
	q := frOpen(t, f, Config{MaxWait: 100 * time.Millisecond})
	covered := map[int]bool{}
	for h := 0; len(covered) < link.Of(f).Settings().Partitions; h++ {
		host := fmt.Sprintf("http://h%d.example", h)
		if p := link.Of(f).Part(host); !covered[p] {
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
			redistest.WaitFor(t, 10*time.Second, "the loss line", func() bool { return len(lines(&logs, "", "lost the frontier's data")) > 0 })
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
