package redistest

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Backend is a Redis the tests run on: a *Server (one server) or a
// *Cluster (a Redis Cluster).
type Backend interface{ URL() string }

// Client returns a client of srv with ContextTimeoutEnabled (as
// redisfleet.ParseURL and ParseClusterURL set it) and maxRetries, closed
// when t ends.
func Client(t testing.TB, srv Backend, maxRetries int) redis.UniversalClient {
	t.Helper()
	var c redis.UniversalClient
	switch srv := srv.(type) {
	case *Cluster:
		o, err := redis.ParseClusterURL(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		o.ContextTimeoutEnabled, o.MaxRetries = true, maxRetries
		c = redis.NewClusterClient(o)
	default:
		o, err := redis.ParseURL(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		o.ContextTimeoutEnabled, o.MaxRetries = true, maxRetries
		c = redis.NewClient(o)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ForBackends runs test twice, in parallel: on a redis-server of its own
// and on a 3-node Redis Cluster of its own, with the same assertions. It
// is for the tests whose subject is where the keys are: a script that
// reaches keys it names itself (a host's limiter state, its stored
// policy) in its partition's hash slot, one Pub/Sub connection per
// partition, a pipeline over every partition. The others run on one
// server (OnServer): the Cluster changes nothing they check.
func ForBackends(t *testing.T, test func(t *testing.T, srv Backend)) {
	t.Run("single", func(t *testing.T) {
		t.Parallel()
		test(t, Start(t))
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		test(t, StartCluster(t, 3))
	})
}

// OnServer runs test on a redis-server of its own. It does not make t
// parallel: a test that checks for leaked goroutines
// (testutil.CheckGoroutines) must run alone.
func OnServer(t *testing.T, test func(t *testing.T, srv Backend)) {
	test(t, Start(t))
}

// First returns the first of v, or the zero value: the test helpers take
// a configuration or none.
func First[T any](v []T) T {
	var z T
	if len(v) > 0 {
		return v[0]
	}
	return z
}

// Pausable is a Backend that can hang: every node stopped (SIGSTOP) by
// Pause, resumed (SIGCONT) by Resume.
type Pausable interface {
	Backend
	Pause() error
	Resume() error
}

// WaitFor polls cond every 20 ms; it fails t after limit (a failure
// timeout, not a timed assertion).
func WaitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(limit); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("still not %s after %s", what, limit)
		}
	}
}

// CallCounter is a go-redis hook counting the round trips a client makes:
// a command sent alone counts one, a pipeline one.
type CallCounter struct{ N atomic.Int64 }

func (c *CallCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *CallCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.N.Add(1)
		return next(ctx, cmd)
	}
}

func (c *CallCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.N.Add(1)
		return next(ctx, cmds)
	}
}

// ReportCalls reports the round trips calls counted since from, per
// operation of b ("calls/op").
func ReportCalls(b *testing.B, calls *CallCounter, from int64) {
	b.ReportMetric(float64(calls.N.Load()-from)/float64(b.N), "calls/op")
}

// ScriptTime reports the time Redis itself spent per EVALSHA call (INFO
// commandstats, since the latest CONFIG RESETSTAT), free of the client's
// scheduling ("redis-µs/script").
func ScriptTime(b *testing.B, rdb redis.UniversalClient) {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:"); ok {
			for _, kv := range strings.Split(rest, ",") {
				if v, ok := strings.CutPrefix(kv, "usec_per_call="); ok {
					x, _ := strconv.ParseFloat(v, 64)
					b.ReportMetric(x, "redis-µs/script")
				}
			}
		}
	}
}
