package main

// diff's Colly side is a model of Colly v2.3.0's own robots.txt check. This
// test holds the model to Colly itself: the same robots.txt, UserAgent and
// URLs through a real collector with its check on. Only the test imports
// Colly; the command does not (go list -deps ./cmd/robotstxt).

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/testkit/testutil"
)

func TestCollyModelMatchesColly(t *testing.T) {
	for _, e := range os.Environ() {
		if strings.HasPrefix(e, "COLLY_") {
			t.Skipf("%s changes the collector's settings", e)
		}
	}
	examples, err := os.ReadFile("../../examples/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	robots := []struct {
		name   string
		status int
		body   string
	}{
		{"examples", 200, string(examples)},
		{"query and escapes", 200, "User-agent: *\nDisallow: /s?b=1&a=2\nDisallow: /%7Ex\nDisallow: /a%20b\nDisallow: /*.pdf\nAllow: /s\n\nUser-agent: Mozilla\nDisallow: /m\n"},
		{"rejected", 200, "User-agent: *\nCrawl-delay: 1s\nDisallow: /x\n"},
		{"rule before user-agent", 200, "Disallow: /x\nUser-agent: *\nDisallow: /y\n"},
		{"503", 503, "User-agent: *\nDisallow: /\n"},
		{"404", 404, ""},
	}
	agents := []string{
		defaultCollyUA,
		"examplebot-news",
		"examplebot-news/1.0",
		"Mozilla/5.0 (compatible; examplebot-news/1.0; +https://example.com/bot)",
	}
	paths := []string{
		"", "/", "/private/x", "/private/press/1", "/drafts/x", "/%64rafts/y", "/a/../drafts/z", "/report.pdf",
		"/s?b=1&a=2", "/s?a=2&b=1", "/s?b=1;a=2", "/~x/1", "/%7ex", "/a b", "/a%20b", "/100%", "//edit", "/ä", "/m/1", "/x", "/y#f",
	}
	for _, rb := range robots {
		var pages atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				w.WriteHeader(rb.status)
				io.WriteString(w, rb.body)
				return
			}
			pages.Add(1)
			io.WriteString(w, "ok")
		}))
		for _, ua := range agents {
			c := colly.NewCollector(colly.UserAgent(ua), colly.AllowURLRevisit())
			c.IgnoreRobotsTxt = false
			model := newCollyCheck(rb.status, []byte(rb.body), ua, rb.name, io.Discard)
			for _, p := range paths {
				u, err := collyURL(srv.URL, p)
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				want := model.allowed(u)
				before := pages.Load()
				err = c.Visit(srv.URL + p)
				fetched := pages.Load() > before
				got := err == nil
				if got != want || fetched != got {
					t.Errorf("%s, UserAgent %q, %q: Colly: Visit error %v, page fetched %v; the model says allowed=%v", rb.name, ua, p, err, fetched, want)
				}
				if err != nil && model.group != nil && !errors.Is(err, colly.ErrRobotsTxtBlocked) {
					t.Errorf("%s, %q, %q: Visit error %v, want ErrRobotsTxtBlocked", rb.name, ua, p, err)
				}
			}
		}
		srv.Close()
	}
}

// TestDiffHoldsToCollyCrawl runs diff against a site, then crawls the same
// URLs with a collector using Colly's own check and with one using the
// plugin, and holds each line of diff's report to what the site saw: a URL
// or redirect target diff says Colly fetches is fetched by the first, one it
// says the plugin stops is not fetched by the second and reaches its OnError
// as the error diff describes; a URL diff says nothing of is fetched alike
// by both. The plugin's spacing is checked on a fake clock.
func TestDiffHoldsToCollyCrawl(t *testing.T) {
	for _, e := range os.Environ() {
		if strings.HasPrefix(e, "COLLY_") {
			t.Skipf("%s changes the collector's settings", e)
		}
	}
	const robotsTxt = "User-agent: *\nCrawl-delay: 2\nDisallow: /private\n"
	clock := testutil.NewFakeClock()
	t.Cleanup(clock.Jump())
	type hit struct {
		uri string
		at  time.Time // on clock, the plugin's limiter's
	}
	var (
		mu   sync.Mutex
		hits []hit
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, hit{r.RequestURI, clock.Now()})
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, robotsTxt)
		case "/go":
			http.Redirect(w, r, "/private/x", http.StatusFound)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	mark := func() int { mu.Lock(); defer mu.Unlock(); return len(hits) }
	// pages are the pages (not robots.txt) the site saw since mark n.
	pages := func(n int) (uris []string, at []time.Time) {
		mu.Lock()
		defer mu.Unlock()
		for _, h := range hits[n:] {
			if h.uri != "/robots.txt" {
				uris = append(uris, h.uri)
				at = append(at, h.at)
			}
		}
		return uris, at
	}
	urls := []string{"/go", "/page", "/private/y", "/%70rivate/z", "/page2"}

	// diff, as a user runs it on the site.
	n := mark()
	r := runCLI(t, "", append([]string{"diff", srv.URL + "/robots.txt"}, urls...)...)
	if r.code != 1 {
		t.Fatalf("diff: exit %d, stderr\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "/go -> /private/x\tcolly: followed\trfc9309: stopped (line 3: Disallow: /private)\n") ||
		!strings.HasSuffix(r.stderr, "\nrobotstxt: 1 of 5 URLs change verdict; 1 redirect now stopped\n") {
		t.Errorf("diff does not report the redirect: stdout\n%s\nstderr\n%s", r.stdout, r.stderr)
	}
	if got, _ := pages(n); strings.Join(got, " ") != "/go /page /page2" {
		t.Errorf("diff fetched %q: want each URL allowed by both, once, no redirect followed", got)
	}
	m := regexp.MustCompile(`(?m)^robotstxt: spacing: colly: none \(no LimitRule\) -> rfc9309: (\S+) between requests to this host \(line 2: Crawl-delay: 2\)$`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("diff's spacing line:\n%s", r.stderr)
	}
	spacing, err := time.ParseDuration(m[1])
	if err != nil || spacing <= 0 {
		t.Fatalf("diff's spacing %q: %v", m[1], err)
	}

	// What diff says of each URL.
	type said struct {
		line                        bool
		redirect, why               string // a redirect line: the target and why the plugin stops it
		collyFetches, pluginFetches bool   // a verdict line
	}
	report := map[string]said{}
	for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 3 {
			t.Fatalf("diff line %q", l)
		}
		if from, to, ok := strings.Cut(f[0], " -> "); ok {
			why, ok := strings.CutPrefix(f[2], "rfc9309: stopped (")
			if f[1] != "colly: followed" || !ok {
				t.Fatalf("diff line %q", l)
			}
			report[from] = said{line: true, redirect: to, why: strings.TrimSuffix(why, ")")}
			continue
		}
		report[f[0]] = said{line: true, collyFetches: strings.HasPrefix(f[1], "colly: allowed "), pluginFetches: strings.HasPrefix(f[2], "rfc9309: allowed ")}
	}

	// (a) Colly's own check.
	a := colly.NewCollector()
	a.IgnoreRobotsTxt = false
	var aOnError error
	a.OnError(func(_ *colly.Response, err error) { aOnError = err })
	// (b) The plugin, its limiter on the fake clock.
	b := colly.NewCollector(robots.WithRobots(
		robots.WithTransport(http.DefaultTransport.(*http.Transport).Clone()),
		robots.WithLimiter(hostlimit.New(hostlimit.Config{Clock: clock})),
	))
	var bOnError error
	b.OnError(func(_ *colly.Response, err error) { bOnError = err })
	var bAt []time.Time
	for _, u := range urls {
		aOnError, bOnError = nil, nil
		n := mark()
		aErr := a.Visit(srv.URL + u)
		aGot, _ := pages(n)
		n = mark()
		bErr := b.Visit(srv.URL + u)
		bGot, at := pages(n)
		bAt = append(bAt, at...)
		a, b := strings.Join(aGot, " "), strings.Join(bGot, " ")
		s := report[u]
		switch {
		case s.redirect != "":
			// Colly follows the redirect unchecked; the plugin stops the
			// hop, a Disallowed stop, with diff's reason.
			if a != u+" "+s.redirect || aErr != nil {
				t.Errorf("%s: Colly's check fetched %q (Visit error %v); diff says it follows %s", u, a, aErr, s.redirect)
			}
			var be *robots.BlockedError
			if b != u || !errors.Is(bOnError, robots.ErrBlocked) || !errors.Is(bOnError, colly.ErrRobotsTxtBlocked) || !errors.As(bOnError, &be) ||
				!be.Block.Redirect || be.Block.Kind != robots.Disallowed || be.Block.URL != srv.URL+s.redirect || !strings.HasSuffix(be.Block.Reason, ": "+s.why) ||
				!errors.Is(bErr, robots.ErrBlocked) {
				t.Errorf("%s: the plugin fetched %q, OnError %v, Visit error %v; diff says it stops %s (%s)", u, b, bOnError, bErr, s.redirect, s.why)
			}
		case s.line:
			if (a == u) != s.collyFetches || (a != u && a != "") {
				t.Errorf("%s: Colly's check fetched %q; diff says fetched: %v", u, a, s.collyFetches)
			}
			if (b == u) != s.pluginFetches || (b != u && b != "") {
				t.Errorf("%s: the plugin fetched %q; diff says fetched: %v", u, b, s.pluginFetches)
			}
			if !s.collyFetches && (!errors.Is(aErr, colly.ErrRobotsTxtBlocked) || aOnError != nil) {
				t.Errorf("%s: Colly's check: Visit error %v, OnError %v; want ErrRobotsTxtBlocked from Visit only", u, aErr, aOnError)
			}
			var be *robots.BlockedError
			if !s.pluginFetches && (!errors.Is(bOnError, robots.ErrBlocked) || !errors.Is(bOnError, colly.ErrRobotsTxtBlocked) ||
				!errors.As(bOnError, &be) || be.Block.Kind != robots.Disallowed || be.Block.Redirect || !errors.Is(bErr, colly.ErrRobotsTxtBlocked)) {
				t.Errorf("%s: the plugin: OnError %v, Visit error %v; want a Disallowed *robots.BlockedError", u, bOnError, bErr)
			}
		default:
			// Nothing said: both fetch the same.
			if a != b {
				t.Errorf("%s: Colly's check fetched %q, the plugin %q; diff says nothing changes", u, a, b)
			}
			if a == "" && (!errors.Is(aErr, colly.ErrRobotsTxtBlocked) || !errors.Is(bOnError, colly.ErrRobotsTxtBlocked)) {
				t.Errorf("%s: Visit error %v, plugin's OnError %v; want ErrRobotsTxtBlocked from both", u, aErr, bOnError)
			}
		}
	}
	// The plugin spaced its requests to the host as diff says. The fake
	// clock moves only to the limiter's timers, one at a time here (sync
	// visits): the gaps are exact.
	if len(bAt) < 3 {
		t.Fatalf("the plugin fetched %d pages", len(bAt))
	}
	for i := 1; i < len(bAt); i++ {
		if g := bAt[i].Sub(bAt[i-1]); g != spacing {
			t.Errorf("the plugin's requests %d and %d %s apart; diff says %s", i-1, i, g, spacing)
		}
	}
}

// On a host whose robots.txt answers 503, diff says what the plugin does:
// Colly's check fetches the page, the plugin defers it (a Deferred stop,
// matching colly.ErrRobotsTxtBlocked), not "disallowed".
func TestDiffDeferredHoldsToPlugin(t *testing.T) {
	var pages atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		pages.Add(1)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	r := runCLI(t, "", "diff", srv.URL+"/robots.txt", "/a")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "/a\tcolly: allowed (-)\trfc9309: deferred (robots.txt: 503 Service Unavailable") {
		t.Fatalf("diff: exit %d, stdout %q", r.code, r.stdout)
	}
	b := colly.NewCollector(robots.WithRobots(robots.WithTransport(http.DefaultTransport.(*http.Transport).Clone())))
	var onError error
	b.OnError(func(_ *colly.Response, err error) { onError = err })
	b.Visit(srv.URL + "/a")
	var be *robots.BlockedError
	if pages.Load() != 0 || !errors.As(onError, &be) || be.Block.Kind != robots.Deferred || !errors.Is(onError, colly.ErrRobotsTxtBlocked) {
		t.Errorf("the plugin: %d pages fetched, OnError %v; want a Deferred stop matching colly.ErrRobotsTxtBlocked", pages.Load(), onError)
	}
	a := colly.NewCollector()
	a.IgnoreRobotsTxt = false
	if err := a.Visit(srv.URL + "/a"); err != nil || pages.Load() != 1 {
		t.Errorf("Colly's check: Visit error %v, %d pages fetched; diff says it fetches /a", err, pages.Load())
	}
}
