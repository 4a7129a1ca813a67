package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// site serves a robots.txt that disallows /private for testbot, and three
// pages; it records the User-Agent headers it sees.
func site(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var uas []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		uas = append(uas, r.Header.Get("User-Agent"))
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nDisallow: /\n\nUser-agent: testbot\nDisallow: /private\nCrawl-delay: 0.2\n")
		case "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="/a">a</a> <a href="/b">b</a> <a href="/private/x">x</a>`)
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<p>page</p>")
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), uas...)
	}
}

func TestCrawl(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 50 * time.Millisecond
	srv, uas := site(t)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-agent", "testbot/2.0", "-min-delay", "0", srv.URL + "/"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{
		"fetched  200 " + srv.URL + "/\n",
		"fetched  200 " + srv.URL + "/a\n",
		"fetched  200 " + srv.URL + "/b\n",
		"stopped  " + srv.URL + "/private/x: ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "\n"); n != 4 {
		t.Errorf("stdout has %d lines, want 4:\n%s", n, out.String())
	}
	stderr := errb.String()
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if lines[0] != `crawl: warning: -agent "testbot/2.0": read as a User-Agent; using its product token "testbot"` {
		t.Errorf("first stderr line %q", lines[0])
	}
	progress := regexp.MustCompile(`^crawl: \d+s: \d+ fetched \(\d+\.\d/s\), \d+ stopped, 0 errors; hosts: \d+, \d+ waiting$`)
	n := 0
	for _, l := range lines {
		if progress.MatchString(l) {
			n++
		}
	}
	// Four requests 0.2 s apart (robots.txt included) take at least 0.6 s.
	if n < 2 {
		t.Errorf("%d progress lines in\n%s", n, stderr)
	}
	summary := regexp.MustCompile(`(?m)^crawl: done in \S+: 3 fetched \(\d+\.\d/s\), 1 stopped \(1 disallowed, 0 deferred, 0 skipped, 0 canceled\), 0 errors; requests waited \S+ in all\n` +
		`crawl: http://127\.0\.0\.1:\d+: allowed 3, disallowed 1, deferred 0, skipped 0, canceled 0, waited \S+\n$`)
	if !summary.MatchString(stderr) {
		t.Errorf("summary:\n%s", stderr)
	}
	for _, ua := range uas() {
		if ua != "Mozilla/5.0 (compatible; testbot/0.1; +https://github.com/politecrawl/robots)" {
			t.Errorf("User-Agent %q", ua)
		}
	}
}

// -user-agent sets the header alone; the product token still decides.
func TestCrawlUserAgent(t *testing.T) {
	srv, uas := site(t)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-agent", "testbot", "-user-agent", "Custom/9", "-progress=false", "-max", "0", srv.URL + "/private/y"}, &out, &errb)
	if code != 0 || !strings.HasPrefix(out.String(), "stopped  "+srv.URL+"/private/y: ") {
		t.Errorf("exit %d stdout %q stderr %q", code, out.String(), errb.String())
	}
	if strings.Contains(errb.String(), "warning") || !strings.HasPrefix(errb.String(), "crawl: done in ") {
		t.Errorf("stderr %q", errb.String())
	}
	if got := uas(); len(got) != 1 || got[0] != "Custom/9" {
		t.Errorf("User-Agents %q", got)
	}
}

func TestAgentTokens(t *testing.T) {
	tokens, warnings := agentTokens("Mozilla/5.0 (KHTML, like Gecko; compatible; ExampleBot/1.0), examplebot, Foo/1, Foo/1")
	if strings.Join(tokens, ",") != "ExampleBot,examplebot,Foo" || len(warnings) != 2 {
		t.Errorf("tokens %q warnings %q", tokens, warnings)
	}
}

// An interrupt ends the crawl; the summary is still printed.
func TestCrawlInterrupted(t *testing.T) {
	srv, _ := site(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var out, errb bytes.Buffer
	began := time.Now()
	code := run(ctx, []string{"-agent", "testbot", "-min-delay", "10s", "-progress=false", srv.URL + "/"}, &out, &errb)
	if code != 130 || !regexp.MustCompile(`(?m)^crawl: interrupted in `).MatchString(errb.String()) || time.Since(began) > 5*time.Second {
		t.Errorf("exit %d after %s\nstdout\n%s\nstderr\n%s", code, time.Since(began), out.String(), errb.String())
	}
}
