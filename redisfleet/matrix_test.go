package redisfleet_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	matrix "github.com/politecrawl/robots/testkit/crawltest"
)

// TestFeatureMatrixFleet runs the plugin's feature matrix (package
// internal/matrix) with the fleet as one more feature: two crawler
// processes, each a collector with its own plugin on the fleet's limiter
// and policy store, crawl the same site at once; the fleet's pairs are run
// here, the others with the root package's tests. It runs on one
// redis-server: where the keys are is not its subject (the Cluster is
// covered by the tests that use forBackends).
func TestFeatureMatrixFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	srv := redistest.Start(t)
	connect := func() redis.UniversalClient { return redis.NewClient(&redis.Options{Addr: srv.Addr}) }
	var pairs atomic.Int64
	fleet := matrix.Feature{Name: "fleet", Apply: func(c *matrix.Config) {
		prefix := fmt.Sprintf("matrix%d:", pairs.Add(1)) // the two processes of a pair share it
		c.Processes = 2
		c.Slack = 5 * time.Millisecond // the fleet's gate runs on Redis's clock
		c.Options = func(t testing.TB, _ int) ([]robots.Option, func()) {
			rdb := connect()
			f, err := redisfleet.New(context.Background(), rdb, redisfleet.Config{Prefix: prefix})
			if err != nil {
				t.Error(err)
				rdb.Close()
				return nil, nil
			}
			return []robots.Option{
					robots.WithPolicy(policy.WithStore(f.Store())),
					robots.WithLimiter(f.Limiter(redisfleet.LimiterConfig{})),
				}, func() {
					f.Close()
					rdb.Close()
				}
		}
	}}
	matrix.RunPairs(t, matrix.Pairs(append(slices.Clone(matrix.Features), fleet), "fleet"))
}
