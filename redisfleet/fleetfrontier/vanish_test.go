package fleetfrontier

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/link"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// A key of the fleet that vanishes anyway (evicted under
// redisfleet.Config.Eviction, deleted) never yields a gap shorter than the
// Crawl-delay, never strands a host and never loses a URL silently. These
// crawls delete one kind of key at a time at the moment it matters and
// check the three promises on the server's side.

// crawlResult is what vanishCrawl saw.
type crawlResult struct {
	farm   *testutil.Farm
	rec    *spanRecorder
	hosts  []string
	pages  int // per host, the root included
	logs   *testutil.Buffer
	stats  []Stats
	failed *failures   // the requests that ended in Colly's OnError
	errs   []error     // by process: what its queue.Run returned
	ended  []time.Time // by process: when its queue.Run returned
	fronts []*Frontier
}

// unfetched returns the keys ("GET " + URL) of the pages the farm never
// served; with known, only those a process could know of: the roots, and
// the pages of each host whose root was fetched (it links them all).
func (res crawlResult) unfetched(known bool) []string {
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
			if !got[p] && (!known || i == 0 || got["/"]) {
				keys = append(keys, "GET http://"+h+p)
			}
		}
	}
	return keys
}

// vanishCrawl crawls hosts × (pages + 1) pages (Crawl-delay delay) with
// two processes (two Fleets, each a Colly queue of threads on the fleet's
// frontier, with the plugin on the fleet's limiter and store); inside the
// page requests numbered in at (1-based, counted at the server) it calls
// vanish with the first process's Fleet and Frontier. It fails t if the
// crawl does not end within 2 minutes (a host stranded).
func vanishCrawl(t *testing.T, srv redistest.Backend, prefix string, hosts, pages, threads int, delay string, at []int, vanish func(f *redisfleet.Fleet, q *Frontier), fopts redisfleet.Config, qopts ...Config) crawlResult {
	t.Helper()
	return runCrawl(t, srv, crawlSpec{prefix: prefix, hosts: hosts, pages: pages, threads: threads, delay: delay, at: at, vanish: vanish, fopts: fopts, qopts: redistest.First(qopts)})
}

// crawlSpec is a crawl of runCrawl: vanishCrawl's arguments, and more.
type crawlSpec struct {
	prefix                string
	procs                 int // processes (Fleets); 0 means 2
	hosts, pages, threads int
	delay                 string // the hosts' Crawl-delay
	at                    []int
	vanish                func(f *redisfleet.Fleet, q *Frontier)
	fopts                 redisfleet.Config
	qopts                 Config
	ropts                 []robots.Option                                      // more plugin options
	popts                 []policy.Option                                      // more policy options (beside the Store)
	serve                 func(w http.ResponseWriter, r *http.Request)         // run before each request is served
	onStart               func(fleets []*redisfleet.Fleet, fronts []*Frontier) // run once every process is set up, before the crawl
}

// runCrawl runs the crawl of spec (see vanishCrawl).
func runCrawl(t *testing.T, srv redistest.Backend, spec crawlSpec) crawlResult {
	t.Helper()
	prefix, hosts, pages, threads, delay, at, vanish, fopts, qopts := spec.prefix, spec.hosts, spec.pages, spec.threads, spec.delay, spec.at, spec.vanish, spec.fopts, spec.qopts
	procs := spec.procs
	if procs == 0 {
		procs = 2
	}
	sites := map[string]*testutil.Site{}
	res := crawlResult{pages: pages + 1, logs: &testutil.Buffer{}, failed: &failures{m: map[string]error{}}}
	for i := range hosts {
		h := fmt.Sprintf("h%d.example", i)
		res.hosts = append(res.hosts, h)
		sites[h] = testutil.LinkSite(delay, pages, nil)
	}
	res.farm = testutil.NewFarm(t, sites)
	var (
		fleets []*redisfleet.Fleet
		fronts []*Frontier
		mu     sync.Mutex
		n      int
	)
	rec := &spanRecorder{farm: res.farm, reqs: map[string][]visit{}}
	res.rec = rec
	trigger := map[int]bool{}
	for _, k := range at {
		trigger[k] = true
	}
	httpSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			mu.Lock()
			n++
			fire := trigger[n]
			mu.Unlock()
			if fire {
				vanish(fleets[0], fronts[0])
			}
		}
		if spec.serve != nil {
			spec.serve(w, r)
		}
		rec.ServeHTTP(w, r)
	}))
	t.Cleanup(httpSrv.Close)
	log := slog.New(slog.NewTextHandler(res.logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var colls []*colly.Collector
	var queues []*queue.Queue
	for range procs {
		fc := fopts
		fc.Prefix, fc.Logger, fc.Lease, fc.CallTimeout = prefix, log, 3*time.Second, time.Second
		qc := qopts
		qc.MaxWait = cmp.Or(qc.MaxWait, 200*time.Millisecond)
		f := newFleet(t, srv, fc)
		q := New(f, qc)
		t.Cleanup(func() { q.Close() })
		c := colly.NewCollector()
		if _, err := robots.Attach(c, append([]robots.Option{
			robots.WithPolicy(append([]policy.Option{policy.WithStore(f.Store())}, spec.popts...)...),
			robots.WithLimiter(f.Limiter(redisfleet.LimiterConfig{})),
			robots.WithTransport(testutil.LoopbackTransport(httpSrv.Listener.Addr().String())),
			robots.WithLogger(log),
		}, spec.ropts...)...); err != nil {
			t.Fatal(err)
		}
		robots.AttachFrontier(c, q)
		c.OnError(func(r *colly.Response, err error) {
			res.failed.mu.Lock()
			res.failed.m["GET "+r.Request.URL.String()] = err
			res.failed.mu.Unlock()
		})
		c.OnHTML("a[href]", func(e *colly.HTMLElement) {
			u := e.Request.AbsoluteURL(e.Attr("href"))
			b, err := (&colly.Request{URL: mustParse(t, u), Method: "GET", Depth: e.Request.Depth + 1, Ctx: colly.NewContext()}).Marshal()
			if err != nil {
				t.Error(err)
				return
			}
			if err := q.AddRequest(b); err != nil && !errors.Is(err, frontier.ErrSeen) {
				t.Errorf("AddRequest %s: %v", u, err)
			}
		})
		qq, err := queue.New(threads, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.hosts {
			if err := qq.AddURL("http://" + h + "/"); err != nil && !errors.Is(err, frontier.ErrSeen) {
				t.Fatal(err)
			}
		}
		fleets, fronts, colls, queues = append(fleets, f), append(fronts, q), append(colls, c), append(queues, qq)
	}
	type ran struct {
		i   int
		err error
		at  time.Time
	}
	if spec.onStart != nil {
		spec.onStart(fleets, fronts)
	}
	done := make(chan ran, len(queues))
	for i, qq := range queues {
		go func() {
			err := qq.Run(colls[i])
			done <- ran{i, err, time.Now()}
		}()
	}
	res.errs, res.ended, res.fronts = make([]error, len(queues)), make([]time.Time, len(queues)), fronts
	limit := time.After(2 * time.Minute)
	for range queues {
		select {
		case r := <-done:
			res.errs[r.i], res.ended[r.i] = r.err, r.at
		case <-limit:
			for i, q := range fronts {
				t.Logf("process %d: %+v", i, q.Stats())
			}
			for p := range fronts[0].parts {
				keys := fronts[0].parts[p].keys
				c, _ := rdbOf(fleets[0]).HGetAll(context.Background(), keys[1]).Result()
				var exist []string
				for k, name := range frontierKinds {
					if n, _ := rdbOf(fleets[0]).Exists(context.Background(), keys[k]).Result(); n == 1 {
						exist = append(exist, name)
					}
				}
				hosts, _ := rdbOf(fleets[0]).ZRangeWithScores(context.Background(), keys[0], 0, -1).Result()
				t.Logf("partition %d: counters %v, keys %v, hosts %v", p, c, exist, hosts)
			}
			t.Fatalf("the crawl did not end within 2 minutes (a host stranded?); logs:\n%s", res.logs)
		}
	}
	for _, q := range fronts {
		res.stats = append(res.stats, q.Stats())
	}
	return res
}

func mustParse(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// check checks the three promises: no gap under delay at any host (the
// server's spans), every page fetched (or, when allowLoss, every page
// missing reported by a "dropped" count in the logs), and reports the
// pages fetched twice. It returns the pages missing and fetched twice.
func (res crawlResult) check(t *testing.T, delay time.Duration) (missing, twice int) {
	t.Helper()
	for i, err := range res.errs {
		if err != nil {
			t.Errorf("process %d: queue.Run: %v", i, err)
		}
	}
	res.rec.checkGaps(t, delay)
	for _, h := range res.hosts {
		got := map[string]int{}
		for _, x := range res.farm.Pages(h, false) {
			got[x.Path]++
		}
		for i := 0; i < res.pages; i++ {
			p := "/"
			if i > 0 {
				p = fmt.Sprintf("/p%d", i)
			}
			switch got[p] {
			case 0:
				missing++
				t.Errorf("%s%s never fetched", h, p)
			case 1:
			default:
				twice += got[p] - 1
			}
		}
	}
	for _, line := range strings.Split(res.logs.String(), "\n") {
		if strings.Contains(line, "lost the frontier's data") {
			t.Log(line)
		}
	}
	t.Logf("%d pages missing, %d fetched again; stats %+v", missing, twice, res.stats)
	return missing, twice
}

// TestFrontierKeyVanishes: a crawl of 4 hosts × 7 pages (Crawl-delay
// 0.2) by two processes, during which one kind of key is deleted in every
// partition, three times (inside the 5th, 12th and 19th page request: a
// lease is out then). Every page is fetched, no host sees a gap under the
// delay, and both queue.Runs return. Pages fetched twice are counted in
// the log (a seen set that vanished lets a page be queued again; a
// partition emptied for its consistency queues again the journals).
func TestFrontierKeyVanishes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const delay = 200 * time.Millisecond
	kinds := append(append([]string{}, frontierKinds...), "limiter")
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		for i, kind := range kinds {
			t.Run(kind, func(t *testing.T) {
				t.Parallel()
				res := vanishCrawl(t, srv, fmt.Sprintf("frvanish%d:", i), 4, 6, 2, "0.2", []int{5, 12, 19}, func(f *redisfleet.Fleet, q *Frontier) {
					var keys []string
					if kind == "limiter" {
						for h := range 4 {
							host := fmt.Sprintf("http://h%d.example", h)
							keys = append(keys, keysOf(f).Key("host", host), keysOf(f).Key("hold", host), keysOf(f).PartKey(link.Of(f).Part(host), "pace"))
						}
					} else {
						k := slices.Index(frontierKinds, kind)
						for p := range q.parts {
							keys = append(keys, q.parts[p].keys[k])
						}
					}
					rdb := rdbOf(f)
					for _, k := range keys {
						if err := rdb.Del(context.Background(), k).Err(); err != nil {
							t.Errorf("DEL %s: %v", k, err)
						}
					}
				}, redisfleet.Config{})
				res.check(t, delay)
			})
		}
	})
}

// spanRecorder serves a farm and records every request's span per host
// (from the handler's start to the response flushed).
type spanRecorder struct {
	farm   *testutil.Farm
	mu     sync.Mutex
	reqs   map[string][]visit
	robots map[string][]visit // the robots.txt requests alone
}

func (rec *spanRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec.farm.ServeHTTP(w, r)
	w.(http.Flusher).Flush()
	end := time.Now()
	host, _, _ := strings.Cut(r.Host, ":")
	rec.mu.Lock()
	rec.reqs[host] = append(rec.reqs[host], visit{start: start, end: end})
	if r.URL.Path == "/robots.txt" {
		if rec.robots == nil {
			rec.robots = map[string][]visit{}
		}
		rec.robots[host] = append(rec.robots[host], visit{start: start, end: end})
	}
	rec.mu.Unlock()
}

// checkGaps fails t if two requests of a host (robots.txt included)
// overlapped at the server or one started less than delay after the
// previous one ended.
func (rec *spanRecorder) checkGaps(t *testing.T, delay time.Duration) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for h, v := range rec.reqs {
		v = append([]visit(nil), v...)
		sort.Slice(v, func(i, j int) bool { return v[i].start.Before(v[j].start) })
		if g := minGap(v); len(v) > 1 && g < delay-jitterE2S {
			t.Errorf("%s: a request started %v after the previous one ended, under the Crawl-delay %v", h, g, delay)
		}
	}
}

// TestFleetEviction: a Redis with allkeys-lru whose maxmemory is set,
// at the crawl's 100th page, to the memory it uses then, so that the
// fleet's keys are evicted as the crawl's memory goes up and down
// (Config.Eviction). Two processes
// (8 threads each) crawl 20 hosts × 151 pages (Crawl-delay 0.01). No host
// ever sees a gap under the delay, and the crawl ends within the bound,
// one of two ways: every page fetched (pages fetched twice are logged),
// or, when Redis keeps evicting what the journals queue again (a cascade:
// each recovery evicts another partition's keys), each process that did
// not finish ends, no earlier than the outage limit (10 s here) after
// maxmemory was set, with the error naming the loss (or, where a node
// found nothing more to evict and refused writes with OOM for the outage
// limit, that) and counting the requests not crawled; and every page missing is one of those counted
// (in the journal of a process that reported the loss): none is lost
// silently.
func TestFleetEviction(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short")
	}
	const outage = 10 * time.Second
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		res, _, setAt := evictionCrawl(t, srv, Config{OutageLimit: outage})
		res.rec.checkGaps(t, 10*time.Millisecond)
		failed := lossReported(t, res.errs, "lost the frontier's keys", "Redis has refused writes")
		if failed == 0 {
			res.check(t, 10*time.Millisecond)
			return
		}
		for i, err := range res.errs {
			if err != nil && res.ended[i].Sub(setAt) < outage {
				t.Errorf("process %d ended %v after maxmemory was set, before the outage limit %v: %v", i, res.ended[i].Sub(setAt).Round(time.Millisecond), outage, err)
			}
		}
		missing := res.unfetched(false)
		lost := res.uncounted(missing, 5*time.Second)
		for _, k := range lost {
			t.Errorf("%s never fetched, and not among the requests a process reported not crawled: lost silently", k)
		}
		t.Logf("the loss was reported by %d of 2 processes; %d pages missing, %d of them not counted; stats %+v", failed, len(missing), len(lost), res.stats)
	})
}

// failures are the requests that ended in Colly's OnError, by key ("GET "
// + URL): the latest error of each. Threads may still add to it after
// queue.Run returned.
type failures struct {
	mu sync.Mutex
	m  map[string]error
}

// get returns the error of the request of key, or nil.
func (f *failures) get(key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[key]
}

// uncounted returns the keys of requests not counted (see counted),
// asking again every 100 ms for at most d while some are not: a process
// whose queue.Run returned may still have threads at work, and a request
// it keeps is out of its records while a write of it is in flight (a call
// timeout at most).
func (res crawlResult) uncounted(keys []string, d time.Duration) []string {
	for end := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		var out []string
		for _, k := range keys {
			if !res.counted(k) {
				out = append(out, k)
			}
		}
		if len(out) == 0 || time.Now().After(end) {
			return out
		}
	}
}

// counted reports whether the request of key is among those a process
// that ended with an error reported not crawled (its journal and the
// requests it kept to write).
func (res crawlResult) counted(key string) bool {
	for i, q := range res.fronts {
		if res.errs[i] == nil {
			continue
		}
		q.mu.Lock()
		_, ok := q.st.journal[key]
		for _, it := range q.st.pendingAdd {
			ok = ok || it.key == key
		}
		q.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// TestFrontierLossStorm: a Redis that keeps losing the frontier's keys
// (here every partition's queue is deleted every 50 ms, as an evicting
// Redis whose maxmemory cannot hold the queue evicts what the journals
// queue again) ends the crawl with an error from each process, after the
// outage limit (2 s here), naming the loss and the requests it knew not
// crawled: the crawl does not spin for ever, the loss is reported, and no
// host sees a gap under the delay meanwhile.
func TestFrontierLossStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	srv := redistest.Start(t)
	stop := make(chan struct{})
	var once sync.Once
	res := vanishCrawl(t, srv, "storm:", 6, 12, 2, "0.2", []int{3}, func(f *redisfleet.Fleet, q *Frontier) {
		once.Do(func() {
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
					}
					for p := range q.parts {
						rdbOf(f).Del(context.Background(), q.parts[p].keys[8])
					}
				}
			}()
		})
	}, redisfleet.Config{}, Config{OutageLimit: 2 * time.Second})
	close(stop)
	res.rec.checkGaps(t, 200*time.Millisecond)
	failed := lossReported(t, res.errs)
	if failed == 0 {
		t.Fatal("both processes finished a crawl whose queue was deleted every 50 ms")
	}
}

// evictionCrawl runs the crawl of TestFleetEviction on srv (a
// redis-server or a Cluster: every node) with maxmemory-policy
// allkeys-lru and maxmemory set, at the 100th page, to the memory then in
// use; it returns the crawl, the number of keys evicted and when
// maxmemory was set, and fails t if no key was evicted.
func evictionCrawl(t *testing.T, srv redistest.Backend, qopts ...Config) (crawlResult, int64, time.Time) {
	var nodes []string
	switch s := srv.(type) {
	case *redistest.Cluster:
		nodes = s.Addrs()
	case *redistest.Server:
		nodes = []string{s.Addr}
	}
	for _, n := range nodes {
		if _, err := redistest.Do(n, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru"); err != nil {
			t.Fatal(err)
		}
	}
	var (
		limits []int64
		setAt  time.Time
	)
	res := vanishCrawl(t, srv, "evict:", 20, 150, 8, "0.01", []int{100}, func(*redisfleet.Fleet, *Frontier) {
		setAt = time.Now() // before the first node's: no key is lost earlier
		for _, n := range nodes {
			used := infoField(t, n, "memory", "used_memory")
			if used <= 0 {
				continue
			}
			if _, err := redistest.Do(n, "CONFIG", "SET", "maxmemory", strconv.FormatInt(used, 10)); err != nil {
				t.Error(err)
			}
			limits = append(limits, used)
		}
	}, redisfleet.Config{Eviction: true}, qopts...)
	var evicted int64
	for _, n := range nodes {
		evicted += max(infoField(t, n, "stats", "evicted_keys"), 0)
	}
	t.Logf("maxmemory %v B, %d keys evicted", limits, evicted)
	if evicted <= 0 {
		t.Fatalf("no key evicted (%d): the test tests nothing", evicted)
	}
	return res, evicted, setAt
}

// infoField returns the integer field of INFO section at the Redis at
// addr, or -1 after failing t (Errorf: it may run in a server's
// handler) if it cannot be read.
func infoField(t *testing.T, addr, section, field string) int64 {
	t.Helper()
	info, err := redistest.Do(addr, "INFO", section)
	if err != nil {
		t.Errorf("INFO %s at %s: %v", section, addr, err)
		return -1
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Errorf("INFO %s at %s: %s: %v", section, addr, line, err)
				return -1
			}
			return n
		}
	}
	t.Errorf("INFO %s at %s has no %s", section, addr, field)
	return -1
}

// lossReported counts the processes that ended with an error, and fails t
// unless each such error reports one of causes (by default the
// frontier's loss: "lost the frontier's keys") and the requests the
// process knew not crawled.
func lossReported(t *testing.T, errs []error, causes ...string) int {
	t.Helper()
	if len(causes) == 0 {
		causes = []string{"lost the frontier's keys"}
	}
	failed := 0
	for i, err := range errs {
		if err == nil {
			continue
		}
		failed++
		t.Logf("process %d: %v", i, err)
		named := slices.ContainsFunc(causes, func(c string) bool { return strings.Contains(err.Error(), c) })
		if !named || !strings.Contains(err.Error(), "requests known to this process not crawled") {
			t.Errorf("process %d ended with %v, not the loss reported", i, err)
		}
	}
	return failed
}
