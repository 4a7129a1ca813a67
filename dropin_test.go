package robots

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/sitemap"
	"github.com/politecrawl/robots/testkit/testutil"
)

// proxyFarm is a site with a Crawl-delay, a disallowed path and a redirect
// into it: what the plugin must keep enforcing whatever the transport.
func proxyFarm(t *testing.T) *testutil.Farm {
	return testutil.NewFarm(t, map[string]*testutil.Site{"px.test": {
		Robots: "User-agent: *\nDisallow: /private\nCrawl-delay: 0.05\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/old" {
				http.Redirect(w, r, "/private/moved", http.StatusFound)
				return true
			}
			return false
		},
	}})
}

// crawlThroughProxy visits the site and checks the plugin's guarantees:
// the disallowed page and the redirect into it never reach the site, pages
// are spaced by the Crawl-delay, and everything went through the proxy.
func crawlThroughProxy(t *testing.T, c *colly.Collector, f *testutil.Farm, px *testutil.ForwardProxy) {
	t.Helper()
	for _, path := range []string{"/a", "/private/x", "/b", "/old", "/c"} {
		c.Visit("http://px.test" + path)
	}
	c.Wait()
	if got := strings.Join(f.Paths("px.test"), " "); got != "/a /b /c /old" {
		t.Errorf("site saw %q, want /a /b /c /old (nothing under /private)", got)
	}
	if g := testutil.MinGap(f.Pages("px.test", true)); g < 50*time.Millisecond {
		t.Errorf("gap %s below the Crawl-delay", g)
	}
	if n := px.Seen.Load(); n != int64(len(f.Pages("px.test", true))) {
		t.Errorf("the proxy saw %d requests, the site %d: the proxy was bypassed", n, len(f.Pages("px.test", true)))
	}
}

// Every ordering of the plugin and Colly's proxy and transport calls keeps
// the user's proxy in use and every guarantee of the plugin.
func TestProxyInEveryOrder(t *testing.T) {
	orders := []struct {
		name string
		run  func(t *testing.T, c *colly.Collector, px *testutil.ForwardProxy, opts ...Option)
		warn string // a warning the plugin must log, if any
	}{
		{"SetProxyFunc then Attach", func(t *testing.T, c *colly.Collector, px *testutil.ForwardProxy, opts ...Option) {
			c.SetProxyFunc(http.ProxyURL(px.ProxyURL()))
			mustAttach(t, c, opts...)
		}, ""},
		{"SetProxy then Attach", func(t *testing.T, c *colly.Collector, px *testutil.ForwardProxy, opts ...Option) {
			_ = c.SetProxy(px.URL)
			mustAttach(t, c, opts...)
		}, ""},
		{"Attach then SetProxyFunc", func(t *testing.T, c *colly.Collector, px *testutil.ForwardProxy, opts ...Option) {
			mustAttach(t, c, opts...)
			c.SetProxyFunc(http.ProxyURL(px.ProxyURL()))
		}, "transport was replaced after Attach"},
		{"Attach then SetProxy", func(t *testing.T, c *colly.Collector, px *testutil.ForwardProxy, opts ...Option) {
			mustAttach(t, c, opts...)
			_ = c.SetProxy(px.URL)
		}, "transport was replaced after Attach"},
		{"Attach then WithTransport", func(t *testing.T, c *colly.Collector, px *testutil.ForwardProxy, opts ...Option) {
			mustAttach(t, c, opts...)
			c.WithTransport(&http.Transport{Proxy: http.ProxyURL(px.ProxyURL())})
		}, "transport was replaced after Attach"},
		{"Attach then SetClient", func(t *testing.T, c *colly.Collector, px *testutil.ForwardProxy, opts ...Option) {
			mustAttach(t, c, opts...)
			c.SetClient(&http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(px.ProxyURL())}})
		}, "transport was replaced after Attach"},
		{"WithTransport option", func(t *testing.T, c *colly.Collector, px *testutil.ForwardProxy, opts ...Option) {
			mustAttach(t, c, append(opts, WithTransport(&http.Transport{Proxy: http.ProxyURL(px.ProxyURL())}))...)
		}, ""},
	}
	for _, o := range orders {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/async=%v", o.name, async), func(t *testing.T) {
				t.Parallel()
				f := proxyFarm(t)
				tr := f.Transport()
				t.Cleanup(tr.CloseIdleConnections)
				px := testutil.NewForwardProxy(t, tr)
				var logs testutil.Buffer
				c := newCollector(async)
				o.run(t, c, px, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithDefaultDelay(0))
				crawlThroughProxy(t, c, f, px)
				if o.warn != "" && strings.Count(logs.String(), o.warn) != 1 {
					t.Errorf("log %q: want one warning %q", logs.String(), o.warn)
				}
			})
		}
	}
}

// A second plugin never doubles the work: robots.Attach on a collector that
// has one returns it, the same plugin attached twice registers nothing
// more, and another plugin's Attach leaves the collector to the first.
func TestOnePluginPerCollector(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{"two.test": {Robots: "User-agent: *\nCrawl-delay: 0.05\n"}})
	var logs testutil.Buffer
	first := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	c := newCollector(false, first.opt(t))
	if p, err := Attach(c); p != first || err != nil {
		t.Fatalf("Attach on a collector with a plugin: %p, %v; want the first, no error", p, err)
	}
	if p, err := Attach(c, WithMinDelay(time.Second)); p != first || err == nil {
		t.Fatalf("Attach with options on a collector with a plugin: %p, %v; want the first and an error (the options cannot act)", p, err)
	}
	if err := first.Attach(c); err != nil {
		t.Fatalf("attaching the same plugin again: %v", err)
	}
	other := mustNew(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err := other.Attach(c); err == nil || !strings.Contains(err.Error(), "another robots plugin") {
		t.Fatalf("another plugin's Attach: %v; want an error", err)
	}
	var requests atomic.Int64
	c.OnRequest(func(*colly.Request) { requests.Add(1) })
	for i := range 3 {
		c.Visit(fmt.Sprintf("http://two.test/%d", i))
	}
	c.Wait()
	if n := len(f.Pages("two.test", true)); n != 4 {
		t.Errorf("site saw %d requests, want robots.txt once and 3 pages", n)
	}
	if s := first.Totals(); s.Allowed != 3 {
		t.Errorf("first plugin allowed %d, want 3 (its hook ran once per request)", s.Allowed)
	}
	if other.Resolver() != nil || other.Totals().Allowed != 0 {
		t.Error("the second plugin did work")
	}
}

// Polite by default: a host whose policy gives no Crawl-delay (and every
// host under google, which reads none) is spaced by the default delay;
// WithMinDelay stays a floor; 0 turns the default off.
func TestDefaultDelay(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{
		"plain.test":  {Robots: "User-agent: *\nDisallow: /private\n"},
		"slow.test":   {Robots: "User-agent: *\nCrawl-delay: 0.3\n"},
		"google.test": {Robots: "User-agent: *\nCrawl-delay: 5\n"},
	})
	cases := []struct {
		name string
		opts []Option
		host string
		want time.Duration
	}{
		{"no Crawl-delay: the default", nil, "plain.test", defaultDelay},
		{"a Crawl-delay wins over the default", nil, "slow.test", 300 * time.Millisecond},
		{"google reads no Crawl-delay: the default", []Option{WithDialect(dialect.Google)}, "google.test", defaultDelay},
		{"WithDefaultDelay", []Option{WithDefaultDelay(150 * time.Millisecond)}, "plain.test", 150 * time.Millisecond},
		{"WithMinDelay is a floor under the default", []Option{WithDefaultDelay(150 * time.Millisecond), WithMinDelay(400 * time.Millisecond)}, "plain.test", 400 * time.Millisecond},
		{"0 turns it off", []Option{WithDefaultDelay(0)}, "plain.test", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mustNew(t, append([]Option{WithTransport(f.Transport()), fakeLimiter(t)}, tc.opts...)...)
			c := newCollector(false, p.opt(t))
			if err := c.Visit("http://" + tc.host + "/a"); err != nil {
				t.Fatal(err)
			}
			if got := p.Limiter().(interface{ Delay(string) time.Duration }).Delay("http://" + tc.host); got != tc.want {
				t.Errorf("delay %s, want %s", got, tc.want)
			}
		})
	}
	// And the server sees it: two pages of a host without Crawl-delay.
	p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(150*time.Millisecond))
	c := newCollector(true, p.opt(t))
	c.Visit("http://plain.test/1")
	c.Visit("http://plain.test/2")
	c.Wait()
	if g := testutil.MinGap(f.Pages("plain.test", true)[len(f.Pages("plain.test", true))-2:]); g < 150*time.Millisecond {
		t.Errorf("pages %s apart, want the default delay", g)
	}
}

// Out-of-range option values make New fail, naming each; WithRobots then
// fails closed: every request is stopped and reported with the error.
func TestOptionErrors(t *testing.T) {
	_, err := New(WithStatsCapacity(-1), WithMinDelay(-time.Second), WithDefaultDelay(-1),
		WithDeferWait(-time.Second), WithMaxCrawlDelay(0, OverDelay(9)), WithMaxRate(0, 1), WithLimiter(nil),
		WithTransport(nil), WithDialect(nil), WithSitemaps(SitemapURLs("ftp://x.test/s.xml"), SitemapWalk(sitemap.Config{Spool: true, UserAgent: "x"})),
		WithPolicy(policy.WithTTL(-1)), WithPolicy(policy.WithCapacity(-2), policy.WithMaxAgeBounds(-1, 0)))
	if err == nil {
		t.Fatal("New accepted every bad value")
	}
	for _, want := range []string{"WithStatsCapacity(-1)", "WithMinDelay(-1s)", "WithDefaultDelay(-1ns)", "WithDeferWait(-1s)",
		"WithMaxCrawlDelay(0s, OverDelay(9))", "WithMaxRate(0, 1)", "WithLimiter(nil)", "WithTransport(nil)", "WithDialect(nil)",
		`SitemapURLs("ftp://x.test/s.xml")`, "SitemapWalk: the plugin sets UserAgent, Spool itself",
		"robots: WithPolicy: policy: WithTTL(-1ns)", "policy: WithCapacity(-2)", "policy: WithMaxAgeBounds(-1ns, 0s)"} {
		if strings.Count(err.Error(), want) != 1 {
			t.Errorf("error does not name %q once: %v", want, err)
		}
	}
	if _, err := Attach(colly.NewCollector(), WithMinDelay(-1)); err == nil {
		t.Error("Attach accepted a negative delay")
	}
	// The resolver is made at the first request; its options are New's
	// errors all the same.
	for _, tc := range []struct {
		opt  Option
		want string // "" for valid values
	}{
		{WithPolicy(policy.WithTTL(-1)), "robots: WithPolicy: policy: WithTTL(-1ns): cannot be negative"},
		{WithPolicy(policy.WithTimeout(-time.Second)), "robots: WithPolicy: policy: WithTimeout(-1s): a timeout cannot be negative"},
		{WithPolicy(policy.WithStoreTimeout(-1)), "robots: WithPolicy: policy: WithStoreTimeout(-1ns): cannot be negative"},
		{WithPolicy(policy.WithCacheBytes(-1)), "robots: WithPolicy: policy: WithCacheBytes(-1): cannot be negative"},
		{WithPolicy(policy.WithTTL(0), policy.WithCapacity(0), policy.WithAgents("ExampleBot/1.0")), ""},
	} {
		p, err := New(tc.opt)
		if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && (got != tc.want || p != nil) {
			t.Errorf("New: %v (a plugin: %t); want %q", err, p != nil, tc.want)
		}
		if _, err := Attach(colly.NewCollector(), tc.opt); (err == nil) != (tc.want == "") {
			t.Errorf("Attach: %v, want %q", err, tc.want)
		}
	}

	f := testutil.NewFarm(t, map[string]*testutil.Site{"bad.test": {Robots: "User-agent: *\nAllow: /\n"}})
	var logs testutil.Buffer
	var blocks blockLog
	c := newCollector(false, WithRobots(WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithOnBlocked(blocks.add),
		WithTransport(f.Transport()), WithMinDelay(-1)))
	var stopped error
	c.OnError(func(_ *colly.Response, err error) { stopped = err })
	if err := c.Visit("http://bad.test/a"); !errors.Is(err, ErrBlocked) || !errors.Is(stopped, ErrBlocked) {
		t.Fatalf("a request under an invalid configuration: Visit %v, OnError %v; want a stop", err, stopped)
	}
	if n := len(f.Pages("bad.test", true)); n != 0 {
		t.Errorf("the site saw %d requests under an invalid configuration", n)
	}
	if b := blocks.all(); len(b) != 1 || b[0].Kind != Canceled || !strings.Contains(b[0].Reason, "WithMinDelay(-1ns)") {
		t.Errorf("reports %+v; want one Canceled naming the option", b)
	}
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "WithMinDelay(-1ns)") {
		t.Errorf("log %q: want the error at Error level", logs.String())
	}
}

// The resolver made at the first request cannot fail (New checked its
// options); if it did, the error is logged and the plugin's own defaults
// are used, without a panic.
func TestResolverOptionsFallback(t *testing.T) {
	var logs testutil.Buffer
	p := mustNew(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	p.cfg.policy = append(p.cfg.policy, policy.WithTTL(-1)) // past New's check
	r := p.resolver()
	if r == nil || p.Resolver() != r {
		t.Fatal("no resolver")
	}
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "WithTTL(-1ns)") {
		t.Errorf("log %q: want the error at Error level", logs.String())
	}
}

// The crawler's name is fixed once, from the collector's User-Agent: a
// request carrying another (extensions.RandomUserAgent) changes nothing.
func TestCrawlerNameFixedOnce(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{"name.test": {Robots: "User-agent: examplebot\nDisallow: /\n"}})
	p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0))
	c := colly.NewCollector(colly.UserAgent("ExampleBot/1.0"), p.opt(t))
	c.OnRequest(func(r *colly.Request) {
		r.Headers.Set("User-Agent", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Firefox/120.0")
	})
	if err := c.Visit("http://name.test/page"); !errors.Is(err, ErrBlocked) {
		t.Errorf("Visit = %v, want the examplebot group to stop it", err)
	}
	if got := p.Resolver().Agents(); len(got) != 1 || got[0] != "ExampleBot" {
		t.Errorf("agents %q, want [ExampleBot]", got)
	}
}

// Responses Colly serves from its disk cache wait for no turn: a re-run of
// a crawl from the cache sends nothing and waits for nothing.
func TestCollyCacheHitsWaitForNothing(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{"cache.test": {Robots: "User-agent: *\nCrawl-delay: 1\n"}})
	dir := t.TempDir()
	crawl := func() *Plugin {
		p := mustNew(t, WithTransport(f.Transport()), fakeLimiter(t))
		c := newCollector(false, colly.CacheDir(dir), p.opt(t))
		c.AllowURLRevisit = false
		for i := range 3 {
			if err := c.Visit(fmt.Sprintf("http://cache.test/%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	crawl() // fills the cache, 1 s apart on the limiter's clock
	pages := len(f.Pages("cache.test", false))
	p := crawl()
	if n := len(f.Pages("cache.test", false)); n != pages {
		t.Errorf("the re-run sent %d page requests, want none", n-pages)
	}
	if s := p.Totals(); s.Allowed != 3 || s.Waited != 0 {
		t.Errorf("re-run: %+v, want 3 allowed and no wait", s)
	}
}

// Close releases the idle connections the plugin's transport keeps, and
// their goroutines (counted while the sites are still up, so that nothing
// else closes the connections).
func TestCloseReleasesConnections(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{"c1.test": {}, "c2.test": {}})
	p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0))
	c := newCollector(true, p.opt(t))
	before := runtime.NumGoroutine()
	for _, h := range []string{"c1.test", "c2.test"} {
		for i := range 3 {
			c.Visit(fmt.Sprintf("http://%s/%d", h, i))
		}
	}
	c.Wait()
	if n := runtime.NumGoroutine(); n <= before {
		t.Fatalf("%d goroutines after the crawl, %d before: no idle connection to release?", n, before)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// The connections' goroutines end soon after, or never.
	testutil.WaitUntil(t, func() bool { return runtime.NumGoroutine() <= before })
}

// A host that answers 429 with a pause longer than WithDeferWait hands its
// requests back as Deferred at once, kept for RetryDeferred, instead of
// holding a sync collector for the whole pause per page.
func TestLongPauseDefersRequests(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{"busy.test": {
		Robots: "User-agent: *\nAllow: /\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		},
	}})
	var blocks blockLog
	p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0), WithDeferWait(time.Second), WithOnBlocked(blocks.add), WithRetries(0))
	c := newCollector(false, p.opt(t))
	start := time.Now()
	for i := range 4 {
		err := c.Visit(fmt.Sprintf("http://busy.test/%d", i))
		if i > 0 && !errors.Is(err, ErrBlocked) {
			t.Errorf("page %d: Visit = %v, want it deferred", i, err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the crawl took %s: the pause was waited out", d)
	}
	if n := len(f.Pages("busy.test", false)); n != 1 {
		t.Errorf("site saw %d pages, want only the first (then paused)", n)
	}
	bs := blocks.all()
	if len(bs) != 3 || bs[0].Kind != Deferred || !strings.Contains(bs[0].Reason, "paused until") {
		t.Fatalf("blocks %v, want 3 deferred", bs)
	}
	until, ok := p.DeferredUntil()
	if !ok || until.Before(start.Add(9*time.Minute)) || len(p.Deferred()) != 3 {
		t.Errorf("DeferredUntil %s, %v: want the pause's end (10 min, the Retry-After cap), 3 kept", until, ok)
	}
}

// WithMaxRate caps the crawl over all hosts (pages and robots.txt alike),
// and each host's own spacing still holds under it.
func TestMaxRate(t *testing.T) {
	t.Parallel() // real time: the rate's token bucket runs on the wall clock
	sites := map[string]*testutil.Site{"slow.test": {Robots: "User-agent: *\nCrawl-delay: 0.3\n"}}
	for _, h := range []string{"a.test", "b.test", "c.test"} {
		sites[h] = &testutil.Site{}
	}
	f := testutil.NewFarm(t, sites)
	p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0), WithMaxRate(10, 1))
	c := newCollector(true, p.opt(t))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	for h := range sites {
		for i := range 3 {
			c.Visit(fmt.Sprintf("http://%s/%d", h, i))
		}
	}
	c.Wait()
	var all []testutil.Hit
	for h := range sites {
		all = append(all, f.Pages(h, true)...)
	}
	slices.SortFunc(all, func(a, b testutil.Hit) int { return a.At.Compare(b.At) })
	if len(all) != 16 {
		t.Fatalf("%d requests, want 12 pages and 4 robots.txt", len(all))
	}
	// 16 requests at 10 per second with a burst of 1: 15 intervals of
	// 100 ms between their scheduled times (the token bucket books times,
	// so allow the send of the first to be late by up to 50 ms).
	if span := all[len(all)-1].At.Sub(all[0].At); span < 1450*time.Millisecond {
		t.Errorf("16 requests in %s: the cap of 10/s did not hold", span)
	}
	if g := testutil.MinGap(f.Pages("slow.test", true)); g < 300*time.Millisecond {
		t.Errorf("slow.test gap %s under its Crawl-delay", g)
	}
}
