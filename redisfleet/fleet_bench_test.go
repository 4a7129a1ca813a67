package redisfleet_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/internal/testutil"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

// BenchmarkFleetScaling runs the examples/distributed binary as 1, 2, 4
// and 8 processes (2 queue threads each) on one Redis over 48 hosts of 8
// pages each (a root linking to 7 pages) at Crawl-delay 0.05 s, and
// reports pages/s: the pages over the time from the first request the
// farm saw to the last (the host-bound ceiling is 48 hosts / 50 ms = 960
// requests/s). -default-delay 0: a host's first page goes out the
// Crawl-delay after its robots.txt, not the plugin's default 1 s. Run with
// -benchtime=1x: one crawl per process count. Per page it reports the
// script calls and the commands Redis ran (INFO commandstats, those the
// scripts run included), the client's round trips (a go-redis hook in the
// binary: one per command sent alone, one per pipeline), Redis's CPU time
// in ms (INFO cpu, used_cpu_sys + used_cpu_user, from start to end of the
// crawl: the fleet's Pub/Sub fan-out included) and the wake-up messages
// each process received, per page of the crawl.
func BenchmarkFleetScaling(b *testing.B) {
	const hosts, pages = 48, 7
	distributedBinary(b) // built before any timing
	for _, n := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("procs=%d", n), func(b *testing.B) {
			var rate, wall, scripts, cmds, trips, cpu, heard float64
			for range b.N {
				srv := redistest.Start(b)
				sites := map[string]*testutil.Site{}
				var names, urls []string
				for i := range hosts {
					h := fmt.Sprintf("h%d.example", i)
					sites[h] = linkSite("0.05", pages, nil)
					names = append(names, h)
					urls = append(urls, "http://"+h+"/")
				}
				farm := testutil.NewFarm(b, sites)
				args := append([]string{"-redis", srv.URL(), "-connect", farm.Server.Listener.Addr().String(),
					"-threads", "2", "-min-delay", "0", "-default-delay", "0", "-depth", "1"}, urls...)
				cpu0 := redisCPU(b, srv.Addr)
				start := time.Now()
				ps := startFleet(b, n, args...)
				for _, p := range ps {
					if code := p.wait(b, 5*time.Minute); code != 0 {
						b.Fatalf("process exited %d: %s", code, p.stdout.String())
					}
				}
				wall += time.Since(start).Seconds()
				var first, last time.Time
				total := 0
				for _, h := range names {
					hits := farm.Pages(h, false)
					if len(hits) != pages+1 {
						b.Fatalf("%s: %d pages fetched, want %d", h, len(hits), pages+1)
					}
					total += len(hits)
					if first.IsZero() || hits[0].At.Before(first) {
						first = hits[0].At
					}
					if l := hits[len(hits)-1].At; l.After(last) {
						last = l
					}
				}
				rate += float64(total) / last.Sub(first).Seconds()
				var rt, hd int64
				for _, p := range ps {
					m := doneLine.FindStringSubmatch(p.stdout.String())
					if m == nil {
						b.Fatalf("no summary line: %s", p.stdout.String())
					}
					x, _ := strconv.ParseInt(m[1], 10, 64)
					y, _ := strconv.ParseInt(m[2], 10, 64)
					rt, hd = rt+x, hd+y
				}
				trips += float64(rt) / float64(total)
				heard += float64(hd) / float64(n) / float64(total)
				cpu += (redisCPU(b, srv.Addr) - cpu0) * 1000 / float64(total)
				sc, all := commandStats(b, srv.Addr)
				scripts += float64(sc) / float64(total)
				cmds += float64(all) / float64(total)
			}
			b.ReportMetric(rate/float64(b.N), "pages/s")
			b.ReportMetric(wall/float64(b.N), "s/crawl")
			b.ReportMetric(scripts/float64(b.N), "scripts/page")
			b.ReportMetric(cmds/float64(b.N), "cmds/page")
			b.ReportMetric(trips/float64(b.N), "trips/page")
			b.ReportMetric(cpu/float64(b.N), "redis-ms/page")
			b.ReportMetric(heard/float64(b.N), "wakeups/proc/page")
		})
	}
}

// doneLine is the summary line of an examples/distributed process: its
// Redis round trips (a go-redis hook: one per command sent alone, one per
// pipeline) and the wake-up messages it received.
var doneLine = regexp.MustCompile(`(?m)^done: .*Redis round trips (\d+), wake-ups heard (\d+)\)$`)

// redisCPU returns the server's CPU time so far, in seconds (INFO cpu:
// used_cpu_sys + used_cpu_user, the main thread and the others).
func redisCPU(t testing.TB, addr string) float64 {
	t.Helper()
	info, err := redistest.Do(addr, "INFO", "cpu")
	if err != nil {
		t.Fatal(err)
	}
	var s float64
	for _, line := range strings.Split(info, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		if k == "used_cpu_sys" || k == "used_cpu_user" {
			x, _ := strconv.ParseFloat(v, 64)
			s += x
		}
	}
	return s
}

// commandStats returns, from the server's INFO commandstats, the script
// calls (EVALSHA and EVAL: each a round trip, or a pipelined part of one)
// and every command counted (those the scripts run included).
func commandStats(t testing.TB, addr string) (scripts, all int64) {
	t.Helper()
	info, err := redistest.Do(addr, "INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest+",", ',')], 10, 64)
		all += n
		if name == "cmdstat_evalsha" || name == "cmdstat_eval" {
			scripts += n
		}
	}
	return scripts, all
}
