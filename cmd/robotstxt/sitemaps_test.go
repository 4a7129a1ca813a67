package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

const relRobots = "User-agent: *\nDisallow: /x\nSitemap: /sitemap.xml\nSitemap: https://cdn.example/a.xml\nSitemap: /sitemap.xml\n"

func TestInspectSitemapLines(t *testing.T) {
	// A local file: kept as written, a relative one warned about.
	var out, errb bytes.Buffer
	code, err := run([]string{"inspect", writeRobots(t, relRobots)}, nil, &out, &errb)
	if err != nil || code != 0 {
		t.Fatalf("code %d err %v", code, err)
	}
	var got inspectOutput
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if want := []string{"/sitemap.xml", "https://cdn.example/a.xml", "/sitemap.xml"}; !slices.Equal(got.Sitemaps, want) {
		t.Errorf("local sitemaps %q, want %q", got.Sitemaps, want)
	}
	if w := errb.String(); strings.Count(w, "relative Sitemap \"/sitemap.xml\" kept as written") != 2 || !strings.Contains(w, "line 3:") || !strings.Contains(w, "line 5:") {
		t.Errorf("local stderr %q", w)
	}

	// A fetched file: resolved against its URL, each once, said on stderr.
	srv, _ := fetchServer(t, status(200, relRobots))
	out.Reset()
	errb.Reset()
	code, err = run([]string{"inspect", srv.URL + "/robots.txt"}, nil, &out, &errb)
	if err != nil || code != 0 {
		t.Fatalf("code %d err %v", code, err)
	}
	got = inspectOutput{}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if want := []string{srv.URL + "/sitemap.xml", "https://cdn.example/a.xml"}; !slices.Equal(got.Sitemaps, want) {
		t.Errorf("fetched sitemaps %q, want %q", got.Sitemaps, want)
	}
	if w := errb.String(); !strings.Contains(w, "robotstxt: warning: line 3: relative Sitemap \"/sitemap.xml\" resolved to "+srv.URL+"/sitemap.xml") ||
		!strings.Contains(w, "line 5: Sitemap "+srv.URL+"/sitemap.xml repeats line 3") {
		t.Errorf("fetched stderr %q", w)
	}
}
