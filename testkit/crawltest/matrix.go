// Package crawltest is test support for the plugin and the fleet: it
// crawls one small mixed site under every pair of the plugin's features
// and checks, from the servers' own logs, the promises
// that hold whatever the pair: no disallowed URL reaches a server, per-host
// gaps are at least the delay, every request Colly starts ends exactly once
// (fetched; stopped, seen once in OnError and once in WithOnBlocked with
// its request; or a plain HTTP error), the crawl ends, and nothing is left
// in a frontier.
//
// The features are one table, [Features]; [Pairs] generates the pairs from
// it. The fleet's feature lives with the fleet's tests (its own module),
// which append it to the table. Like package testutil, it is imported by
// tests only and is no part of the library's API.
package crawltest

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/extensions"
	"github.com/gocolly/colly/v2/queue"
	"golang.org/x/time/rate"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/testkit/testutil"
)

// Delay is the plugin's default delay in every run: the least gap between
// two requests to one host.
const Delay = 100 * time.Millisecond

// retryAfter is the pause the site's one 429 asks for.
const retryAfter = time.Second

// Config is what the features of a pair set for a run.
type Config struct {
	Async       bool          // colly.Async, with a LimitRule of Parallelism 4
	Parallelism int           // a LimitRule's Parallelism (the least of those set)
	LimitDelay  time.Duration // a LimitRule's Delay
	Queue       string        // "frontier" (AttachFrontier), "colly" (Colly's in-memory storage) or ""
	Sitemaps    bool          // WithSitemaps
	Proxy       bool          // a proxy set with SetProxy after the plugin
	CacheDir    bool          // colly.CacheDir
	MaxRate     bool          // WithMaxRate
	RandomUA    bool          // Colly's extensions.RandomUserAgent
	// Processes is the number of crawler processes sharing the site (0
	// means 1); Options gives each its extra plugin options (the fleet's
	// limiter and store) and what to call when its crawl has ended; it is
	// called once per process.
	Processes int
	Options   func(t testing.TB, process int) (opts []robots.Option, done func())
	// Slack is how much shorter than Delay a gap may be seen: 0 in one
	// process; the fleet's gate runs on Redis's clock.
	Slack time.Duration
}

// A Feature sets its part of a run.
type Feature struct {
	Name  string
	Apply func(*Config)
}

// Features are the plugin's features, a row each.
var Features = []Feature{
	{"sync", func(c *Config) { c.Async = false }},
	{"async", func(c *Config) { c.Async = true; c.Parallelism = minSet(c.Parallelism, 4) }},
	{"queue-frontier", func(c *Config) { c.Queue = "frontier" }},
	{"queue-colly", func(c *Config) { c.Queue = "colly" }},
	{"sitemaps", func(c *Config) { c.Sitemaps = true }},
	{"proxy", func(c *Config) { c.Proxy = true }},
	{"cachedir", func(c *Config) { c.CacheDir = true }},
	{"limitrule", func(c *Config) { c.Parallelism = minSet(c.Parallelism, 2); c.LimitDelay = 50 * time.Millisecond }},
	{"maxrate", func(c *Config) { c.MaxRate = true }},
	{"randomua", func(c *Config) { c.RandomUA = true }},
}

// conflicts are the pairs that are not one configuration.
var conflicts = map[[2]string]string{
	{"sync", "async"}:                 "a collector is sync or Async",
	{"queue-frontier", "queue-colly"}: "a queue has one storage",
	// Colly's queue drives a sync collector: with Async, Run returns as
	// soon as the first Visit does, before the page adds its links, and
	// the queue cannot be Run again (Colly v2.3.0 panics).
	{"async", "queue-frontier"}: "Colly's queue runs a sync collector",
	{"async", "queue-colly"}:    "Colly's queue runs a sync collector",
}

func minSet(a, b int) int {
	if a == 0 {
		return b
	}
	return min(a, b)
}

// A Pair is two features run together.
type Pair struct{ A, B Feature }

// Name is "a+b".
func (p Pair) Name() string { return p.A.Name + "+" + p.B.Name }

// Config applies both features.
func (p Pair) Config() Config {
	var c Config
	p.A.Apply(&c)
	p.B.Apply(&c)
	return c
}

// Pairs returns every pair of fs that is one configuration, in table
// order; with only, the pairs that include the feature named only.
func Pairs(fs []Feature, only string) []Pair {
	var ps []Pair
	for i, a := range fs {
		for _, b := range fs[i+1:] {
			if _, bad := conflicts[[2]string{a.Name, b.Name}]; bad {
				continue
			}
			if only != "" && a.Name != only && b.Name != only {
				continue
			}
			ps = append(ps, Pair{a, b})
		}
	}
	return ps
}

// RunPairs runs the pairs all at once (each mostly waits out its hosts'
// delays and uses little CPU; the gaps checked are lower bounds, which a
// slow machine cannot break), then reports each as a subtest; when t ends,
// no goroutine started since RunPairs may be left. Call it from a test that
// is not parallel.
func RunPairs(t *testing.T, ps []Pair) {
	testutil.CheckGoroutines(t) // after the test's own setup (a Redis server), before the crawls
	problems := make([][]string, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		cfg := p.Config() // here: a feature's Apply need not be safe for concurrent use
		wg.Add(1)
		go func() {
			defer wg.Done()
			problems[i] = Run(t, cfg)
		}()
	}
	wg.Wait()
	for i, p := range ps {
		t.Run(p.Name(), func(t *testing.T) {
			for _, s := range problems[i] {
				t.Error(s)
			}
		})
	}
}

// The site: a.test (robots.txt disallows /private; a redirect into it, a
// 429 once, a 404, a page whose X-Robots-Tag says nofollow, a sitemap) and
// b.test, whose robots.txt answers 503.
const robotsA = "User-agent: *\nDisallow: /private\nSitemap: http://a.test/sitemap.xml\n"

const home = `<html><body>
<a href="/p1">1</a> <a href="/p2">2</a> <a href="/p3">3</a>
<a href="/private/x">private</a> <a href="/go">redirect</a> <a href="/busy">busy</a>
<a href="/missing">missing</a> <a href="/nf">nofollow</a> <a href="http://b.test/">b</a>
</body></html>`

const sitemapXML = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>http://a.test/p1</loc></url>
<url><loc>http://a.test/s1</loc></url>
<url><loc>http://a.test/s2</loc></url>
<url><loc>http://a.test/private/z</loc></url>
</urlset>`

func newSite(t testing.TB) *testutil.Farm {
	var busy atomic.Bool
	return testutil.NewFarm(t, map[string]*testutil.Site{
		"a.test": {Robots: robotsA, Handle: func(w http.ResponseWriter, r *http.Request) bool {
			switch r.URL.Path {
			case "/":
				io.WriteString(w, home)
			case "/go":
				http.Redirect(w, r, "/private/y", http.StatusFound)
			case "/busy":
				if !busy.Swap(true) {
					w.Header().Set("Retry-After", "1")
					http.Error(w, "slow down", http.StatusTooManyRequests)
					return true
				}
				io.WriteString(w, "<html><body>busy</body></html>")
			case "/missing":
				http.NotFound(w, r)
			case "/nf":
				w.Header().Set("X-Robots-Tag", "matrixbot: nofollow")
				io.WriteString(w, `<html><body><a href="/nf/child">child</a></body></html>`)
			case "/sitemap.xml":
				w.Header().Set("Content-Type", "application/xml")
				io.WriteString(w, sitemapXML)
			default:
				return false
			}
			return true
		}},
		"b.test": {RobotsStatus: http.StatusServiceUnavailable},
	})
}

// want is each URL's end in every process that starts it: "fetched",
// "http 404" or the stop's kind. The sitemap's pages are started only
// with WithSitemaps.
var want = map[string]string{
	"http://a.test/":          "fetched",
	"http://a.test/p1":        "fetched",
	"http://a.test/p2":        "fetched",
	"http://a.test/p3":        "fetched",
	"http://a.test/busy":      "fetched", // after its 429 and the host's pause
	"http://a.test/s1":        "fetched",
	"http://a.test/s2":        "fetched",
	"http://a.test/private/x": "disallowed",
	"http://a.test/private/z": "disallowed",
	"http://a.test/go":        "disallowed", // its redirect hop to /private/y
	"http://a.test/missing":   "http 404",
	"http://a.test/nf":        "fetched",
	"http://a.test/nf/child":  "nofollow", // a link of /nf
	"http://b.test/":          "deferred", // robots.txt answers 503
}

// sitemapOnly are the URLs only the sitemap links to.
var sitemapOnly = map[string]bool{"http://a.test/s1": true, "http://a.test/s2": true, "http://a.test/private/z": true}

// Run crawls the site under cfg and returns what broke a promise.
func Run(t testing.TB, cfg Config) []string {
	site := newSite(t)
	procs := max(cfg.Processes, 1)
	recs := make([]*recorder, procs)
	var proxied atomic.Int64
	var wg sync.WaitGroup
	for i := range procs {
		recs[i] = &recorder{id: i, started: map[uint32]string{}, ends: map[uint32][]string{}, reported: map[uint32]int{}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			crawl(t, cfg, site, i, recs[i], &proxied)
		}()
	}
	wg.Wait()
	var problems []string
	ends := map[string]map[string]bool{} // URL → ends seen in any process
	for _, r := range recs {
		problems = append(problems, r.problems...)
		for id, u := range r.started {
			e := r.ends[id]
			switch {
			case len(e) == 0:
				problems = append(problems, fmt.Sprintf("process %d: %s started and never ended (no OnScraped, no OnError)", r.id, u))
			case len(e) > 1:
				problems = append(problems, fmt.Sprintf("process %d: %s ended %d times: %v", r.id, u, len(e), e))
			default:
				if ends[u] == nil {
					ends[u] = map[string]bool{}
				}
				ends[u][e[0]] = true
				if k := strings.TrimPrefix(e[0], "stopped "); k != e[0] && r.reported[id] != 1 {
					problems = append(problems, fmt.Sprintf("process %d: %s stopped (%s) and reported %d times to WithOnBlocked with its request, want once", r.id, u, k, r.reported[id]))
				}
			}
		}
	}
	for u, es := range ends {
		w, ok := want[u]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s was requested: the site has no link to it", u))
			continue
		}
		for e := range es {
			if strings.TrimPrefix(e, "stopped ") != w {
				problems = append(problems, fmt.Sprintf("%s ended %q, want %q", u, e, w))
			}
		}
	}
	for u := range want {
		if ends[u] == nil && (cfg.Sitemaps || !sitemapOnly[u]) {
			problems = append(problems, fmt.Sprintf("%s was never requested", u))
		}
	}
	if n := int64(len(site.Pages("a.test", true)) + len(site.Pages("b.test", true))); cfg.Proxy && n != proxied.Load() {
		problems = append(problems, fmt.Sprintf("the site served %d requests, the proxies set after the plugin passed %d", n, proxied.Load()))
	}
	return append(problems, checkServer(site, cfg)...)
}

// checkServer checks the site's own log: nothing disallowed reached it,
// and every gap between two requests to a host is at least the delay (the
// request after the 429, at least its Retry-After).
func checkServer(site *testutil.Farm, cfg Config) []string {
	var problems []string
	for _, h := range site.Pages("a.test", true) {
		if strings.HasPrefix(h.Path, "/private") || h.Path == "/nf/child" {
			problems = append(problems, "a.test served disallowed "+h.Path)
		}
	}
	for _, h := range site.Pages("b.test", true) {
		if h.Path != "/robots.txt" {
			problems = append(problems, "b.test served "+h.Path+" although its robots.txt answers 503")
		}
	}
	for _, host := range []string{"a.test", "b.test"} {
		hits := site.Pages(host, true)
		sort.Slice(hits, func(i, j int) bool { return hits[i].At.Before(hits[j].At) })
		busy := false
		for i := 1; i < len(hits); i++ {
			least := Delay
			if busy {
				least = retryAfter
			}
			if g := hits[i].At.Sub(hits[i-1].At); g < least-cfg.Slack {
				problems = append(problems, fmt.Sprintf("%s: %v between %s and %s, want at least %v", host, g, hits[i-1].Path, hits[i].Path, least))
			}
			busy = hits[i].Path == "/busy" && !busy && !slices.ContainsFunc(hits[:i], func(h testutil.Hit) bool { return h.Path == "/busy" })
		}
	}
	return problems
}

// recorder is what one process saw.
type recorder struct {
	id       int
	mu       sync.Mutex
	started  map[uint32]string   // request ID → URL
	ends     map[uint32][]string // request ID → its ends
	reported map[uint32]int      // request ID → WithOnBlocked reports with it
	problems []string
}

func (r *recorder) problem(format string, args ...any) {
	r.mu.Lock()
	r.problems = append(r.problems, fmt.Sprintf("process %d: ", r.id)+fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *recorder) start(req *colly.Request) {
	r.mu.Lock()
	r.started[req.ID] = req.URL.String()
	r.mu.Unlock()
}

func (r *recorder) end(req *colly.Request, how string) {
	r.mu.Lock()
	r.ends[req.ID] = append(r.ends[req.ID], how)
	r.mu.Unlock()
}

func (r *recorder) block(b robots.Block) {
	if b.Request == nil {
		r.problem("WithOnBlocked report without its request: %v", b)
		return
	}
	r.mu.Lock()
	r.reported[b.Request.ID]++
	r.mu.Unlock()
}

// crawl is one process's crawl of the site from its home page.
func crawl(t testing.TB, cfg Config, site *testutil.Farm, i int, rec *recorder, proxied *atomic.Int64) {
	tr := site.Transport()
	defer tr.CloseIdleConnections()
	opts := []robots.Option{robots.WithTransport(tr), robots.WithDefaultDelay(Delay), robots.WithDeferWait(0),
		robots.WithAgents("matrixbot"), robots.WithOnBlocked(rec.block), robots.WithLogger(slog.New(slog.DiscardHandler))}
	if cfg.Sitemaps {
		opts = append(opts, robots.WithSitemaps())
	}
	if cfg.MaxRate {
		opts = append(opts, robots.WithMaxRate(rate.Limit(50), 1))
	}
	if cfg.Options != nil {
		more, done := cfg.Options(t, i)
		if done != nil {
			defer done()
		}
		opts = append(opts, more...)
	}
	copts := []colly.CollectorOption{colly.UserAgent("matrixbot/1.0")}
	if cfg.Async {
		copts = append(copts, colly.Async(true))
	}
	c := colly.NewCollector(copts...)
	p, err := robots.Attach(c, opts...)
	if err != nil {
		rec.problem("Attach: %v", err)
		return
	}
	defer p.Close()
	if cfg.Parallelism > 0 || cfg.LimitDelay > 0 {
		if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: cfg.Parallelism, Delay: cfg.LimitDelay}); err != nil {
			rec.problem("Limit: %v", err)
			return
		}
	}
	if cfg.CacheDir {
		c.CacheDir = t.TempDir()
	}
	if cfg.RandomUA {
		extensions.RandomUserAgent(c)
	}
	if cfg.Proxy {
		proxy := testutil.NewForwardProxy(t, tr)
		defer func() { proxied.Add(proxy.Seen.Load()) }()
		if err := c.SetProxy(proxy.URL); err != nil {
			rec.problem("SetProxy: %v", err)
			return
		}
	}
	var q *queue.Queue
	var fr *frontier.Frontier
	switch cfg.Queue {
	case "frontier":
		var ready frontier.Readiness
		if r, ok := p.Limiter().(frontier.Readiness); ok {
			ready = r
		}
		// MaxWait: a host that is not ready (b.test, its robots.txt
		// unreachable) is handed out after 2 delays rather than a second.
		fr = frontier.New(frontier.Config{Ready: ready, MaxWait: 2 * Delay, Logger: slog.New(slog.DiscardHandler)})
		robots.AttachFrontier(c, fr)
		q, _ = queue.New(2, fr)
	case "colly":
		q, _ = queue.New(2, &queue.InMemoryQueueStorage{MaxSize: 10_000})
	}
	c.OnRequest(rec.start) // after the plugin's hook: every request Colly starts
	c.OnScraped(func(r *colly.Response) { rec.end(r.Request, "fetched") })
	c.OnError(func(r *colly.Response, err error) {
		var be *robots.BlockedError
		switch {
		case errors.As(err, &be):
			if be.Block.Request != r.Request {
				rec.problem("%s: the stop's error carries another request", r.Request.URL)
			}
			rec.end(r.Request, "stopped "+be.Block.Kind.String())
		case r.StatusCode != 0:
			rec.end(r.Request, fmt.Sprintf("http %d", r.StatusCode))
		default:
			rec.end(r.Request, "error "+err.Error())
		}
	})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		u := e.Request.AbsoluteURL(e.Attr("href"))
		if q != nil {
			// A link queued with its page's Context and depth, as
			// Request.Visit would make it: a nofollow page's mark goes with it.
			pu, err := url.Parse(u)
			if err != nil {
				rec.problem("%s: %v", u, err)
				return
			}
			q.AddRequest(&colly.Request{URL: pu, Method: http.MethodGet, Depth: e.Request.Depth + 1, Ctx: e.Request.Ctx})
			return
		}
		e.Request.Visit(u)
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		const seed = "http://a.test/"
		if q == nil {
			c.Visit(seed)
			c.Wait()
			return
		}
		q.AddURL(seed)
		q.Run(c)
		c.Wait()
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		rec.problem("the crawl did not end within 2 minutes")
		return
	}
	if fr != nil {
		if st := fr.Stats(); st.Leased != 0 || st.Queued != 0 {
			rec.problem("frontier left with %d leased and %d queued", st.Leased, st.Queued)
		}
	}
}
