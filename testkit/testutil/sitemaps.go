package testutil

import (
	"bytes"
	"compress/gzip"
	"strings"
)

// URLSet returns a sitemaps.org urlset listing locs; a loc may carry its
// lastmod after a '|' ("http://a.example/x|2026-11-01").
func URLSet(locs ...string) string { return sitemapDoc("urlset", "url", locs) }

// SitemapIndex returns a sitemaps.org sitemapindex listing locs, in the
// form URLSet takes.
func SitemapIndex(locs ...string) string { return sitemapDoc("sitemapindex", "sitemap", locs) }

func sitemapDoc(root, entry string, locs []string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><` + root + ` xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, l := range locs {
		loc, mod, _ := strings.Cut(l, "|")
		b.WriteString("<" + entry + "><loc>" + loc + "</loc>")
		if mod != "" {
			b.WriteString("<lastmod>" + mod + "</lastmod>")
		}
		b.WriteString("</" + entry + ">")
	}
	b.WriteString("</" + root + ">")
	return b.String()
}

// Gzip returns s gzipped.
func Gzip(s string) string {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write([]byte(s))
	z.Close()
	return b.String()
}
