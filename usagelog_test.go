package robots

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/botauth"
	"github.com/politecrawl/robots/usage"
)

const (
	evidenceRobots = "User-agent: *\nDisallow: /private/\nContent-Usage: /noai/ train-ai=n\n"
	evidenceTDMRep = `[{"location": "/archive/", "tdm-reservation": 1}]`
)

// evidenceSite serves a home page linking to a page robots.txt disallows,
// one its Content-Usage line refuses for train-ai, one its tdmrep.json
// reserves, one whose response header refuses train-ai, and an open one.
func evidenceSite(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, evidenceRobots)
		case "/.well-known/tdmrep.json":
			fmt.Fprint(w, evidenceTDMRep)
		case "/":
			w.Header().Set("Content-Type", "text/html")
			for _, p := range []string{"/private/x", "/noai/x", "/archive/1", "/hdr", "/ok"} {
				fmt.Fprintf(w, "<a href=%q>x</a>\n", p)
			}
		case "/hdr":
			w.Header().Set("Content-Usage", "train-ai=n")
			fmt.Fprint(w, "refused for training")
		default:
			fmt.Fprint(w, "page")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// crawlEvidence crawls the evidence site for train-ai and search with a
// usage log at path, signed with key unless it is the zero Key.
func crawlEvidence(t *testing.T, path string, key botauth.Key) *httptest.Server {
	t.Helper()
	srv := evidenceSite(t)
	cfg := usage.LogConfig{Documents: filepath.Join(filepath.Dir(path), "docs")}
	if key.Thumbprint() != "" {
		cfg.Key, cfg.KeyID = key.CryptoSigner(), key.Thumbprint()
	}
	l, err := usage.OpenLog(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector()
	mustAttach(t, c, WithDefaultDelay(0), WithUsage(usage.Config{Purposes: []string{"train-ai", "search"}, Log: l}))
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
	if err := c.Visit(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return srv
}

func readLogLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	return lines[:len(lines)-1]
}

func verifyLogLines(lines [][]byte, keys usage.LogKeys) (int, error) {
	return usage.VerifyLog(bytes.NewReader(bytes.Join(lines, nil)), keys)
}

func testBotKey(t testing.TB) (botauth.Key, usage.LogKeys) {
	t.Helper()
	k, err := botauth.NewKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	pub := k.CryptoSigner().Public().(ed25519.PublicKey)
	return k, func(kid string) (ed25519.PublicKey, error) {
		if kid != k.Thumbprint() {
			return nil, fmt.Errorf("unknown key %q", kid)
		}
		return pub, nil
	}
}

// A crawl with a signed usage log records each URL decided (fetched,
// stopped before the fetch by robots.txt or a usage term, refused after
// it) and closes it; the log verifies, and changing, removing or moving
// any one record is rejected naming it.
func TestUsageLogCrawl(t *testing.T) {
	key, keys := testBotKey(t)
	path := filepath.Join(t.TempDir(), "usage.log")
	srv := crawlEvidence(t, path, key)
	lines := readLogLines(t, path)

	got := map[string]string{}
	robotsSum, tdmSum := sha256.Sum256([]byte(evidenceRobots)), sha256.Sum256([]byte(evidenceTDMRep))
	for _, line := range lines {
		var rec usage.LogRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		path := strings.TrimPrefix(rec.URL, srv.URL)
		got[path] = rec.Outcome
		// Each record names the documents that decided, with their hashes;
		// a usage stop or refusal has the deciding signal.
		var docs []string
		for _, d := range rec.Documents {
			docs = append(docs, d.Kind+" "+strings.TrimPrefix(d.URL, srv.URL)+" "+d.SHA256)
		}
		wantDocs := "[robots.txt /robots.txt " + hex.EncodeToString(robotsSum[:]) +
			" tdmrep.json /.well-known/tdmrep.json " + hex.EncodeToString(tdmSum[:]) + "]"
		switch {
		case rec.Outcome == usage.Closed:
			wantDocs = "[]"
		case path == "/private/x":
			wantDocs = "[robots.txt /robots.txt " + hex.EncodeToString(robotsSum[:]) + "]"
		}
		if fmt.Sprint(docs) != wantDocs {
			t.Errorf("%s: documents %v; want %s", path, docs, wantDocs)
		}
		if (rec.Outcome == usage.Refused || path == "/noai/x" || path == "/archive/1") &&
			(len(rec.Signals) == 0 || rec.Verdicts["train-ai"] != "n" || !strings.HasPrefix(rec.Reason, "train-ai=n: ")) {
			t.Errorf("%s: %s without its signal or verdict: %s", path, rec.Outcome, line)
		}
	}
	for _, body := range []string{evidenceRobots, evidenceTDMRep} {
		sum := sha256.Sum256([]byte(body))
		kept, err := os.ReadFile(filepath.Join(filepath.Dir(path), "docs", "sha256", hex.EncodeToString(sum[:])))
		if err != nil || string(kept) != body {
			t.Errorf("kept document %q, %v; want %q", kept, err, body)
		}
	}
	want := map[string]string{
		"/": usage.Fetched, "/ok": usage.Fetched, "/hdr": usage.Refused,
		"/private/x": usage.Stopped, "/noai/x": usage.Stopped, "/archive/1": usage.Stopped,
		"": usage.Closed,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records by URL = %v\nwant %v\nlog:\n%s", got, want, bytes.Join(lines, nil))
	}
	if n, err := verifyLogLines(lines, keys); err != nil || n != len(want) {
		t.Fatalf("VerifyLog = %d, %v; want %d, nil", n, err, len(want))
	}

	clone := func() [][]byte {
		c := make([][]byte, len(lines))
		for i := range lines {
			c[i] = bytes.Clone(lines[i])
		}
		return c
	}
	for i := range lines {
		n := i + 1
		changed := clone()
		changed[i] = bytes.Replace(changed[i], []byte(`"outcome":"`), []byte(`"outcome":"x`), 1)
		removed := clone()
		removed = append(removed[:i], removed[i+1:]...)
		cases := map[string][][]byte{"changed": changed, "removed": removed}
		if i+1 < len(lines) {
			moved := clone()
			moved[i], moved[i+1] = moved[i+1], moved[i]
			cases["moved"] = moved
		}
		for what, ls := range cases {
			_, err := verifyLogLines(ls, keys)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("record %d:", n)) {
				t.Errorf("record %d %s: VerifyLog error = %v; want one naming record %d", n, what, err, n)
			}
		}
	}
}

// Without a key the log is unsigned and still chains.
func TestUsageLogUnsigned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.log")
	crawlEvidence(t, path, botauth.Key{})
	lines := readLogLines(t, path)
	if n, err := verifyLogLines(lines, nil); err != nil || n != 7 {
		t.Fatalf("VerifyLog = %d, %v; want 7 records, nil", n, err)
	}
	if bytes.Contains(lines[0], []byte(`"sig"`)) {
		t.Fatalf("an unsigned log's line has a signature: %s", lines[0])
	}
	lines[2] = bytes.Replace(lines[2], []byte(`"outcome":"`), []byte(`"outcome":"x`), 1)
	if _, err := verifyLogLines(lines, nil); err == nil || !strings.Contains(err.Error(), "record 4:") {
		t.Fatalf("a changed record 3: VerifyLog error = %v; want record 4 (the next) named", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A log that cannot be written does not stop the crawl; the failure is
// logged once.
func TestUsageLogWriteFails(t *testing.T) {
	srv := evidenceSite(t)
	l, err := usage.NewLog(failingWriter{}, usage.LogConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	c := colly.NewCollector()
	mustAttach(t, c, WithDefaultDelay(0), WithLogger(slog.New(slog.NewTextHandler(&logged, nil))),
		WithUsage(usage.Config{Purposes: []string{"train-ai"}, Log: l}))
	var fetched int
	c.OnResponse(func(*colly.Response) { fetched++ })
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
	if err := c.Visit(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	if fetched != 3 {
		t.Errorf("%d pages fetched; want 3 (/, /hdr, /ok)", fetched)
	}
	if n := strings.Count(logged.String(), "could not be written to the usage log"); n != 1 || !strings.Contains(logged.String(), "disk full") {
		t.Errorf("the failure logged %d times; want once, with its error:\n%s", n, logged.String())
	}
}

// Every URL a crawl requests has one record, whatever became of it: an
// answer Colly calls an error (404, a 503 out of retries) is fetched with
// its status, whether or not the collector parses error responses; a link
// of a nofollow page and a URL of a host whose Crawl-delay is too long are
// stopped with the cause; a request without answer failed, with its error.
func TestUsageLogEveryOutcome(t *testing.T) {
	robots := func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return true
		}
		return false
	}
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !robots(w, r) {
			http.Error(w, "busy", http.StatusServiceUnavailable)
		}
	}))
	defer busy.Close()
	drop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !robots(w, r) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close() // no answer
			}
		}
	}))
	defer drop.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nCrawl-delay: 60\n")
	}))
	defer slow.Close()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/robots.txt":
			robots(w, r)
		case "/":
			for _, l := range []string{"/gone", "/nf", busy.URL + "/busy", drop.URL + "/drop", slow.URL + "/slow"} {
				fmt.Fprintf(w, "<a href=%q>x</a>\n", l)
			}
		case "/nf":
			w.Header().Set("X-Robots-Tag", "nofollow")
			fmt.Fprint(w, `<a href="/nf/child">x</a>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	want := map[string]string{
		site.URL + "/": "fetched 200", site.URL + "/gone": "fetched 404", site.URL + "/nf": "fetched 200",
		site.URL + "/nf/child": "stopped 0", busy.URL + "/busy": "fetched 503", drop.URL + "/drop": "failed 0",
		slow.URL + "/slow": "stopped 0", "": "closed 0",
	}
	// The start of the reason: the cause of a stop, the error of a failure.
	reasons := map[string]string{site.URL + "/nf/child": "nofollow: a link of ", drop.URL + "/drop": "Get ",
		slow.URL + "/slow": "skipped: Crawl-delay 1m0s is above the largest honoured"}
	for _, parse := range []bool{false, true} {
		t.Run(fmt.Sprint("ParseHTTPErrorResponse=", parse), func(t *testing.T) {
			var buf bytes.Buffer
			l, err := usage.NewLog(&buf, usage.LogConfig{})
			if err != nil {
				t.Fatal(err)
			}
			c := colly.NewCollector()
			c.ParseHTTPErrorResponse = parse
			mustAttach(t, c, WithDefaultDelay(0), WithRetries(0), WithMaxCrawlDelay(time.Second, SkipHost),
				WithUsage(usage.Config{Purposes: []string{"search"}, Log: l}))
			c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
			if err := c.Visit(site.URL + "/"); err != nil {
				t.Fatal(err)
			}
			c.Wait()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, line := range bytes.SplitAfter(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n")) {
				var rec usage.LogRecord
				if err := json.Unmarshal(line, &rec); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				if _, dup := got[rec.URL]; dup {
					t.Errorf("%s: a second record: %s", rec.URL, line)
				}
				got[rec.URL] = fmt.Sprint(rec.Outcome, " ", rec.Status)
				if !strings.HasPrefix(rec.Reason, reasons[rec.URL]) || reasons[rec.URL] == "" && rec.Reason != "" {
					t.Errorf("%s: reason %q; want one starting %q", rec.URL, rec.Reason, reasons[rec.URL])
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("records by URL:\n%v\nwant\n%v\nlog:\n%s", got, want, buf.Bytes())
			}
			if n, err := usage.VerifyLog(bytes.NewReader(buf.Bytes()), nil); err != nil || n != len(want) {
				t.Fatalf("VerifyLog = %d, %v; want %d, nil", n, err, len(want))
			}
		})
	}
}
