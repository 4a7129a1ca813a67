package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gocolly/colly/v2"
	"github.com/politecrawl/robots"
	usagepkg "github.com/politecrawl/robots/usage"
)

const rslDoc = `<rsl xmlns="https://rslstandard.org/rsl"><content url="/rsl"><license>` +
	`<prohibits type="usage">ai-train</prohibits></license></content>` +
	`<content url="/rsl-elem"><license><prohibits type="usage">ai-train</prohibits></license></content></rsl>`

const usageUA = "Mozilla/5.0 (compatible; EvBot/1.0; +https://bot.example/)"

// usageSiteLinks are the pages of usageCmdSite, each stating usage in
// another carrier.
var usageSiteLinks = []string{"/private/x", "/noai/x", "/archive/a.pdf", "/archive/a.html", "/hdr", "/xrt",
	"/meta-tdm", "/signal", "/go", "/open", "/rsl", "/rsl-elem", "/cc-hdr", "/cc-elem", "/gone", "/gone-noai"}

// usageCmdSite states usage in every carrier the CLI and the crawl read,
// and links a Creative Commons licence as the web does (a Link header and a
// <link> element, untyped); ccFetched counts the requests of that licence.
func usageCmdSite(t *testing.T) (srv *httptest.Server, ccFetched *atomic.Int64) {
	ccFetched = new(atomic.Int64)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nDisallow: /private/\nContent-Usage: /noai/ train-ai=n\nContent-Signal: search=yes\n")
			return
		case "/.well-known/tdmrep.json":
			io.WriteString(w, `[{"location": "/archive/*.pdf$", "tdm-reservation": 1}, {"location": "/", "tdm-reservation": 0}]`)
			return
		case "/":
			w.Header().Set("Content-Type", "text/html")
			for _, p := range usageSiteLinks {
				fmt.Fprintf(w, "<a href=%q>x</a>\n", p)
			}
			return
		case "/hdr":
			w.Header().Set("Content-Usage", "train-ai=n, search=y")
		case "/xrt":
			w.Header().Set("X-Robots-Tag", "evbot: noai")
		case "/meta-tdm":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<html><head><meta name="tdm-reservation" content="1"></head><body>x</body></html>`)
			return
		case "/signal":
			w.Header().Set("Content-Signal", "ai-input=no")
		case "/go":
			http.Redirect(w, r, "/noai/y", http.StatusFound)
			return
		case "/rsl":
			w.Header().Set("Link", `</license.xml>; rel="license"; type="application/rsl+xml"`)
		case "/rsl-elem":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<html><head><link rel="license" type="application/rsl+xml" href="/license.xml"></head><body>x</body></html>`)
			return
		case "/cc-hdr":
			w.Header().Set("Link", `</licenses/by/4.0/>; rel="license"`)
		case "/cc-elem":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<html><head><link rel="license" href="/licenses/by/4.0/"></head><body>x</body></html>`)
			return
		case "/gone-noai":
			w.Header().Set("X-Robots-Tag", "noai")
			fallthrough
		case "/gone":
			http.NotFound(w, r)
			return
		case "/licenses/by/4.0/":
			ccFetched.Add(1)
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>Attribution 4.0 International</body></html>")
			return
		case "/license.xml":
			w.Header().Set("Content-Type", "application/rsl+xml")
			io.WriteString(w, rslDoc)
			return
		}
		io.WriteString(w, "page")
	}))
	t.Cleanup(srv.Close)
	return srv, ccFetched
}

// TestUsageCmdMatchesCrawl: for every URL of one site, robotstxt usage
// gives the verdict the crawl gives (outcome, status, reason, preference
// per purpose), as the crawl's usage log records it, a 404 answer
// included; neither fetches a licence link that is not RSL's.
func TestUsageCmdMatchesCrawl(t *testing.T) {
	srv, ccFetched := usageCmdSite(t)
	purposes := []string{"train-ai", "search", "ai-input"}
	logPath := filepath.Join(t.TempDir(), "usage.log")
	l, err := usagepkg.OpenLog(logPath, usagepkg.LogConfig{})
	if err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector(colly.UserAgent(usageUA))
	if _, err := robots.Attach(c, robots.WithDefaultDelay(0), robots.WithUsage(usagepkg.Config{Purposes: purposes, Log: l})); err != nil {
		t.Fatal(err)
	}
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
	if err := c.Visit(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	l.Close()

	var buf bytes.Buffer
	lines, err := readAll(logPath, &buf)
	if err != nil {
		t.Fatal(err)
	}
	crawl := map[string]usagepkg.LogRecord{}
	for _, line := range lines {
		var rec usagepkg.LogRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Outcome != usagepkg.Closed {
			crawl[rec.URL] = rec
		}
	}
	var outcomes []string
	for _, p := range append([]string{"/"}, usageSiteLinks...) {
		var out, errOut bytes.Buffer
		code := runMain([]string{"usage", "-purpose", strings.Join(purposes, ","), "-user-agent", usageUA, "-json", srv.URL + p}, nil, &out, &errOut)
		var rec usagepkg.LogRecord
		if err := json.Unmarshal(out.Bytes(), &rec); err != nil {
			t.Fatalf("%s: exit %d, %v\n%s%s", p, code, err, out.String(), errOut.String())
		}
		want, ok := crawl[rec.URL]
		if !ok {
			t.Errorf("%s: the CLI decided %s, which the crawl did not", p, rec.URL)
			continue
		}
		if rec.Outcome != want.Outcome || rec.Status != want.Status || rec.Reason != want.Reason || fmt.Sprint(rec.Verdicts) != fmt.Sprint(want.Verdicts) {
			t.Errorf("%s: CLI %s %d %q %v; crawl %s %d %q %v", p, rec.Outcome, rec.Status, rec.Reason, rec.Verdicts, want.Outcome, want.Status, want.Reason, want.Verdicts)
		}
		switch p {
		case "/rsl", "/rsl-elem":
			// The licence that decided is among the documents, with its hash.
			sum := sha256.Sum256([]byte(rslDoc))
			if !slices.ContainsFunc(rec.Documents, func(d usagepkg.Document) bool {
				return d.Kind == "license" && d.SHA256 == hex.EncodeToString(sum[:])
			}) {
				t.Errorf("%s: documents %+v; want the licence with its SHA-256", p, rec.Documents)
			}
		case "/cc-hdr", "/cc-elem":
			// The licence link is in the evidence, not among the documents.
			for _, r := range []usagepkg.LogRecord{rec, want} {
				if !slices.ContainsFunc(r.Signals, func(s usagepkg.Signal) bool {
					return s.License != nil && strings.HasSuffix(s.License.URL, "/licenses/by/4.0/")
				}) || slices.ContainsFunc(r.Documents, func(d usagepkg.Document) bool { return d.Kind == "license" }) {
					t.Errorf("%s: signals %+v, documents %+v; want the licence link recorded, no licence document", p, r.Signals, r.Documents)
				}
			}
		}
		if wantCode := map[bool]int{true: 0, false: 1}[rec.Outcome == usagepkg.Fetched]; code != wantCode {
			t.Errorf("%s: exit %d; want %d (%s)", p, code, wantCode, rec.Outcome)
		}
		outcomes = append(outcomes, strings.TrimPrefix(rec.URL, srv.URL)+" "+rec.Outcome)
	}
	sort.Strings(outcomes)
	// Every carrier decided something: the test covers each outcome.
	want := "[/ fetched /archive/a.html fetched /archive/a.pdf stopped /cc-elem fetched /cc-hdr fetched /gone fetched /gone-noai refused /hdr refused /meta-tdm refused /noai/x stopped /noai/y stopped /open fetched /private/x stopped /rsl refused /rsl-elem refused /signal refused /xrt refused]"
	if fmt.Sprint(outcomes) != want {
		t.Errorf("outcomes %v\nwant %s", outcomes, want)
	}
	if n := ccFetched.Load(); n != 0 {
		t.Errorf("the Creative Commons licence was fetched %d times; want never", n)
	}
}

// TestUsageCmdLines: the text output is one line per purpose as
// Signal.String reads, and the use level's.
func TestUsageCmdLines(t *testing.T) {
	srv, _ := usageCmdSite(t)
	for _, tc := range []struct {
		path, use string
		code      int
		want      string
	}{
		{"/archive/a.pdf", "", 1, "train-ai=n: tdmrep.json rule 0 (location /archive/*.pdf$): 1\nsearch=y: robots.txt line 4: Content-Signal: search=yes\n"},
		{"/hdr", "", 1, "train-ai=n: Content-Usage header: train-ai=n, search=y\nsearch=y: robots.txt line 4: Content-Signal: search=yes\n"},
		{"/open", "full", 0, "train-ai=y: tdmrep.json rule 1 (location /): 0\nsearch=y: robots.txt line 4: Content-Signal: search=yes\nuse=unknown: nothing stated\n"},
		{"/private/x", "", 1, ""},
	} {
		var out, errOut bytes.Buffer
		args := []string{"usage", "-purpose", "train-ai,search", "-user-agent", usageUA}
		if tc.use != "" {
			args = append(args, "-use", tc.use)
		}
		code := runMain(append(args, srv.URL+tc.path), nil, &out, &errOut)
		if code != tc.code || out.String() != tc.want {
			t.Errorf("%s: exit %d, stdout:\n%s(stderr %q)\nwant exit %d, stdout:\n%s", tc.path, code, out.String(), errOut.String(), tc.code, tc.want)
		}
	}
	for _, args := range [][]string{
		{"usage", srv.URL + "/"}, {"usage", "-purpose", "mining", srv.URL + "/"},
		{"usage", "-purpose", "search", "ftp://x/"}, {"usage", "-purpose", "search"},
	} {
		if code := runMain(args, nil, io.Discard, io.Discard); code != 2 {
			t.Errorf("%v: exit %d; want 2", args, code)
		}
	}
}

func readAll(path string, buf *bytes.Buffer) ([][]byte, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	buf.Write(data)
	lines := bytes.SplitAfter(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	return lines, nil
}
