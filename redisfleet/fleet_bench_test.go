package redisfleet_test

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
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
// each process received, per page of the crawl; and page-gap-ms, the
// mean time between two pages of a host (the host's pages over the time
// from its first to its last, averaged over the hosts: 50 ms is a host
// asked at its Crawl-delay exactly).
//
// deep/procs=8 is the same crawl at 8 processes with 32 pages per host
// (a root linking to 31): the costs paid once per host (robots.txt, its
// policy read by each process) and per process (connections, the looks at
// every partition at start and at the end) weigh four times less per page.
func BenchmarkFleetScaling(b *testing.B) {
	distributedBinary(b) // built before any timing
	for _, n := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("procs=%d", n), func(b *testing.B) { fleetScaling(b, n, 48, 7) })
	}
	b.Run("deep/procs=8", func(b *testing.B) { fleetScaling(b, 8, 48, 31) })
}

// fleetScaling is BenchmarkFleetScaling's crawl: n processes, hosts hosts
// of a root and pages pages each.
func fleetScaling(b *testing.B, n, hosts, pages int) {
	var rate, wall, scripts, cmds, trips, cpu, heard, gaps float64
	for range b.N {
		srv := redistest.Start(b)
		farm, names, urls := linkFarm(b, hosts, pages, "0.05")
		args := append([]string{"-redis", srv.URL(), "-connect", farm.Server.Listener.Addr().String(),
			"-threads", "2", "-min-delay", "0", "-default-delay", "0", "-depth", "1"}, urls...)
		cpu0 := redistest.CPU(b, srv.Addr)
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
			gaps += hits[len(hits)-1].At.Sub(hits[0].At).Seconds() * 1000 / float64(len(hits)-1) / float64(len(names))
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
		logTripKinds(b, ps, total)
		heard += float64(hd) / float64(n) / float64(total)
		cpu += (redistest.CPU(b, srv.Addr) - cpu0) * 1000 / float64(total)
		logCommands(b, srv.Addr, total)
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
	b.ReportMetric(gaps/float64(b.N), "page-gap-ms")
}

// doneLine is the summary line of an examples/distributed process: its
// Redis round trips (a go-redis hook: one per command sent alone, one per
// pipeline) and the wake-up messages it received.
var doneLine = regexp.MustCompile(`(?m)^done: .*Redis round trips (\d+), wake-ups heard (\d+)\)$`)

// tripsLine is the second summary line of an examples/distributed
// process: its round trips by kind of call.
var tripsLine = regexp.MustCompile(`(?m)^round trips by call: (.*)$`)

// logTripKinds logs the round trips per page of the fleet ps by kind of
// call (a script named by redisfleet.ScriptNames, a command, or a
// pipeline of them), the most frequent first.
func logTripKinds(b *testing.B, ps []*proc, pages int) {
	sum := map[string]int64{}
	name := func(k string) string {
		return regexp.MustCompile(`sha:[0-9a-f]{8}`).ReplaceAllStringFunc(k, func(s string) string {
			if n, ok := redisfleet.ScriptNames[s[4:]]; ok {
				return n
			}
			return s
		})
	}
	for _, p := range ps {
		m := tripsLine.FindStringSubmatch(p.stdout.String())
		if m == nil {
			continue
		}
		for _, kv := range strings.Fields(m[1]) {
			i := strings.LastIndexByte(kv, '=')
			if i < 0 {
				b.Fatalf("round trips by call: %q: no count in %q", kv, m[1])
			}
			n, _ := strconv.ParseInt(kv[i+1:], 10, 64)
			sum[name(kv[:i])] += n
		}
	}
	kinds := make([]string, 0, len(sum))
	for k := range sum {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return sum[kinds[i]] > sum[kinds[j]] })
	var sb strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&sb, " %s=%.3f", k, float64(sum[k])/float64(pages))
	}
	b.Logf("round trips per page by call (%d processes):%s", len(ps), sb.String())
}

// logCommands logs, from the server's INFO commandstats, the commands
// per page and the µs Redis spent in them per page (a script's time
// includes the commands it runs, which are listed too), the most costly
// first.
func logCommands(b *testing.B, addr string, pages int) {
	info, err := redistest.Do(addr, "INFO", "commandstats")
	if err != nil {
		b.Fatal(err)
	}
	type stat struct {
		name        string
		calls, usec float64
	}
	var st []stat
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		x := stat{name: strings.TrimPrefix(name, "cmdstat_")}
		for _, f := range strings.Split("calls="+rest, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				x.calls = n / float64(pages)
			case "usec":
				x.usec = n / float64(pages)
			}
		}
		st = append(st, x)
	}
	sort.Slice(st, func(i, j int) bool { return st[i].usec > st[j].usec })
	var sb strings.Builder
	for _, x := range st {
		fmt.Fprintf(&sb, " %s=%.2f/%.1fµs", x.name, x.calls, x.usec)
	}
	b.Logf("Redis commands per page (calls/µs):%s", sb.String())
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

// BenchmarkFleetScale is the fleet's scale figure: examples/distributed as
// 16 processes (4 queue threads each) on a local 3-node Redis Cluster, over
// 1,000 hosts of 100 pages each (a root linking to 99): 100,000 pages, at
// a Crawl-delay of 2 s (delay=2s) or 4 s (delay=4s). It fails on a page
// fetched twice or never, or on two requests to a host closer than the
// delay (robots.txt included), and reports pages/s, the Redis memory the
// crawl left per page (the seen set, the hosts' state and the policies:
// redis-B/page), and each host's pace as a share of 1/Crawl-delay (pages
// after the first over the time from the first to the last: 1 is a host
// asked exactly every Crawl-delay; the minimum and the median over the
// hosts). The host-bound ceiling is 1,000 / delay: 500 pages/s at 2 s,
// near what 2 cores can serve (the pace then shows the CPU's shortfall),
// 250 pages/s at 4 s. delay=2s takes about 4 minutes on 2 cores, delay=4s
// about 7: run one alone, with -benchtime=1x.
func BenchmarkFleetScale(b *testing.B) {
	for _, delay := range []time.Duration{2 * time.Second, 4 * time.Second} {
		b.Run("delay="+delay.String(), func(b *testing.B) { fleetScale(b, delay) })
	}
}

func fleetScale(b *testing.B, delay time.Duration) {
	const procs, threads, hosts, pages = 16, 4, 1000, 99
	distributedBinary(b)
	for range b.N {
		cl := redistest.StartCluster(b, 3)
		farm, names, urls := linkFarm(b, hosts, pages, strconv.FormatFloat(delay.Seconds(), 'f', -1, 64))
		args := append([]string{"-redis-cluster", cl.URL(), "-connect", farm.Server.Listener.Addr().String(),
			"-threads", strconv.Itoa(threads), "-min-delay", "0", "-default-delay", "0", "-depth", "1"}, urls...)
		mem0 := clusterMemory(b, cl)
		start := time.Now()
		ps := startFleet(b, procs, args...)
		for _, p := range ps {
			if code := p.wait(b, 20*time.Minute); code != 0 {
				b.Fatalf("process exited %d: %s", code, p.stdout.String())
			}
		}
		wall := time.Since(start)
		var first, last time.Time
		var paces []float64
		total := 0
		for _, h := range names {
			if g := testutil.MinGap(farm.Pages(h, true)); g < delay {
				b.Errorf("%s: two requests %v apart, under the Crawl-delay %v", h, g, delay)
			}
			hits := farm.Pages(h, false)
			seen := map[string]bool{}
			for _, hit := range hits {
				if seen[hit.Path] {
					b.Errorf("%s%s fetched twice", h, hit.Path)
				}
				seen[hit.Path] = true
			}
			if len(seen) != pages+1 {
				b.Errorf("%s: %d distinct pages fetched, want %d", h, len(seen), pages+1)
			}
			total += len(hits)
			if first.IsZero() || hits[0].At.Before(first) {
				first = hits[0].At
			}
			if l := hits[len(hits)-1].At; l.After(last) {
				last = l
			}
			paces = append(paces, delay.Seconds()*float64(len(hits)-1)/hits[len(hits)-1].At.Sub(hits[0].At).Seconds())
		}
		sort.Float64s(paces)
		b.ReportMetric(float64(total)/last.Sub(first).Seconds(), "pages/s")
		b.ReportMetric(wall.Seconds(), "s/crawl")
		b.ReportMetric(paces[0], "min-pace")
		b.ReportMetric(paces[len(paces)/2], "median-pace")
		b.ReportMetric(float64(clusterMemory(b, cl)-mem0)/float64(total), "redis-B/page")
	}
}

// linkFarm serves hosts h0.example, h1.example, ... each a linkSite of
// pages pages at the Crawl-delay delay (seconds), and returns the farm, the
// host names and their root URLs.
func linkFarm(tb testing.TB, hosts, pages int, delay string) (*testutil.Farm, []string, []string) {
	sites := map[string]*testutil.Site{}
	var names, urls []string
	for i := range hosts {
		h := fmt.Sprintf("h%d.example", i)
		sites[h] = testutil.LinkSite(delay, pages, nil)
		names = append(names, h)
		urls = append(urls, "http://"+h+"/")
	}
	return testutil.NewFarm(tb, sites), names, urls
}

// clusterMemory returns the memory the Cluster's nodes use for data
// (INFO memory: used_memory, summed).
func clusterMemory(t testing.TB, cl *redistest.Cluster) int64 {
	t.Helper()
	var sum int64
	for _, a := range cl.Addrs() {
		info, err := redistest.Do(a, "INFO", "memory")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				sum += n
			}
		}
	}
	return sum
}
