package robots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"github.com/gocolly/colly/v2/storage"

	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/sitemap"
	"github.com/politecrawl/robots/testkit/testutil"
)

// smFarm serves the documents (path → body) of each host; any other path
// is a small HTML page without links. Each host's robots.txt is given.
func smFarm(t *testing.T, robots map[string]string, docs map[string]map[string]string) *testutil.Farm {
	sites := map[string]*testutil.Site{}
	for h, r := range robots {
		d := docs[h]
		sites[h] = &testutil.Site{Robots: r, Handle: func(w http.ResponseWriter, r *http.Request) bool {
			body, ok := d[r.URL.RequestURI()]
			if ok {
				fmt.Fprint(w, body)
			}
			return ok
		}}
	}
	return testutil.NewFarm(t, sites)
}

func count(hs []testutil.Hit, path string) int {
	n := 0
	for _, h := range hs {
		if h.Path == path {
			n++
		}
	}
	return n
}

// TestSitemapsFeedCollector: the pages a sitemap lists, and no link
// reaches, are visited once each, sync and Async, and c.Wait() (or the
// sync Visit) returns only after all of them; a disallowed sitemap is not
// fetched; a cross-host child and page are refused; a relative Sitemap:
// line is resolved; lastmod and the sitemap URL are in the request's
// Context.
func TestSitemapsFeedCollector(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			testutil.CheckGoroutines(t)
			var pages []string
			for i := range 30 {
				pages = append(pages, fmt.Sprintf("http://a.test/only-%d|2025-0%d-01", i, 1+i%9))
			}
			f := smFarm(t, map[string]string{
				"a.test": "User-agent: *\nDisallow: /private/\nSitemap: /sitemap.xml\nSitemap: http://a.test/private/sm.xml\n",
				"b.test": "User-agent: *\n",
			}, map[string]map[string]string{
				"a.test": {
					"/sitemap.xml":    testutil.SitemapIndex("http://a.test/s1.xml", "http://b.test/child.xml", "http://a.test/s2.xml"),
					"/s1.xml":         testutil.URLSet(pages...),
					"/s2.xml":         testutil.URLSet("http://a.test/dup", "http://a.test/dup", "http://b.test/elsewhere", "http://a.test/private/page"),
					"/private/sm.xml": testutil.URLSet("http://a.test/secret"),
				},
				"b.test": {"/child.xml": testutil.URLSet("http://b.test/x")},
			})
			var reports []sitemap.Report
			var rmu sync.Mutex
			p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithSitemaps(
				SitemapWalk(sitemap.Config{OnReport: func(r sitemap.Report) { rmu.Lock(); reports = append(reports, r); rmu.Unlock() }})))
			t.Cleanup(func() { p.Close() })
			c := newCollector(async, p.opt(t))
			c.AllowURLRevisit = false
			var mu sync.Mutex
			ctxSeen := map[string]string{}
			scraped := 0
			c.OnResponse(func(r *colly.Response) {
				sm, _ := r.Ctx.GetAny(CtxSitemap).(string)
				lm, _ := r.Ctx.GetAny(CtxLastMod).(time.Time)
				mu.Lock()
				ctxSeen[r.Request.URL.Path] = sm + " " + lm.Format("2006-01")
				mu.Unlock()
			})
			c.OnScraped(func(*colly.Response) { mu.Lock(); scraped++; mu.Unlock() })
			if err := c.Visit("http://a.test/"); err != nil {
				t.Fatal(err)
			}
			c.Wait()
			mu.Lock()
			defer mu.Unlock()

			hs := f.Pages("a.test", false)
			for i := range 30 {
				path := fmt.Sprintf("/only-%d", i)
				if n := count(hs, path); n != 1 {
					t.Errorf("%s fetched %d times, want once (before Wait returned)", path, n)
				}
				if want := fmt.Sprintf("http://a.test/s1.xml 2025-0%d", 1+i%9); ctxSeen[path] != want {
					t.Errorf("%s: context %q, want %q", path, ctxSeen[path], want)
				}
			}
			if n := count(hs, "/dup"); n != 1 {
				t.Errorf("/dup fetched %d times", n)
			}
			for _, path := range []string{"/private/sm.xml", "/private/page", "/secret"} {
				if n := count(hs, path); n != 0 {
					t.Errorf("%s fetched: disallowed", path)
				}
			}
			if hb := f.Pages("b.test", true); len(hb) != 0 {
				t.Errorf("b.test got %v: cross-host child or page followed", hb)
			}
			// home + 3 sitemaps + 30 + dup + private/page (stopped, not fetched)
			if scraped != 1+30+1 {
				t.Errorf("scraped %d pages, want 32", scraped)
			}
			rmu.Lock()
			defer rmu.Unlock()
			by := map[string]sitemap.Report{}
			for _, r := range reports {
				by[r.URL] = r
			}
			if r := by["http://a.test/private/sm.xml"]; !errors.Is(r.Err, sitemap.ErrDisallowed) || !strings.Contains(r.Err.Error(), "Disallow: /private/") {
				t.Errorf("disallowed sitemap: %+v", r)
			}
			if r := by["http://a.test/sitemap.xml"]; r.Err != nil || r.Children != 2 || r.Rejected[sitemap.ReasonOtherHost] != 1 {
				t.Errorf("index (resolved from a relative Sitemap: line): %+v", r)
			}
			if r := by["http://a.test/s1.xml"]; r.Handed != 30 || r.Found != 30 {
				t.Errorf("s1: %+v", r)
			}
			// /private/page is handed over: the plugin stops it (a Block), Colly does not refuse it.
			if r := by["http://a.test/s2.xml"]; r.Handed != 2 || r.Filtered["already visited"] != 1 || r.Rejected[sitemap.ReasonOtherHost] != 1 {
				t.Errorf("s2: %+v", r)
			}
			tot := p.SitemapTotals()
			if tot.Sitemaps != 4 || tot.Failed != 1 || tot.Handed != 32 || tot.Filtered["already visited"] != 1 || len(reports) != 4 {
				t.Errorf("totals %+v, %d reports", tot, len(reports))
			}
		})
	}
}

func TestSitemapsOptions(t *testing.T) {
	f := smFarm(t, map[string]string{
		"a.test": "User-agent: *\nSitemap: http://a.test/sitemap.xml\n",
		"c.test": "User-agent: *\n",
	}, map[string]map[string]string{
		"a.test": {
			"/sitemap.xml":    testutil.SitemapIndex("http://a.test/old.xml|2020-01-01", "http://a.test/new.xml"),
			"/old.xml":        testutil.URLSet("http://a.test/never"),
			"/new.xml":        testutil.URLSet("http://a.test/n1|2025-06-01", "http://a.test/n2|2020-01-01", "http://a.test/skip-1", "http://a.test/blocked-1", "http://a.test/n3", "http://a.test/n4", "http://a.test/n5"),
			"/dir/extra.xml":  testutil.URLSet("http://a.test/dir/e1", "http://a.test/other/e2"),
			"/dir/extra2.xml": testutil.URLSet("http://a.test/dir/e3"),
		},
		"c.test": {"/s.xml": testutil.URLSet("http://c.test/c1")},
	})
	var reports []sitemap.Report // OnReport is called from the walk, here the Visit's goroutine
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithSitemaps(
		SitemapWalk(sitemap.Config{
			Since:           time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
			Keep:            func(pg sitemap.Page) bool { return !strings.Contains(pg.Loc, "skip") },
			MaxURLs:         4,
			StrictDirectory: true,
			OnReport:        func(r sitemap.Report) { reports = append(reports, r) },
		}),
		SitemapURLs("http://a.test/dir/extra.xml", "http://c.test/s.xml"),
	))
	t.Cleanup(func() { p.Close() })
	c := newCollector(false, p.opt(t), colly.DisallowedURLFilters(regexp.MustCompile(`/blocked-`)))
	if err := c.Visit("http://a.test/"); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	got := f.Paths("a.test")
	want := []string{"/", "/n1", "/n3", "/n4", "/n5", "/new.xml", "/sitemap.xml"}
	if !slices.Equal(got, want) {
		t.Errorf("a.test fetched %q, want %q", got, want)
	}
	if hs := f.Pages("c.test", true); len(hs) != 0 {
		t.Errorf("c.test: an extra sitemap is walked when its authority is first requested, got %v", hs)
	}
	tot := p.SitemapTotals()
	if tot.Filtered[sitemap.ReasonNotModified] != 2 || tot.Filtered[sitemap.ReasonPredicate] != 1 || tot.Filtered["forbidden URL"] != 1 || tot.Handed != 4 {
		t.Errorf("totals %+v", tot)
	}
	var cut, extra *sitemap.Report
	for _, r := range reports {
		switch r.URL {
		case "http://a.test/new.xml":
			cut = &r
		case "http://a.test/dir/extra.xml":
			extra = &r
		}
	}
	if cut == nil || cut.Cut != sitemap.ReasonURLCap {
		t.Errorf("new.xml: %+v", cut)
	}
	// The extra sitemap comes after the announced one: the URL cap, per
	// authority, was spent, so it is not fetched, and its report says why.
	if extra == nil || extra.Handed != 0 || extra.Cut != sitemap.ReasonURLCap || extra.Status != 0 {
		t.Errorf("extra: %+v", extra)
	}
}

// TestSitemapsAsyncWindow: an Async collector is fed through a bounded
// window: the goroutines stay bounded while the walk hands over many URLs,
// and the slots of requests that a user callback aborts silently after the
// plugin's hook (no OnScraped, no OnError) are taken back after the hold
// time, on the window's clock; each one so reclaimed is logged.
func TestSitemapsAsyncWindow(t *testing.T) {
	testutil.CheckGoroutines(t)
	const n = 500
	locs := make([]string, n)
	for i := range locs {
		locs[i] = fmt.Sprintf("http://a.test/p/%d", i)
	}
	f := smFarm(t, map[string]string{"a.test": "User-agent: *\nSitemap: http://a.test/sitemap.xml\n"},
		map[string]map[string]string{"a.test": {"/sitemap.xml": testutil.URLSet(locs...)}})
	const window = 8
	var logs testutil.Buffer
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithSitemaps(),
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	clock := testutil.NewFakeClock()
	p.sitemaps.window, p.sitemaps.clock = window, clock
	t.Cleanup(func() { p.Close() })
	// A deadline: if lost slots were not taken back, the walk would wait
	// for one forever; the deadline ends it, and the checks below say why.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newCollector(true, p.opt(t), colly.StdlibContext(ctx)) // the plugin's hook first
	c.AllowURLRevisit = false
	base := runtime.NumGoroutine()
	var peak, aborted, scraped atomic.Int64
	c.OnRequest(func(r *colly.Request) {
		if g := int64(runtime.NumGoroutine()); g > peak.Load() {
			peak.Store(g)
		}
		if strings.HasSuffix(r.URL.Path, "7") { // one in ten, silently
			aborted.Add(1)
			r.Abort()
		}
	})
	c.OnScraped(func(*colly.Response) { scraped.Add(1) })
	// Time moves only when the test says: a hold time whenever the walk
	// waits for a place on the clock (the window full), so that the places
	// lost to aborts are taken back. A request still in flight then may
	// lose its place too (over-admission, within a window per step).
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				if clock.Timers() > 0 {
					clock.Advance(sitemapHoldBase)
				}
			}
		}
	}()
	err := c.Visit("http://a.test/")
	c.Wait()
	close(done)
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the walk was still waiting for a slot after a minute: the slots of aborted requests were not taken back (%d handed over)", p.SitemapTotals().Handed)
	}
	tot := p.SitemapTotals()
	if tot.Handed != n || scraped.Load()+aborted.Load() != n+1 {
		t.Errorf("handed %d, scraped %d + aborted %d, want %d", tot.Handed, scraped.Load(), aborted.Load(), n+1)
	}
	if hs := f.Pages("a.test", false); len(hs) != n+1-int(aborted.Load())+1 {
		t.Errorf("%d hits, want %d", len(hs), n+1-int(aborted.Load())+1)
	}
	// Only aborted requests are taken back: the others end before the
	// clock moves a hold time past them... or, on a loaded machine, are
	// still in flight when it does, which is why this is a bound.
	if got := int64(strings.Count(logs.String(), "its place in the window is taken back")); got < aborted.Load()-window || got > n {
		t.Errorf("%d slots taken back, want at least %d of the %d aborted", got, aborted.Load()-window, aborted.Load())
	}
	// Per request in flight: Colly's goroutine, the client connection's
	// two and the test server's two; plus a few more, and connection
	// goroutines that end asynchronously: about 6 per slot. Without the
	// window every URL would have a goroutine at once (500 or more): the
	// bound, n/2, leaves a wide margin to scheduling and to the steps'
	// over-admission (the race detector keeps connections longer) while it
	// still fails when the window does not hold.
	if extra := peak.Load() - int64(base); extra > n/2 {
		t.Errorf("peak %d goroutines above the %d at the start, for a window of %d", extra, base, window)
	}
}

// TestSitemapsAbortedBeforeHook: a request that a user callback registered
// before the plugin aborts gives its slot back at once, in the plugin's
// hook: with a window of 1 and a clock that never moves, the walk still
// hands over every URL.
func TestSitemapsAbortedBeforeHook(t *testing.T) {
	testutil.CheckGoroutines(t)
	const n = 50
	locs := make([]string, n)
	for i := range locs {
		locs[i] = fmt.Sprintf("http://a.test/p/%d", i)
	}
	f := smFarm(t, map[string]string{"a.test": "User-agent: *\nSitemap: http://a.test/sitemap.xml\n"},
		map[string]map[string]string{"a.test": {"/sitemap.xml": testutil.URLSet(locs...)}})
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithSitemaps())
	p.sitemaps.window, p.sitemaps.clock = 1, testutil.NewFakeClock()
	t.Cleanup(func() { p.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newCollector(true, colly.StdlibContext(ctx))
	var aborted atomic.Int64
	c.OnRequest(func(r *colly.Request) {
		if strings.HasPrefix(r.URL.Path, "/p/") {
			aborted.Add(1)
			r.Abort()
		}
	})
	if err := p.Attach(c); err != nil {
		t.Fatal(err)
	}
	if err := c.Visit("http://a.test/"); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	if ctx.Err() != nil || aborted.Load() != n || p.SitemapTotals().Handed != n {
		t.Errorf("aborted %d, handed %d of %d (deadline: %v): an aborted request kept its slot", aborted.Load(), p.SitemapTotals().Handed, n, ctx.Err())
	}
}

// TestSitemapsClone: a clone attached to the same plugin does not walk an
// authority again; the walk feeds the collector whose request found it.
func TestSitemapsSecondCollector(t *testing.T) {
	f := smFarm(t, map[string]string{"a.test": "User-agent: *\nSitemap: http://a.test/sitemap.xml\n"},
		map[string]map[string]string{"a.test": {"/sitemap.xml": testutil.URLSet("http://a.test/x", "http://a.test/y")}})
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithSitemaps())
	t.Cleanup(func() { p.Close() })
	c := newCollector(true, p.opt(t))
	d := c.Clone()
	if err := p.Attach(d); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]string{}
	c.OnResponse(func(r *colly.Response) { mu.Lock(); seen[r.Request.URL.Path] += "c"; mu.Unlock() })
	d.OnResponse(func(r *colly.Response) { mu.Lock(); seen[r.Request.URL.Path] += "d"; mu.Unlock() })
	if err := d.Visit("http://a.test/"); err != nil {
		t.Fatal(err)
	}
	d.Wait()
	if err := c.Visit("http://a.test/other"); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	mu.Lock()
	defer mu.Unlock()
	if seen["/x"] != "d" || seen["/y"] != "d" || seen["/other"] != "c" {
		t.Errorf("seen %v: the sitemap's pages go to the collector that found it, once", seen)
	}
	if n := count(f.Pages("a.test", false), "/sitemap.xml"); n != 1 {
		t.Errorf("sitemap fetched %d times", n)
	}
}

// TestSitemapsExtraAndStrict: a sitemap given with SitemapURLs is walked
// with the announced ones when its authority is first requested, and the
// strict directory rule keeps each sitemap to its own directory.
func TestSitemapsExtraAndStrict(t *testing.T) {
	f := smFarm(t, map[string]string{"a.test": "User-agent: *\n"}, map[string]map[string]string{"a.test": {
		"/dir/extra.xml": testutil.URLSet("http://a.test/dir/e1", "http://a.test/other/e2", "http://a.test/dir/sub/e3"),
	}})
	var reps []sitemap.Report
	var mu sync.Mutex
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0),
		WithSitemaps(SitemapURLs("http://a.test/dir/extra.xml"), SitemapWalk(sitemap.Config{
			StrictDirectory: true,
			OnReport:        func(r sitemap.Report) { mu.Lock(); reps = append(reps, r); mu.Unlock() },
		})))
	t.Cleanup(func() { p.Close() })
	c := newCollector(false, p.opt(t))
	if err := c.Visit("http://a.test/"); err != nil {
		t.Fatal(err)
	}
	if got, want := f.Paths("a.test"), []string{"/", "/dir/e1", "/dir/extra.xml", "/dir/sub/e3"}; !slices.Equal(got, want) {
		t.Errorf("fetched %q, want %q", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reps) != 1 || reps[0].Rejected[sitemap.ReasonOutsideDir] != 1 || reps[0].Handed != 2 {
		t.Errorf("reports %+v", reps)
	}
}

// TestSitemapsSpacedAndCanceled: sitemap fetches pass the host's gate
// like pages (no two requests closer than the Crawl-delay), and when the
// collector's context ends the Async walk ends and Wait returns.
func TestSitemapsSpacedAndCanceled(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) { testSitemapsSpacedAndCanceled(t, async) })
	}
}

func testSitemapsSpacedAndCanceled(t *testing.T, async bool) {
	testutil.CheckGoroutines(t)
	var locs []string
	for i := range 200 {
		locs = append(locs, fmt.Sprintf("http://a.test/p/%d", i))
	}
	f := smFarm(t, map[string]string{"a.test": "User-agent: *\nCrawl-delay: 0.05\nSitemap: http://a.test/index.xml\n"},
		map[string]map[string]string{"a.test": {
			"/index.xml": testutil.SitemapIndex("http://a.test/s1.xml", "http://a.test/s2.xml"),
			"/s1.xml":    testutil.URLSet(locs[:3]...),
			"/s2.xml":    testutil.URLSet(locs[3:]...),
		}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var reports []sitemap.Report
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithSitemaps(SitemapWalk(sitemap.Config{
		OnReport: func(r sitemap.Report) { mu.Lock(); reports = append(reports, r); mu.Unlock() },
	})))
	t.Cleanup(func() { p.Close() })
	c := newCollector(async, p.opt(t), colly.StdlibContext(ctx))
	c.AllowURLRevisit = false
	var fetched atomic.Int64
	c.OnResponse(func(r *colly.Response) {
		if fetched.Add(1) == 8 {
			cancel()
		}
	})
	c.Visit("http://a.test/")
	c.Wait()
	hs := f.Pages("a.test", true)
	if g := testutil.MinGap(hs); g < 50*time.Millisecond {
		t.Errorf("two requests %s apart, under the Crawl-delay of 50ms (sitemaps included)", g)
	}
	// The cancel comes at the 8th page; requests are 50 ms apart, so a walk
	// the cancel did not end would make all 200 (10 s). 100 leaves the
	// cancel seconds to act on a loaded machine.
	if count(hs, "/s2.xml") != 1 || len(hs) > 100 {
		t.Errorf("%d requests after the cancel: %v", len(hs), hs)
	}
	mu.Lock()
	defer mu.Unlock()
	var s2 *sitemap.Report
	for _, r := range reports {
		if r.URL == "http://a.test/s2.xml" {
			s2 = &r
		}
	}
	if s2 == nil || !errors.Is(s2.Err, context.Canceled) {
		t.Errorf("s2 report %+v: the cancel is its error", s2)
	}
}

// failingStore is a Colly storage that cannot record some requests (a
// full store): its error names the request, so it differs per URL.
type failingStore struct {
	storage.InMemoryStorage
	mu   sync.Mutex
	n    int
	full func(n int) bool // of the nth request recorded, from 1
}

func (s *failingStore) Visited(id uint64) error {
	s.mu.Lock()
	s.n++
	full := s.full(s.n)
	s.mu.Unlock()
	if full {
		return fmt.Errorf("store full: cannot record request %d", id)
	}
	return s.InMemoryStorage.Visited(id)
}

// TestSitemapsRefusalReasons: refusals by Colly are counted under a fixed
// set of reasons, never under the error's text (which can name the URL):
// two URLs refused the same unlisted way give one key.
func TestSitemapsRefusalReasons(t *testing.T) {
	f := smFarm(t, map[string]string{"a.test": "User-agent: *\nSitemap: http://a.test/sitemap.xml\n"},
		map[string]map[string]string{"a.test": {"/sitemap.xml": testutil.URLSet("http://a.test/full/1", "http://a.test/full/2", "http://a.test/ok", "http://a.test/ok")}})
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithSitemaps())
	t.Cleanup(func() { p.Close() })
	c := newCollector(true)
	c.AllowURLRevisit = false
	// Recorded in order: the home page (1), then the sitemap's URLs: the
	// two /full/ ones (2, 3) find the store full.
	if err := c.SetStorage(&failingStore{full: func(n int) bool { return n == 2 || n == 3 }}); err != nil {
		t.Fatal(err)
	}
	if err := p.Attach(c); err != nil {
		t.Fatal(err)
	}
	if err := c.Visit("http://a.test/"); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	tot := p.SitemapTotals()
	if tot.Filtered[reasonCollyOther] != 2 || tot.Filtered["already visited"] != 1 || len(tot.Filtered) != 2 || tot.Handed != 1 {
		t.Errorf("filtered %v, handed %d: want one key for the two store refusals", tot.Filtered, tot.Handed)
	}
}

// TestSitemapsChildDoesNotFreeSlot: the pages reached by links from a
// sitemap's page share its Context, and so its slot; their end (here an
// error) must not release it: with a window of 1, the sitemap's second
// page is not handed over while the first is still in flight. Once every
// OnError callback of the linked page has run (the plugin's included),
// the first page still holds its slot, and the second has not started.
func TestSitemapsChildDoesNotFreeSlot(t *testing.T) {
	testutil.CheckGoroutines(t)
	f := smFarm(t, map[string]string{"a.test": "User-agent: *\nSitemap: http://a.test/sitemap.xml\n"},
		map[string]map[string]string{"a.test": {"/sitemap.xml": testutil.URLSet("http://a.test/p/0", "http://a.test/p/1")}})
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithSitemaps())
	p.sitemaps.window = 1
	t.Cleanup(func() { p.Close() })
	c := newCollector(true)
	// The test's callbacks are registered before the plugin's: a page's
	// OnScraped below runs before the plugin releases its slot.
	var inflight, peak atomic.Int64
	childFailed := make(chan struct{}, 1)
	secondStarted := make(chan struct{}, 1)
	c.OnRequest(func(r *colly.Request) {
		if r.Depth != 1 || !strings.HasPrefix(r.URL.Path, "/p/") {
			return
		}
		if n := inflight.Add(1); n > peak.Load() {
			peak.Store(n)
		}
		if r.URL.Path == "/p/1" {
			secondStarted <- struct{}{}
		}
	})
	end := func(r *colly.Response) {
		if r.Request.Depth == 1 && strings.HasPrefix(r.Request.URL.Path, "/p/") {
			inflight.Add(-1)
		}
	}
	c.OnResponse(func(r *colly.Response) {
		if r.Request.URL.Path != "/p/0" {
			return
		}
		// A link from the sitemap's page, to a page that fails (404).
		r.Request.Visit("http://gone.test/missing") // an unknown host of the farm: 404
		select {
		case <-childFailed:
		case <-time.After(30 * time.Second):
			t.Error("the linked page did not fail")
			return
		}
		sl := slotOf(r.Request)
		sl.w.mu.Lock()
		_, held := sl.w.taken[sl]
		sl.w.mu.Unlock()
		if !held {
			t.Error("the linked page's error released /p/0's slot")
		}
		select {
		case <-secondStarted:
			t.Error("/p/1 handed over while /p/0 is in flight")
		default:
		}
	})
	c.OnScraped(end)
	c.OnError(func(r *colly.Response, _ error) { end(r) })
	if err := p.Attach(c); err != nil {
		t.Fatal(err)
	}
	c.OnError(func(r *colly.Response, _ error) { // after the plugin's hook
		if r.Request.Depth == 2 {
			childFailed <- struct{}{}
		}
	})
	if err := c.Visit("http://a.test/"); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	if peak.Load() != 1 {
		t.Errorf("%d sitemap pages in flight at once, window 1", peak.Load())
	}
	if tot := p.SitemapTotals(); tot.Handed != 2 {
		t.Errorf("handed %d, want 2", tot.Handed)
	}
}

// TestSitemapsUserAgent: the sitemap fetches carry the collector's
// User-Agent (colly.UserAgent), end to end.
func TestSitemapsUserAgent(t *testing.T) {
	var mu sync.Mutex
	uas := map[string]string{}
	f := testutil.NewFarm(t, map[string]*testutil.Site{"a.test": {
		Robots: "User-agent: *\nSitemap: http://a.test/index.xml\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			mu.Lock()
			uas[r.URL.Path] = r.Header.Get("User-Agent")
			mu.Unlock()
			switch r.URL.Path {
			case "/index.xml":
				fmt.Fprint(w, testutil.SitemapIndex("http://a.test/s.xml"))
			case "/s.xml":
				fmt.Fprint(w, testutil.URLSet("http://a.test/page"))
			default:
				return false
			}
			return true
		},
	}})
	const ua = "UATestBot/2.1 (+https://example.com/uabot)"
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithSitemaps())
	t.Cleanup(func() { p.Close() })
	c := colly.NewCollector(colly.UserAgent(ua), p.opt(t))
	if err := c.Visit("http://a.test/"); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, path := range []string{"/index.xml", "/s.xml", "/page"} {
		if uas[path] != ua {
			t.Errorf("%s requested with User-Agent %q, want %q", path, uas[path], ua)
		}
	}
}

// TestSitemapsTotalsLimits: children a limit keeps from being fetched are
// counted in the totals' Rejected, by reason, and are no failed documents.
func TestSitemapsTotalsLimits(t *testing.T) {
	f := smFarm(t, map[string]string{"a.test": "User-agent: *\nSitemap: http://a.test/i0.xml\n"},
		map[string]map[string]string{"a.test": {
			"/i0.xml": testutil.SitemapIndex("http://a.test/i1.xml", "http://a.test/s1.xml", "http://a.test/s2.xml"),
			"/i1.xml": testutil.SitemapIndex("http://a.test/i2.xml"),
			"/i2.xml": testutil.URLSet("http://a.test/deep"),
			"/s1.xml": testutil.URLSet("http://a.test/p1"),
			"/s2.xml": testutil.URLSet("http://a.test/p2"),
		}})
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithSitemaps(SitemapWalk(sitemap.Config{MaxIndexDepth: 1, MaxSitemaps: 3})))
	t.Cleanup(func() { p.Close() })
	c := newCollector(false, p.opt(t))
	if err := c.Visit("http://a.test/"); err != nil {
		t.Fatal(err)
	}
	tot := p.SitemapTotals()
	// i0, i1, s1 fetched (3); i2 too deep; s2 past the cap.
	if tot.Sitemaps != 3 || tot.Failed != 0 || tot.Rejected[sitemap.ReasonTooDeep] != 1 || tot.Rejected[sitemap.ReasonSitemapCap] != 1 || tot.Handed != 1 {
		t.Errorf("totals %+v", tot)
	}
}

// A relative Sitemap line that resolves, or a repeated one, is logged at
// Info: nothing is lost; a line left out for good is a warning.
func TestSitemapsLineWarningsLevel(t *testing.T) {
	f := smFarm(t, map[string]string{"a.test": "User-agent: *\nSitemap: /s.xml\nSitemap: http://a.test/s.xml\nSitemap: ftp://a.test/x.xml\n"},
		map[string]map[string]string{"a.test": {"/s.xml": testutil.URLSet("http://a.test/p")}})
	var logs testutil.Buffer
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithSitemaps(),
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	c := newCollector(false, p.opt(t))
	if err := c.Visit("http://a.test/"); err != nil {
		t.Fatal(err)
	}
	var warns, infos []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if !strings.Contains(l, "Sitemap line") {
			continue
		}
		if strings.Contains(l, "level=WARN") {
			warns = append(warns, l)
		} else if strings.Contains(l, "level=INFO") {
			infos = append(infos, l)
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "not an http(s) URL") || len(infos) != 2 {
		t.Errorf("warnings %q, infos %q: want the ftp line only as a warning, the resolved and repeated lines as infos", warns, infos)
	}
}

// TestSitemapsIntoFrontier: with Colly's queue on a frontier
// (AttachFrontier), the sitemap's pages go into the frontier, not past it:
// each page is fetched once, in the frontier's order, the same URLs
// linked from a page later are refused by the frontier as queued before
// (not dropped by Colly's visited set with their lease), and no lease is
// left when the queue ends.
func TestSitemapsIntoFrontier(t *testing.T) {
	testutil.CheckGoroutines(t)
	var locs, links []string
	for i := range 12 {
		locs = append(locs, fmt.Sprintf("http://a.test/p/%d", i))
		if i%2 == 0 {
			links = append(links, fmt.Sprintf(`<a href="/p/%d">p</a>`, i))
		}
	}
	home := "<html>" + strings.Join(links, "") + "</html>"
	f := testutil.NewFarm(t, map[string]*testutil.Site{"a.test": {
		Robots: "User-agent: *\nSitemap: http://a.test/sitemap.xml\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			switch r.URL.Path {
			case "/sitemap.xml":
				fmt.Fprint(w, testutil.URLSet(locs...))
			case "/":
				fmt.Fprint(w, home)
			default:
				return false
			}
			return true
		}}})
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithSitemaps())
	t.Cleanup(func() { p.Close() })
	c := newCollector(false, p.opt(t))
	c.AllowURLRevisit = false
	fr := frontier.New(frontier.Config{Ready: p.Limiter().(frontier.Readiness), Hold: time.Hour})
	AttachFrontier(c, fr)
	q, err := queue.New(2, fr)
	if err != nil {
		t.Fatal(err)
	}
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { q.AddURL(e.Request.AbsoluteURL(e.Attr("href"))) })
	if err := q.AddURL("http://a.test/"); err != nil {
		t.Fatal(err)
	}
	returnsWithin(t, time.Minute, "the queue", func() { q.Run(c) })
	hs := f.Pages("a.test", false)
	for _, l := range locs {
		if n := count(hs, strings.TrimPrefix(l, "http://a.test")); n != 1 {
			t.Errorf("%s fetched %d times, want once", l, n)
		}
	}
	st := fr.Stats()
	if st.Added != int64(1+len(locs)) || st.Seen != int64(len(links)) || st.Leased != 0 || st.Queued != 0 || st.Expired != 0 {
		t.Errorf("frontier %+v: want the home page and the %d sitemap pages added, no lease left", st, len(locs))
	}
	if tot := p.SitemapTotals(); tot.Handed != int64(len(locs)) {
		t.Errorf("handed %d, want %d", tot.Handed, len(locs))
	}
}
