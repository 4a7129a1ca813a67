package robots

// What the Colly feature tests of colly_features_test.go share: the local
// sites and their rules, the record of a crawl and checkPolite.

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/testkit/testutil"
)

// featureUA is the User-Agent of the collectors of these tests: its product
// token, examplebot, names the crawler.
const featureUA = "ExampleBot/1.0"

// hostRules is what one test site's robots.txt asks of every crawler.
type hostRules struct {
	delay      time.Duration // Crawl-delay; 0: none
	disallowed []string      // Disallow path prefixes
}

func (h hostRules) robots() string {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for _, d := range h.disallowed {
		fmt.Fprintf(&b, "Disallow: %s\n", d)
	}
	if h.delay > 0 {
		fmt.Fprintf(&b, "Crawl-delay: %g\n", h.delay.Seconds())
	}
	return b.String()
}

func (h hostRules) allows(path string) bool {
	for _, d := range h.disallowed {
		if strings.HasPrefix(path, d) {
			return false
		}
	}
	return true
}

// rulesFarm starts a farm with one site per host, its robots.txt written
// from the host's rules; handle (may be nil) serves the pages.
func rulesFarm(t *testing.T, rules map[string]hostRules, handle func(http.ResponseWriter, *http.Request) bool) *testutil.Farm {
	sites := map[string]*testutil.Site{}
	for h, r := range rules {
		sites[h] = &testutil.Site{Robots: r.robots(), Handle: handle}
	}
	return testutil.NewFarm(t, sites)
}

// farmTransport returns a transport to f whose idle connections are closed
// when t ends (before testutil.CheckGoroutines counts).
func farmTransport(t *testing.T, f *testutil.Farm) *http.Transport {
	tr := f.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// crawlRecord is what the Colly callbacks of one or more collectors saw,
// counted per URL.
type crawlRecord struct {
	mu        sync.Mutex
	requested map[string]int // OnRequest: the requests Colly made, past its own filters
	fetched   map[string]int // OnResponse
	stopped   map[string]int // OnError with a *BlockedError wrapping ErrBlocked, for this URL
	blocked   []*BlockedError
	other     []string // any other OnError
}

func newCrawlRecord() *crawlRecord {
	return &crawlRecord{requested: map[string]int{}, fetched: map[string]int{}, stopped: map[string]int{}}
}

// watch registers rec's callbacks on c.
func (rec *crawlRecord) watch(c *colly.Collector) {
	c.OnRequest(func(r *colly.Request) {
		rec.mu.Lock()
		rec.requested[r.URL.String()]++
		rec.mu.Unlock()
	})
	c.OnResponse(func(r *colly.Response) {
		rec.mu.Lock()
		rec.fetched[r.Request.URL.String()]++
		rec.mu.Unlock()
	})
	c.OnError(func(r *colly.Response, err error) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		var be *BlockedError
		if errors.Is(err, ErrBlocked) && errors.As(err, &be) && be.Block.URL == r.Request.URL.String() {
			rec.stopped[r.Request.URL.String()]++
			rec.blocked = append(rec.blocked, be)
			return
		}
		rec.other = append(rec.other, fmt.Sprintf("%s: %v", r.Request.URL, err))
	})
}

func (rec *crawlRecord) total(m map[string]int) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// urlCounts returns the multiset of ss.
func urlCounts(ss []string) map[string]int {
	m := map[string]int{}
	for _, s := range ss {
		m[s]++
	}
	return m
}

// checkPolite checks the plugin's guarantees after a crawl of f's hosts
// (rules) recorded by rec, the plugin having reported blocks:
//
//   - no page under a disallowed path reached its site;
//   - every site saw its requests (robots.txt included) at least its
//     Crawl-delay apart;
//   - every stop was a Disallowed one, reported once through WithOnBlocked,
//     and reached OnError as a *BlockedError wrapping ErrBlocked (the same
//     URLs, as many times), and the stopped URLs are wantStopped;
//   - nothing was lost: each URL was requested as many times as it was
//     fetched plus stopped, no request ended in another error, and what
//     the sites served is what OnResponse got.
func checkPolite(t *testing.T, f *testutil.Farm, rules map[string]hostRules, rec *crawlRecord, blocks []Block, wantStopped []string) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	served := map[string]int{}
	for host, r := range rules {
		for _, h := range f.Pages(host, false) {
			served["http://"+host+h.Path]++
			if !r.allows(h.Path) {
				t.Errorf("%s: the site received %s, which its robots.txt disallows", host, h.Path)
			}
		}
		if r.delay > 0 {
			if g := testutil.MinGap(f.Pages(host, true)); g < r.delay {
				t.Errorf("%s: two requests %s apart, under its Crawl-delay %s", host, g, r.delay)
			}
		}
	}
	var reported []string
	for _, b := range blocks {
		reported = append(reported, b.URL)
		if b.Kind != Disallowed {
			t.Errorf("unexpected stop: %v", b)
		}
	}
	if got := urlCounts(reported); !maps.Equal(got, rec.stopped) {
		t.Errorf("reported through WithOnBlocked %v; reached OnError with ErrBlocked %v", got, rec.stopped)
	}
	if got, want := urlCounts(reported), urlCounts(wantStopped); !maps.Equal(got, want) {
		t.Errorf("stopped %v, want %v", got, want)
	}
	for u, n := range rec.requested {
		if rec.fetched[u]+rec.stopped[u] != n {
			t.Errorf("%s: requested %d times, fetched %d, stopped %d: lost", u, n, rec.fetched[u], rec.stopped[u])
		}
	}
	for u := range rec.fetched {
		if rec.requested[u] == 0 {
			t.Errorf("%s fetched but never requested", u)
		}
	}
	for _, e := range rec.other {
		t.Errorf("OnError with another error: %s", e)
	}
	if !maps.Equal(served, rec.fetched) {
		t.Errorf("the sites served %v; OnResponse got %v", served, rec.fetched)
	}
}

// returnsWithin runs fn and fails t if it does not return within d.
func returnsWithin(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %s", what, d)
	}
}

// hitSpan returns the first and the last time in hs.
func hitSpan(hs []testutil.Hit) (first, last time.Time) {
	for i, h := range hs {
		if i == 0 || h.At.Before(first) {
			first = h.At
		}
		if h.At.After(last) {
			last = h.At
		}
	}
	return first, last
}
