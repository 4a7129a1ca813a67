package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestDiffExamplesGolden runs diff on examples/robots.txt, the README's file,
// and compares the transcript with testdata/diff_examples.golden (go test
// -run DiffExamplesGolden -update rewrites it).
func TestDiffExamplesGolden(t *testing.T) {
	const file = "../../examples/robots.txt"
	urls := []string{"/private/x", "/private/press/1", "/drafts/x", "/%64rafts/y", "/a/../drafts/z", "/about", "/report.pdf"}
	runs := [][]string{
		// A collector whose UserAgent is a whole header: temoto compares it
		// whole, so Colly reads the "*" group; the plugin reads
		// examplebot-news's.
		append([]string{"diff", "-user-agent", "Mozilla/5.0 (compatible; examplebot-news/1.0; +https://example.com/bot)", file}, urls...),
		// The UserAgent is the product token itself: the same group on
		// both sides; only percent-encoding tells them apart.
		append([]string{"diff", "-agent", "examplebot-news", file}, urls...),
		// Colly's default UserAgent, and google's reading.
		append([]string{"diff", "-dialect", "google", file}, urls...),
	}
	var got strings.Builder
	for _, args := range runs {
		r := runCLI(t, "", args...)
		fmt.Fprintf(&got, "$ robotstxt %s\n%s", shellQuote(args), r.stdout)
		for _, l := range strings.SplitAfter(r.stderr, "\n") {
			if l != "" {
				fmt.Fprintf(&got, "[stderr] %s", l)
			}
		}
		fmt.Fprintf(&got, "[exit %d]\n\n", r.code)
	}
	golden := filepath.Join("testdata", "diff_examples.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("diff transcript:\n%s\nwant (%s):\n%s", got.String(), golden, want)
	}
}

func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strings.ReplaceAll(a, "../../", "")
		if strings.ContainsAny(a, " ();") {
			q[i] = "'" + a + "'"
		}
	}
	return strings.Join(q, " ")
}

func TestDiff(t *testing.T) {
	until := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`
	// What diff says beside the verdicts: redirects (a local FILE has no
	// site to ask), spacing (no Crawl-delay here), the error API.
	offline := `robotstxt: redirects: FILE is a local file: .* cannot be seen without the site; .*\n`
	notes := regexp.QuoteMeta("robotstxt: spacing: colly: none (no LimitRule) -> rfc9309: 1s between requests to this host (no Crawl-delay: the plugin's default delay, robots.WithDefaultDelay)\n" + strings.Join(errorNotes, "\n") + "\n")
	cases := []struct {
		name   string
		robots string // a local file; "" for file
		file   func(t *testing.T) string
		args   []string // after FILE
		stdin  string
		code   int
		stdout string
		stderr string // a regexp
	}{
		{
			name:   "no change",
			robots: "User-agent: *\nDisallow: /private\n",
			args:   []string{"/private/x", "/a"},
			code:   0,
			stderr: `^` + offline + notes + `robotstxt: 0 of 2 URLs change verdict\n$`,
		},
		{
			// Colly sorts the query before temoto matches it; the plugin
			// matches the query as sent.
			name:   "query re-sorted",
			robots: "User-agent: *\nDisallow: /s?b=1&a=2\n",
			args:   []string{"/s?b=1&a=2", "/s?a=2&b=1"},
			code:   1,
			stdout: "/s?b=1&a=2\tcolly: allowed (-)\trfc9309: disallowed (line 2: Disallow: /s?b=1&a=2)\n",
			stderr: `^` + offline + notes + `robotstxt: 1 of 2 URLs change verdict\n$`,
		},
		{
			// temoto rejects the whole file for one bad Crawl-delay: Colly's
			// Visit fails for every URL.
			name:   "temoto rejects the file",
			robots: "User-agent: *\nCrawl-delay: 1s\nDisallow: /x\n",
			args:   []string{"/x", "/y"},
			code:   1,
			stdout: "/y\tcolly: disallowed (temoto rejects robots.txt)\trfc9309: allowed (no matching rule)\n",
			stderr: `^robotstxt: colly: temoto/robotstxt rejects \S+ \(parse error\(s\): .*"1s".*\): Colly's Visit returns this error for every URL of the host and fetches none; counted as disallowed\n` +
				offline + notes + `robotstxt: 1 of 2 URLs change verdict\n$`,
		},
		{
			// The collector's UserAgent alone: the plugin's token is its
			// product token.
			name:   "user-agent only",
			robots: "User-agent: *\nDisallow: /\n\nUser-agent: examplebot\nAllow: /\n",
			args:   []string{"-user-agent", "examplebot/2.0 (+https://example.com/bot)", "/a"},
			code:   0,
			stderr: `^` + offline + notes + `robotstxt: 0 of 1 URLs change verdict\n$`,
		},
		{
			name:   "whole header",
			robots: "User-agent: *\nDisallow: /\n\nUser-agent: examplebot\nAllow: /\n",
			args:   []string{"-user-agent", "Mozilla/5.0 (compatible; examplebot/2.0)", "/a"},
			code:   1,
			stdout: "/a\tcolly: disallowed (-)\trfc9309: allowed (line 5: Allow: /)\n",
			stderr: `^` + offline + notes + `robotstxt: 1 of 1 URLs change verdict\n$`,
		},
		{
			// URLs from standard input, a full URL among them; a blank line
			// is skipped.
			name:   "stdin",
			robots: "User-agent: *\nDisallow: /%7Ex\n",
			stdin:  "/~x/1\n\nhttp://example.org/%7ex/2\r\n/y\n",
			code:   1,
			stdout: "/~x/1\tcolly: allowed (-)\trfc9309: disallowed (line 2: Disallow: /%7Ex)\n" +
				"http://example.org/%7ex/2\tcolly: allowed (-)\trfc9309: disallowed (line 2: Disallow: /%7Ex)\n",
			stderr: `^` + offline + notes + `robotstxt: 2 of 3 URLs change verdict\n$`,
		},
		{
			name:   "not a URL",
			robots: "User-agent: *\nDisallow: /\n",
			args:   []string{"/a", "a"},
			code:   2,
			stderr: `^robotstxt: usage: URL "a": not an absolute path`,
		},
		{
			// A 503 robots.txt: temoto reads it as disallow all, which
			// Colly's check never sees; rfc9309 disallows everything.
			name: "fetched 503",
			file: func(t *testing.T) string {
				srv, _ := fetchServer(t, status(503, ""))
				return srv.URL + "/robots.txt"
			},
			args:   []string{"/a"},
			code:   1,
			stdout: "/a\tcolly: allowed (-)\trfc9309: deferred (robots.txt: 503 Service Unavailable, complete disallow until " + "UNTIL" + ")\n",
			stderr: `^robotstxt: http://\S+/robots.txt: 503 Service Unavailable, complete disallow until ` + until + `\n` +
				`robotstxt: colly: http://\S+/robots.txt answered 503 Service Unavailable: temoto reads it as disallow all, but Colly asks it for a group, finds none and allows every URL\n` +
				notes + `robotstxt: 1 of 1 URLs change verdict\n$`,
		},
		{
			// No answer: Colly's Visit fails, rfc9309 disallows until the
			// retry; no verdict changes.
			name: "fetched, refused",
			file: func(t *testing.T) string {
				return "http://" + closedAddr(t) + "/robots.txt"
			},
			args: []string{"/a"},
			code: 0,
			stderr: `^robotstxt: http://\S+/robots.txt: no answer \([^)]*\), complete disallow until ` + until + `\n` +
				`robotstxt: colly: http://\S+/robots.txt: .*refused.*: Colly's Visit returns this error for every URL of the host and fetches none; counted as disallowed\n` +
				notes + `robotstxt: 0 of 1 URLs change verdict\n$`,
		},
		{
			// A fetched file: paths join its host, and Colly's check and the
			// plugin's read the same body.
			name: "fetched 200",
			file: func(t *testing.T) string {
				srv, _ := fetchServer(t, func(w http.ResponseWriter, r *http.Request) {
					if ua := r.Header.Get("User-Agent"); ua != "examplebot/1.0" {
						t.Errorf("User-Agent %q", ua)
					}
					status(200, "User-agent: *\nDisallow: /%61\n")(w, r)
				})
				return srv.URL
			},
			args:   []string{"-agent", "examplebot/1.0", "/a", "/b"},
			code:   1,
			stdout: "/a\tcolly: allowed (-)\trfc9309: disallowed (line 2: Disallow: /%61)\n",
			stderr: `^robotstxt: warning: -agent "examplebot/1.0": read as a User-Agent; using its product token "examplebot"\n` +
				notes + `robotstxt: 1 of 2 URLs change verdict\n$`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var file string
			if c.file != nil {
				file = c.file(t)
			} else {
				file = writeRobots(t, c.robots)
			}
			args := append([]string{"diff", file}, c.args...)
			r := runCLI(t, c.stdin, args...)
			stdout := regexp.MustCompile(until).ReplaceAllString(r.stdout, "UNTIL")
			if r.code != c.code || stdout != c.stdout || !regexp.MustCompile(c.stderr).MatchString(r.stderr) {
				t.Errorf("exit %d, stdout\n%s\nstderr\n%s\nwant %d, stdout\n%s\nstderr %s", r.code, r.stdout, r.stderr, c.code, c.stdout, c.stderr)
			}
		})
	}
}

// TestDiffRedirects: against a site, each URL allowed on both sides is
// fetched once without following its redirect; a redirect into a path the
// dialect disallows is a change, one to another host is said unchecked.
func TestDiffRedirects(t *testing.T) {
	other := "http://" + closedAddr(t) // never fetched
	var mu sync.Mutex
	hits := map[string]int{}
	srv, uas := fetchServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.RequestURI]++
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nCrawl-delay: 2.5\nDisallow: /private\n")
		case "/go":
			http.Redirect(w, r, "/private/x?a=1", http.StatusFound)
		case "/moved":
			http.Redirect(w, r, "/page", http.StatusMovedPermanently)
		case "/away":
			http.Redirect(w, r, other+"/private/x", http.StatusTemporaryRedirect)
		case "/choices":
			w.Header().Set("Location", "/private/c")
			w.WriteHeader(http.StatusMultipleChoices) // not followed by Go's client
		default:
			io.WriteString(w, "ok")
		}
	})
	r := runCLI(t, "", "diff", "-user-agent", "examplebot/1.0", srv.URL+"/robots.txt", "/go", "/moved", "/away", "/choices", "/private/y", "/go", "/page")
	wantOut := "/go -> /private/x?a=1\tcolly: followed\trfc9309: stopped (line 3: Disallow: /private)\n" +
		"/away -> " + other + "/private/x\tcolly: followed\trfc9309: not checked (other host)\n" +
		"/go -> /private/x?a=1\tcolly: followed\trfc9309: stopped (line 3: Disallow: /private)\n"
	wantErr := "robotstxt: spacing: colly: none (no LimitRule) -> rfc9309: 2.5s between requests to this host (line 2: Crawl-delay: 2.5)\n" +
		strings.Join(errorNotes, "\n") + "\n" +
		"robotstxt: 0 of 7 URLs change verdict; 2 redirects now stopped; 1 redirect to another host not checked\n"
	if r.code != 1 || r.stdout != wantOut || r.stderr != wantErr {
		t.Errorf("exit %d, stdout\n%s\nstderr\n%s\nwant 1, stdout\n%s\nstderr\n%s", r.code, r.stdout, r.stderr, wantOut, wantErr)
	}
	// Each URL allowed by both fetched once, no redirect followed, nothing
	// disallowed fetched.
	mu.Lock()
	got := fmt.Sprint(hits)
	mu.Unlock()
	if want := fmt.Sprint(map[string]int{"/robots.txt": 2, "/go": 1, "/moved": 1, "/away": 1, "/choices": 1, "/page": 1}); got != want {
		t.Errorf("the site saw %v, want %v", got, want)
	}
	for _, ua := range uas()[2:] {
		if ua != "examplebot/1.0" {
			t.Errorf("a page fetched with User-Agent %q", ua)
		}
	}

	// Allowed by the dialect only: Colly never fetches it, so no redirect
	// is looked at.
	r = runCLI(t, "", "diff", "-user-agent", "examplebot/1.0", srv.URL+"/robots.txt", "/%70rivate/z")
	if r.code != 1 || r.stdout != "/%70rivate/z\tcolly: allowed (-)\trfc9309: disallowed (line 3: Disallow: /private)\n" {
		t.Errorf("exit %d, stdout %q, stderr\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestDiffRedirectFetchFails: a URL that cannot be fetched is said on
// stderr and is no change.
func TestDiffRedirectFetchFails(t *testing.T) {
	srv, _ := fetchServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		hj, _ := w.(http.Hijacker)
		conn, _, _ := hj.Hijack()
		conn.Close()
	})
	r := runCLI(t, "", "diff", srv.URL+"/robots.txt", "/a")
	if r.code != 0 || r.stdout != "" || !regexp.MustCompile(`^robotstxt: redirects: /a: .*EOF.*: its redirect, if any, is not seen\n`).MatchString(r.stderr) ||
		!strings.HasSuffix(r.stderr, "robotstxt: 0 of 1 URLs change verdict\n") {
		t.Errorf("exit %d, stdout %q, stderr\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestDiffSpacing(t *testing.T) {
	cases := []struct{ dialect, robots, want string }{
		{"rfc9309", "User-agent: *\nCrawl-delay: 2\n", "rfc9309: 2s between requests to this host (line 2: Crawl-delay: 2)"},
		{"rfc9309", "User-agent: *\nDisallow: /x\n", "rfc9309: 1s between requests to this host (no Crawl-delay: the plugin's default delay, robots.WithDefaultDelay)"},
		{"rfc9309", "User-agent: *\nCrawl-delay: 0\n", "rfc9309: no spacing (line 2: Crawl-delay: 0)"},
		{"rfc9309", "User-agent: *\nCrawl-delay: 120\n", "rfc9309: 30s between requests to this host (line 2: Crawl-delay: 120, above the largest the plugin honours, robots.WithMaxCrawlDelay)"},
		{"coccoc", "User-agent: *\nCrawl-delay: 120\n", "coccoc: 10s between requests to this host (line 2: Crawl-delay, which coccoc reads as 10)"},
		{"coccoc", "User-agent: *\nCrawl-delay: 2\n", "coccoc: 2s between requests to this host (line 2: Crawl-delay, which coccoc reads as 2)"},
		{"google", "User-agent: *\nCrawl-delay: 2\n", "google: 1s between requests to this host (google reads no Crawl-delay: the plugin's default delay, robots.WithDefaultDelay)"},
	}
	for _, c := range cases {
		r := runCLI(t, "", "diff", "-dialect", c.dialect, writeRobots(t, c.robots), "/a")
		want := "robotstxt: spacing: colly: none (no LimitRule) -> " + c.want + "\n"
		if !strings.Contains(r.stderr, want) {
			t.Errorf("%s %q: stderr\n%s\nwant the line\n%s", c.dialect, c.robots, r.stderr, want)
		}
	}
}
