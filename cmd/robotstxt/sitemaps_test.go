package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/robots/testkit/testutil"
)

const relRobots = "User-agent: *\nDisallow: /x\nSitemap: /sitemap.xml\nSitemap: https://cdn.example/a.xml\nSitemap: /sitemap.xml\n"

func TestInspectSitemapLines(t *testing.T) {
	// A local file: kept as written, a relative one warned about.
	var out, errb bytes.Buffer
	code, err := run([]string{"inspect", writeRobots(t, relRobots)}, nil, &out, &errb)
	if err != nil || code != 0 {
		t.Fatalf("code %d err %v", code, err)
	}
	var got inspectOutput
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if want := []string{"/sitemap.xml", "https://cdn.example/a.xml", "/sitemap.xml"}; !slices.Equal(got.Sitemaps, want) {
		t.Errorf("local sitemaps %q, want %q", got.Sitemaps, want)
	}
	if w := errb.String(); strings.Count(w, "relative Sitemap \"/sitemap.xml\" kept as written") != 2 || !strings.Contains(w, "line 3:") || !strings.Contains(w, "line 5:") {
		t.Errorf("local stderr %q", w)
	}

	// A fetched file: resolved against its URL, each once, said on stderr.
	srv, _ := fetchServer(t, status(200, relRobots))
	out.Reset()
	errb.Reset()
	code, err = run([]string{"inspect", srv.URL + "/robots.txt"}, nil, &out, &errb)
	if err != nil || code != 0 {
		t.Fatalf("code %d err %v", code, err)
	}
	got = inspectOutput{}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if want := []string{srv.URL + "/sitemap.xml", "https://cdn.example/a.xml"}; !slices.Equal(got.Sitemaps, want) {
		t.Errorf("fetched sitemaps %q, want %q", got.Sitemaps, want)
	}
	if w := errb.String(); !strings.Contains(w, "robotstxt: warning: line 3: relative Sitemap \"/sitemap.xml\" resolved to "+srv.URL+"/sitemap.xml") ||
		!strings.Contains(w, "line 5: Sitemap "+srv.URL+"/sitemap.xml repeats line 3") {
		t.Errorf("fetched stderr %q", w)
	}
}

// sitemapSite serves docs (path → body; "" robots.txt → 404) and records
// each request's path, time and User-Agent.
type sitemapSite struct {
	*httptest.Server
	mu   sync.Mutex
	hits []string
	at   []time.Time
	uas  []string
}

func newSitemapSite(t *testing.T, docs func(base string) map[string]string) *sitemapSite {
	s := &sitemapSite{}
	var d map[string]string
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits = append(s.hits, r.URL.RequestURI())
		s.at = append(s.at, time.Now())
		s.uas = append(s.uas, r.Header.Get("User-Agent"))
		s.mu.Unlock()
		body, ok := d[r.URL.RequestURI()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	d = docs(s.URL)
	return s
}

// TestMain spaces the sitemaps command's requests by 20 ms, not 1 s, where
// robots.txt gives no Crawl-delay (and before it is known): the tests check
// the spacing against sitemapsDelay, and need not wait a second a run.
func TestMain(m *testing.M) {
	sitemapsDelay = 20 * time.Millisecond
	os.Exit(m.Run())
}

func runSitemaps(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = runMain(append([]string{"sitemaps"}, args...), nil, &out, &errb)
	return code, out.String(), errb.String()
}

func TestSitemapsCommandSite(t *testing.T) {
	s := newSitemapSite(t, func(base string) map[string]string {
		return map[string]string{
			"/robots.txt": "User-agent: *\nDisallow: /private/\nCrawl-delay: 0.1\nSitemap: /sitemap.xml\nSitemap: " + base + "/private/s.xml\nSitemap: /news.txt\n",
			"/sitemap.xml": `<sitemapindex><sitemap><loc>` + base + `/s1.xml.gz</loc></sitemap><sitemap><loc>http://other.example/s.xml</loc></sitemap>` +
				`<sitemap><loc>` + base + `/s2.xml</loc></sitemap></sitemapindex>`,
			"/s1.xml.gz":     testutil.Gzip(testutil.URLSet(base+"/a", base+"/b", "http://other.example/x", base+"/c")),
			"/s2.xml":        testutil.URLSet(base+"/b", base+"/d"),
			"/news.txt":      base + "/e\n" + base + "/a\n",
			"/private/s.xml": testutil.URLSet(base + "/secret"),
		}
	})
	code, out, errs := runSitemaps("-agent", "examplebot", s.URL+"/")
	want := strings.Join([]string{s.URL + "/a", s.URL + "/b", s.URL + "/c", s.URL + "/d", s.URL + "/e"}, "\n") + "\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	if code != 1 {
		t.Errorf("exit %d, want 1 (a disallowed sitemap was not read)", code)
	}
	for _, line := range []string{
		"robotstxt: " + s.URL + "/s1.xml.gz: urlset, 4 found, 3 printed, rejected 1 (other host)\n",
		"robotstxt: " + s.URL + "/s2.xml: urlset, 2 found, 1 printed, filtered 1 (printed already)\n",
		"robotstxt: " + s.URL + "/sitemap.xml: sitemapindex, 3 found, 2 children, rejected 1 (other host)\n",
		"robotstxt: " + s.URL + "/private/s.xml: not read: sitemap: " + s.URL + "/private/s.xml not fetched: disallowed: line 2: Disallow: /private/\n",
		"robotstxt: " + s.URL + "/news.txt: text, 2 found, 1 printed, filtered 1 (printed already)\n",
		"relative Sitemap \"/sitemap.xml\" resolved to " + s.URL + "/sitemap.xml",
	} {
		if !strings.Contains(errs, line) {
			t.Errorf("stderr lacks %q:\n%s", line, errs)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Contains(s.hits, "/private/s.xml") {
		t.Errorf("a disallowed sitemap was fetched: %q", s.hits)
	}
	for i := 1; i < len(s.at); i++ {
		if gap := s.at[i].Sub(s.at[i-1]); gap < 100*time.Millisecond {
			t.Errorf("requests %q and %q %s apart, under the Crawl-delay of 100ms", s.hits[i-1], s.hits[i], gap)
		}
	}
	for _, ua := range s.uas {
		if !strings.HasPrefix(ua, "examplebot") {
			t.Errorf("User-Agent %q", ua)
		}
	}
}

func TestSitemapsCommandOneSitemap(t *testing.T) {
	s := newSitemapSite(t, func(base string) map[string]string {
		return map[string]string{
			"/robots.txt": "User-agent: *\nCrawl-delay: 0\n",
			"/s.xml":      testutil.URLSet(base+"/old|2020-01-01", base+"/new|2025-03-01", base+"/unknown"),
			"/broken.xml": testutil.URLSet(base+"/one", base+"/two")[:150] + "<url><loc>" + base + "/thr",
			"/page.html":  "<!DOCTYPE html><html><head><title>Not found</title></head><body>oops</body></html>",
			"/empty.txt":  "User-agent: *\n",
		}
	})
	code, out, errs := runSitemaps(s.URL+"/s.xml", "-since", "2025-01-01")
	if code != 0 || out != s.URL+"/new\n"+s.URL+"/unknown\n" {
		t.Errorf("since: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if !strings.Contains(errs, "filtered 1 (not modified since)") {
		t.Errorf("stderr %q", errs)
	}

	// A truncated sitemap: the URLs before the break are printed, exit 1.
	code, out, errs = runSitemaps(s.URL + "/broken.xml")
	if code != 1 || !strings.HasPrefix(out, s.URL+"/one\n") || !strings.Contains(errs, "error:") {
		t.Errorf("broken: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// An HTML page is not a sitemap.
	code, out, errs = runSitemaps(s.URL + "/page.html")
	if code != 1 || out != "" || !strings.Contains(errs, "not a sitemap") {
		t.Errorf("html: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// 404.
	code, _, errs = runSitemaps(s.URL + "/missing.xml")
	if code != 1 || !strings.Contains(errs, "404 Not Found") {
		t.Errorf("404: exit %d, stderr %q", code, errs)
	}
	// A site that announces no sitemap.
	code, out, errs = runSitemaps(s.URL)
	if code != 1 || out != "" || !strings.Contains(errs, "announces no sitemap") {
		t.Errorf("none: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestSitemapsCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"ftp://example.com/s.xml"},
		{"/local/path.xml"},
		{"http://example.com/", "http://example.com/s.xml"},
		{"-since", "yesterday", "http://example.com/"},
		{"-dialect", "nope", "http://example.com/"},
	} {
		code, out, errs := runSitemaps(args...)
		if code != 2 || out != "" || !strings.Contains(errs, "robotstxt -h shows the usage") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	var out bytes.Buffer
	if code := runMain([]string{"sitemaps", "-h"}, nil, &out, io.Discard); code != 0 || !strings.Contains(out.String(), "-since DATE") {
		t.Errorf("-h: %d %q", code, out.String())
	}
}

// failWriter is a standard output that fails (a closed pipe, a full disk).
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// A write error on stdout exits 1 (not 2, the usage status), with the
// error on stderr, and stops the walk: the next sitemap is not fetched.
func TestSitemapsCommandWriteError(t *testing.T) {
	s := newSitemapSite(t, func(base string) map[string]string {
		return map[string]string{
			"/robots.txt": "User-agent: *\nCrawl-delay: 0.05\nSitemap: /index.xml\n",
			"/index.xml":  `<sitemapindex><sitemap><loc>` + base + `/s1.xml</loc></sitemap><sitemap><loc>` + base + `/s2.xml</loc></sitemap></sitemapindex>`,
			"/s1.xml":     testutil.URLSet(base+"/a", base+"/b"),
			"/s2.xml":     testutil.URLSet(base + "/c"),
		}
	})
	var errb bytes.Buffer
	code := runMain([]string{"sitemaps", s.URL + "/"}, nil, failWriter{}, &errb)
	if code != 1 || !strings.Contains(errb.String(), "robotstxt: writing the URLs to standard output: broken pipe") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Contains(s.hits, "/s2.xml") {
		t.Errorf("the walk went on after the write error: %q", s.hits)
	}
}

// Past sitemapsRemember different URLs, the command says so once, prints
// the further URLs without de-duplicating them, and exits 1.
func TestSitemapsCommandDedupCap(t *testing.T) {
	defer func(n int) { sitemapsRemember = n }(sitemapsRemember)
	sitemapsRemember = 3
	s := newSitemapSite(t, func(base string) map[string]string {
		return map[string]string{
			"/robots.txt": "User-agent: *\nCrawl-delay: 0\n",
			"/s.xml":      testutil.URLSet(base+"/a", base+"/a", base+"/b", base+"/c", base+"/d", base+"/a", base+"/e", base+"/d"),
		}
	})
	code, out, errs := runSitemaps(s.URL + "/s.xml")
	want := strings.Join([]string{"/a", "/b", "/c", "/d", "/a", "/e", "/d"}, "\n"+s.URL)
	if code != 1 || out != s.URL+want+"\n" {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", code, out, s.URL+want+"\n")
	}
	if n := strings.Count(errs, "more than 3 different page URLs"); n != 1 {
		t.Errorf("said %d times: %q", n, errs)
	}
}

// Pages robots.txt disallows are left out of the output, counted in their
// sitemap's line; a robots.txt that could not be read is said to be so,
// not to announce no sitemap.
func TestSitemapsCommandRobotsDisallowsAndFailures(t *testing.T) {
	s := newSitemapSite(t, func(base string) map[string]string {
		return map[string]string{
			"/robots.txt": "User-agent: *\nDisallow: /private/\nSitemap: /s.xml\n",
			"/s.xml":      testutil.URLSet(base+"/a", base+"/private/p", base+"/b"),
		}
	})
	code, out, errs := runSitemaps("-agent", "examplebot", s.URL+"/")
	if code != 0 || out != s.URL+"/a\n"+s.URL+"/b\n" || !strings.Contains(errs, "urlset, 3 found, 2 printed, filtered 1 (disallowed by robots.txt)") {
		t.Errorf("exit %d, stdout %q, stderr %q: want the disallowed page left out and counted", code, out, errs)
	}
	s.mu.Lock()
	if len(s.at) != 2 || s.at[1].Sub(s.at[0]) < sitemapsDelay {
		t.Errorf("requests %q at %v: want two, sitemapsDelay (no Crawl-delay) apart", s.hits, s.at)
	}
	s.mu.Unlock()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "busy", http.StatusServiceUnavailable) }))
	t.Cleanup(down.Close)
	code, out, errs = runSitemaps("-agent", "examplebot", down.URL+"/")
	if code != 1 || out != "" || strings.Contains(errs, "announces no sitemap") || !strings.Contains(errs, "was not read, so no sitemap is known") {
		t.Errorf("503: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
