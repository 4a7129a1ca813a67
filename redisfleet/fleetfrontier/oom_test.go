package fleetfrontier

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

// nodesOf returns the addresses of srv's nodes (one for a redis-server).
func nodesOf(srv redistest.Backend) []string {
	switch s := srv.(type) {
	case *redistest.Cluster:
		return s.Addrs()
	case *redistest.Server:
		return []string{s.Addr}
	}
	return nil
}

// TestRedisOutOfMemory: a Redis (maxmemory-policy noeviction, the default)
// whose maxmemory is set, at the crawl's 10th page, to 1 byte on every
// node, so that it refuses every write with OOM for good, while it answers
// reads. Two processes crawl 6 hosts × 31 pages, on a redis-server with
// Config.Eviction and without (noeviction needs no opt-in; it changes
// nothing), and on a 3-node Cluster without. Each process's queue.Run
// ends with an error no earlier than the outage limit (3 s) after
// maxmemory was set and within 20 s of it: the error wraps redisfleet.ErrUnavailable,
// names the cause (the OOM reply and the maxmemory to raise: "maxmemory
// 1") and counts the requests this process knew not crawled. Every
// request not crawled is reported: in such a count, or failed in Colly's
// OnError with the same cause (a request whose Acquire gave up). Each
// process logs one warning naming the cause (not "Redis is unavailable"
// every 2 s), no host sees a gap under the delay, and New on such a Redis
// returns an error naming the same cause.
func TestRedisOutOfMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const outage = 3 * time.Second
	for _, cluster := range []bool{false, true} {
		for _, opt := range []struct {
			name  string
			fopts redisfleet.Config
		}{{"noeviction", redisfleet.Config{}}, {"opted in", redisfleet.Config{Eviction: true}}} {
			if cluster && opt.fopts.Eviction {
				continue // the same code as without Config.Eviction: one Cluster less in CI
			}
			t.Run(map[bool]string{false: "single", true: "cluster"}[cluster]+"/"+opt.name, func(t *testing.T) {
				t.Parallel()
				// A Redis of its own: maxmemory is the server's.
				var srv redistest.Backend
				if cluster {
					srv = redistest.StartCluster(t, 3)
				} else {
					srv = redistest.Start(t)
				}
				prefix := "oom" + map[bool]string{true: "e", false: ""}[opt.fopts.Eviction] + ":"
				var setAt time.Time
				res := runCrawl(t, srv, crawlSpec{
					prefix: prefix, hosts: 6, pages: 30, threads: 2, delay: "0.2", at: []int{10},
					fopts: opt.fopts, qopts: Config{OutageLimit: outage},
					vanish: func(*redisfleet.Fleet, *Frontier) {
						setAt = time.Now()
						for _, n := range nodesOf(srv) {
							if _, err := redistest.Do(n, "CONFIG", "SET", "maxmemory", "1"); err != nil {
								t.Error(err)
							}
						}
					},
				})
				res.rec.checkGaps(t, 200*time.Millisecond)
				for i, err := range res.errs {
					t.Logf("process %d ended %v after maxmemory was set: %v", i, res.ended[i].Sub(setAt).Round(time.Millisecond), err)
					if err == nil {
						t.Errorf("process %d: queue.Run ended without an error on a Redis that refuses every write", i)
						continue
					}
					if !errors.Is(err, redisfleet.ErrUnavailable) {
						t.Errorf("process %d: %v does not wrap redisfleet.ErrUnavailable", i, err)
					}
					for _, want := range []string{"OOM", "maxmemory 1", "requests known to this process not crawled"} {
						if !strings.Contains(err.Error(), want) {
							t.Errorf("process %d: the error %q does not say %q", i, err, want)
						}
					}
					if el := res.ended[i].Sub(setAt); el < outage || el > 20*time.Second {
						t.Errorf("process %d ended %v after the first refusal; want after the outage limit %v and within 20 s", i, el, outage)
					}
				}
				// Every request not crawled is reported: the roots, and the
				// pages of each host whose root was fetched (it links them
				// all), are each in the journal of a process that reported,
				// or were handed out and failed in Colly (OnError) with the
				// cause (their Acquire gave up: it may be after queue.Run
				// returned, hence the wait).
				keys := res.unfetched(true)
				failedOOM := 0
				for end := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
					var left []string
					failedOOM = 0
					for _, k := range keys {
						if err := res.failed.get(k); err != nil && strings.Contains(err.Error(), "OOM") && strings.Contains(err.Error(), "maxmemory 1") {
							failedOOM++
						} else if !res.counted(k) {
							left = append(left, k)
						}
					}
					if len(left) == 0 || time.Now().After(end) {
						for _, k := range left {
							t.Errorf("%s not crawled, and neither among the requests a process reported not crawled nor failed with the cause (%v)", k, res.failed.get(k))
						}
						break
					}
				}
				t.Logf("%d requests not crawled; %d of them failed in Colly with the cause", len(keys), failedOOM)
				// One warning per process, naming the cause, not one per
				// retry, nor "Redis is unavailable" alone.
				logs := res.logs.String()
				n := strings.Count(logs, "Redis refuses writes: out of memory (OOM); raise its maxmemory")
				if n < 1 || n > 2 || !strings.Contains(logs, "memory=\"maxmemory 1 at ") {
					t.Errorf("%d warnings naming the OOM reply and maxmemory, want one per process:\n%s", n, logs)
				}
				// New on the refusing Redis: the same cause.
				f, err := redisfleet.New(context.Background(), redistest.Client(t, srv, 0), redisfleet.Config{Prefix: prefix + "new:", Eviction: opt.fopts.Eviction})
				if err == nil {
					f.Close()
					t.Fatal("New on a Redis that refuses every write succeeded")
				}
				if !errors.Is(err, redisfleet.ErrUnavailable) || !strings.Contains(err.Error(), "OOM") || !strings.Contains(err.Error(), "maxmemory 1") {
					t.Errorf("New: %v; want redisfleet.ErrUnavailable, the OOM reply and maxmemory 1", err)
				}
				t.Logf("New: %v", err)
			})
		}
	}
}
