package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fetchServer serves /robots.txt with h and records the User-Agent headers.
func fetchServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var uas []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		uas = append(uas, r.Header.Get("User-Agent"))
		mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), uas...)
	}
}

func status(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

func TestCheckFetchedFile(t *testing.T) {
	srv, uas := fetchServer(t, status(200, cliRobots))
	var out bytes.Buffer
	code, err := run([]string{"check", "-agent", "examplebot", "-explain", srv.URL + "/robots.txt", srv.URL + "/private/x", "/private/press/1", "/other"}, nil, &out, io.Discard)
	if err != nil || code != 1 {
		t.Fatalf("code %d err %v", code, err)
	}
	want := "disallowed\t" + srv.URL + "/private/x\tline 2: Disallow: /private\n" +
		"allowed\t/private/press/1\tline 3: Allow: /private/press\n" +
		"allowed\t/other\tno matching rule\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	if got := uas(); len(got) != 1 || !strings.HasPrefix(got[0], "examplebot ") {
		t.Errorf("User-Agent %q", got)
	}
	// Without -explain, two fields; the bare authority names the same file.
	out.Reset()
	code, err = run([]string{"check", srv.URL, "/private", "/a"}, nil, &out, io.Discard)
	if err != nil || code != 1 || out.String() != "disallowed\t/private\nallowed\t/a\n" {
		t.Errorf("code %d err %v out %q", code, err, out.String())
	}
}

func TestCheckFetchOutcome(t *testing.T) {
	until := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`
	cases := []struct {
		dialect string
		h       http.HandlerFunc
		code    int
		line    string // a regexp
	}{
		{"rfc9309", status(503, cliRobots), 1, `^disallowed\t/private/x\trobots.txt: 503 Service Unavailable, complete disallow until ` + until + `\n$`},
		{"google", status(500, cliRobots), 1, `^disallowed\t/private/x\trobots.txt: 500 Internal Server Error, complete disallow until ` + until + `\n$`},
		{"coccoc", status(503, cliRobots), 0, `^allowed\t/private/x\trobots.txt: 503 Service Unavailable, no restrictions\n$`},
		{"koster1994", status(429, ""), 1, `^disallowed\t/private/x\trobots.txt: 429 Too Many Requests, complete disallow until ` + until + `\n$`},
		{"rfc9309", status(404, cliRobots), 0, `^allowed\t/private/x\trobots.txt: 404 Not Found, no restrictions\n$`},
		{"coccoc", func(w http.ResponseWriter, r *http.Request) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, 1, `^disallowed\t/private/x\trobots.txt: no answer \(.*\), host excluded until ` + until + `\n$`},
	}
	for _, c := range cases {
		srv, _ := fetchServer(t, c.h)
		var out bytes.Buffer
		code, err := run([]string{"check", "-dialect", c.dialect, "-agent", "examplebot", "-explain", srv.URL + "/robots.txt", "/private/x"}, nil, &out, io.Discard)
		if err != nil || code != c.code || !regexp.MustCompile(c.line).MatchString(out.String()) {
			t.Errorf("%s: code %d err %v output %q; want %d %s", c.dialect, code, err, out.String(), c.code, c.line)
		}
	}
}

func TestInspectFetchedFile(t *testing.T) {
	hops := 0
	srv, _ := fetchServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" || strings.HasPrefix(r.URL.Path, "/hop") {
			if n := strings.Count(r.URL.Path, "/hop"); n < 3 {
				hops++
				http.Redirect(w, r, strings.Repeat("/hop", n+1), http.StatusFound)
				return
			}
		}
		status(200, cliRobots)(w, r)
	})
	var out bytes.Buffer
	code, err := run([]string{"inspect", "-agent", "examplebot", srv.URL + "/robots.txt"}, nil, &out, io.Discard)
	if err != nil || code != 0 {
		t.Fatalf("code %d err %v", code, err)
	}
	var got inspectOutput
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	f := got.Fetch
	if f == nil || f.Status != 200 || f.Redirects != 3 || f.Action != "parse" || f.Outcome != "200" ||
		f.URL != srv.URL+"/robots.txt" || f.FinalURL != srv.URL+"/hop/hop/hop" || !strings.HasPrefix(f.Reason, "robots.txt: 200 OK, "+strconv.Itoa(len(cliRobots))+" bytes parsed") {
		t.Errorf("fetch %+v", f)
	}
	if len(got.Rules) != 2 || len(got.Sitemaps) != 2 || got.Bytes != len(cliRobots) {
		t.Errorf("rules %v sitemaps %v bytes %d", got.Rules, got.Sitemaps, got.Bytes)
	}

	srv2, _ := fetchServer(t, status(503, cliRobots))
	out.Reset()
	code, err = run([]string{"inspect", "-dialect", "google", srv2.URL + "/robots.txt"}, nil, &out, io.Discard)
	if err != nil || code != 0 {
		t.Fatalf("code %d err %v", code, err)
	}
	got = inspectOutput{}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if f := got.Fetch; f == nil || f.Status != 503 || f.Outcome != "5xx" || f.Action != "disallow all" ||
		!strings.Contains(f.Reason, "complete disallow until "+f.Expires) || len(got.Rules) != 0 {
		t.Errorf("fetch %+v rules %v", f, got.Rules)
	}
	// A local file has no fetch object.
	out.Reset()
	if _, err := run([]string{"inspect", writeRobots(t, cliRobots)}, nil, &out, io.Discard); err != nil || strings.Contains(out.String(), `"fetch"`) {
		t.Errorf("local file: %v %s", err, out.String())
	}
}

func TestFetchedFileErrors(t *testing.T) {
	for _, file := range []string{"http://127.0.0.1:1/other.txt", "https://example.com/robots.txt?x=1", "http:///robots.txt"} {
		var out bytes.Buffer
		code, err := run([]string{"check", file, "/a"}, nil, &out, io.Discard)
		if code != 2 || err == nil {
			t.Errorf("%s: code %d err %v", file, code, err)
		}
	}
	_, err := run([]string{"check", "http://127.0.0.1:1/other.txt", "/a"}, nil, &bytes.Buffer{}, io.Discard)
	if !errors.Is(err, errUsage) {
		t.Errorf("wrong path is a usage error: %v", err)
	}
}

// check -usage and inspect against a fetched robots.txt: the preferences
// come through the policy, and a fetch outcome that decides every URL
// states none.
func TestUsageFetchedFile(t *testing.T) {
	ok, uas := fetchServer(t, status(200, draftExample))
	cases := []struct {
		name   string
		h      http.HandlerFunc // nil: ok
		args   []string         // after "check ROBOTS_URL"
		code   int
		stdout string // a regexp; SRV is the server's URL
	}{
		{"draft, *", nil, []string{"-usage", "train-ai,search", "-explain", "/test", "/never/test", "SRV/ai-ok/test"}, 1,
			"^allowed\t/test\ttrain-ai=n\tsearch=unknown\tline 2: Allow: /\n" +
				"disallowed\t/never/test\ttrain-ai=n/a\tsearch=n/a\tline 3: Disallow: /never/\n" +
				"allowed\tSRV/ai-ok/test\ttrain-ai=y\tsearch=unknown\tline 2: Allow: /\n$"},
		{"draft, ExampleBot", nil, []string{"-agent", "ExampleBot", "-usage", "train-ai", "/test", "/never/test", "/ai-ok/test"}, 0,
			"^allowed\t/test\ttrain-ai=y\nallowed\t/never/test\ttrain-ai=y\nallowed\t/ai-ok/test\ttrain-ai=y\n$"},
		{"404: no restrictions, nothing stated", status(404, draftExample), []string{"-usage", "train-ai", "-explain", "/never/test"}, 0,
			"^allowed\t/never/test\ttrain-ai=unknown\trobots.txt: 404 Not Found, no restrictions\n$"},
		{"503: complete disallow", status(503, draftExample), []string{"-usage", "train-ai", "-explain", "/test"}, 1,
			"^disallowed\t/test\ttrain-ai=n/a\trobots.txt: 503 Service Unavailable, complete disallow until [0-9TZ:-]+\n$"},
	}
	for _, c := range cases {
		srv := ok
		if c.h != nil {
			srv, _ = fetchServer(t, c.h)
		}
		args := []string{"check", srv.URL + "/robots.txt"}
		for _, a := range c.args {
			args = append(args, strings.ReplaceAll(a, "SRV", srv.URL))
		}
		r := runCLI(t, "", args...)
		want := strings.ReplaceAll(c.stdout, "SRV", regexp.QuoteMeta(srv.URL))
		if r.code != c.code || !regexp.MustCompile(want).MatchString(r.stdout) {
			t.Errorf("%s: exit %d stdout %q stderr %q; want %d %s", c.name, r.code, r.stdout, r.stderr, c.code, want)
		}
	}
	if got := uas(); len(got) != 2 || !strings.HasPrefix(got[1], "ExampleBot ") {
		t.Errorf("User-Agents %q: want one fetch per run, ExampleBot's second", got)
	}
	r := runCLI(t, "", "inspect", "-agent", "ExampleBot", ok.URL+"/robots.txt")
	if r.code != 0 || !strings.Contains(r.stdout, `"usage_rules": [
    {
      "line": 9,
      "path": "",
      "rule": "Content-Usage: train-ai=y",
      "usage": "train-ai=y"
    }
  ],`) {
		t.Errorf("inspect: exit %d\n%s", r.code, r.stdout)
	}
}
