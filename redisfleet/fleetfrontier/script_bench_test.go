package fleetfrontier

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/link"
	"github.com/politecrawl/robots/redisfleet/internal/lua"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// BenchmarkScriptCost is the floor of a page's Redis CPU, by parts: the
// CPU time Redis spends (redis-µs/op: INFO cpu, system and user, over the
// loop) on a PING (a round trip), on a script that returns at once (a
// script call), on the frontier's scripts' common head alone (the
// counters, the consistency check), and on a pop that finds its partition
// empty (the head, the waiters' registration).
func BenchmarkScriptCost(b *testing.B) {
	srv := redistest.Start(b)
	var calls redistest.CallCounter
	f := benchFleet(b, srv, &calls)
	q := New(f, Config{})
	ctx := context.Background()
	trivial := redis.NewScript("return 1")
	head := redis.NewScript(lua.Source("include/frontier_head.lua") + "return {gen}")
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
	run("ping", func() error { return rdbOf(f).Ping(ctx).Err() })
	run("script", func() error { return trivial.Run(ctx, rdbOf(f), []string{"x"}).Err() })
	run("head", func() error { return head.Run(ctx, rdbOf(f), q.parts[0].keys, q.argv(0)...).Err() })
	run("pop-empty", func() error {
		_, err := q.run(ctx, 0, lua.FrontierPop, link.Of(f).Tag(0), link.Of(f).Token(), link.Of(f).Settings().Lease.Microseconds(), 1, 0, frontierScan,
			frontierBusyPoll.Microseconds(), frontierCapWait.Microseconds(), q.cfg.maxWait.Microseconds(),
			frontierReapPoll.Microseconds(), link.Of(f).Settings().ProcID, 0, link.Of(f).Settings().IdleTTL.Microseconds(), 0, "")
		return err
	})
}

// BenchmarkScriptCostPage is a page's Redis cost as the fleet pays it
// now, one process alone: a pop that hands out a request of a ready host
// (16 hosts of delay 0, one request each out at a time), then its done
// report, two round trips; with a Limiter (limiter), the pop grants the
// host's permit and the done report carries its release (robots_host_op),
// as in a crawl. It reports Redis's CPU per page (redis-µs/op: INFO cpu,
// the round trips' system time included), the time Redis spent in each
// script call (redis-µs/script: INFO commandstats, usec_per_call of
// EVALSHA, the commands it ran included) and the commands the scripts ran
// per page (cmds/op).
func BenchmarkScriptCostPage(b *testing.B) {
	b.Run("frontier", func(b *testing.B) { scriptCostPage(b, false) })
	b.Run("limiter", func(b *testing.B) { scriptCostPage(b, true) })
}

func scriptCostPage(b *testing.B, withLimiter bool) {
	srv := redistest.Start(b)
	var calls redistest.CallCounter
	f := benchFleet(b, srv, &calls)
	ctx := context.Background()
	var lim *redisfleet.Limiter
	if withLimiter {
		lim = f.Limiter(redisfleet.LimiterConfig{})
	}
	keysOf(f).SetReadyFresh(time.Hour) // every pregrant is taken
	q := New(f, Config{MaxWait: time.Second})
	q.Init()
	defer q.Close()
	const hosts = 16
	for i := range b.N + hosts {
		if err := q.AddRequest(testutil.CollyRequest(b, fmt.Sprintf("http://h%02d.example/%d", i%hosts, i))); err != nil {
			b.Fatal(err)
		}
	}
	page := func() {
		bs, err := q.GetRequest()
		if err != nil {
			b.Fatal(err)
		}
		u, lease := frRead(b, bs)
		if lim != nil {
			p, err := lim.AcquireMax(ctx, u[:len("http://h00.example")], 0, -1)
			if err != nil {
				b.Fatal(err)
			}
			p.Release()
		}
		q.Done(lease)
	}
	for range hosts { // every host has state, the scripts are loaded
		page()
	}
	rdbOf(f).ConfigResetStat(ctx)
	n0 := calls.N.Load()
	cpu0 := redistest.CPU(b, srv.Addr)
	b.ResetTimer()
	for range b.N {
		page()
	}
	b.StopTimer()
	b.ReportMetric((redistest.CPU(b, srv.Addr)-cpu0)*1e6/float64(b.N), "redis-µs/op")
	redistest.ReportCalls(b, &calls, n0+1) // less the CONFIG RESETSTAT
	redistest.ScriptTime(b, rdbOf(f))
	info, err := redistest.Do(srv.Addr, "INFO", "commandstats")
	if err != nil {
		b.Fatal(err)
	}
	var inner int64
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok || name == "cmdstat_evalsha" || name == "cmdstat_info" || name == "cmdstat_config|resetstat" {
			continue
		}
		n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest+",", ',')], 10, 64)
		inner += n
	}
	b.ReportMetric(float64(inner)/float64(b.N), "cmds/op")
}
