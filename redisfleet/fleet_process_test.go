package redisfleet_test

// Fleet tests with real processes: the examples/distributed binary, built
// once into a temporary directory, started several times against a real
// redis-server and a loopback farm standing for several hosts.

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// jitter is the clock allowance on server-observed gaps: the farm reads
// the Go process's monotonic clock, the fleet's grants read the Redis
// server's wall clock (TIME); on one machine the two only drift by NTP's
// slew (at most 0.5 ms per second), so 2 ms covers any gap here.
const jitter = 2 * time.Millisecond

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// distributedBinary builds examples/distributed once per test run.
func distributedBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "distributed-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "distributed")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/politecrawl/robots/redisfleet/examples/distributed").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// TestMain runs up to 8 tests at once unless -parallel is given: the
// fleet's tests spend their time waiting (leases, Crawl-delays, Redis
// restarts), each with a redis-server of its own, so they overlap well
// beyond the default of GOMAXPROCS.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "8")
	}
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// proc is one running process of the fleet.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr testutil.Buffer
	done           chan struct{}
	err            error
	exited         time.Time // set before done is closed
}

// startFleet starts n processes with args at once.
func startFleet(t testing.TB, n int, args ...string) []*proc {
	t.Helper()
	bin := distributedBinary(t)
	var ps []*proc
	for range n {
		p := &proc{done: make(chan struct{})}
		p.cmd = exec.Command(bin, args...)
		p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
		p.cmd.Env = append(os.Environ(), "REDIS_URL=")
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { p.err = p.cmd.Wait(); p.exited = time.Now(); close(p.done) }()
		t.Cleanup(func() {
			p.cmd.Process.Kill()
			<-p.done
			if t.Failed() {
				t.Logf("process %d: %v\nstdout:\n%s\nstderr:\n%s", p.cmd.Process.Pid, p.err, p.stdout.String(), p.stderr.String())
			}
		})
		ps = append(ps, p)
	}
	return ps
}

// wait waits for p to exit, at most d, and returns its exit code.
func (p *proc) wait(t testing.TB, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("process %d did not exit within %v", p.cmd.Process.Pid, d)
	}
	return p.cmd.ProcessState.ExitCode()
}

var fetchedLine = regexp.MustCompile(`(?m)^fetched (\d+) (\S+)$`)

// fetchedURLs counts the URLs each process reports fetched.
func fetchedURLs(ps []*proc) (map[string]int, []int) {
	all := map[string]int{}
	var per []int
	for _, p := range ps {
		m := fetchedLine.FindAllStringSubmatch(p.stdout.String(), -1)
		per = append(per, len(m))
		for _, x := range m {
			all[x[2]]++
		}
	}
	return all, per
}

// checkSpacing fails t if a host saw two requests (robots.txt included)
// closer than delay less the jitter, and returns the shortest gap and the
// mean page-to-page gap of each host.
func checkSpacing(t *testing.T, farm *testutil.Farm, hosts []string, delay time.Duration) {
	t.Helper()
	for _, h := range hosts {
		hits := farm.Pages(h, true)
		if g := testutil.MinGap(hits); len(hits) > 1 && g < delay-jitter {
			t.Errorf("%s: two requests %v apart, under the Crawl-delay %v (allowing %v of clock jitter)", h, g, delay, jitter)
			for _, x := range hits {
				t.Logf("  %s %s %s", h, x.At.Format("15:04:05.000000"), x.Path)
			}
		}
		pages := farm.Pages(h, false)
		if len(pages) > 1 {
			mean := pages[len(pages)-1].At.Sub(pages[0].At) / time.Duration(len(pages)-1)
			t.Logf("%s: %d requests, shortest gap %v, mean page gap %v (Crawl-delay %v)", h, len(hits), testutil.MinGap(hits).Round(time.Millisecond), mean.Round(time.Millisecond), delay)
			if mean < delay {
				t.Errorf("%s: the fleet asked the host once per %v on average, faster than the Crawl-delay %v", h, mean, delay)
			}
		}
	}
}

// span is one request as the server saw it: from the handler's start to
// its end (the response written).
type span struct {
	path       string
	start, end time.Time
}

// recorder serves the farm and records every request's span per host.
type recorder struct {
	farm *testutil.Farm
	mu   sync.Mutex
	reqs map[string][]span
}

func newRecorder(t *testing.T, farm *testutil.Farm) (*recorder, *httptest.Server) {
	rec := &recorder{farm: farm, reqs: map[string][]span{}}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return rec, srv
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec.farm.ServeHTTP(w, r)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	end := time.Now()
	host, _, _ := strings.Cut(r.Host, ":")
	rec.mu.Lock()
	rec.reqs[host] = append(rec.reqs[host], span{r.URL.Path, start, end})
	rec.mu.Unlock()
}

// checkEndToStart fails t if two requests of a host overlapped at the
// server, or if one started less than delay (less the jitter) after the
// previous one ended; it returns the latest end of any request.
func (rec *recorder) checkEndToStart(t *testing.T, delay time.Duration) time.Time {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var last time.Time
	for h, v := range rec.reqs {
		v = append([]span(nil), v...)
		sort.Slice(v, func(i, j int) bool { return v[i].start.Before(v[j].start) })
		shortest := time.Duration(-1)
		for i, x := range v {
			if x.end.After(last) {
				last = x.end
			}
			if i == 0 {
				continue
			}
			prev := v[i-1]
			if x.start.Before(prev.end) {
				t.Errorf("%s: %s started while %s was in flight (%v before its end)", h, x.path, prev.path, prev.end.Sub(x.start))
				continue
			}
			g := x.start.Sub(prev.end)
			if shortest < 0 || g < shortest {
				shortest = g
			}
			if g < delay-jitter {
				t.Errorf("%s: %s started %v after %s ended, under the Crawl-delay %v", h, x.path, g, prev.path, delay)
			}
		}
		t.Logf("%s: %d requests, none overlapping, shortest end-to-start gap %v", h, len(v), shortest.Round(10*time.Microsecond))
	}
	return last
}

func hostURLs(hosts []string) []string {
	var u []string
	for _, h := range hosts {
		u = append(u, "http://"+h+"/")
	}
	return u
}

// TestFleetThreeProcesses: three processes started at once with the same
// start URLs share one Redis: every host sees its Crawl-delay between any
// two requests (the fleet asks it about once per delay, not three times),
// robots.txt is fetched once per host for the fleet, each page once, and
// every process exits when all is done.
func TestFleetThreeProcesses(t *testing.T) {
	fleetBackends(t, testFleetThreeProcesses)
}

// fleetRedis is the Redis a process test runs the fleet on: the flag and
// URL that name it to examples/distributed, and how to kill it and bring
// it back empty.
type fleetRedis struct {
	flag, url string
	stop      func()
	start     func() error
}

// fleetBackends runs test twice, in parallel: on a redis-server of its
// own (-redis) and on a 3-node Redis Cluster of its own (-redis-cluster),
// with the same assertions: for the crawl whose subject is the fleet
// spread over a Cluster's masters (TestFleetThreeProcesses). The other
// process tests run on one server (fleetOnServer).
func fleetBackends(t *testing.T, test func(t *testing.T, r fleetRedis)) {
	t.Run("single", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t)
		test(t, fleetRedis{"-redis", srv.URL(), srv.Stop, srv.Start})
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		c := redistest.StartCluster(t, 3)
		test(t, fleetRedis{"-redis-cluster", c.URL(), c.Stop, c.Start})
	})
}

// fleetOnServer runs test on a redis-server of its own.
func fleetOnServer(t *testing.T, test func(t *testing.T, r fleetRedis)) {
	srv := redistest.Start(t)
	test(t, fleetRedis{"-redis", srv.URL(), srv.Stop, srv.Start})
}

// testFleetThreeProcesses runs TestFleetThreeProcesses on r.
func testFleetThreeProcesses(t *testing.T, r fleetRedis) {
	const pages, delay = 5, 300 * time.Millisecond
	hosts := []string{"a.example", "b.example", "c.example"}
	sites := map[string]*testutil.Site{}
	for _, h := range hosts {
		sites[h] = testutil.LinkSite("0.3", pages, nil)
	}
	farm := testutil.NewFarm(t, sites)
	rec, front := newRecorder(t, farm)
	args := append([]string{r.flag, r.url, "-connect", front.Listener.Addr().String(),
		"-threads", "2", "-min-delay", "0", "-lease", "3s"}, hostURLs(hosts)...)
	ps := startFleet(t, 3, args...)
	for _, p := range ps {
		if code := p.wait(t, time.Minute); code != 0 {
			t.Fatalf("process %d exited %d", p.cmd.Process.Pid, code)
		}
		lines := strings.Split(strings.TrimSpace(p.stdout.String()), "\n")
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, "done: ") {
			t.Errorf("process %d's last line is %q, want its summary", p.cmd.Process.Pid, last)
		}
	}
	// No process left while the shared frontier still had work: each
	// exited after the fleet's last request was answered.
	lastEnd := rec.checkEndToStart(t, delay)
	for _, p := range ps {
		if p.exited.Before(lastEnd) {
			t.Errorf("process %d exited %v before the fleet's last request ended", p.cmd.Process.Pid, lastEnd.Sub(p.exited))
		}
	}
	for _, h := range hosts {
		if n := len(farm.Pages(h, true)) - len(farm.Pages(h, false)); n != 1 {
			t.Errorf("%s: robots.txt fetched %d times by the fleet, want 1", h, n)
		}
		want := []string{"/"}
		for i := 1; i <= pages; i++ {
			want = append(want, fmt.Sprintf("/p%d", i))
		}
		sort.Strings(want)
		if got := farm.Paths(h); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: pages fetched %v, want each of %v once", h, got, want)
		}
	}
	checkSpacing(t, farm, hosts, delay)
	all, per := fetchedURLs(ps)
	for u, n := range all {
		if n != 1 {
			t.Errorf("%s reported fetched %d times by the fleet", u, n)
		}
	}
	if len(all) != len(hosts)*(pages+1) {
		t.Errorf("the fleet reported %d pages fetched, want %d", len(all), len(hosts)*(pages+1))
	}
	t.Logf("pages fetched per process: %v", per)
}

// TestFleetRedisRestarted kills Redis mid-crawl and brings it back empty
// a second later: no request goes out unspaced (the fleet waits for Redis,
// then holds every host for one lease), no page is lost (each process
// queues again what it knows; a page may be fetched twice), and every
// process finishes.
func TestFleetRedisRestarted(t *testing.T) {
	t.Parallel()
	fleetOnServer(t, testFleetRedisRestarted)
}

func testFleetRedisRestarted(t *testing.T, r fleetRedis) {
	const pages, delay = 4, 300 * time.Millisecond
	hosts := []string{"a.example", "b.example", "c.example"}
	sites := map[string]*testutil.Site{}
	for _, h := range hosts {
		sites[h] = testutil.LinkSite("0.3", pages, nil)
	}
	farm := testutil.NewFarm(t, sites)
	args := append([]string{r.flag, r.url, "-connect", farm.Server.Listener.Addr().String(),
		"-threads", "2", "-min-delay", "0", "-lease", "3s", "-outage", "30s"}, hostURLs(hosts)...)
	ps := startFleet(t, 3, args...)
	waitHits(t, farm, hosts, 5)
	r.stop()
	killed := time.Now()
	time.Sleep(time.Second)
	if err := r.start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Redis killed at %s, back at %s", killed.Format("15:04:05.000000"), time.Now().Format("15:04:05.000000"))
	for _, p := range ps {
		if code := p.wait(t, time.Minute); code != 0 {
			t.Fatalf("process %d exited %d", p.cmd.Process.Pid, code)
		}
	}
	for _, h := range hosts {
		got := map[string]bool{}
		for _, p := range farm.Paths(h) {
			got[p] = true
		}
		for i := 0; i <= pages; i++ {
			p := "/"
			if i > 0 {
				p = fmt.Sprintf("/p%d", i)
			}
			if !got[p] {
				t.Errorf("%s%s was never fetched: lost with Redis", h, p)
			}
		}
	}
	checkSpacing(t, farm, hosts, delay)
	var during int
	for _, h := range hosts {
		for _, x := range farm.Pages(h, true) {
			if x.At.After(killed) && x.At.Before(killed.Add(time.Second)) {
				during++
			}
		}
	}
	all, _ := fetchedURLs(ps)
	dups := 0
	for _, n := range all {
		dups += n - 1
	}
	t.Logf("requests while Redis was away: %d (ones granted before it went); pages fetched twice after the data loss: %d", during, dups)
	// Nothing is granted while Redis is away: what reaches a host then was
	// granted before, at most one request per host (end-to-start).
	if during > len(hosts) {
		t.Errorf("%d requests reached the hosts while Redis was away, want at most one per host (%d)", during, len(hosts))
	}
}

// TestFleetRedisGone kills Redis for good mid-crawl: nothing goes out
// unspaced, and every process stops within its outage limit saying why.
func TestFleetRedisGone(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const delay = 300 * time.Millisecond
	hosts := []string{"a.example", "b.example"}
	sites := map[string]*testutil.Site{}
	for _, h := range hosts {
		sites[h] = testutil.LinkSite("0.3", 8, nil)
	}
	farm := testutil.NewFarm(t, sites)
	args := append([]string{"-redis", srv.URL(), "-connect", farm.Server.Listener.Addr().String(),
		"-threads", "2", "-min-delay", "0", "-lease", "3s", "-outage", "2s"}, hostURLs(hosts)...)
	ps := startFleet(t, 3, args...)
	waitHits(t, farm, hosts, 4)
	srv.Stop()
	for _, p := range ps {
		if code := p.wait(t, 30*time.Second); code != 1 {
			t.Errorf("process %d exited %d, want 1", p.cmd.Process.Pid, code)
		}
		// A process that reached Redis says why it stopped on stdout; one
		// that had not yet started when Redis went (a loaded machine starts
		// processes late) says it on stderr.
		out, errOut := p.stdout.String(), p.stderr.String()
		stopped := strings.Contains(out, "stopped: the crawl cannot go on") && strings.Contains(out, "Redis unreachable")
		notStarted := out == "" && strings.Contains(errOut, "cannot start") && strings.Contains(errOut, "Redis is unavailable")
		if !stopped && !notStarted {
			t.Errorf("process %d did not say why it stopped:\n%s\nstderr:\n%s", p.cmd.Process.Pid, out, errOut)
		}
	}
	checkSpacing(t, farm, hosts, delay)
}

// TestFleetProcessKilled kills the process whose request a host is
// answering (it holds the host): the host is asked again no earlier than
// the delay after that process's lease ends, the request comes back to
// another process, nothing is lost, and the others finish.
func TestFleetProcessKilled(t *testing.T) {
	t.Parallel()
	fleetOnServer(t, testFleetProcessKilled)
}

func testFleetProcessKilled(t *testing.T, r fleetRedis) {
	const pages, delay = 4, 300 * time.Millisecond
	hosts := []string{"a.example", "b.example"}
	arrived := make(chan int, 1)
	release := make(chan struct{})
	var slowOnce sync.Once
	pidRE := regexp.MustCompile(`pid (\d+)`)
	slow := func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/p2" {
			return false
		}
		first := false
		slowOnce.Do(func() { first = true })
		if !first {
			return false
		}
		m := pidRE.FindStringSubmatch(r.Header.Get("User-Agent"))
		pid := -1
		if m != nil {
			pid, _ = strconv.Atoi(m[1])
		}
		arrived <- pid
		select { // the sender is killed meanwhile
		case <-release:
		case <-time.After(20 * time.Second):
		}
		return false
	}
	farm := testutil.NewFarm(t, map[string]*testutil.Site{
		"a.example": testutil.LinkSite("0.3", pages, slow),
		"b.example": testutil.LinkSite("0.3", pages, nil),
	})
	defer close(release)
	const lease = 3 * time.Second // renewed every second; call timeout 1 s
	args := append([]string{r.flag, r.url, "-connect", farm.Server.Listener.Addr().String(),
		"-threads", "2", "-min-delay", "0", "-lease", lease.String()}, hostURLs(hosts)...)
	ps := startFleet(t, 3, args...)
	var pid int
	select {
	case pid = <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("a.example/p2 was never asked")
	}
	var victim *proc
	var rest []*proc
	for _, p := range ps {
		if p.cmd.Process.Pid == pid {
			victim = p
		} else {
			rest = append(rest, p)
		}
	}
	if victim == nil {
		t.Fatalf("no process has pid %d (User-Agent without it?)", pid)
	}
	victim.cmd.Process.Kill()
	<-victim.done
	killed := time.Now()
	for _, p := range rest {
		if code := p.wait(t, time.Minute); code != 0 {
			t.Fatalf("process %d exited %d", p.cmd.Process.Pid, code)
		}
	}
	hits := farm.Pages("a.example", true)
	var p2 []time.Time
	for _, h := range hits {
		if h.Path == "/p2" {
			p2 = append(p2, h.At)
		}
	}
	if len(p2) != 2 {
		t.Fatalf("a.example/p2 asked %d times, want twice (by the killed process, then by another)", len(p2))
	}
	for _, h := range hits {
		if h.At.After(p2[0]) && h.At.Before(killed) {
			t.Errorf("a.example asked (%s) while the killed process held it", h.Path)
		}
	}
	for _, h := range hosts {
		got := farm.Paths(h)
		if len(got) < pages+1 {
			t.Errorf("%s: fetched %v: pages lost", h, got)
		}
	}
	checkSpacing(t, farm, hosts, delay)
	all, _ := fetchedURLs(rest)
	if all["http://a.example/p2"] != 1 {
		t.Errorf("a surviving process reported a.example/p2 fetched %d times, want 1", all["http://a.example/p2"])
	}
	t.Logf("a.example/p2 asked again %v after the kill (lease %v + Crawl-delay %v)", p2[1].Sub(killed).Round(time.Millisecond), lease, delay)
	// The killed process renewed its lease every third of it up to its
	// death, so the lease ended about two thirds of a lease after the kill
	// or later; allowing a renewal a whole third of a lease late on a
	// loaded machine, no earlier than a third of a lease after it. The
	// host is asked again no earlier than the delay after that.
	if after, least := p2[1].Sub(killed), lease/3+delay-jitter; after < least {
		t.Errorf("a.example asked again %v after the kill, before the killed process's lease could end and its Crawl-delay pass (≥ %v)", after, least)
	}
}

// waitHits waits until the farm has seen n requests over hosts.
func waitHits(t testing.TB, farm *testutil.Farm, hosts []string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		total := 0
		for _, h := range hosts {
			total += len(farm.Pages(h, true))
		}
		if total >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the fleet made %d requests in 30 s, want %d", total, n)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
