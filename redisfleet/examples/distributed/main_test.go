package main

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// The fleet itself (several processes) is tested in package redisfleet
// (fleet_process_test.go), which builds this command; here: its flags,
// its errors, and one process crawling on its own.

func TestUsage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{nil, "no start URL given"},
		{[]string{"-threads", "0", "http://a.example/"}, "-threads must be at least 1"},
		{[]string{"-depth", "-1", "http://a.example/"}, "-depth must not be negative"},
		{[]string{"-nope", "http://a.example/"}, "flag provided but not defined"},
		{[]string{"-redis", "ftp://x", "http://a.example/"}, "redisfleet"},
		{[]string{"-redis-cluster", "ftp://x", "http://a.example/"}, "redisfleet"},
		{[]string{"-redis", "redis://a:1", "-redis-cluster", "redis://b:1", "http://a.example/"}, "give one"},
		{[]string{"http://a.example/", "-threads", "2"}, "flags must come before the URLs"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if code := run(c.args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
		if !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, errb.String(), c.want)
		}
	}
}

// TestRedisUnreachable: a clear error and exit status 1, at once.
func TestRedisUnreachable(t *testing.T) {
	t.Parallel()
	addr := redistest.DeadAddr(t) // nothing listens there
	var out, errb bytes.Buffer
	if code := run([]string{"-redis", "redis://" + addr + "/0", "http://a.example/"}, &out, &errb); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(errb.String(), "cannot start") || !strings.Contains(errb.String(), "unavailable") {
		t.Fatalf("stderr %q does not say Redis is unreachable", errb.String())
	}
}

// TestOneProcess crawls two linked sites with one process: every page
// once, what robots.txt disallows reported as stopped, the summary last.
func TestOneProcess(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	page := func(links ...string) func(http.ResponseWriter, *http.Request) bool {
		return func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>")
			if r.URL.Path == "/" {
				for _, l := range links {
					fmt.Fprintf(w, `<a href="%s">x</a>`, l)
				}
			}
			fmt.Fprint(w, "</body></html>")
			return true
		}
	}
	farm := testutil.NewFarm(t, map[string]*testutil.Site{
		"a.example": {Robots: "User-agent: *\nDisallow: /private\n", Handle: page("/one", "/two", "/private", "http://elsewhere.example/")},
		"b.example": {Robots: "User-agent: *\n", Handle: page("/three")},
	})
	var out, errb bytes.Buffer
	code := run([]string{"-redis", srv.URL(), "-connect", farm.Server.Listener.Addr().String(), "-min-delay", "0",
		"-threads", "2", "http://a.example/", "http://b.example/"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	got := out.String()
	for _, want := range []string{
		"fetched 200 http://a.example/\n", "fetched 200 http://a.example/one\n", "fetched 200 http://a.example/two\n",
		"fetched 200 http://b.example/\n", "fetched 200 http://b.example/three\n", "stopped http://a.example/private: ",
	} {
		if strings.Count(got, want) != 1 {
			t.Errorf("want %q once in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "elsewhere.example") {
		t.Errorf("followed a link to another host:\n%s", got)
	}
	if !regexp.MustCompile(`(?m)^done: 5 fetched, 1 stopped \(pid \d+`).MatchString(got) {
		t.Errorf("no summary, or a wrong one:\n%s", got)
	}
	if p := farm.Paths("a.example"); strings.Join(p, " ") != "/ /one /two" {
		t.Errorf("a.example served %v", p)
	}
}
