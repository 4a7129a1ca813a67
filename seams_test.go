package robots

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/sitemap"
	"github.com/politecrawl/robots/testkit/testutil"
)

// A request stopped at the transport because the collector's own context
// ran out of time (context.WithTimeout, through colly.StdlibContext) while
// it waited at the host's gate is reported with its request, as a canceled
// one is: the deadline is the user's, not Colly's client timeout. CacheDir
// skips the early wait, so the page waits at the gate, an hour behind its
// robots.txt (WithMinDelay), until the collector's deadline ends the wait.
func TestStopAtTransportUnderUserDeadlineCarriesRequest(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{"d.test": {Robots: "User-agent: *\nAllow: /\n"}})
	var blocks blockLog
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithMinDelay(time.Hour), WithOnBlocked(blocks.add))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c := newCollector(false, p.opt(t), colly.StdlibContext(ctx), colly.CacheDir(t.TempDir()))
	var onError []error
	c.OnError(func(_ *colly.Response, err error) { onError = append(onError, err) })
	err := c.Visit("http://d.test/page")
	var be *BlockedError
	if !errors.As(err, &be) || be.Block.Kind != Canceled || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Visit: %v, want a Canceled stop wrapping the deadline", err)
	}
	bs := blocks.all()
	if len(bs) != 1 || bs[0].Kind != Canceled || bs[0].Request == nil || bs[0].Request.URL.Path != "/page" {
		t.Fatalf("reports %+v, want one Canceled stop carrying its request", bs)
	}
	if len(onError) != 1 {
		t.Errorf("OnError saw %v, want the stop once", onError)
	}
	if tot := p.Totals(); tot.Canceled != 1 || tot.Allowed != 0 {
		t.Errorf("totals %+v", tot)
	}
	if got := f.Paths("d.test"); len(got) != 0 {
		t.Errorf("the server saw %v", got)
	}
}

// nofollowLinkSite: /nf says nofollow and links /target, /ok links it
// plainly.
func nofollowLinkSite() map[string]*testutil.Site {
	return map[string]*testutil.Site{"v.test": {
		Robots: "User-agent: *\nAllow: /\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Type", "text/html")
			switch r.URL.Path {
			case "/nf":
				w.Header().Set("X-Robots-Tag", "nofollow")
				fmt.Fprint(w, `<a href="/target">t</a>`)
			case "/ok":
				fmt.Fprint(w, `<a href="/target">t</a>`)
			default:
				fmt.Fprint(w, "<p>page</p>")
			}
			return true
		}}}
}

// A link stopped as nofollow leaves its URL unvisited for Colly: the same
// URL linked from a page without the directive is fetched, and so is
// c.Visit of it; once fetched, it is visited as usual.
func TestNofollowStopLeavesURLUnvisited(t *testing.T) {
	for _, how := range []string{"linked", "collector"} {
		t.Run(how, func(t *testing.T) {
			f := testutil.NewFarm(t, nofollowLinkSite())
			var blocks blockLog
			p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add))
			c := newCollector(false, p.opt(t))
			c.AllowURLRevisit = false
			c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
			if err := c.Visit("http://v.test/nf"); err != nil {
				t.Fatal(err)
			}
			if bs := blocks.all(); len(bs) != 1 || bs[0].Kind != Nofollow {
				t.Fatalf("reports %v, want /target stopped as nofollow", bs)
			}
			var err error
			if how == "linked" {
				err = c.Visit("http://v.test/ok")
			} else {
				err = c.Visit("http://v.test/target")
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := len(f.Pages("v.test", false)); n == 0 || f.Paths("v.test")[n-1] != "/target" {
				t.Errorf("the server saw %v, want /target fetched", f.Paths("v.test"))
			}
			var av *colly.AlreadyVisitedError
			if err := c.Visit("http://v.test/target"); !errors.As(err, &av) {
				t.Errorf("a fetched URL visited again: %v, want already visited", err)
			}
		})
	}
}

// sitemapFarm is a host whose robots.txt announces a sitemap that always
// answers 503.
func sitemapFarm(t *testing.T) *testutil.Farm {
	return testutil.NewFarm(t, map[string]*testutil.Site{"sm.test": {
		Robots: "User-agent: *\nAllow: /\nSitemap: http://sm.test/sitemap.xml\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/sitemap.xml" {
				w.WriteHeader(http.StatusServiceUnavailable)
				return true
			}
			return false
		}}})
}

// sitemapHits counts the farm's requests for the sitemap.
func sitemapHits(f *testutil.Farm) int {
	n := 0
	for _, h := range f.Pages("sm.test", false) {
		if h.Path == "/sitemap.xml" {
			n++
		}
	}
	return n
}

// A sitemap that always answers 503 is asked as often as the walker's
// retries say (1 + Retries), not that times the plugin's WithRetries: the
// plugin's transport does not retry a sitemap fetch. Short pauses (10 ms
// backoff) so that each attempt waits its host's pause out.
func TestSitemapFailingIsAskedWalkerRetriesOnly(t *testing.T) {
	f := sitemapFarm(t)
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithRetries(2),
		withLimiterConfig(hostlimit.Config{BackoffBase: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond}),
		WithSitemaps(SitemapWalk(sitemap.Config{Retries: 2, RetryWait: time.Millisecond})))
	c := newCollector(false, p.opt(t))
	if err := c.Visit("http://sm.test/page"); err != nil {
		t.Fatal(err)
	}
	if n := sitemapHits(f); n != 3 {
		t.Errorf("the sitemap was asked %d times, want 3 (1 + the walker's 2 retries)", n)
	}
	if got := f.Paths("sm.test"); len(got) == 0 || got[0] != "/page" {
		t.Errorf("the server saw %v, want /page fetched", got)
	}
	if st := p.SitemapTotals(); st.Sitemaps != 1 || st.Failed != 1 {
		t.Errorf("sitemap totals %+v", st)
	}
}

// A sitemap fetch never waits out a host pause longer than WithDeferWait:
// it is stopped at once, reported in its request-less form (Sitemap set,
// Request nil), and the page that loaded the policy goes on (here: deferred,
// its host paused for a minute), so c.Wait does not wait for the pause.
func TestSitemapStopUnderLongPauseIsReportedWithoutRequest(t *testing.T) {
	f := sitemapFarm(t)
	var blocks blockLog
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithDeferWait(0), WithOnBlocked(blocks.add),
		withLimiterConfig(hostlimit.Config{BackoffBase: time.Minute}),
		WithSitemaps(SitemapWalk(sitemap.Config{Retries: 2, RetryWait: time.Millisecond})))
	c := newCollector(true, p.opt(t))
	returnsWithin(t, 20*time.Second, "the crawl", func() {
		_ = c.Visit("http://sm.test/page")
		c.Wait()
	})
	if n := sitemapHits(f); n != 1 {
		t.Errorf("the sitemap was asked %d times, want once (its 503 pauses the host for a minute)", n)
	}
	var sm, page *Block
	for _, b := range blocks.all() {
		switch {
		case b.Sitemap && b.URL == "http://sm.test/sitemap.xml":
			sm = &b
		case b.Request != nil && b.Request.URL.Path == "/page":
			page = &b
		default:
			t.Errorf("unexpected report %+v", b)
		}
	}
	if sm == nil || sm.Kind != Deferred || sm.Request != nil {
		t.Errorf("the sitemap's report %+v, want a Deferred stop with Sitemap set and no request", sm)
	}
	if page == nil || page.Kind != Deferred {
		t.Errorf("the page's report %+v, want Deferred", page)
	}
}

// The documented DeferredUntil/RetryDeferred loop with a host whose one URL
// always answers 503 and whose pause is longer than WithDeferWait: the bad
// URL's retries count across hand-backs (it reaches OnError with its last
// answer after WithRetries), and the good URL deferred behind it is sent
// at the first retry round, not held behind the bad one. Time is the
// limiter's fake clock.
func TestDeferredLoopDoesNotStarveHost(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{"h.test": {
		Robots: "User-agent: *\nAllow: /\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/bad" {
				w.WriteHeader(http.StatusServiceUnavailable)
				return true
			}
			return false
		}}})
	clock := testutil.NewFakeClock()
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithDeferWait(0), WithRetries(2),
		withLimiterConfig(hostlimit.Config{Clock: clock, BackoffBase: 2 * time.Second}))
	c := newCollector(false, p.opt(t))
	c.AllowURLRevisit = false
	var mu sync.Mutex
	var final []int // statuses of /bad's answers that reached OnError
	c.OnError(func(r *colly.Response, err error) {
		if r.Request.URL.Path == "/bad" && !errors.Is(err, ErrBlocked) {
			mu.Lock()
			final = append(final, r.StatusCode)
			mu.Unlock()
		}
	})
	_ = c.Visit("http://h.test/bad")
	_ = c.Visit("http://h.test/good")
	count := func(path string) int {
		n := 0
		for _, h := range f.Pages("h.test", false) {
			if h.Path == path {
				n++
			}
		}
		return n
	}
	rounds := 0
	for ; rounds < 8; rounds++ {
		until, ok := p.DeferredUntil()
		if !ok {
			break
		}
		clock.AdvanceTo(until)
		p.RetryDeferred()
		c.Wait()
		if rounds == 0 && count("/good") != 1 {
			t.Errorf("after the first retry round /good was asked %d times, want once", count("/good"))
		}
	}
	if n := count("/bad"); n != 3 {
		t.Errorf("/bad was asked %d times over %d rounds, want 3 (1 + WithRetries)", n, rounds)
	}
	if n := count("/good"); n != 1 {
		t.Errorf("/good was asked %d times, want once", n)
	}
	if _, ok := p.DeferredUntil(); ok {
		t.Errorf("requests still deferred after %d rounds", rounds)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(final) != 1 || final[0] != http.StatusServiceUnavailable {
		t.Errorf("/bad reached OnError with %v, want its last answer (503) once", final)
	}
	// Deferred counts hand-backs: /bad twice, /good once.
	if tot := p.Totals(); tot.Deferred != 3 {
		t.Errorf("totals %+v, want 3 hand-backs", tot)
	}
}
