package robots

// End-to-end tests, one per Colly feature a crawler is likely to combine with
// the plugin: each crawls local sites that log what they receive, and checks
// that the plugin's guarantees hold with the feature in use (checkPolite:
// nothing disallowed reaches a site; the gaps a site sees are at least its
// Crawl-delay; every stopped request is reported once through WithOnBlocked
// and reaches OnError wrapping ErrBlocked; nothing is lost: every request
// Colly made was fetched or reported) and that the feature itself still
// works.

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
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

	"github.com/politecrawl/robots/testkit/testutil"
)

// TestFeatureAsyncParallelism: an Async collector with a LimitRule of
// Parallelism 4 over 4 hosts, three with Crawl-delay 0.2. Every guarantee
// holds; the LimitRule still holds (never more than 4 pages in flight at the
// sites, and more than one at a time); the delayed hosts proceed side by
// side: their crawls overlap and the whole takes well under the sum of
// their crawl-delays.
func TestFeatureAsyncParallelism(t *testing.T) {
	testutil.CheckGoroutines(t)
	const (
		delay = 200 * time.Millisecond
		pages = 10
	)
	rules := map[string]hostRules{
		"p1.test": {delay, []string{"/private"}},
		"p2.test": {delay, []string{"/private"}},
		"p3.test": {delay, []string{"/private"}},
		"p4.test": {0, []string{"/private"}},
	}
	var inFlight, most atomic.Int64
	f := rulesFarm(t, rules, func(w http.ResponseWriter, r *http.Request) bool {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(20 * time.Millisecond) // the site's service time: requests to the four hosts overlap
		inFlight.Add(-1)
		return false
	})
	var blocks blockLog
	c := colly.NewCollector(colly.UserAgent(featureUA), colly.Async(true),
		WithRobots(WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add)))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
		t.Fatal(err)
	}
	rec := newCrawlRecord()
	rec.watch(c)
	var want []string
	start := time.Now()
	for i := range pages {
		for _, h := range []string{"p1.test", "p2.test", "p3.test", "p4.test"} {
			if err := c.Visit(fmt.Sprintf("http://%s/p%d", h, i)); err != nil {
				t.Errorf("async Visit: %v", err)
			}
			if i < 2 {
				u := fmt.Sprintf("http://%s/private/%d", h, i)
				want = append(want, u)
				if err := c.Visit(u); err != nil {
					t.Errorf("async Visit(%s) = %v, want nil", u, err)
				}
			}
		}
	}
	returnsWithin(t, 60*time.Second, "c.Wait()", c.Wait)
	took := time.Since(start)
	checkPolite(t, f, rules, rec, blocks.all(), want)
	for h := range rules {
		if n := len(f.Pages(h, false)); n != pages {
			t.Errorf("%s served %d pages, want %d", h, n, pages)
		}
	}
	if m := most.Load(); m > 4 || m < 2 {
		t.Errorf("at most %d pages in flight at the sites at once; want 2 to 4 (the LimitRule's Parallelism)", m)
	}
	// One delayed host needs pages gaps of 200 ms (robots.txt, then the
	// pages); one after the other, the three would need three times that.
	share := pages * delay
	serial := 3 * share
	if took > serial*6/10 {
		t.Errorf("the crawl took %s; one delayed host needs %s, the three one after the other %s: not side by side", took, share, serial)
	}
	for _, a := range []string{"p1.test", "p2.test", "p3.test"} {
		for _, b := range []string{"p1.test", "p2.test", "p3.test"} {
			af, al := hitSpan(f.Pages(a, true))
			bf, bl := hitSpan(f.Pages(b, true))
			if a < b && (!af.Before(bl) || !bf.Before(al)) {
				t.Errorf("%s (%s..%s) and %s (%s..%s) were crawled one after the other", a, af.Format(time.StampMilli), al.Format(time.StampMilli),
					b, bf.Format(time.StampMilli), bl.Format(time.StampMilli))
			}
		}
	}
	t.Logf("4 hosts, %d requests: %s (one delayed host's share %s, serial %s); at most %d pages in flight",
		rec.total(rec.requested), took, share, serial, most.Load())
}

// TestFeatureLimitRuleRandomDelay: a LimitRule's Delay and RandomDelay with
// a Crawl-delay: whichever asks more holds between pages, robots.txt is
// spaced by the Crawl-delay, RandomDelay is still added, and c.Wait()
// returns.
func TestFeatureLimitRuleRandomDelay(t *testing.T) {
	testutil.CheckGoroutines(t)
	const pages = 8
	cases := []struct {
		name             string
		crawlDelay       time.Duration
		delay, random    time.Duration
		randomShowsAbove time.Duration // least sum of page gaps when RandomDelay is added
	}{
		// The Crawl-delay is larger than Delay+RandomDelay can ever be.
		{"crawl-delay larger", 150 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond, 0},
		// Delay is larger than the Crawl-delay: it holds, and the random
		// part comes on top (the pages' 7 gaps draw 7 times from [0, 80ms):
		// their sum falls under 56 ms with a chance below 1 in 50,000).
		{"rule delay larger", 25 * time.Millisecond, 80 * time.Millisecond, 80 * time.Millisecond, (pages - 1) * (80 + 8) * time.Millisecond},
		// RandomDelay alone, with a Crawl-delay: the Crawl-delay holds.
		{"random delay only", 100 * time.Millisecond, 0, 80 * time.Millisecond, 0},
	}
	for _, tc := range cases {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/async=%v", tc.name, async), func(t *testing.T) {
				t.Parallel()
				rules := map[string]hostRules{"rd.test": {tc.crawlDelay, []string{"/private"}}}
				f := rulesFarm(t, rules, nil)
				var blocks blockLog
				opts := []colly.CollectorOption{colly.UserAgent(featureUA),
					WithRobots(WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add))}
				if async {
					opts = append(opts, colly.Async(true))
				}
				c := colly.NewCollector(opts...)
				if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Delay: tc.delay, RandomDelay: tc.random}); err != nil {
					t.Fatal(err)
				}
				rec := newCrawlRecord()
				rec.watch(c)
				want := []string{"http://rd.test/private/a", "http://rd.test/private/b"}
				returnsWithin(t, 60*time.Second, "the visits and c.Wait()", func() {
					for i := range pages {
						c.Visit(fmt.Sprintf("http://rd.test/p%d", i))
						if i%4 == 1 {
							c.Visit(want[i/4])
						}
					}
					c.Wait()
				})
				checkPolite(t, f, rules, rec, blocks.all(), want)
				hs := f.Pages("rd.test", false)
				if len(hs) != pages {
					t.Fatalf("the site served %d pages, want %d", len(hs), pages)
				}
				least := max(tc.crawlDelay, tc.delay)
				if g := testutil.MinGap(hs); g < least {
					t.Errorf("pages %s apart, want at least %s (max of Crawl-delay %s and Delay %s)", g, least, tc.crawlDelay, tc.delay)
				}
				first, last := hitSpan(hs)
				if s := last.Sub(first); s < tc.randomShowsAbove {
					t.Errorf("the pages' gaps add up to %s; with RandomDelay added, want at least %s", s, tc.randomShowsAbove)
				}
				t.Logf("page gaps %s..%s, %s in all", testutil.MinGap(hs), testutil.MaxGap(hs), last.Sub(first))
			})
		}
	}
}

// TestFeatureQueue: colly/v2/queue with 4 threads on a sync collector
// (with an Async one the queue is broken upstream). The queue still
// refuses URLs beyond its MaxSize and Run returns with the queue empty;
// every URL queued is fetched or reported exactly once; the spacing holds
// with the threads sending side by side, and two delayed hosts are crawled
// at the same time.
func TestFeatureQueue(t *testing.T) {
	testutil.CheckGoroutines(t)
	const (
		delay = 150 * time.Millisecond
		pages = 6
	)
	rules := map[string]hostRules{
		"q1.test": {delay, []string{"/private"}},
		"q2.test": {delay, []string{"/private"}},
		"q3.test": {0, []string{"/private"}},
	}
	hosts := []string{"q1.test", "q2.test", "q3.test"}
	f := rulesFarm(t, rules, nil)
	var blocks blockLog
	c := colly.NewCollector(colly.UserAgent(featureUA),
		WithRobots(WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add)))
	rec := newCrawlRecord()
	rec.watch(c)
	var queued, want []string
	for i := range pages {
		for _, h := range hosts {
			queued = append(queued, fmt.Sprintf("http://%s/p%d", h, i))
			if i < 2 {
				u := fmt.Sprintf("http://%s/private/%d", h, i)
				queued = append(queued, u)
				want = append(want, u)
			}
		}
	}
	q, err := queue.New(4, &queue.InMemoryQueueStorage{MaxSize: len(queued)})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range queued {
		if err := q.AddURL(u); err != nil {
			t.Fatalf("AddURL(%s): %v", u, err)
		}
	}
	if err := q.AddURL("http://q3.test/one-too-many"); !errors.Is(err, colly.ErrQueueFull) {
		t.Errorf("AddURL beyond MaxSize = %v, want ErrQueueFull", err)
	}
	start := time.Now()
	returnsWithin(t, 60*time.Second, "q.Run(c)", func() {
		if err := q.Run(c); err != nil {
			t.Errorf("q.Run = %v", err)
		}
	})
	took := time.Since(start)
	if !q.IsEmpty() {
		t.Error("the queue is not empty after Run")
	}
	checkPolite(t, f, rules, rec, blocks.all(), want)
	rec.mu.Lock()
	if want := urlCounts(queued); !maps.Equal(rec.requested, want) {
		t.Errorf("requested %v, want each URL queued once: %v", rec.requested, want)
	}
	rec.mu.Unlock()
	q1f, q1l := hitSpan(f.Pages("q1.test", true))
	q2f, q2l := hitSpan(f.Pages("q2.test", true))
	if !q1f.Before(q2l) || !q2f.Before(q1l) {
		t.Errorf("q1.test (%s..%s) and q2.test (%s..%s) were crawled one after the other", q1f.Format(time.StampMilli), q1l.Format(time.StampMilli),
			q2f.Format(time.StampMilli), q2l.Format(time.StampMilli))
	}
	t.Logf("%d URLs through the queue in %s (one delayed host needs %s)", len(queued), took, pages*delay)
}

// TestFeatureClone: c.Clone() with the plugin attached to c. A clone the
// plugin is attached to stops disallowed requests in OnRequest, before they
// are sent (reported with their Colly request); a clone it is not attached
// to is still guarded at the shared transport (reported without one). Each
// reaches its own collector's OnError, a sync Visit returns it, and the
// three collectors share the host's gate: the Crawl-delay holds across them.
func TestFeatureClone(t *testing.T) {
	testutil.CheckGoroutines(t)
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			t.Parallel() // each waits out its own site's Crawl-delay
			rules := map[string]hostRules{"cl.test": {100 * time.Millisecond, []string{"/private"}}}
			f := rulesFarm(t, rules, nil)
			var blocks blockLog
			p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add))
			opts := []colly.CollectorOption{colly.UserAgent(featureUA), p.opt(t)}
			if async {
				opts = append(opts, colly.Async(true))
			}
			c := colly.NewCollector(opts...)
			attached := c.Clone()
			if err := p.Attach(attached); err != nil {
				t.Fatal(err)
			}
			unattached := c.Clone()
			rec := newCrawlRecord()
			for _, cc := range []*colly.Collector{c, attached, unattached} {
				rec.watch(cc)
			}
			// The clones' own callbacks run: Clone copies none of c's.
			var cloneResponses atomic.Int64
			attached.OnResponse(func(*colly.Response) { cloneResponses.Add(1) })
			unattached.OnResponse(func(*colly.Response) { cloneResponses.Add(1) })
			names := []string{"orig", "attached", "unattached"}
			var want []string
			for i, cc := range []*colly.Collector{c, attached, unattached} {
				for j := range 3 {
					if err := cc.Visit(fmt.Sprintf("http://cl.test/%s/%d", names[i], j)); err != nil {
						t.Errorf("%s: Visit of an allowed page = %v", names[i], err)
					}
				}
				u := "http://cl.test/private/" + names[i]
				want = append(want, u)
				err := cc.Visit(u)
				if !async && !errors.Is(err, ErrBlocked) {
					t.Errorf("%s: sync Visit(%s) = %v, want ErrBlocked", names[i], u, err)
				}
				if async && err != nil {
					t.Errorf("%s: async Visit(%s) = %v, want nil", names[i], u, err)
				}
			}
			// Each has its own wait group: c.Wait() does not wait for a clone.
			returnsWithin(t, 30*time.Second, "Wait", func() { c.Wait(); attached.Wait(); unattached.Wait() })
			bs := blocks.all()
			checkPolite(t, f, rules, rec, bs, want)
			for _, b := range bs {
				inOnRequest := !strings.HasSuffix(b.URL, "/unattached")
				if (b.Request != nil) != inOnRequest || b.Redirect {
					t.Errorf("%s: stopped with Request %v, Redirect %v; want it stopped in OnRequest only for an attached collector",
						b.URL, b.Request != nil, b.Redirect)
				}
				if b.Request != nil && b.Request.URL.String() != b.URL {
					t.Errorf("%s: the block's Request is %s", b.URL, b.Request.URL)
				}
			}
			if n := cloneResponses.Load(); n != 6 {
				t.Errorf("the clones' OnResponse ran %d times, want 6", n)
			}
			if n := len(f.Pages("cl.test", false)); n != 9 {
				t.Errorf("the site served %d pages, want 9", n)
			}
			if s := p.Stats()["http://cl.test"]; s.Disallowed != 3 || s.Allowed != 6 {
				t.Errorf("stats %+v, want 3 disallowed, 6 allowed in OnRequest (the unattached clone's pages pass the transport only)", s)
			}
		})
	}
}

// TestFeatureRandomUserAgent: extensions.RandomUserAgent, registered after
// the plugin or before it: every page carries a random browser User-Agent,
// yet the robots.txt group used is examplebot's, from the collector's
// User-Agent at construction: its /x is stopped, its /star is not, its
// Crawl-delay holds, and robots.txt is asked for as ExampleBot/1.0.
func TestFeatureRandomUserAgent(t *testing.T) {
	testutil.CheckGoroutines(t)
	const robotsTxt = "User-agent: *\nDisallow: /star\n\nUser-agent: examplebot\nDisallow: /x\nCrawl-delay: 0.1\n"
	rules := map[string]hostRules{"ua.test": {100 * time.Millisecond, []string{"/x"}}}
	for _, order := range []string{"extension after the plugin", "extension before Attach"} {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/async=%v", order, async), func(t *testing.T) {
				t.Parallel() // each waits out its own site's Crawl-delay
				f := testutil.NewFarm(t, map[string]*testutil.Site{"ua.test": {Robots: robotsTxt}})
				var (
					mu  sync.Mutex
					uas = map[string][]string{} // path → User-Agents received
				)
				front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					uas[r.URL.Path] = append(uas[r.URL.Path], r.UserAgent())
					mu.Unlock()
					f.ServeHTTP(w, r)
				}))
				t.Cleanup(front.Close)
				tr := testutil.LoopbackTransport(front.Listener.Addr().String())
				t.Cleanup(tr.CloseIdleConnections)
				var blocks blockLog
				popts := []Option{WithTransport(tr), WithDefaultDelay(0), WithOnBlocked(blocks.add)}
				opts := []colly.CollectorOption{colly.UserAgent(featureUA)}
				if async {
					opts = append(opts, colly.Async(true))
				}
				var c *colly.Collector
				if order == "extension after the plugin" {
					c = colly.NewCollector(append(opts, WithRobots(popts...))...)
					extensions.RandomUserAgent(c)
				} else {
					c = colly.NewCollector(opts...)
					extensions.RandomUserAgent(c)
					mustAttach(t, c, popts...)
				}
				rec := newCrawlRecord()
				rec.watch(c)
				paths := []string{"/a", "/x", "/star", "/b", "/x/2", "/c", "/d", "/e"}
				for _, p := range paths {
					c.Visit("http://ua.test" + p)
				}
				returnsWithin(t, 30*time.Second, "c.Wait()", c.Wait)
				checkPolite(t, f, rules, rec, blocks.all(), []string{"http://ua.test/x", "http://ua.test/x/2"})
				if got := strings.Join(f.Paths("ua.test"), " "); got != "/a /b /c /d /e /star" {
					t.Errorf("the site served %q, want every page but /x and /x/2 (examplebot's group, not *'s)", got)
				}
				mu.Lock()
				defer mu.Unlock()
				if got := uas["/robots.txt"]; len(got) != 1 || got[0] != featureUA {
					t.Errorf("robots.txt asked for with User-Agents %q, want once with %q", got, featureUA)
				}
				distinct := map[string]bool{}
				for p, got := range uas {
					if p == "/robots.txt" {
						continue
					}
					for _, ua := range got {
						distinct[ua] = true
						if !strings.HasPrefix(ua, "Mozilla/5.0 (") || strings.Contains(ua, "ExampleBot") {
							t.Errorf("%s asked for with User-Agent %q, want a random browser's", p, ua)
						}
					}
				}
				if len(distinct) < 2 {
					t.Errorf("6 pages with User-Agents %v: not random", slices.Collect(maps.Keys(distinct)))
				}
			})
		}
	}
}

// TestFeatureMaxDepthAllowedDomains: colly.MaxDepth(2) and
// colly.AllowedDomains with OnHTML link following. Colly's own filters
// still apply (no page beyond depth 2, nothing of another domain, not even
// its robots.txt; a link seen twice is followed once), the links the
// plugin stops are reported, and the counts add up. A nested sync Visit
// returns the stop.
func TestFeatureMaxDepthAllowedDomains(t *testing.T) {
	testutil.CheckGoroutines(t)
	rules := map[string]hostRules{
		"a.test": {100 * time.Millisecond, []string{"/private"}},
		"b.test": {0, []string{"/nope"}},
		"c.test": {0, nil},
	}
	links := map[string][]string{
		"a.test/":       {"/a1", "/a2", "/private/p", "http://b.test/from-a", "http://c.test/", "/a1"},
		"a.test/a1":     {"/a3", "/private/q"},
		"a.test/a2":     {"http://b.test/deep"},
		"b.test/":       {"/b1", "/nope", "http://c.test/x"},
		"b.test/b1":     {"/b2", "/nope/2"},
		"b.test/from-a": {"/b3"},
	}
	handle := func(w http.ResponseWriter, r *http.Request) bool {
		host := strings.Split(r.Host, ":")[0]
		var b strings.Builder
		b.WriteString("<html><body>")
		for _, l := range links[host+r.URL.Path] {
			fmt.Fprintf(&b, `<a href="%s">link</a>`, l)
		}
		b.WriteString("</body></html>")
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, b.String())
		return true
	}
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			f := rulesFarm(t, rules, handle)
			var blocks blockLog
			opts := []colly.CollectorOption{colly.UserAgent(featureUA), colly.MaxDepth(2), colly.AllowedDomains("a.test", "b.test"),
				WithRobots(WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add))}
			if async {
				opts = append(opts, colly.Async(true))
			}
			c := colly.NewCollector(opts...)
			rec := newCrawlRecord()
			rec.watch(c)
			var (
				mu         sync.Mutex
				depths     = map[string]int{}
				visitErrs  = map[string]int{} // what the nested Visits returned, by kind
				nestedStop []string
			)
			c.OnResponse(func(r *colly.Response) {
				mu.Lock()
				depths[r.Request.URL.String()] = r.Request.Depth
				mu.Unlock()
			})
			c.OnHTML("a[href]", func(e *colly.HTMLElement) {
				err := e.Request.Visit(e.Attr("href"))
				var av *colly.AlreadyVisitedError
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					visitErrs["nil"]++
				case errors.Is(err, colly.ErrMaxDepth):
					visitErrs["max depth"]++
				case errors.Is(err, colly.ErrForbiddenDomain):
					visitErrs["forbidden domain"]++
				case errors.As(err, &av):
					visitErrs["already visited"]++
				case errors.Is(err, ErrBlocked):
					nestedStop = append(nestedStop, e.Request.AbsoluteURL(e.Attr("href")))
				default:
					t.Errorf("Visit(%s) from %s: %v", e.Attr("href"), e.Request.URL, err)
				}
			})
			for _, seed := range []string{"http://a.test/", "http://b.test/"} {
				if err := c.Visit(seed); err != nil {
					t.Errorf("Visit(%s) = %v", seed, err)
				}
			}
			returnsWithin(t, 30*time.Second, "c.Wait()", c.Wait)
			want := []string{"http://a.test/private/p", "http://b.test/nope"}
			checkPolite(t, f, rules, rec, blocks.all(), want)
			mu.Lock()
			defer mu.Unlock()
			var fetched []string
			for u, d := range depths {
				fetched = append(fetched, u)
				if d > 2 {
					t.Errorf("%s fetched at depth %d, beyond MaxDepth 2", u, d)
				}
			}
			sort.Strings(fetched)
			if got := strings.Join(fetched, " "); got != "http://a.test/ http://a.test/a1 http://a.test/a2 http://b.test/ http://b.test/b1 http://b.test/from-a" {
				t.Errorf("fetched %s", got)
			}
			if hs := f.Pages("c.test", true); len(hs) != 0 {
				t.Errorf("c.test, not an allowed domain, received %v", hs)
			}
			if n := len(f.Pages("a.test", true)) + len(f.Pages("b.test", true)); n != 8 {
				t.Errorf("the sites received %d requests, want 6 pages and 2 robots.txt", n)
			}
			// Links at depth 3: a3, private/q, b.test/deep, b2, nope/2, b3.
			// Disallowed links are Visits that Colly makes: a sync nested
			// Visit returns the stop, an async one nil.
			wantErrs := map[string]int{"max depth": 6, "forbidden domain": 2, "already visited": 1, "nil": 4}
			if async {
				wantErrs["nil"] += 2
			}
			if !maps.Equal(visitErrs, wantErrs) {
				t.Errorf("nested Visits returned %v, want %v", visitErrs, wantErrs)
			}
			sort.Strings(nestedStop)
			if wantNested := map[bool]string{false: strings.Join(want, " "), true: ""}[async]; strings.Join(nestedStop, " ") != wantNested {
				t.Errorf("nested Visits returned ErrBlocked for %q, want %q", nestedStop, wantNested)
			}
		})
	}
}

// TestFeatureVisitReturnsStop: a sync c.Visit returns an error wrapping
// ErrBlocked (a *BlockedError with the rule) for a disallowed URL and nil
// for an allowed one; an async Visit returns nil for both, and the stop
// reaches OnError.
func TestFeatureVisitReturnsStop(t *testing.T) {
	testutil.CheckGoroutines(t)
	rules := map[string]hostRules{"v.test": {0, []string{"/private"}}}
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			f := rulesFarm(t, rules, nil)
			var blocks blockLog
			opts := []colly.CollectorOption{colly.UserAgent(featureUA),
				WithRobots(WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add))}
			if async {
				opts = append(opts, colly.Async(true))
			}
			c := colly.NewCollector(opts...)
			rec := newCrawlRecord()
			rec.watch(c)
			errAllowed := c.Visit("http://v.test/ok")
			errBlocked := c.Visit("http://v.test/private/x")
			returnsWithin(t, 30*time.Second, "c.Wait()", c.Wait)
			if errAllowed != nil {
				t.Errorf("Visit of an allowed URL = %v, want nil", errAllowed)
			}
			if async {
				if errBlocked != nil {
					t.Errorf("async Visit of a disallowed URL = %v, want nil", errBlocked)
				}
			} else {
				var be *BlockedError
				if !errors.Is(errBlocked, ErrBlocked) || !errors.As(errBlocked, &be) {
					t.Fatalf("sync Visit of a disallowed URL = %v, want a *BlockedError wrapping ErrBlocked", errBlocked)
				}
				if b := be.Block; b.Kind != Disallowed || b.URL != "http://v.test/private/x" || b.Request == nil ||
					b.Verdict.Rule.Line != 2 || b.Reason != "line 2: Disallow: /private" {
					t.Errorf("the returned stop: %+v", b)
				}
			}
			checkPolite(t, f, rules, rec, blocks.all(), []string{"http://v.test/private/x"})
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.blocked) != 1 || rec.blocked[0].Block.Reason != "line 2: Disallow: /private" {
				t.Errorf("OnError got %v", rec.blocked)
			}
			if !maps.Equal(rec.fetched, map[string]int{"http://v.test/ok": 1}) {
				t.Errorf("fetched %v", rec.fetched)
			}
		})
	}
}

// TestFeatureCacheDirStopOfACachedPage: colly.CacheDir with a page that
// Colly has in its disk cache (from a run before the plugin was added, or
// before robots.txt disallowed it) and that robots.txt now disallows. The
// plugin reports it stopped (WithOnBlocked, Stats), but the stop travels to
// the transport in a request header, and Colly answers a cached page
// without calling the transport (so the plugin marks a stopped request
// no-cache): OnResponse must not get the page, OnError must hear of the
// stop, a sync Visit must return it. A stopped request that another
// callback aborts later (extensions.URLLengthFilter registered after the
// plugin, OnRequestHeaders) leaves nothing behind: the stop travels in the
// request itself.
func TestFeatureCacheDirStopOfACachedPage(t *testing.T) {
	t.Run("CacheDir", func(t *testing.T) {
		rules := map[string]hostRules{"cd.test": {0, []string{"/private"}}}
		f := rulesFarm(t, rules, nil)
		dir := t.TempDir()
		// The spider before the plugin was added fills the cache.
		before := colly.NewCollector(colly.UserAgent(featureUA), colly.CacheDir(dir))
		before.WithTransport(farmTransport(t, f))
		if err := before.Visit("http://cd.test/private/x"); err != nil {
			t.Fatal(err)
		}
		var blocks blockLog
		p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add))
		c := colly.NewCollector(colly.UserAgent(featureUA), colly.CacheDir(dir), p.opt(t))
		rec := newCrawlRecord()
		rec.watch(c)
		err := c.Visit("http://cd.test/private/x")
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("sync Visit of a disallowed, cached page = %v, want ErrBlocked", err)
		}
		rec.mu.Lock()
		if rec.fetched["http://cd.test/private/x"] != 0 {
			t.Errorf("a page reported stopped reached OnResponse (from Colly's cache)")
		}
		rec.mu.Unlock()
		checkPolite(t, f, map[string]hostRules{}, rec, blocks.all(), []string{"http://cd.test/private/x"})
	})
	t.Run("aborted after the plugin", func(t *testing.T) {
		rules := map[string]hostRules{"ab.test": {0, []string{"/private"}}}
		f := rulesFarm(t, rules, nil)
		p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0))
		c := colly.NewCollector(colly.UserAgent(featureUA), p.opt(t))
		extensions.URLLengthFilter(c, 36) // the first URL is longer, the second not
		c.OnRequestHeaders(func(r *colly.Request) {
			if strings.HasSuffix(r.URL.Path, "/by-headers") {
				r.Abort()
			}
		})
		for _, u := range []string{"http://ab.test/private/a-long-enough-path", "http://ab.test/private/by-headers"} {
			c.Visit(u)
		}
		if n := len(f.Pages("ab.test", false)); n != 0 {
			t.Errorf("the site served %d pages", n)
		}
		if s := p.Totals(); s.Disallowed != 2 {
			t.Errorf("%d stops reported, want 2 (each stop is reported in OnRequest, whatever aborts it later)", s.Disallowed)
		}
	})
}
