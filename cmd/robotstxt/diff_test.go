package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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
			stderr: `^robotstxt: 0 of 2 URLs change verdict\n$`,
		},
		{
			// Colly sorts the query before temoto matches it; the plugin
			// matches the query as sent.
			name:   "query re-sorted",
			robots: "User-agent: *\nDisallow: /s?b=1&a=2\n",
			args:   []string{"/s?b=1&a=2", "/s?a=2&b=1"},
			code:   1,
			stdout: "/s?b=1&a=2\tcolly: allowed (-)\trfc9309: disallowed (line 2: Disallow: /s?b=1&a=2)\n",
			stderr: `^robotstxt: 1 of 2 URLs change verdict\n$`,
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
				`robotstxt: 1 of 2 URLs change verdict\n$`,
		},
		{
			// The collector's UserAgent alone: the plugin's token is its
			// product token.
			name:   "user-agent only",
			robots: "User-agent: *\nDisallow: /\n\nUser-agent: examplebot\nAllow: /\n",
			args:   []string{"-user-agent", "examplebot/2.0 (+https://example.com/bot)", "/a"},
			code:   0,
			stderr: `^robotstxt: 0 of 1 URLs change verdict\n$`,
		},
		{
			name:   "whole header",
			robots: "User-agent: *\nDisallow: /\n\nUser-agent: examplebot\nAllow: /\n",
			args:   []string{"-user-agent", "Mozilla/5.0 (compatible; examplebot/2.0)", "/a"},
			code:   1,
			stdout: "/a\tcolly: disallowed (-)\trfc9309: allowed (line 5: Allow: /)\n",
			stderr: `^robotstxt: 1 of 1 URLs change verdict\n$`,
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
			stderr: `^robotstxt: 2 of 3 URLs change verdict\n$`,
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
			stdout: "/a\tcolly: allowed (-)\trfc9309: disallowed (robots.txt: 503 Service Unavailable, complete disallow until " + "UNTIL" + ")\n",
			stderr: `^robotstxt: http://\S+/robots.txt: 503 Service Unavailable, complete disallow until ` + until + `\n` +
				`robotstxt: colly: http://\S+/robots.txt answered 503 Service Unavailable: temoto reads it as disallow all, but Colly asks it for a group, finds none and allows every URL\n` +
				`robotstxt: 1 of 1 URLs change verdict\n$`,
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
				`robotstxt: 0 of 1 URLs change verdict\n$`,
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
				`robotstxt: 1 of 2 URLs change verdict\n$`,
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
