package redisfleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

// nodesOf returns the addresses of srv's nodes (one for a redis-server).
func nodesOf(srv backend) []string {
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
// reads. Two processes crawl 6 hosts × 31 pages, with WithEviction and
// without (noeviction needs no opt-in; it changes nothing). Each
// process's queue.Run ends with an error no earlier than the outage limit
// (3 s) after the first refusal and within 20 s of it: the error wraps
// ErrUnavailable, names the cause (the OOM reply and the maxmemory to
// raise: "maxmemory 1") and counts the requests this process knew not
// crawled; the warning logged at the outage's start names them too (not
// only "Redis is unavailable"); and no host sees a gap under the delay.
// New on such a Redis returns an error naming the same cause.
func TestRedisOutOfMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const outage = 3 * time.Second
	for _, cluster := range []bool{false, true} {
		for _, opt := range []struct {
			name  string
			fopts []Option
		}{{"noeviction", nil}, {"opted in", []Option{WithEviction()}}} {
			t.Run(map[bool]string{false: "single", true: "cluster"}[cluster]+"/"+opt.name, func(t *testing.T) {
				t.Parallel()
				// A Redis of its own: maxmemory is the server's.
				var srv backend
				if cluster {
					srv = redistest.StartCluster(t, 3)
				} else {
					srv = redistest.Start(t)
				}
				prefix := "oom" + map[bool]string{true: "e", false: ""}[opt.fopts != nil] + ":"
				var setAt time.Time
				res := runCrawl(t, srv, crawlSpec{
					prefix: prefix, hosts: 6, pages: 30, threads: 2, delay: "0.2", at: []int{10},
					fopts: opt.fopts, qopts: []FrontierOption{WithOutageLimit(outage)},
					vanish: func(*Fleet, *Frontier) {
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
					if !errors.Is(err, ErrUnavailable) {
						t.Errorf("process %d: %v does not wrap ErrUnavailable", i, err)
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
				// cause (their Acquire gave up).
				notCrawled, failedOOM := 0, 0
				var keys []string
				for _, h := range res.hosts {
					got := map[string]bool{}
					for _, x := range res.farm.Pages(h, false) {
						got[x.Path] = true
					}
					for i := 0; i < res.pages; i++ {
						p := "/"
						if i > 0 {
							p = fmt.Sprintf("/p%d", i)
						}
						if got[p] || i > 0 && !got["/"] {
							continue
						}
						notCrawled++
						key := "GET http://" + h + p
						if err := res.failed[key]; err != nil {
							failedOOM++
							if !strings.Contains(err.Error(), "OOM") || !strings.Contains(err.Error(), "maxmemory 1") {
								t.Errorf("%s%s failed with %v, not naming the cause", h, p, err)
							}
						} else {
							keys = append(keys, key)
						}
					}
				}
				for _, k := range res.uncounted(keys, 5*time.Second) {
					t.Errorf("%s not crawled, and not among the requests a process reported not crawled", k)
				}
				t.Logf("%d requests not crawled; %d of them failed in Colly with the cause", notCrawled, failedOOM)
				if t.Failed() {
					for k, err := range res.failed {
						t.Logf("OnError %s: %v", k, err)
					}
				}
				// One warning per process, naming the cause, not one per
				// retry, nor "Redis is unavailable" alone.
				logs := res.logs.String()
				n := strings.Count(logs, "Redis refuses writes: out of memory (OOM); raise its maxmemory")
				if n < 1 || n > 2 || !strings.Contains(logs, "memory=\"maxmemory 1 at ") {
					t.Errorf("%d warnings naming the OOM reply and maxmemory, want one per process:\n%s", n, logs)
				}
				// New on the refusing Redis: the same cause.
				if srv, ok := srv.(*redistest.Server); ok {
					f, err := New(context.Background(), newClient(t, srv), WithPrefix(prefix+"new:"))
					if err == nil {
						f.Close()
						t.Fatal("New on a Redis that refuses every write succeeded")
					}
					if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "OOM") || !strings.Contains(err.Error(), "maxmemory 1") {
						t.Errorf("New: %v; want ErrUnavailable, the OOM reply and maxmemory 1", err)
					}
				}
			})
		}
	}
}
