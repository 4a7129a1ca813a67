package redisfleet

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

// BenchmarkScriptCost is the floor of a page's Redis CPU, by parts: the
// CPU time Redis spends (redis-µs/op: INFO cpu, system and user, over the
// loop) on a PING (a round trip), on a script that returns at once (a
// script call), on the frontier's scripts' common head alone (the
// counters, the consistency check), and on a pop that finds its partition
// empty (the head, the waiters' registration).
func BenchmarkScriptCost(b *testing.B) {
	srv := redistest.Start(b)
	var calls callCounter
	f := benchFleet(b, srv, &calls)
	q := f.Frontier()
	ctx := context.Background()
	trivial := redis.NewScript("return 1")
	head := redis.NewScript(frontierLuaHead + "return {gen}")
	run := func(name string, call func() error) {
		b.Run(name, func(b *testing.B) {
			if err := call(); err != nil { // the script loaded
				b.Fatal(err)
			}
			cpu0 := redistest.CPU(b, srv.Addr)
			b.ResetTimer()
			for range b.N {
				if err := call(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric((redistest.CPU(b, srv.Addr)-cpu0)*1e6/float64(b.N), "redis-µs/op")
		})
	}
	run("ping", func() error { return f.rdb.Ping(ctx).Err() })
	run("script", func() error { return trivial.Run(ctx, f.rdb, []string{"x"}).Err() })
	run("head", func() error { return head.Run(ctx, f.rdb, q.parts[0].keys, q.argv(0)...).Err() })
	run("pop-empty", func() error {
		_, err := q.run(ctx, 0, frPopScript, f.tag(0), f.token(), f.cfg.lease.Microseconds(), 1, 0, frontierScan,
			frontierBusyPoll.Microseconds(), frontierCapWait.Microseconds(), q.cfg.maxWait.Microseconds(),
			frontierReapPoll.Microseconds(), f.procID, 0, f.cfg.idleTTL.Microseconds(), 0, "")
		return err
	})
}
