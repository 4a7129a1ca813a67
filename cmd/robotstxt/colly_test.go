package main

// diff's Colly side is a model of Colly v2.3.0's own robots.txt check. This
// test holds the model to Colly itself: the same robots.txt, UserAgent and
// URLs through a real collector with its check on. Only the test imports
// Colly; the command does not (go list -deps ./cmd/robotstxt).

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gocolly/colly/v2"
)

func TestCollyModelMatchesColly(t *testing.T) {
	for _, e := range os.Environ() {
		if strings.HasPrefix(e, "COLLY_") {
			t.Skipf("%s changes the collector's settings", e)
		}
	}
	examples, err := os.ReadFile("../../examples/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	robots := []struct {
		name   string
		status int
		body   string
	}{
		{"examples", 200, string(examples)},
		{"query and escapes", 200, "User-agent: *\nDisallow: /s?b=1&a=2\nDisallow: /%7Ex\nDisallow: /a%20b\nDisallow: /*.pdf\nAllow: /s\n\nUser-agent: Mozilla\nDisallow: /m\n"},
		{"rejected", 200, "User-agent: *\nCrawl-delay: 1s\nDisallow: /x\n"},
		{"rule before user-agent", 200, "Disallow: /x\nUser-agent: *\nDisallow: /y\n"},
		{"503", 503, "User-agent: *\nDisallow: /\n"},
		{"404", 404, ""},
	}
	agents := []string{
		defaultCollyUA,
		"examplebot-news",
		"examplebot-news/1.0",
		"Mozilla/5.0 (compatible; examplebot-news/1.0; +https://example.com/bot)",
	}
	paths := []string{
		"", "/", "/private/x", "/private/press/1", "/drafts/x", "/%64rafts/y", "/a/../drafts/z", "/report.pdf",
		"/s?b=1&a=2", "/s?a=2&b=1", "/s?b=1;a=2", "/~x/1", "/%7ex", "/a b", "/a%20b", "/100%", "//edit", "/ä", "/m/1", "/x", "/y#f",
	}
	for _, rb := range robots {
		var pages atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				w.WriteHeader(rb.status)
				io.WriteString(w, rb.body)
				return
			}
			pages.Add(1)
			io.WriteString(w, "ok")
		}))
		for _, ua := range agents {
			c := colly.NewCollector(colly.UserAgent(ua), colly.AllowURLRevisit())
			c.IgnoreRobotsTxt = false
			model := newCollyCheck(rb.status, []byte(rb.body), ua, rb.name, io.Discard)
			for _, p := range paths {
				u, err := collyURL(srv.URL, p)
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				want := model.allowed(u)
				before := pages.Load()
				err = c.Visit(srv.URL + p)
				fetched := pages.Load() > before
				got := err == nil
				if got != want || fetched != got {
					t.Errorf("%s, UserAgent %q, %q: Colly: Visit error %v, page fetched %v; the model says allowed=%v", rb.name, ua, p, err, fetched, want)
				}
				if err != nil && model.group != nil && !errors.Is(err, colly.ErrRobotsTxtBlocked) {
					t.Errorf("%s, %q, %q: Visit error %v, want ErrRobotsTxtBlocked", rb.name, ua, p, err)
				}
			}
		}
		srv.Close()
	}
}
