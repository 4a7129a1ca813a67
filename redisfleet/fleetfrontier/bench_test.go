package fleetfrontier

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/lua"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// BenchmarkFrontier measures what the Redis frontier adds to one request
// on loopback: AddRequest, QueueSize (Colly's loop asks before every
// GetRequest), GetRequest and Done, over many hosts with no limiter state
// (every host ready: the cost of the calls, not of waiting). calls/req
// counts round trips; ns/op is per request.
func BenchmarkFrontier(b *testing.B) {
	srv := redistest.Start(b)
	o, err := redisfleet.ParseURL(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	rdb := redis.NewClient(o)
	defer rdb.Close()
	var calls redistest.CallCounter
	rdb.AddHook(&calls)
	fl, err := redisfleet.New(context.Background(), rdb, redisfleet.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer fl.Close()
	q := New(fl, Config{Name: fmt.Sprint(time.Now().UnixNano())})
	q.Init()
	defer q.Close()
	reqs := make([][]byte, b.N)
	for i := range reqs {
		reqs[i] = testutil.CollyRequest(b, fmt.Sprintf("http://h%d.example/p%d", i%1000, i))
	}
	calls.N.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := q.AddRequest(reqs[i]); err != nil {
			b.Fatal(err)
		}
		if _, err := q.QueueSize(); err != nil {
			b.Fatal(err)
		}
		p, err := q.GetRequest()
		if err != nil {
			b.Fatal(err)
		}
		_ = p
		q.mu.Lock()
		var id string
		for k := range q.st.own {
			id = k
		}
		q.mu.Unlock()
		q.Done(id)
	}
	b.StopTimer()
	b.ReportMetric(float64(calls.N.Load())/float64(b.N), "calls/req")
	if st := q.Stats(); st.Early != 0 || st.Done != int64(b.N) {
		b.Fatalf("stats %+v", st)
	}
}

// BenchmarkFrontierNotReady measures the frontier's cost as hosts grow:
// n hosts with two requests queued each; each host's
// first request is handed out, granted by the fleet limiter at a delay of
// an hour, released and reported done, so that no host is ready. The
// timed operation is the GetRequest that follows: it finds nothing ready
// and returns frontier.ErrNotReady after MaxWait (1 s). It reports the
// pop script calls it made (pops/op) and the time they took, round trips
// included (pop-ms/op): a frontier that had to look at each host to learn
// that it is not ready makes about n/32 pops (each looks at 32 hosts) and
// stops at MaxWait. Run with -benchtime=1x; the setup makes about six
// calls per host.
func BenchmarkFrontierNotReady(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			srv := redistest.Start(b)
			var pops popCounter
			fl := benchFleet(b, srv, &redistest.CallCounter{})
			rdbOf(fl).AddHook(&pops)
			defer fl.Close()
			lim := fl.Limiter(redisfleet.LimiterConfig{})
			ctx := context.Background()
			var callsN, popNs float64
			b.StopTimer()
			for i := range b.N {
				q := New(fl, Config{Name: fmt.Sprintf("nr%d", i), MaxWait: time.Second})
				if err := q.Init(); err != nil {
					b.Fatal(err)
				}
				parallel(b, n, func(h int) error {
					for j := range 2 {
						if err := q.AddRequest(testutil.CollyRequest(b, fmt.Sprintf("http://h%d.example/p%d", h, j))); err != nil {
							return err
						}
					}
					return nil
				})
				parallel(b, n, func(int) error {
					_, err := q.GetRequest()
					return err
				})
				q.mu.Lock()
				leases := make([]string, 0, len(q.st.own))
				hosts := make([]string, 0, len(q.st.own))
				for id, l := range q.st.own {
					leases, hosts = append(leases, id), append(hosts, l.host)
				}
				q.mu.Unlock()
				if len(leases) != n {
					b.Fatalf("%d requests handed out, want %d", len(leases), n)
				}
				parallel(b, n, func(k int) error {
					p, err := lim.Acquire(ctx, hosts[k], time.Hour)
					if err != nil {
						return err
					}
					p.Release()
					q.Done(leases[k])
					return nil
				})
				pops.n.Store(0)
				pops.ns.Store(0)
				b.StartTimer()
				_, err := q.GetRequest()
				b.StopTimer()
				if !errors.Is(err, frontier.ErrNotReady) {
					b.Fatalf("GetRequest = %v, want ErrNotReady", err)
				}
				callsN += float64(pops.n.Load())
				popNs += float64(pops.ns.Load())
				q.Drop(ctx)
				q.Close()
			}
			b.ReportMetric(callsN/float64(b.N), "pops/op")
			b.ReportMetric(popNs/1e6/float64(b.N), "pop-ms/op")
		})
	}
}

// parallel runs f(0) to f(n-1) on 16 goroutines and fails b on the first
// error.
func parallel(b *testing.B, n int, f func(int) error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= n {
					return
				}
				if err := f(k); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// popCounter counts the frontier's pop script calls a client makes
// (sent alone: GetRequest sends them so) and the time they took, round
// trip included.
type popCounter struct{ n, ns atomic.Int64 }

func (c *popCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *popCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		a := cmd.Args()
		if len(a) < 2 || a[1] != lua.FrontierPop.Hash() {
			return next(ctx, cmd)
		}
		start := time.Now()
		err := next(ctx, cmd)
		c.n.Add(1)
		c.ns.Add(int64(time.Since(start)))
		return err
	}
}
func (c *popCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
