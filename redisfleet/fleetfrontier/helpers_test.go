package fleetfrontier

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/link"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

// rdbOf returns f's Redis client.
func rdbOf(f *redisfleet.Fleet) redis.UniversalClient { return link.Of(f).Client() }

// keysOf returns f's key schema and test settings.
func keysOf(f *redisfleet.Fleet) link.Testing { return link.Of(f).(link.Testing) }

// hostKeys returns the two keys of host's limiter state: the hash and the
// zset of blocking permits.
func hostKeys(f *redisfleet.Fleet, host string) (hash, hold string) {
	return keysOf(f).Key("host", host), keysOf(f).Key("hold", host)
}

// isCluster reports whether f runs on a Redis Cluster.
func isCluster(f *redisfleet.Fleet) bool {
	_, ok := rdbOf(f).(*redis.ClusterClient)
	return ok
}

// visit is a request a site served: when it started and ended.
type visit struct{ start, end time.Time }

// benchFleet returns a fleet on srv whose client counts its round trips.
func benchFleet(b *testing.B, srv *redistest.Server, calls *redistest.CallCounter) *redisfleet.Fleet {
	b.Helper()
	f := frFleet(b, srv)
	rdbOf(f).AddHook(calls)
	return f
}

// jitterE2S is how much shorter than the delay an end-to-start gap may
// look at the server: the rate difference of Redis's wall clock and the
// server's monotonic clock.
const jitterE2S = time.Millisecond

// newFleet returns a Fleet on a client of its own, closed when t ends.
func newFleet(t testing.TB, srv redistest.Backend, cfg ...redisfleet.Config) *redisfleet.Fleet {
	t.Helper()
	f, err := redisfleet.New(context.Background(), redistest.Client(t, srv, 0), redistest.First(cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// frontierKinds are the frontier's keys of a partition, in the order of
// frPart.keys.
var frontierKinds = []string{"hosts", "count", "seen", "lease", "leaseend", "held", "done", "abandoned", "qitems", "qends", "waiters", "seen0"}

// minGap returns the shortest gap from a visit's end to the next one's
// start.
func minGap(v []visit) time.Duration {
	g := time.Duration(1 << 62)
	for i := 1; i < len(v); i++ {
		g = min(g, v[i].start.Sub(v[i-1].end))
	}
	return g
}
