package robots_test

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/policy"
)

func ExampleWithRobots() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\nCrawl-delay: 0.1\n")
			return
		}
		fmt.Fprint(w, "<html></html>")
	}))
	defer site.Close()

	c := colly.NewCollector(
		colly.UserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"),
		robots.WithRobots(robots.WithOnBlocked(func(b robots.Block) {
			fmt.Println("stopped:", b.Kind, b.Reason)
		})),
	)
	c.OnResponse(func(r *colly.Response) { fmt.Println("fetched:", r.Request.URL.Path) })
	c.Visit(site.URL + "/public")
	c.Visit(site.URL + "/private/report")
	c.Wait()
	// Output:
	// fetched: /public
	// stopped: disallowed line 2: Disallow: /private
}

func ExampleAttach() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: examplebot\nDisallow: /\n")
			return
		}
		fmt.Fprint(w, "<html></html>")
	}))
	defer site.Close()

	c := colly.NewCollector(colly.UserAgent("ExampleBot/2.0"))
	p, err := robots.Attach(c) // one line for a collector that already exists
	if err != nil {
		fmt.Println(err)
		return
	}
	c.Visit(site.URL + "/page")
	c.Wait()
	for authority, s := range p.Stats() {
		fmt.Println(authority == site.URL, "allowed", s.Allowed, "disallowed", s.Disallowed)
	}
	// Output:
	// true allowed 0 disallowed 1
}

// Keep a handle on the plugin with New and Plugin.Attach to read its
// statistics and to see a configuration error when it is made. Here one test server plays two sites, routed by a custom
// dialer given to WithTransport.
func ExampleNew() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/robots.txt":
			fmt.Fprint(w, "<html></html>")
		case r.Host == "shop.example":
			fmt.Fprint(w, "User-agent: *\nDisallow: /cart\n")
		default:
			http.NotFound(w, r) // blog.example has no robots.txt
		}
	}))
	defer srv.Close()
	toSrv := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return new(net.Dialer).DialContext(ctx, network, srv.Listener.Addr().String())
	}}

	p, err := robots.New(robots.WithTransport(toSrv), robots.WithDefaultDelay(0)) // a local test server: no spacing
	if err != nil {
		fmt.Println(err)
		return
	}
	c := colly.NewCollector(colly.UserAgent("ExampleBot/1.0"))
	if err := p.Attach(c); err != nil {
		fmt.Println(err)
		return
	}
	for _, u := range []string{"http://shop.example/", "http://shop.example/cart", "http://shop.example/cart/1", "http://blog.example/post"} {
		c.Visit(u)
	}
	c.Wait()
	stats := p.Stats()
	for _, a := range slices.Sorted(maps.Keys(stats)) {
		fmt.Printf("%s: allowed %d, disallowed %d\n", a, stats[a].Allowed, stats[a].Disallowed)
	}
	t := p.Totals()
	fmt.Printf("total: allowed %d, disallowed %d\n", t.Allowed, t.Disallowed)
	// Output:
	// http://blog.example: allowed 1, disallowed 0
	// http://shop.example: allowed 1, disallowed 2
	// total: allowed 2, disallowed 2
}

// WithOnBlocked reports every request the plugin stops: those aborted in
// OnRequest, and redirect hops into disallowed paths, which are not followed.
func ExampleWithOnBlocked() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case "/old":
			http.Redirect(w, r, "/private/new", http.StatusMovedPermanently)
		default:
			fmt.Fprint(w, "<html></html>")
		}
	}))
	defer site.Close()
	toSite := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return new(net.Dialer).DialContext(ctx, network, site.Listener.Addr().String())
	}}

	c := colly.NewCollector(robots.WithRobots(robots.WithTransport(toSite), robots.WithOnBlocked(func(b robots.Block) {
		u, _ := url.Parse(b.URL)
		fmt.Printf("%s %s (redirect %v): %s\n", b.Kind, u.Path, b.Redirect, b.Reason)
	})))
	c.Visit("http://site.example/private/report")
	c.Visit("http://site.example/old")
	c.Wait()
	// Output:
	// disallowed /private/report (redirect false): line 2: Disallow: /private
	// disallowed /private/new (redirect true): redirect from http://site.example/old not followed: line 2: Disallow: /private
}

// exampleClock is a clock the examples can move forward.
type exampleClock struct{ skew atomic.Int64 }

func (c *exampleClock) Now() time.Time { return time.Now().Add(time.Duration(c.skew.Load())) }

// While robots.txt is unreachable (here a 503), requests are handed back
// rather than dropped; RetryDeferred submits them again once the crawl is
// idle. robots.txt is asked again only at the retry time (10 minutes after a
// 5xx here; see the Block's Verdict.Policy.Expires): retried earlier, the
// requests are deferred again. This example moves the resolver's clock
// forward instead of waiting.
func ExamplePlugin_RetryDeferred() {
	var robotsFetches atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/robots.txt":
			fmt.Fprint(w, "<html></html>")
		case robotsFetches.Add(1) == 1:
			w.Header().Set("Retry-After", "0") // no pause of the host's gate
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		}
	}))
	defer site.Close()

	clock := &exampleClock{}
	c := colly.NewCollector()
	p, err := robots.Attach(c, robots.WithDeferWait(0), robots.WithPolicy(policy.WithClock(clock)),
		robots.WithDefaultDelay(0)) // a local test server: no spacing needed here
	if err != nil {
		fmt.Println(err)
		return
	}
	c.OnResponse(func(r *colly.Response) { fmt.Println("fetched:", r.Request.URL.Path) })
	c.Visit(site.URL + "/a")
	c.Visit(site.URL + "/b")
	c.Wait()
	fmt.Println("deferred:", p.Totals().Deferred)

	clock.skew.Store(int64(11 * time.Minute)) // in real life: wait, then retry
	fmt.Println("retried:", p.RetryDeferred())
	c.Wait()
	// Output:
	// deferred: 2
	// fetched: /a
	// fetched: /b
	// retried: 2
}

// Deferred hands the requests held back by an unreachable robots.txt to the
// caller, e.g. to queue them for a later run.
func ExamplePlugin_Deferred() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "0")
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	defer site.Close()

	c := colly.NewCollector()
	p, err := robots.Attach(c, robots.WithDeferWait(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	c.Visit(site.URL + "/a")
	c.Visit(site.URL + "/b")
	c.Wait()
	for _, r := range p.Deferred() {
		fmt.Println("later:", r.URL.Path)
	}
	fmt.Println("still kept:", len(p.Deferred()))
	// Output:
	// later: /a
	// later: /b
	// still kept: 0
}

// Two collectors with a plugin each, sharing one per-host limiter: the
// site's Crawl-delay holds across both, as it would across the processes of
// a fleet sharing a limiter on Redis.
func ExampleWithLimiter() {
	var mu sync.Mutex
	var arrivals []time.Time
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.1\n")
			return
		}
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
	}))
	defer site.Close()

	shared := hostlimit.New(hostlimit.Config{})
	a := colly.NewCollector(colly.UserAgent("ExampleBot/1.0"), robots.WithRobots(robots.WithLimiter(shared), robots.WithDefaultDelay(0)))
	b := colly.NewCollector(colly.UserAgent("ExampleBot/1.0"), robots.WithRobots(robots.WithLimiter(shared), robots.WithDefaultDelay(0)))
	var wg sync.WaitGroup
	for i, c := range []*colly.Collector{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Visit(fmt.Sprintf("%s/page%d", site.URL, i))
		}()
	}
	wg.Wait()
	slices.SortFunc(arrivals, func(x, y time.Time) int { return x.Compare(y) })
	spaced := true
	for i := 1; i < len(arrivals); i++ {
		spaced = spaced && arrivals[i].Sub(arrivals[i-1]) >= 100*time.Millisecond
	}
	fmt.Println(len(arrivals), "pages, each at least the Crawl-delay after the previous:", spaced)
	// Output:
	// 4 pages, each at least the Crawl-delay after the previous: true
}

// WithPolicy passes any option of package policy to the plugin's resolver;
// WithDialect and WithAgents are shorthands for it.
func ExampleWithPolicy() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Header().Set("Cache-Control", "max-age=60")
			fmt.Fprint(w, "User-agent: examplebot-news\nDisallow: /drafts\n")
			return
		}
		fmt.Fprint(w, "<html></html>")
	}))
	defer site.Close()

	c := colly.NewCollector()
	p, err := robots.Attach(c, robots.WithPolicy(
		policy.WithAgents("examplebot-news", "examplebot"),
		policy.WithMaxAgeBounds(time.Minute, time.Hour), // honour a max-age down to a minute
	))
	if err != nil {
		fmt.Println(err)
		return
	}
	c.OnResponse(func(r *colly.Response) { fmt.Println("fetched:", r.Request.URL.Path) })
	c.Visit(site.URL + "/drafts/x")
	c.Visit(site.URL + "/news")
	c.Wait()
	u, _ := url.Parse(site.URL)
	pol, _ := p.Resolver().Policy(context.Background(), u)
	fmt.Println("cached for:", pol.Expires().Sub(pol.Fetch().Time))
	// Output:
	// fetched: /news
	// cached for: 1m0s
}
