package sitemap

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/testkit/testutil"
)

// wkDocs is a site's documents by path: a body, or "!503", "!404", "!hang"
// ... for an answer of that status (see serveDocs).
type wkDocs map[string]string

// wkFarm serves sites (host → documents) on one loopback server; it
// records every hit and the User-Agent of each.
func wkFarm(t *testing.T, sites map[string]wkDocs) (*testutil.Farm, *http.Client, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var uas []string
	fs := map[string]*testutil.Site{}
	for host, d := range sites {
		fs[host] = &testutil.Site{Handle: func(w http.ResponseWriter, r *http.Request) bool {
			mu.Lock()
			uas = append(uas, r.Header.Get("User-Agent"))
			mu.Unlock()
			body, ok := d[r.URL.RequestURI()]
			if !ok {
				http.NotFound(w, r)
				return true
			}
			if code, ok := strings.CutPrefix(body, "!"); ok {
				var status int
				var extra string
				fmt.Sscanf(code, "%d %s", &status, &extra)
				switch {
				case status >= 300 && status < 400:
					http.Redirect(w, r, extra, status)
				case extra != "":
					w.Header().Set("Retry-After", extra)
					w.WriteHeader(status)
				default:
					w.WriteHeader(status)
				}
				return true
			}
			fmt.Fprint(w, body)
			return true
		}}
	}
	f := testutil.NewFarm(t, fs)
	tr := f.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	return f, &http.Client{Transport: tr}, func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(uas) }
}

// collect walks and returns the page URLs handed over and the reports.
func wkCollect(t *testing.T, cfg Config, scope string, roots ...string) ([]string, []Report) {
	t.Helper()
	var got []string
	reps := NewWalker(cfg).Walk(context.Background(), scope, roots, func(p Page) error {
		if p.Sitemap == "" {
			t.Errorf("page %s without its sitemap", p.Loc)
		}
		got = append(got, p.Loc)
		return nil
	})
	return got, reps
}

func wkLower(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strings.ToLower(x)
	}
	return out
}

func wkReport(reps []Report, u string) *Report {
	for i := range reps {
		if reps[i].URL == u {
			return &reps[i]
		}
	}
	return nil
}

func TestWalkURLSetAndIndex(t *testing.T) {
	f, cl, uas := wkFarm(t, map[string]wkDocs{"a.test": {
		"/sitemap.xml": testutil.SitemapIndex("http://a.test/s1.xml", "/s2.xml", "http://a.test/s1.xml"),
		"/s1.xml":      testutil.URLSet("http://a.test/p1", "http://a.test/p2"),
		"/s2.xml":      testutil.URLSet("http://a.test/p3", "/p4"),
	}})
	got, reps := wkCollect(t, Config{Client: cl, UserAgent: "walkbot/1.0"}, "http://a.test", "http://a.test/sitemap.xml")
	if want := []string{"http://a.test/p1", "http://a.test/p2", "http://a.test/p3", "http://a.test/p4"}; !slices.Equal(got, want) {
		t.Errorf("pages %q, want %q (document order)", got, want)
	}
	// Children before their parent, in document order.
	var order []string
	for _, r := range reps {
		order = append(order, r.URL)
	}
	if want := []string{"http://a.test/s1.xml", "http://a.test/s2.xml", "http://a.test/sitemap.xml"}; !slices.Equal(order, want) {
		t.Errorf("report order %q, want %q", order, want)
	}
	root := wkReport(reps, "http://a.test/sitemap.xml")
	if root.Format != FormatIndex || root.Found != 3 || root.Children != 2 || root.Rejected[ReasonAlreadyRead] != 1 || root.Err != nil || root.Status != 200 {
		t.Errorf("root report %+v", root)
	}
	s1 := wkReport(reps, "http://a.test/s1.xml")
	if s1.Format != FormatURLSet || s1.Found != 2 || s1.Handed != 2 || s1.Parent != "http://a.test/sitemap.xml" || s1.Depth != 1 || s1.Bytes == 0 {
		t.Errorf("s1 report %+v", s1)
	}
	if p := f.Paths("a.test"); !slices.Equal(p, []string{"/s1.xml", "/s2.xml", "/sitemap.xml"}) {
		t.Errorf("fetched %q: each sitemap once", p)
	}
	for _, ua := range uas() {
		if ua != "walkbot/1.0" {
			t.Errorf("User-Agent %q", ua)
		}
	}
}

func TestWalkCycles(t *testing.T) {
	f, cl, _ := wkFarm(t, map[string]wkDocs{"a.test": {
		"/self.xml": testutil.SitemapIndex("http://a.test/self.xml", "http://a.test/leaf.xml"),
		"/a.xml":    testutil.SitemapIndex("http://a.test/b.xml"),
		"/b.xml":    testutil.SitemapIndex("http://a.test/a.xml", "http://a.test/leaf.xml"),
		"/leaf.xml": testutil.URLSet("http://a.test/p"),
	}})
	got, reps := wkCollect(t, Config{Client: cl}, "http://a.test", "http://a.test/self.xml", "http://a.test/a.xml")
	if !slices.Equal(got, []string{"http://a.test/p"}) {
		t.Errorf("pages %q", got)
	}
	if r := wkReport(reps, "http://a.test/self.xml"); r.Rejected[ReasonAlreadyRead] != 1 || r.Children != 1 {
		t.Errorf("self-listing index %+v", r)
	}
	if r := wkReport(reps, "http://a.test/b.xml"); r.Rejected[ReasonAlreadyRead] != 2 {
		t.Errorf("A→B→A: b %+v", r)
	}
	for _, p := range []string{"/a.xml", "/b.xml", "/leaf.xml", "/self.xml"} {
		if n := len(slices.DeleteFunc(f.Paths("a.test"), func(s string) bool { return s != p })); n != 1 {
			t.Errorf("%s fetched %d times", p, n)
		}
	}
}

func TestWalkDepthAndSitemapCap(t *testing.T) {
	d := wkDocs{}
	for i := 0; i < 8; i++ {
		d[fmt.Sprintf("/i%d.xml", i)] = testutil.SitemapIndex(fmt.Sprintf("http://a.test/i%d.xml", i+1))
	}
	_, cl, _ := wkFarm(t, map[string]wkDocs{"a.test": d})
	_, reps := wkCollect(t, Config{Client: cl, MaxIndexDepth: 3}, "http://a.test", "http://a.test/i0.xml")
	if len(reps) != 4 {
		t.Fatalf("%d reports, want 4 (depths 0..3)", len(reps))
	}
	if r := wkReport(reps, "http://a.test/i3.xml"); r.Depth != 3 || r.Rejected[ReasonTooDeep] != 1 || r.Children != 0 {
		t.Errorf("deepest %+v", r)
	}

	d = wkDocs{"/root.xml": testutil.SitemapIndex("http://a.test/c0.xml", "http://a.test/c1.xml", "http://a.test/c2.xml", "http://a.test/c3.xml")}
	for i := 0; i < 4; i++ {
		d[fmt.Sprintf("/c%d.xml", i)] = testutil.URLSet(fmt.Sprintf("http://a.test/p%d", i))
	}
	_, cl, _ = wkFarm(t, map[string]wkDocs{"a.test": d})
	got, reps := wkCollect(t, Config{Client: cl, MaxSitemaps: 3}, "http://a.test", "http://a.test/root.xml")
	if !slices.Equal(got, []string{"http://a.test/p0", "http://a.test/p1"}) {
		t.Errorf("pages %q", got)
	}
	if r := wkReport(reps, "http://a.test/root.xml"); r.Children != 2 || r.Rejected[ReasonSitemapCap] != 2 {
		t.Errorf("root %+v", r)
	}

	// A child queued before the cap that finds it spent when its turn
	// comes is counted like one listed past it: in its index's Rejected,
	// with no report (and no error) of its own.
	d = wkDocs{
		"/root.xml": testutil.SitemapIndex("http://a.test/c1.xml", "http://a.test/c2.xml"),
		"/c1.xml":   testutil.SitemapIndex("http://a.test/u1.xml", "http://a.test/u2.xml"),
		"/c2.xml":   testutil.SitemapIndex("http://a.test/u3.xml"),
		"/u1.xml":   testutil.URLSet("http://a.test/p1"),
	}
	f, cl, _ := wkFarm(t, map[string]wkDocs{"a.test": d})
	got, reps = wkCollect(t, Config{Client: cl, MaxSitemaps: 3}, "http://a.test", "http://a.test/root.xml")
	if !slices.Equal(got, []string{"http://a.test/p1"}) || len(reps) != 3 {
		t.Errorf("pages %q, %d reports", got, len(reps))
	}
	for _, r := range reps {
		if r.Err != nil {
			t.Errorf("%s: error %v: a child a limit kept from being fetched is no failed document", r.URL, r.Err)
		}
		if r.Format == FormatIndex && r.Found != r.Children+r.Rejected[ReasonSitemapCap] {
			t.Errorf("%s: found %d != children %d + rejected %v", r.URL, r.Found, r.Children, r.Rejected)
		}
	}
	if r := wkReport(reps, "http://a.test/root.xml"); r == nil || r.Children != 1 || r.Rejected[ReasonSitemapCap] != 1 {
		t.Errorf("root %+v", r)
	}
	if r := wkReport(reps, "http://a.test/c1.xml"); r == nil || r.Children != 1 || r.Rejected[ReasonSitemapCap] != 1 {
		t.Errorf("c1 %+v", r)
	}
	if slices.Contains(f.Paths("a.test"), "/c2.xml") {
		t.Errorf("c2 fetched past the cap")
	}
}

func TestWalkScope(t *testing.T) {
	f, cl, _ := wkFarm(t, map[string]wkDocs{
		"a.test": {
			"/sitemap.xml":     testutil.SitemapIndex("http://b.test/child.xml", "http://a.test/dir/s.xml", "https://a.test/ok.xml", "http://a.test:8080/port.xml"),
			"/dir/s.xml":       testutil.URLSet("http://a.test/dir/p1", "http://a.test/other/p2", "http://b.test/p3", "HTTP://A.TEST/dir/p4"),
			"/ok.xml":          testutil.URLSet(),
			"/announced-b.xml": testutil.URLSet("http://b.test/x"),
		},
		"cdn.test": {
			"/s.xml":     testutil.SitemapIndex("http://cdn.test/s2.xml"),
			"/s2.xml":    testutil.URLSet("http://a.test/from-cdn", "http://cdn.test/cdn-page"),
			"/other.xml": testutil.URLSet("http://b.test/y"),
		},
		"b.test": {"/child.xml": testutil.URLSet("http://b.test/z")},
	})
	got, reps := wkCollect(t, Config{Client: cl}, "http://a.test", "http://a.test/sitemap.xml", "http://cdn.test/s.xml")
	// The host compares case-insensitively (the reader may or may not
	// lower-case the scheme and host: compare lower-cased).
	want := []string{"http://a.test/dir/p1", "http://a.test/other/p2", "http://a.test/dir/p4", "http://a.test/from-cdn"}
	if !slices.Equal(wkLower(got), want) {
		t.Errorf("pages %q, want %q", got, want)
	}
	if r := wkReport(reps, "http://a.test/sitemap.xml"); r.Rejected[ReasonOtherHost] != 2 || r.Children != 2 {
		t.Errorf("index %+v: a child on another host (b.test, a.test:8080) is refused", r)
	}
	if r := wkReport(reps, "http://a.test/dir/s.xml"); r.Rejected[ReasonOtherHost] != 1 || r.Handed != 3 {
		t.Errorf("urlset %+v", r)
	}
	if r := wkReport(reps, "http://cdn.test/s2.xml"); r.Rejected[ReasonOtherHost] != 1 || r.Handed != 1 {
		t.Errorf("cross-submitted %+v: pages of the announcing host only", r)
	}
	if p := f.Paths("b.test"); len(p) != 0 {
		t.Errorf("cross-host child fetched: %q", p)
	}

	// Strict: under the listing sitemap's directory.
	got, reps = wkCollect(t, Config{Client: cl, StrictDirectory: true}, "http://a.test", "http://a.test/dir/s.xml")
	if !slices.Equal(got, []string{"http://a.test/dir/p1"}) {
		t.Errorf("strict pages %q", got)
	}
	if r := wkReport(reps, "http://a.test/dir/s.xml"); r.Rejected[ReasonOutsideDir] != 2 || r.Rejected[ReasonOtherHost] != 1 {
		t.Errorf("strict report %+v", r)
	}

	// No scope: each root's own authority.
	got, reps = wkCollect(t, Config{Client: cl}, "", "http://cdn.test/other.xml", "http://a.test:080/announced-b.xml")
	if len(got) != 0 {
		t.Errorf("own-host scope handed %q", got)
	}
	if r := wkReport(reps, "http://a.test:080/announced-b.xml"); r == nil || r.Scope != "http://a.test" || r.Rejected[ReasonOtherHost] != 1 {
		t.Errorf("report %+v: the scope is the root's authority, as robots.txt names it", r)
	}

	// The host is compared as robots.txt's authority: an internationalised
	// name matches its punycode, a port's leading zeros and the scheme's
	// default port do not count.
	_, cl, _ = wkFarm(t, map[string]wkDocs{"xn--bcher-kva.test": {
		"/s.xml": testutil.URLSet("http://bücher.test/idn", "http://XN--BCHER-KVA.test:080/port", "https://xn--bcher-kva.test:443/tls", "http://xn--bcher-kva.test:8080/other"),
	}})
	got, reps = wkCollect(t, Config{Client: cl}, "http://xn--bcher-kva.test", "http://xn--bcher-kva.test/s.xml")
	if len(got) != 3 {
		t.Errorf("pages %q, want the first three", got)
	}
	if r := wkReport(reps, "http://xn--bcher-kva.test/s.xml"); r == nil || r.Rejected[ReasonOtherHost] != 1 {
		t.Errorf("report %+v: only the other port is another host", r)
	}
}

func TestWalkDisallowed(t *testing.T) {
	f, cl, _ := wkFarm(t, map[string]wkDocs{"a.test": {
		"/sitemap.xml":         testutil.SitemapIndex("http://a.test/private/s.xml", "http://a.test/s.xml"),
		"/private/s.xml":       testutil.URLSet("http://a.test/secret"),
		"/s.xml":               testutil.URLSet("http://a.test/p"),
		"/private/sitemap.xml": testutil.URLSet("http://a.test/q"),
	}})
	var asked []string
	allow := func(_ context.Context, u *url.URL) (bool, string) {
		asked = append(asked, u.Path)
		if strings.HasPrefix(u.Path, "/private/") {
			return false, "line 2: Disallow: /private/"
		}
		return true, ""
	}
	got, reps := wkCollect(t, Config{Client: cl, Allow: allow}, "http://a.test", "http://a.test/sitemap.xml", "http://a.test/private/sitemap.xml")
	if !slices.Equal(got, []string{"http://a.test/p"}) {
		t.Errorf("pages %q", got)
	}
	for _, u := range []string{"http://a.test/private/s.xml", "http://a.test/private/sitemap.xml"} {
		r := wkReport(reps, u)
		var de *DisallowedError
		if r == nil || !errors.As(r.Err, &de) || !errors.Is(r.Err, ErrDisallowed) || de.Reason != "line 2: Disallow: /private/" || r.Status != 0 {
			t.Errorf("%s: report %+v", u, r)
		}
	}
	if p := f.Paths("a.test"); !slices.Equal(p, []string{"/s.xml", "/sitemap.xml"}) {
		t.Errorf("fetched %q: a disallowed sitemap must not be", p)
	}
	if len(asked) != 4 {
		t.Errorf("Allow asked for %q", asked)
	}
}

func TestWalkRetries(t *testing.T) {
	t.Parallel() // waits in real time
	var mu sync.Mutex
	n := map[string]int{}
	f, cl, _ := wkFarm(t, map[string]wkDocs{"a.test": {
		"/404.xml":  "!404",
		"/loop.xml": "!302 /loop.xml",
		"/long.xml": "!503 3600",
	}})
	// Answers that change with the attempt: put a handler in front.
	_ = f
	flaky := testutil.NewFarm(t, map[string]*testutil.Site{"f.test": {Handle: func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		n[r.URL.Path]++
		k := n[r.URL.Path]
		mu.Unlock()
		switch {
		case r.URL.Path == "/always.xml":
			w.WriteHeader(http.StatusBadGateway)
		case r.URL.Path == "/429.xml" && k == 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case r.URL.Path == "/reset.xml" && k == 1:
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		default:
			fmt.Fprint(w, testutil.URLSet("http://f.test"+r.URL.Path+"/page"))
		}
		return true
	}}})
	ftr := flaky.Transport()
	t.Cleanup(ftr.CloseIdleConnections)
	fcl := &http.Client{Transport: ftr}

	cfg := Config{Client: fcl, RetryWait: 10 * time.Millisecond, Retries: 3}
	got, reps := wkCollect(t, cfg, "http://f.test", "http://f.test/always.xml", "http://f.test/429.xml", "http://f.test/reset.xml")
	if !slices.Equal(got, []string{"http://f.test/429.xml/page", "http://f.test/reset.xml/page"}) {
		t.Errorf("pages %q", got)
	}
	var fe *FetchError
	if r := wkReport(reps, "http://f.test/always.xml"); !errors.As(r.Err, &fe) || fe.Status != 502 || fe.Attempts != 4 || r.Status != 502 {
		t.Errorf("always 502: %+v (%v)", r, r.Err)
	}
	mu.Lock()
	if n["/always.xml"] != 4 || n["/429.xml"] != 2 || n["/reset.xml"] != 2 {
		t.Errorf("attempts %v", n)
	}
	mu.Unlock()
	// Retry-After: 1 was waited out.
	if hs := flaky.Pages("f.test", false); true {
		var first, second time.Time
		for _, h := range hs {
			if h.Path == "/429.xml" {
				if first.IsZero() {
					first = h.At
				} else {
					second = h.At
				}
			}
		}
		if second.Sub(first) < time.Second {
			t.Errorf("429 retried after %s, before its Retry-After of 1s", second.Sub(first))
		}
	}

	_, reps = wkCollect(t, Config{Client: cl, RetryWait: 10 * time.Millisecond, MaxRetryAfter: time.Minute}, "http://a.test",
		"http://a.test/404.xml", "http://a.test/loop.xml", "http://a.test/long.xml")
	if r := wkReport(reps, "http://a.test/404.xml"); !errors.As(r.Err, &fe) || fe.Status != 404 || fe.Attempts != 1 {
		t.Errorf("404: %+v", r.Err)
	}
	if r := wkReport(reps, "http://a.test/loop.xml"); !errors.As(r.Err, &fe) || fe.Attempts != 1 || !strings.Contains(r.Err.Error(), "more than 5 redirects") {
		t.Errorf("redirect loop: %v", r.Err)
	}
	if r := wkReport(reps, "http://a.test/long.xml"); !errors.As(r.Err, &fe) || fe.Attempts != 1 || !strings.Contains(r.Err.Error(), "Retry-After 1h0m0s, longer than the 1m0s waited out") {
		t.Errorf("long Retry-After: %v", r.Err)
	}
}

func TestWalkFilters(t *testing.T) {
	f, cl, _ := wkFarm(t, map[string]wkDocs{"a.test": {
		"/sitemap.xml": testutil.SitemapIndex("http://a.test/old.xml|2020-01-01", "http://a.test/new.xml|2025-06-01", "http://a.test/unknown.xml"),
		"/old.xml":     testutil.URLSet("http://a.test/never"),
		"/new.xml":     testutil.URLSet("http://a.test/n1|2025-06-01", "http://a.test/n2|2020-01-01", "http://a.test/n3", "http://a.test/skip-me|2025-06-02"),
		"/unknown.xml": testutil.URLSet("http://a.test/u1", "http://a.test/u2", "http://a.test/u3"),
	}})
	since := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	keep := func(p Page) bool { return !strings.Contains(p.Loc, "skip") }
	var got []string
	reps := NewWalker(Config{Client: cl, Since: since, Keep: keep, MaxURLs: 4}).Walk(context.Background(), "http://a.test", []string{"http://a.test/sitemap.xml"}, func(p Page) error {
		if p.Loc == "http://a.test/u1" {
			return errors.New("already visited")
		}
		got = append(got, p.Loc)
		return nil
	})
	if want := []string{"http://a.test/n1", "http://a.test/n3", "http://a.test/u2", "http://a.test/u3"}; !slices.Equal(got, want) {
		t.Errorf("pages %q, want %q", got, want)
	}
	if p := f.Paths("a.test"); slices.Contains(p, "/old.xml") {
		t.Errorf("a child not modified since was fetched: %q", p)
	}
	if r := wkReport(reps, "http://a.test/sitemap.xml"); r.Filtered[ReasonNotModified] != 1 || r.Children != 2 {
		t.Errorf("index %+v", r)
	}
	if r := wkReport(reps, "http://a.test/new.xml"); r.Filtered[ReasonNotModified] != 1 || r.Filtered[ReasonPredicate] != 1 || r.Handed != 2 || r.Found != 4 {
		t.Errorf("new %+v", r)
	}
	if r := wkReport(reps, "http://a.test/unknown.xml"); r.Filtered["already visited"] != 1 || r.Handed != 2 || r.Cut != ReasonURLCap || r.Found != 3 {
		t.Errorf("unknown %+v", r)
	}

	// The cap reached in the first child: the second is not fetched.
	f, cl, _ = wkFarm(t, map[string]wkDocs{"a.test": {
		"/sitemap.xml": testutil.SitemapIndex("http://a.test/one.xml", "http://a.test/two.xml"),
		"/one.xml":     testutil.URLSet("http://a.test/1", "http://a.test/2", "http://a.test/3"),
		"/two.xml":     testutil.URLSet("http://a.test/4"),
	}})
	got, reps = wkCollect(t, Config{Client: cl, MaxURLs: 2}, "http://a.test", "http://a.test/sitemap.xml")
	if !slices.Equal(got, []string{"http://a.test/1", "http://a.test/2"}) {
		t.Errorf("capped pages %q", got)
	}
	if r := wkReport(reps, "http://a.test/sitemap.xml"); r.Filtered[ReasonURLCap] != 1 || r.Children != 1 {
		t.Errorf("capped index %+v", r)
	}
	if r := wkReport(reps, "http://a.test/one.xml"); r.Cut != ReasonURLCap || r.Handed != 2 {
		t.Errorf("capped child %+v", r)
	}
	if slices.Contains(f.Paths("a.test"), "/two.xml") {
		t.Errorf("fetched past the cap")
	}
}

func TestWalkContext(t *testing.T) {
	_, cl, _ := wkFarm(t, map[string]wkDocs{"a.test": {"/s.xml": testutil.URLSet("http://a.test/1", "http://a.test/2", "http://a.test/3")}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	reps := NewWalker(Config{Client: cl}).Walk(ctx, "", []string{"http://a.test/s.xml", "http://a.test/s2.xml"}, func(p Page) error {
		got = append(got, p.Loc)
		cancel()
		return nil
	})
	if len(reps) != 2 || !errors.Is(reps[1].Err, context.Canceled) {
		t.Errorf("reports %+v", reps)
	}
	if len(got) != 1 || !errors.Is(reps[0].Err, context.Canceled) {
		t.Errorf("pages %q", got)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"5", 5 * time.Second, true},
		{" 0 ", 0, true},
		{"-1", 0, false},
		{"99999999999", 24 * time.Hour, true},
		{"Thu, 01 Jan 2026 00:00:30 GMT", 30 * time.Second, true},
		{"Wed, 31 Dec 2025 00:00:00 GMT", 0, true},
		{"soon", 0, false},
	} {
		got, ok := walkRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("walkRetryAfter(%q) = %s, %v; want %s, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// The reader's formats, errors and limits reach the reports.
func TestWalkDocuments(t *testing.T) {
	many := make([]string, 50_001)
	for i := range many {
		many[i] = fmt.Sprintf("http://a.test/m/%d", i)
	}
	full := testutil.URLSet("http://a.test/t1", "http://a.test/t2", "http://a.test/t3")
	_, cl, _ := wkFarm(t, map[string]wkDocs{"a.test": {
		"/gz.xml.gz":     testutil.Gzip(testutil.URLSet("http://a.test/g1")),
		"/double.gz":     testutil.Gzip(testutil.Gzip(testutil.URLSet("http://a.test/d1"))),
		"/soft404.xml":   "<!DOCTYPE html><html><head><title>Not found</title></head><body><p>Sorry</p></body></html>",
		"/truncated.xml": full[:strings.Index(full, "http://a.test/t3")],
		"/many.xml":      testutil.URLSet(many...),
		"/text.txt":      "http://a.test/x1\n\nhttp://a.test/x2\r\n",
	}})
	var n int
	var last string
	reps := NewWalker(Config{Client: cl}).Walk(context.Background(), "http://a.test", []string{
		"http://a.test/gz.xml.gz", "http://a.test/double.gz", "http://a.test/soft404.xml", "http://a.test/truncated.xml", "http://a.test/many.xml", "http://a.test/text.txt",
	}, func(p Page) error { n++; last = p.Loc; return nil })
	for _, tc := range []struct {
		url    string
		format Format
		handed int
		err    error // nil: read to its end; else errors.Is
	}{
		{"http://a.test/gz.xml.gz", FormatURLSet, 1, nil},
		{"http://a.test/double.gz", FormatURLSet, 1, nil},
		{"http://a.test/soft404.xml", FormatUnknown, 0, ErrNotSitemap},
		{"http://a.test/truncated.xml", FormatURLSet, 2, errAny},
		{"http://a.test/many.xml", FormatURLSet, 50_000, ErrLimit},
		{"http://a.test/text.txt", FormatText, 2, nil},
	} {
		r := wkReport(reps, tc.url)
		if r == nil {
			t.Errorf("%s: no report", tc.url)
			continue
		}
		switch {
		case r.Format != tc.format || r.Handed != tc.handed:
			t.Errorf("%s: %s, handed %d; want %s, %d", tc.url, r.Format, r.Handed, tc.format, tc.handed)
		case tc.err == nil && r.Err != nil, tc.err == errAny && r.Err == nil, tc.err != nil && tc.err != errAny && !errors.Is(r.Err, tc.err):
			t.Errorf("%s: error %v, want %v", tc.url, r.Err, tc.err)
		}
	}
	if n != 1+1+2+50_000+2 || last != "http://a.test/x2" {
		t.Errorf("%d pages, last %q", n, last)
	}
}

// errAny stands for "some error" in a case table.
var errAny = errors.New("any error")

// Spool: a document is read whole before its URLs are handed over, so that
// fn's requests to the same host pass a one-in-flight gate (without it
// they would wait for the sitemap's response to end, which waits for them).
func TestWalkSpool(t *testing.T) {
	locs := make([]string, 40_000) // about 1.2 MB: memory head and file tail
	for i := range locs {
		locs[i] = fmt.Sprintf("http://a.test/page/%d", i)
	}
	f, _, _ := wkFarm(t, map[string]wkDocs{"a.test": {"/big.xml": testutil.URLSet(locs...), "/page/0": "", "/page/39999": ""}})
	tr := f.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	lim := hostlimit.New(hostlimit.Config{Delay: func(string) time.Duration { return time.Millisecond }})
	cl := &http.Client{Transport: lim.Transport(tr)}
	// Without Spool the first request below would wait for the sitemap's
	// response, which waits for it: the context ends that.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var n int
	reps := NewWalker(Config{Client: cl, Spool: true, SpoolDir: t.TempDir()}).Walk(ctx, "", []string{"http://a.test/big.xml"}, func(p Page) error {
		n++
		if n == 1 || n == len(locs) {
			// A request to the same host through the same gate.
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.Loc, nil)
			res, err := cl.Do(req)
			if err != nil {
				return err
			}
			res.Body.Close()
		}
		return nil
	})
	if r := reps[0]; r.Err != nil || r.Handed != len(locs) || n != len(locs) {
		t.Fatalf("report %+v, %d pages", r, n)
	}
	if got := f.Paths("a.test"); !slices.Equal(got, []string{"/big.xml", "/page/0", "/page/39999"}) {
		t.Errorf("requests %q", got)
	}

	// A body longer than Limits.MaxBytes is cut there: the entries before
	// are handed over, then a LimitError.
	n = 0
	reps = NewWalker(Config{Client: cl, Spool: true, Limits: Limits{MaxBytes: 10_000}}).Walk(ctx, "", []string{"http://a.test/big.xml"}, func(Page) error { n++; return nil })
	var le *LimitError
	if r := reps[0]; !errors.As(r.Err, &le) || le.Limit != "bytes" || n == 0 || n > 400 {
		t.Errorf("cut: %v, %d pages", r.Err, n)
	}
}
