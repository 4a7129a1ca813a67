package redisfleet

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/internal/testutil"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

// BenchmarkFrontier measures what the Redis frontier adds to one request
// on loopback: AddRequest, QueueSize (Colly's loop asks before every
// GetRequest), GetRequest and Done, over many hosts with no limiter state
// (every host ready: the cost of the calls, not of waiting). calls/req
// counts round trips; ns/op is per request.
func BenchmarkFrontier(b *testing.B) {
	srv := redistest.Start(b)
	o, err := ParseURL(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	rdb := redis.NewClient(o)
	defer rdb.Close()
	var calls callCounter
	rdb.AddHook(&calls)
	fl, err := New(context.Background(), rdb)
	if err != nil {
		b.Fatal(err)
	}
	defer fl.Close()
	q := fl.Frontier(WithFrontierName(fmt.Sprint(time.Now().UnixNano())))
	q.Init()
	defer q.Close()
	reqs := make([][]byte, b.N)
	for i := range reqs {
		reqs[i] = testutil.CollyRequest(b, fmt.Sprintf("http://h%d.example/p%d", i%1000, i))
	}
	calls.n.Store(0)
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
		for k := range q.own {
			id = k
		}
		q.mu.Unlock()
		q.Done(id)
	}
	b.StopTimer()
	b.ReportMetric(float64(calls.n.Load())/float64(b.N), "calls/req")
	if st := q.Stats(); st.Early != 0 || st.Done != int64(b.N) {
		b.Fatalf("stats %+v", st)
	}
}
