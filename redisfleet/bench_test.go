package redisfleet

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

// benchFleet returns a fleet on srv whose client counts its calls.
func benchFleet(b *testing.B, srv *redistest.Server, calls *redistest.CallCounter) *Fleet {
	b.Helper()
	f := newFleet(b, srv)
	f.rdb.AddHook(calls)
	return f
}

// BenchmarkRedisPing is the floor: one round trip to Redis on loopback,
// and the CPU time Redis spends on it (redis-µs/op: INFO cpu, system and
// user, over the loop), the least a round trip costs the server.
func BenchmarkRedisPing(b *testing.B) {
	srv := redistest.Start(b)
	var calls redistest.CallCounter
	f := benchFleet(b, srv, &calls)
	ctx := context.Background()
	n0 := calls.N.Load()
	cpu0 := redistest.CPU(b, srv.Addr)
	b.ResetTimer()
	for range b.N {
		if err := f.rdb.Ping(ctx).Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric((redistest.CPU(b, srv.Addr)-cpu0)*1e6/float64(b.N), "redis-µs/op")
	redistest.ReportCalls(b, &calls, n0)
}

// BenchmarkLimiter: the cost the Redis limiter adds to one request,
// uncontended (each iteration a new host, delay 1 s): Acquire+Release
// (the binding gate), Wait+Acquire+Release (the plugin's whole path), the
// same in start-to-start mode (Release after Sent costs nothing there), and
// the in-memory hostlimit.Limiter for comparison.
func BenchmarkLimiter(b *testing.B) {
	srv := redistest.Start(b)
	ctx := context.Background()
	for _, bc := range []struct {
		name    string
		spacing hostlimit.Spacing
		wait    bool
	}{
		{"AcquireRelease", hostlimit.EndToStart, false},
		{"WaitAcquireRelease", hostlimit.EndToStart, true},
		{"StartToStart/WaitAcquireSentRelease", hostlimit.StartToStart, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var calls redistest.CallCounter
			f := benchFleet(b, srv, &calls)
			l := f.Limiter(LimiterConfig{Spacing: bc.spacing})
			hosts := make([]string, b.N)
			for i := range hosts {
				hosts[i] = fmt.Sprintf("https://h%d-%d.example", i, time.Now().UnixNano())
			}
			// Load the script once, out of the timing.
			p, _ := l.Acquire(ctx, "https://warm.example", 0)
			p.Release()
			f.rdb.ConfigResetStat(ctx)
			n0 := calls.N.Load()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if bc.wait {
					if err := l.Wait(ctx, hosts[i], time.Second); err != nil {
						b.Fatal(err)
					}
				}
				p, err := l.Acquire(ctx, hosts[i], time.Second)
				if err != nil {
					b.Fatal(err)
				}
				p.Sent()
				p.Release()
			}
			b.StopTimer()
			redistest.ReportCalls(b, &calls, n0+1) // less the CONFIG RESETSTAT
			redistest.ScriptTime(b, f.rdb)
		})
	}
	b.Run("hostlimit/WaitAcquireRelease", func(b *testing.B) {
		l := hostlimit.New(hostlimit.Config{})
		hosts := make([]string, b.N)
		for i := range hosts {
			hosts[i] = fmt.Sprintf("https://h%d.example", i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			l.Wait(ctx, hosts[i], time.Second)
			p, _ := l.Acquire(ctx, hosts[i], time.Second)
			p.Sent()
			p.Release()
		}
	})
}

// BenchmarkStore: Get and Put of a 2 KB policy value, and a fetch lock
// taken and given back.
func BenchmarkStore(b *testing.B) {
	srv := redistest.Start(b)
	ctx := context.Background()
	var calls redistest.CallCounter
	s := benchFleet(b, srv, &calls).Store()
	val := make([]byte, 2048)
	for i := range val {
		val[i] = byte('a' + i%26)
	}
	b.Run("Put", func(b *testing.B) {
		n0 := calls.N.Load()
		b.ReportAllocs()
		for i := range b.N {
			if err := s.Put(ctx, fmt.Sprint("rfc9309 https://h", i%1000), val, time.Hour); err != nil {
				b.Fatal(err)
			}
		}
		redistest.ReportCalls(b, &calls, n0)
	})
	b.Run("Get", func(b *testing.B) {
		n0 := calls.N.Load()
		b.ReportAllocs()
		for i := range b.N {
			if _, ok, err := s.Get(ctx, fmt.Sprint("rfc9309 https://h", i%1000)); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
		redistest.ReportCalls(b, &calls, n0)
	})
	b.Run("LockUnlock", func(b *testing.B) {
		unlock, _, _ := s.LockFetch(ctx, "warm", time.Second)
		unlock()
		n0 := calls.N.Load()
		b.ReportAllocs()
		for i := range b.N {
			unlock, ok, err := s.LockFetch(ctx, fmt.Sprint("k", i%1000), time.Second)
			if !ok || err != nil {
				b.Fatal(ok, err)
			}
			unlock()
		}
		redistest.ReportCalls(b, &calls, n0)
	})
}

// BenchmarkLimiterContended: procs limiters (each on its own client, as
// processes have), two goroutines each, all on one host with a 2 ms
// end-to-start delay. It reports the Redis calls per granted request and
// the shortest gap between one release and the next grant as the
// limiter's own callers saw them (ns).
func BenchmarkLimiterContended(b *testing.B) {
	srv := redistest.Start(b)
	const d = 2 * time.Millisecond
	for _, procs := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			var calls redistest.CallCounter
			lims := make([]*Limiter, procs)
			for i := range lims {
				lims[i] = benchFleet(b, srv, &calls).Limiter(LimiterConfig{})
			}
			host := fmt.Sprintf("https://contended-%d-%d.example", procs, time.Now().UnixNano())
			ctx := context.Background()
			var left atomic.Int64
			left.Store(int64(b.N))
			var mu sync.Mutex
			var lastEnd time.Time
			minGap := time.Duration(1 << 62)
			n0 := calls.N.Load()
			b.ResetTimer()
			var wg sync.WaitGroup
			for _, l := range lims {
				for range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for left.Add(-1) >= 0 {
							if err := l.Wait(ctx, host, d); err != nil {
								b.Error(err)
								return
							}
							p, err := l.Acquire(ctx, host, d)
							if err != nil {
								b.Error(err)
								return
							}
							now := time.Now()
							mu.Lock()
							if !lastEnd.IsZero() {
								minGap = min(minGap, now.Sub(lastEnd))
							}
							mu.Unlock()
							mu.Lock()
							lastEnd = time.Now()
							mu.Unlock()
							p.Release()
						}
					}()
				}
			}
			wg.Wait()
			b.StopTimer()
			redistest.ReportCalls(b, &calls, n0)
			b.ReportMetric(float64(minGap.Nanoseconds()), "min-gap-ns")
		})
	}
}
