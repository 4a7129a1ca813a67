package policy

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/politecrawl/robots/dialect"
)

func TestResolveSitemaps(t *testing.T) {
	const base = "https://example.com/robots.txt"
	for _, tc := range []struct {
		name  string
		lines []string
		want  []string
		warn  []string // substrings of the warnings, in order
	}{
		{"absolute kept", []string{"https://example.com/s.xml"}, []string{"https://example.com/s.xml"}, nil},
		{"other host kept", []string{"http://cdn.example.net/s.xml.gz"}, []string{"http://cdn.example.net/s.xml.gz"}, nil},
		{"relative path", []string{"/sitemap.xml"}, []string{"https://example.com/sitemap.xml"},
			[]string{`line 1: relative Sitemap "/sitemap.xml" resolved to https://example.com/sitemap.xml`}},
		{"relative no slash", []string{"maps/s.xml"}, []string{"https://example.com/maps/s.xml"}, []string{"resolved"}},
		{"scheme-relative", []string{"//other.example/s.xml"}, []string{"https://other.example/s.xml"}, []string{"resolved"}},
		{"spaces trimmed", []string{"  https://example.com/s.xml "}, []string{"https://example.com/s.xml"}, nil},
		{"fragment dropped", []string{"https://example.com/s.xml#top"}, []string{"https://example.com/s.xml"}, nil},
		{"duplicate dropped", []string{"https://example.com/s.xml", "https://example.com/s.xml"}, []string{"https://example.com/s.xml"},
			[]string{"line 2: Sitemap https://example.com/s.xml repeats line 1; left out"}},
		{"duplicate after resolving", []string{"https://example.com/s.xml", "/s.xml"}, []string{"https://example.com/s.xml"},
			[]string{`line 2: Sitemap https://example.com/s.xml repeats line 1`}},
		{"not http", []string{"ftp://example.com/s.xml", "https://example.com/a.xml"}, []string{"https://example.com/a.xml"},
			[]string{`line 1: Sitemap "ftp://example.com/s.xml" is not an http(s) URL; left out`}},
		{"no URL", []string{"http://[::1/s.xml"}, nil, []string{"is no URL"}},
		{"http without host", []string{"http:/s.xml"}, nil, []string{"not an http(s) URL"}},
		{"empty", []string{" "}, nil, []string{"line 1: empty Sitemap; left out"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lines []dialect.Sitemap
			for i, l := range tc.lines {
				lines = append(lines, dialect.Sitemap{URL: l, Line: i + 1})
			}
			got, warn := ResolveSitemaps(base, lines)
			if !slices.Equal(got, tc.want) {
				t.Errorf("urls = %q, want %q", got, tc.want)
			}
			if len(warn) != len(tc.warn) {
				t.Fatalf("warnings = %q, want %d like %q", warn, len(tc.warn), tc.warn)
			}
			for i, w := range tc.warn {
				if !strings.Contains(warn[i], w) {
					t.Errorf("warning %d = %q, want it to hold %q", i, warn[i], w)
				}
			}
		})
	}
}

func TestResolveSitemapsNoBase(t *testing.T) {
	got, warn := ResolveSitemaps("", []dialect.Sitemap{{URL: "/s.xml", Line: 3}, {URL: "https://a.example/s.xml", Line: 4}})
	if !slices.Equal(got, []string{"https://a.example/s.xml"}) || len(warn) != 1 || !strings.Contains(warn[0], "line 3: relative Sitemap \"/s.xml\" cannot be resolved") {
		t.Errorf("got %q, %q", got, warn)
	}
}

func TestPolicySitemaps(t *testing.T) {
	srv := newRobotsServer(t, text(http.StatusOK, "User-agent: *\nDisallow: /x\nSitemap: /sitemap.xml\nSitemap: https://cdn.example/a.xml\nsitemap: /sitemap.xml\n"))
	r := newResolver(t)
	u, _ := url.Parse(srv.URL + "/page")
	p, err := r.Policy(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{srv.URL + "/sitemap.xml", "https://cdn.example/a.xml"}
	if got := p.Sitemaps(); !slices.Equal(got, want) {
		t.Errorf("Sitemaps = %q, want %q", got, want)
	}
	w := p.SitemapWarnings()
	if len(w) != 2 || !strings.Contains(w[0], "line 3: relative Sitemap") || !strings.Contains(w[1], "line 5: Sitemap "+srv.URL+"/sitemap.xml repeats line 3") {
		t.Errorf("SitemapWarnings = %q", w)
	}

	// No robots.txt in force: no sitemaps.
	srv.set(text(http.StatusNotFound, "Sitemap: /s.xml\n"))
	r2 := newResolver(t)
	p, err = r2.Policy(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Sitemaps(); got != nil {
		t.Errorf("404: Sitemaps = %q, want none", got)
	}
}
