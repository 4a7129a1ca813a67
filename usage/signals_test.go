package usage

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/testkit/testutil"
)

// usageSite serves fixed bodies per path and counts the requests of each.
type usageSite struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string]string // path → body ("" : 404); a "status N\n" prefix sets the status
	hits  map[string]int
}

func newUsageSite(t testing.TB, files map[string]string) *usageSite {
	s := &usageSite{files: files, hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		body, ok := s.files[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		status := 200
		if rest, found := strings.CutPrefix(body, "status 5"); found {
			status, body = 500, rest
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *usageSite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

const tdmPath = "/.well-known/tdmrep.json"

var (
	trainAI = []dialect.Category{dialect.TrainAI}
	aiAll   = []dialect.Category{dialect.TrainAI, dialect.AIInput, dialect.Search}
)

func usage(t *testing.T, r *policy.Resolver, raw string, purposes []dialect.Category) Report {
	t.Helper()
	rep, err := Check(context.Background(), r, mustURL(t, raw), purposes...)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func refusal(rep Report, purposes []dialect.Category) string {
	s, ok := rep.Refusal(purposes, dialect.UseUnknown, false)
	if !ok {
		return ""
	}
	return s.String()
}

// tdmrep.json: the first rule in array order decides, a reservation
// refuses train-ai and ai-input but not search, the file is fetched once
// per origin, and not at all without a declared purpose.
func TestUsageTDMRepFile(t *testing.T) {
	site := newUsageSite(t, map[string]string{
		"/robots.txt": "User-agent: *\nAllow: /\n",
		tdmPath: `[{"location": "/open/*.html$", "tdm-reservation": 0},
			{"location": "/open/", "tdm-reservation": 1, "tdm-policy": "https://example.com/p.json"},
			{"location": "/", "tdm-reservation": 1}]`,
	})
	r := newResolver(t)
	if rep := usage(t, r, site.URL+"/open/a.html", nil); len(rep.Signals) != 0 || site.count(tdmPath) != 0 {
		t.Fatalf("no purpose: %v signals, %d tdmrep.json fetches, want none", rep.Signals, site.count(tdmPath))
	}
	cases := []struct{ path, want string }{
		{"/open/a.html", ""},
		{"/open/a.html?x", "train-ai=n: tdmrep.json rule 1 (location /open/): 1, tdm-policy https://example.com/p.json"},
		{"/other", "train-ai=n: tdmrep.json rule 2 (location /): 1"},
	}
	for _, c := range cases {
		rep := usage(t, r, site.URL+c.path, aiAll)
		if got := refusal(rep, aiAll); got != c.want {
			t.Errorf("%s: %q, want %q", c.path, got, c.want)
		}
		if rep.Usage.Pref(dialect.Search) != dialect.PrefUnknown {
			t.Errorf("%s: search %v, want unknown (a reservation is not about search)", c.path, rep.Usage.Pref(dialect.Search))
		}
	}
	if rep := usage(t, r, site.URL+"/x", aiAll); rep.Usage.Pref(dialect.AIInput) != dialect.PrefDisallow {
		t.Errorf("ai-input: %v, want n", rep.Usage)
	}
	if n := site.count(tdmPath); n != 1 {
		t.Errorf("tdmrep.json fetched %d times, want once", n)
	}
}

// A missing, broken or unreachable tdmrep.json is an origin that does not
// implement the protocol: no signal.
func TestUsageTDMRepMissing(t *testing.T) {
	for name, body := range map[string]string{"broken": `{"location": "/"}`, "5xx": "status 5", "too large": "[" + strings.Repeat(" ", 600<<10) + "]"} {
		site := newUsageSite(t, map[string]string{"/robots.txt": "User-agent: *\nAllow: /\n", tdmPath: body})
		r := newResolver(t)
		rep := usage(t, r, site.URL+"/a", trainAI)
		if len(rep.Signals) != 0 {
			t.Errorf("%s: %v, want no signal", name, rep.Signals)
		}
		st, _ := r.Document(context.Background(), mustURL(t, site.URL+"/a"), site.URL+tdmPath, tdmrepKind)
		if st.Value != nil || st.Err == "" {
			t.Errorf("%s: state %+v, want not implemented with a reason", name, st)
		}
	}
}

// Two resolvers sharing a Store (a fleet) fetch tdmrep.json once between
// them, under a key of its own beside the policy's.
func TestUsageTDMRepStore(t *testing.T) {
	site := newUsageSite(t, map[string]string{"/robots.txt": "User-agent: *\nAllow: /\n", tdmPath: `[{"location": "/", "tdm-reservation": 1}]`})
	store := policy.NewMemoryStore(nil)
	for i := range 2 {
		r := newResolver(t, policy.WithStore(store))
		if got := refusal(usage(t, r, site.URL+"/a", trainAI), trainAI); !strings.Contains(got, "tdmrep.json rule 0") {
			t.Errorf("resolver %d: %q, want the file's rule", i, got)
		}
	}
	if n := site.count(tdmPath); n != 1 {
		t.Errorf("tdmrep.json fetched %d times by two resolvers sharing a Store, want once", n)
	}
	key := "rfc9309 " + site.URL + tdmPath
	if _, ok, _ := store.Get(context.Background(), key); !ok || store.Len() != 2 {
		t.Errorf("Store: %d entries, none under %q", store.Len(), key)
	}
}

// Concurrent asks of one origin share one fetch.
func TestUsageTDMRepSingleFlight(t *testing.T) {
	site := newUsageSite(t, map[string]string{"/robots.txt": "User-agent: *\nAllow: /\n", tdmPath: `[]`})
	r := newResolver(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = Check(context.Background(), r, mustURL(t, site.URL+"/a"), dialect.TrainAI)
		}()
	}
	wg.Wait()
	if n := site.count(tdmPath); n != 1 {
		t.Errorf("tdmrep.json fetched %d times, want once", n)
	}
}

const licenseXML = `<?xml version="1.0"?>
<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/"><license><permits type="usage">all</permits></license></content>
  <content url="/articles/"><license>
    <permits type="usage">search ai-input</permits><prohibits type="usage">ai-train</prohibits>
    <payment type="attribution"/>
  </license></content>
</rsl>`

// After the fetch: headers and meta of the response. A tdm-reservation
// header replaces the file's value; Content-Usage and noai add to it; a
// licence a Link header points to decides per purpose, the narrower
// content scope winning; it is fetched once however many responses point
// to it; one that cannot be obtained refuses, saying so.
func TestResponseUsage(t *testing.T) {
	site := newUsageSite(t, map[string]string{
		"/robots.txt":  "User-agent: *\nAllow: /\nContent-Usage: search=y\n",
		tdmPath:        `[{"location": "/", "tdm-reservation": 1}]`,
		"/license.xml": licenseXML,
	})
	r := newResolver(t, policy.WithUserAgent("examplebot/1.0"))
	resp := func(path string, kv ...string) Report {
		t.Helper()
		h := http.Header{}
		var body []byte
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == "body" {
				body = []byte(kv[i+1])
				h.Set("Content-Type", "text/html")
				continue
			}
			h.Add(kv[i], kv[i+1])
		}
		rep, err := CheckResponse(context.Background(), r, mustURL(t, site.URL+path), h, body, aiAll...)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	link := "<" + site.URL + "/license.xml>; rel=\"license\"; type=\"application/rsl+xml\""
	cases := []struct {
		name string
		rep  Report
		want string // the refusal
	}{
		{"file", resp("/a"), "train-ai=n: tdmrep.json rule 0 (location /): 1"},
		{"header lifts", resp("/a", "tdm-reservation", "0"), ""},
		{"meta lifts", resp("/a", "body", `<meta name="tdm-reservation" content="0">`), ""},
		{"content-usage", resp("/a", "tdm-reservation", "0", "Content-Usage", "train-ai=n"), "train-ai=n: Content-Usage header: train-ai=n"},
		{"noai", resp("/a", "tdm-reservation", "0", "X-Robots-Tag", "noai"), "train-ai=n: X-Robots-Tag header: noai"},
		{"robots-tag", resp("/a", "tdm-reservation", "0", "Robots-Tag", "examplebot;noai"), "train-ai=n: Robots-Tag header, for examplebot: noai"},
		{"meta noai", resp("/a", "tdm-reservation", "0", "body", `<meta name="robots" content="noai">`), `train-ai=n: meta <meta name="robots">: noai`},
		{"license all", resp("/a", "tdm-reservation", "0", "Link", link), ""},
		{"license narrower", resp("/articles/x", "tdm-reservation", "0", "Link", link), "train-ai=n: license " + site.URL + `/license.xml (Link header), content "/articles/": not licensed`},
		{"license html", resp("/articles/x", "tdm-reservation", "0", "body", `<link rel="license" type="application/rsl+xml" href="/license.xml">`), "train-ai=n: license " + site.URL + `/license.xml (<link rel=license>), content "/articles/": not licensed`},
		{"license missing", resp("/a", "tdm-reservation", "0", "Link", "</nope.xml>; rel=license; type=application/rsl+xml"), "train-ai=n: license " + site.URL + "/nope.xml (Link header): unobtainable: 404 Not Found"},
	}
	for _, c := range cases {
		if got := refusal(c.rep, aiAll); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	art := resp("/articles/x", "tdm-reservation", "0", "Link", link)
	var search Signal
	for _, s := range art.Signals {
		if s.Purpose == dialect.Search && s.Carrier == LicenseDocument {
			search = s
		}
	}
	if search.Pref != dialect.PrefAllow || search.Value != "licensed (payment attribution)" {
		t.Errorf("search under /articles/: %v, want licensed with its payment term", search)
	}
	if art.Usage.Pref(dialect.Search) != dialect.PrefAllow || len(art.Signals) < 4 {
		t.Errorf("signals %v: want robots.txt's search=y among every carrier's", art.Signals)
	}
	if n := site.count("/license.xml"); n != 1 {
		t.Errorf("licence fetched %d times, want once", n)
	}
	if n := site.count(tdmPath); n != 1 {
		t.Errorf("tdmrep.json fetched %d times, want once", n)
	}
}

// Without a declared purpose nothing is fetched for usage, the response's
// licences included, and its headers still count.
func TestResponseUsageNoPurpose(t *testing.T) {
	site := newUsageSite(t, map[string]string{"/robots.txt": "User-agent: *\nAllow: /\n", tdmPath: `[]`, "/license.xml": licenseXML})
	r := newResolver(t)
	h := http.Header{"Link": {"</license.xml>; rel=license; type=application/rsl+xml"}, "Content-Usage": {"train-ai=n"}}
	rep, err := CheckResponse(context.Background(), r, mustURL(t, site.URL+"/a"), h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if site.count(tdmPath)+site.count("/license.xml") != 0 {
		t.Errorf("fetched tdmrep.json %d, licence %d times without a purpose", site.count(tdmPath), site.count("/license.xml"))
	}
	if rep.Usage.Pref(dialect.TrainAI) != dialect.PrefDisallow {
		t.Errorf("usage %v, want the header's train-ai=n", rep.Usage)
	}
}

// A response pointing to more licences than MaxLicenses gets the first
// ones fetched, and the others count as licences that cannot be
// obtained.
func TestResponseUsageManyLicenses(t *testing.T) {
	files := map[string]string{"/robots.txt": "User-agent: *\nAllow: /\n", tdmPath: `[]`}
	h := http.Header{}
	for i := range MaxLicenses + 2 {
		p := "/l" + strconv.Itoa(i) + ".xml"
		files[p] = licenseXML
		h.Add("Link", "<"+p+">; rel=license; type=application/rsl+xml")
	}
	site := newUsageSite(t, files)
	r := newResolver(t)
	rep, err := CheckResponse(context.Background(), r, mustURL(t, site.URL+"/a"), h, nil, dialect.TrainAI)
	if err != nil {
		t.Fatal(err)
	}
	fetched := 0
	for i := range MaxLicenses + 2 {
		fetched += site.count("/l" + strconv.Itoa(i) + ".xml")
	}
	s, refused := rep.Refusal(trainAI, dialect.UseUnknown, false)
	if fetched != MaxLicenses || !refused || !strings.HasSuffix(s.Value, "more than 8 licences for one URL") {
		t.Errorf("%d licences fetched, refusal %v %v", fetched, s, refused)
	}
}

// A tdmrep.json that redirects forever, or to a file, is followed up to
// the dialect's redirect limit like robots.txt.
func TestUsageTDMRepRedirects(t *testing.T) {
	var hops atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = w.Write([]byte("User-agent: *\nAllow: /\n"))
		case tdmPath:
			http.Redirect(w, r, "/moved.json", http.StatusMovedPermanently)
		case "/moved.json":
			_, _ = w.Write([]byte(`[{"location": "/", "tdm-reservation": 1}]`))
		default:
			hops.Add(1)
			http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
		}
	}))
	defer srv.Close()
	r := newResolver(t)
	if got := refusal(usage(t, r, srv.URL+"/a", trainAI), trainAI); got != "train-ai=n: tdmrep.json rule 0 (location /): 1" {
		t.Errorf("redirected file: %q", got)
	}
	d, err := r.Document(context.Background(), mustURL(t, srv.URL+"/a"), srv.URL+"/loop", tdmrepKind)
	if err != nil || d.Value != nil || d.Err != "more than 5 redirects" || hops.Load() != 6 {
		t.Errorf("loop: %q (%v) after %d requests", d.Err, err, hops.Load())
	}
}

// A licence is kept for its max-age, one that cannot be obtained for the
// least cache lifetime; tdmrep.json for robots.txt's lifetime.
func TestUsageDocumentsExpire(t *testing.T) {
	site := newUsageSite(t, map[string]string{
		"/robots.txt": "User-agent: *\nAllow: /\n",
		tdmPath:       `[]`,
		"/lic.xml":    strings.Replace(licenseXML, "<rsl ", `<rsl max-age="2" `, 1),
	})
	clock := testutil.NewStepClock()
	r := newResolver(t, policy.WithClock(clock), policy.WithTTL(time.Hour))
	h := http.Header{"Link": {"</lic.xml>; rel=license; type=application/rsl+xml, </missing.xml>; rel=license; type=application/rsl+xml"}}
	ask := func() {
		t.Helper()
		if _, err := CheckResponse(context.Background(), r, mustURL(t, site.URL+"/a"), h, nil, dialect.TrainAI); err != nil {
			t.Fatal(err)
		}
	}
	counts := func() [3]int { return [3]int{site.count(tdmPath), site.count("/lic.xml"), site.count("/missing.xml")} }
	ask()
	for _, step := range []struct {
		advance time.Duration
		want    [3]int // tdmrep.json, the licence, the missing licence
	}{
		{9 * time.Minute, [3]int{1, 1, 1}},
		{2 * time.Minute, [3]int{1, 1, 2}},  // 11 min: the missing licence asked again
		{50 * time.Minute, [3]int{2, 1, 3}}, // 61 min: robots.txt's TTL over for tdmrep.json
		{47 * time.Hour, [3]int{3, 2, 4}},   // 48 h 1 min: the licence's 2 days over
	} {
		clock.Advance(step.advance)
		ask()
		if got := counts(); got != step.want {
			t.Errorf("after %s: fetches %v, want %v", step.advance, got, step.want)
		}
	}
}

// Content-Signal: the robots.txt line's use level, the response header
// (its own carrier, allow/disallow read as yes/no), the meta element; an
// X-Content-Signal header is not read. A site's level below the declared
// one refuses it, with the lowest level's signal.
func TestUsageContentSignal(t *testing.T) {
	site := newUsageSite(t, map[string]string{
		"/robots.txt": "User-agent: *\nAllow: /\nContent-Signal: search=yes, use=reference\n",
		tdmPath:       `[]`,
	})
	r := newResolver(t)
	resp := func(h http.Header, body string) Report {
		t.Helper()
		if body != "" {
			h.Set("Content-Type", "text/html")
		}
		rep, err := CheckResponse(context.Background(), r, mustURL(t, site.URL+"/a"), h, []byte(body), aiAll...)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	why := func(rep Report, use dialect.UseLevel) string {
		s, ok := rep.Refusal(aiAll, use, false)
		if !ok {
			return ""
		}
		return s.String()
	}
	before := usage(t, r, site.URL+"/a", aiAll)
	cases := []struct {
		name string
		rep  Report
		use  dialect.UseLevel
		want string
	}{
		{"robots.txt level, reference declared", before, dialect.UseReference, ""},
		{"robots.txt level, immediate declared", before, dialect.UseImmediate, ""},
		{"robots.txt level, full declared", before, dialect.UseFull, "use=reference: robots.txt line 3: Content-Signal: search=yes, use=reference"},
		{"no level declared", before, dialect.UseUnknown, ""},
		{"header", resp(http.Header{"Content-Signal": {"ai-train=no"}}, ""), dialect.UseUnknown, "train-ai=n: Content-Signal header: ai-train=no"},
		{"header disallow", resp(http.Header{"Content-Signal": {"ai-input=disallow, search=allow"}}, ""), dialect.UseUnknown, "ai-input=n: Content-Signal header: ai-input=disallow, search=allow"},
		{"header level", resp(http.Header{"Content-Signal": {"use=immediate"}}, ""), dialect.UseReference, "use=immediate: Content-Signal header: use=immediate"},
		{"header unknown value", resp(http.Header{"Content-Signal": {"ai-train=maybe, use=lots"}}, ""), dialect.UseReference, ""},
		{"X-Content-Signal", resp(http.Header{"X-Content-Signal": {"ai-train=no"}}, ""), dialect.UseUnknown, ""},
		{"meta", resp(http.Header{}, `<meta name="Content-Signal" content="ai-train=no">`), dialect.UseUnknown, `train-ai=n: meta <meta name="content-signal">: ai-train=no`},
		{"meta keywords", resp(http.Header{}, `<meta name="content-signal" content="human-authored, copyright=me">`), dialect.UseUnknown, ""},
	}
	for _, c := range cases {
		if got := why(c.rep, c.use); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if s := before.Signals; len(s) != 2 || s[1].Use != dialect.UseReference || s[0].Purpose != dialect.Search {
		t.Errorf("robots.txt signals %v, want search=y and use=reference", s)
	}
}

// robots.txt License lines: the crawler's group's (RSL 1.0 with its
// errata), resolved against the robots.txt URL, decide before the fetch;
// each licence is fetched once, and not without a declared purpose.
func TestUsageRobotsLicense(t *testing.T) {
	site := newUsageSite(t, map[string]string{
		"/robots.txt": "License: /global.xml\n\nUser-agent: examplebot\nAllow: /\nLicense: /mine.xml\n\nUser-agent: *\nAllow: /\n",
		tdmPath:       `[]`,
		"/mine.xml":   licenseXML,
		"/global.xml": licenseXML,
	})
	r := newResolver(t, policy.WithUserAgent("examplebot/1.0"))
	if rep := usage(t, r, site.URL+"/articles/a", nil); len(rep.Signals) != 0 || site.count("/mine.xml") != 0 {
		t.Fatalf("no purpose: %v, %d licence fetches", rep.Signals, site.count("/mine.xml"))
	}
	want := "train-ai=n: license " + site.URL + `/mine.xml (robots.txt line 5), content "/articles/": not licensed`
	for range 2 {
		if got := refusal(usage(t, r, site.URL+"/articles/a", trainAI), trainAI); got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
	if got := refusal(usage(t, r, site.URL+"/other", trainAI), trainAI); got != "" {
		t.Errorf("/other: %q, want licensed", got)
	}
	if site.count("/mine.xml") != 1 || site.count("/global.xml") != 0 {
		t.Errorf("licences fetched: group's %d, global %d; want 1 and 0", site.count("/mine.xml"), site.count("/global.xml"))
	}
}

// A response's Content-Usage header combines with robots.txt's usage lines,
// per category the most restrictive; several field lines are read as one
// Dictionary, and keys are case-sensitive.
func TestResponseContentUsage(t *testing.T) {
	site := newUsageSite(t, map[string]string{
		"/robots.txt": "User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\nContent-Signal: search=yes\n",
	})
	r := newResolver(t, policy.WithUserAgent("examplebot/1.0"))
	cases := []struct {
		url    string
		header []string // Content-Usage field lines of the response
		with   string
	}{
		{"/test", nil, "train-ai=n, search=y"},
		{"/ai-ok/a?q=1", nil, "train-ai=y"},
		{"/ai-ok/a", []string{"train-ai=n"}, "train-ai=n"},
		{"/ai-ok/a", []string{"search=n", "train-ai=y"}, "train-ai=y, search=n"},
		{"/ai-ok/a", []string{"Train-AI=n"}, "train-ai=y"},
		{"/never/x", []string{"train-ai=y"}, "train-ai=y"},
	}
	for _, c := range cases {
		h := http.Header{}
		for _, f := range c.header {
			h.Add("Content-Usage", f)
		}
		rep, err := CheckResponse(context.Background(), r, mustURL(t, site.URL+c.url), h, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Usage.String(); got != c.with {
			t.Errorf("%s with %q: %q, want %q", c.url, c.header, got, c.with)
		}
	}
}
