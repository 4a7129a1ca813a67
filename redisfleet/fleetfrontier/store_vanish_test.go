package fleetfrontier

import (
	"context"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

// TestStoreKeysVanish: the stored robots.txt policies and the robots.txt
// fetch locks of every host are deleted every 20 ms during a crawl of 4
// hosts × 11 pages by 3 processes (2 threads each), on a redis-server and
// on a 3-node Cluster. robots.txt answers with max-age=1 (and the
// resolvers accept a lifetime of a second), so every process needs each
// policy again every second: it finds the Store's copy deleted, or the
// lock of another process's fetch deleted, and fetches again. The fleet
// promises for robots.txt only what it promises for any request (docs:
// "a stored policy, a fetch lock": fetched again "under a limiter permit
// like any request"): robots.txt is fetched again, but no two requests of
// a host, robots.txt included, overlap or start less than the delay after
// the previous one ended (the delay: max(WithMinDelay, the Crawl-delay),
// both 200 ms here, so that a process's first fetch of a host, spaced by
// the minimum delay alone, is held to it too), no page is fetched twice
// (the frontier's keys stay), none is missed, and every queue.Run ends
// without an error.
func TestStoreKeysVanish(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short")
	}
	const delay = 200 * time.Millisecond
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		rdb := redistest.Client(t, srv, 3)
		var (
			policies, locks, rounds atomic.Int64
			stop                    = make(chan struct{})
			wg                      sync.WaitGroup
		)
		res := runCrawl(t, srv, crawlSpec{
			prefix: "storevanish:", procs: 3, hosts: 4, pages: 10, threads: 2, delay: "0.2",
			ropts: []robots.Option{robots.WithMinDelay(delay)},
			popts: []policy.Option{policy.WithMaxAgeBounds(time.Second, 0)},
			serve: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					w.Header().Set("Cache-Control", "max-age=1")
					// Each fetch holds its lock longer than the 20 ms between
					// two deletion rounds, so that the rounds meet the locks
					// (a policy read with the frontier's pop leaves few Gets,
					// and so few fetches, to meet).
					time.Sleep(50 * time.Millisecond)
				}
			},
			onStart: func(fleets []*redisfleet.Fleet, _ []*Frontier) {
				f := fleets[0]
				var keys []string
				for i := range 4 {
					sk := "rfc9309 http://h" + string(rune('0'+i)) + ".example"
					keys = append(keys, keysOf(f).PolicyKey(sk), keysOf(f).Key("fetch", sk))
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						case <-time.After(20 * time.Millisecond):
						}
						rounds.Add(1)
						for i, k := range keys {
							n, err := rdb.Del(context.Background(), k).Result()
							if err != nil {
								continue // a call timeout on a loaded machine: the next round
							}
							if i%2 == 0 {
								policies.Add(n)
							} else {
								locks.Add(n)
							}
						}
					}
				}()
			},
		})
		close(stop)
		wg.Wait()
		missing, twice := res.check(t, delay)
		if missing > 0 || twice > 0 {
			t.Errorf("%d pages missing, %d fetched twice: deleting policies and fetch locks must cost neither", missing, twice)
		}
		res.rec.mu.Lock()
		defer res.rec.mu.Unlock()
		total := 0
		for _, h := range res.hosts {
			v := append([]visit(nil), res.rec.robots[h]...)
			sort.Slice(v, func(i, j int) bool { return v[i].start.Before(v[j].start) })
			total += len(v)
			if len(v) < 2 {
				t.Errorf("%s: robots.txt fetched %d times: never fetched again", h, len(v))
			}
			for i := 1; i < len(v); i++ {
				if g := v[i].start.Sub(v[i-1].end); g < delay-jitterE2S {
					t.Errorf("%s: robots.txt fetched %v after the previous robots.txt fetch ended (overlapping if negative), under the delay %v", h, g, delay)
				}
			}
		}
		t.Logf("%d deletion rounds: %d policies and %d fetch locks deleted; robots.txt fetched %d times for %d hosts", rounds.Load(), policies.Load(), locks.Load(), total, len(res.hosts))
		if policies.Load() == 0 || locks.Load() == 0 {
			t.Fatalf("%d policies and %d fetch locks deleted: the test tests nothing", policies.Load(), locks.Load())
		}
	})
}
