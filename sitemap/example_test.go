package sitemap_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/politecrawl/robots/sitemap"
)

func Example() {
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://example.com/</loc><lastmod>2024-05-01</lastmod><priority>1.0</priority></url>
  <url><loc>/about</loc><changefreq>monthly</changefreq></url>
  <url><loc>mailto:me@example.com</loc></url>
</urlset>`
	r := sitemap.NewReader(strings.NewReader(doc), "https://example.com/sitemap.xml", sitemap.Limits{})
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println("error:", err)
			break
		}
		fmt.Println(e.Loc, e.LastMod.Format("2006-01-02"), e.ChangeFreq, e.Priority)
	}
	fmt.Println(r.Format(), r.Rejected(), r.Warnings())
	// Output:
	// https://example.com/ 2024-05-01  1
	// https://example.com/about 0001-01-01 monthly -1
	// urlset map[not http(s):1] [relative loc "/about" resolved against https://example.com/sitemap.xml]
}

func ExampleReader_All() {
	// A sitemap cut in the middle of its third entry: the first two are
	// kept, then the error says why the document ended.
	doc := `<urlset>
  <url><loc>https://example.com/a</loc></url>
  <url><loc>https://example.com/b</loc></url>
  <url><loc>https://example.com/c`
	r := sitemap.NewReader(strings.NewReader(doc), "https://example.com/sitemap.xml", sitemap.Limits{})
	for e, err := range r.All() {
		if err != nil {
			fmt.Println("truncated:", errors.Is(err, io.ErrUnexpectedEOF))
			break
		}
		fmt.Println(e.Loc)
	}
	// Output:
	// https://example.com/a
	// https://example.com/b
	// truncated: true
}

func ExampleLimits() {
	// An HTML error page served with status 200 instead of a sitemap.
	r := sitemap.NewReader(strings.NewReader("<!DOCTYPE html><html><body>Not found</body></html>"), "", sitemap.Limits{})
	_, err := r.Next()
	fmt.Println(errors.Is(err, sitemap.ErrNotSitemap), err)

	// A sitemap with more entries than allowed: the first ones are kept.
	r = sitemap.NewReader(strings.NewReader("https://example.com/1\nhttps://example.com/2\nhttps://example.com/3\n"), "", sitemap.Limits{MaxEntries: 2})
	n := 0
	for _, err := range r.All() {
		var le *sitemap.LimitError
		if errors.As(err, &le) {
			fmt.Println(n, "entries, then", le.Limit, "limit", le.Max, errors.Is(err, sitemap.ErrLimit))
			break
		}
		n++
	}
	// Output:
	// true sitemap: not a sitemap: an HTML page
	// 2 entries, then entries limit 2 true
}
