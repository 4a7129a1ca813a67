package redisfleet

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

// backend is a Redis the tests run on: a *redistest.Server (one server)
// or a *redistest.Cluster (a 3-node Redis Cluster).
type backend interface{ URL() string }

// client returns a client of srv with the options ParseURL or
// ParseClusterURL set, and more set by opt; closed when t ends.
func client(t testing.TB, srv backend, maxRetries int) redis.UniversalClient {
	t.Helper()
	var c redis.UniversalClient
	switch srv := srv.(type) {
	case *redistest.Cluster:
		o, err := ParseClusterURL(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		o.MaxRetries = maxRetries
		c = redis.NewClusterClient(o)
	default:
		o, err := ParseURL(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		o.MaxRetries = maxRetries
		c = redis.NewClient(o)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// forBackends runs test twice, in parallel: on a redis-server of its own
// and on a 3-node Redis Cluster of its own, with the same assertions. It
// is for the tests whose subject is where the keys are: a script that
// reaches keys it names itself (a host's limiter state, its stored
// policy) in its partition's hash slot, one Pub/Sub connection per
// partition, a pipeline over every partition. The others run on one
// server (onServer): the Cluster changes nothing they check.
func forBackends(t *testing.T, test func(t *testing.T, srv backend)) {
	t.Run("single", func(t *testing.T) {
		t.Parallel()
		test(t, redistest.Start(t))
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		test(t, redistest.StartCluster(t, 3))
	})
}

// onServer runs test on a redis-server of its own. It does not make t
// parallel: a test that checks for leaked goroutines
// (testutil.CheckGoroutines) must run alone.
func onServer(t *testing.T, test func(t *testing.T, srv backend)) {
	test(t, redistest.Start(t))
}

// first returns the first of v, or the zero value: the test helpers take
// a configuration or none.
func first[T any](v []T) T {
	var z T
	if len(v) > 0 {
		return v[0]
	}
	return z
}
