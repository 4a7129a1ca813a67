package sitemap

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The real sitemaps of ../shared/corpus/sitemaps, when present (the tests
// never depend on them): each is read to its clean end in the format its
// content has (whatever its name says), with as many entries as it has
// entry start tags, each an absolute http(s) URL, nothing rejected.
func TestSharedCorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "corpus", "sitemaps")
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) == 0 {
		t.Skip("no ../shared/corpus/sitemaps")
	}
	formats := map[string]Format{ // by file name: the reader must not use it
		"0install__sitemap.xml":                                  FormatURLSet,
		"0install__sitemap.xml.gz":                               FormatURLSet,
		"crawlercommons__hebdenbridgetimes-articles-sitemap.xml": FormatURLSet,
		"crawlercommons__shinpaideshou-news-sitemap.xml":         FormatURLSet,
		"dimple__sitemap.txt":                                    FormatURLSet,
		"dystopiangovuk__sitemap.txt":                            FormatText,
		"foldoc__rss.xml":                                        FormatRSS,
		"heizungdefekt__page-sitemap0.xml":                       FormatURLSet,
		"heizungdefekt__sitemap_index.xml":                       FormatIndex,
		"planetbalham__atom.xml":                                 FormatAtom,
	}
	entryTag := map[Format]*regexp.Regexp{
		FormatURLSet: regexp.MustCompile(`<url[\s>]`),
		FormatIndex:  regexp.MustCompile(`<sitemap[\s>]`),
		FormatRSS:    regexp.MustCompile(`<item[\s>]`),
		FormatAtom:   regexp.MustCompile(`<entry[\s>]`),
		FormatText:   regexp.MustCompile(`(?m)^https?://\S`),
	}
	for _, f := range files {
		name := filepath.Base(f)
		want, ok := formats[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			plain := raw
			if zr, err := gzip.NewReader(bytes.NewReader(raw)); err == nil {
				plain, _ = io.ReadAll(zr)
			}
			es, r, err := readAll(t, raw, Limits{})
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if r.Format() != want {
				t.Errorf("format %v, want %v", r.Format(), want)
			}
			if n := len(entryTag[want].FindAll(plain, -1)); len(es) != n || n == 0 {
				t.Errorf("%d entries, want %d", len(es), n)
			}
			if len(r.Rejected()) != 0 {
				t.Errorf("rejected %v", r.Rejected())
			}
			for _, e := range es {
				u, err := url.Parse(e.Loc)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					t.Errorf("loc %q", e.Loc)
				}
				if strings.Contains(e.Loc, "image") && strings.HasSuffix(e.Loc, ".jpg") {
					t.Errorf("image loc %q became a page", e.Loc)
				}
			}
			t.Logf("%v: %d entries, warnings %q", r.Format(), len(es), r.Warnings())
		})
	}
}
