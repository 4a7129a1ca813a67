package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func nested(n int) string {
	return "<urlset>" + strings.Repeat("<a>", n-1) + strings.Repeat("</a>", n-1) + "<url><loc>http://example.com/a</loc></url></urlset>"
}

func urlsetN(n int) []byte {
	var b bytes.Buffer
	b.WriteString("<urlset>")
	for i := range n {
		fmt.Fprintf(&b, "<url><loc>http://example.com/p%d</loc></url>\n", i)
	}
	b.WriteString("</urlset>")
	return b.Bytes()
}

func textN(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "http://example.com/p%d\n", i)
	}
	return b.Bytes()
}

// Each per-document limit at its bound and one past it: how many entries
// come out, which limit stops the document (""= none), what is rejected.
func TestLimits(t *testing.T) {
	loc := func(n int) string { // an absolute URL of exactly n bytes
		p := "http://example.com/"
		return p + strings.Repeat("x", n-len(p))
	}
	cases := []struct {
		name     string
		doc      []byte
		lim      Limits
		entries  int
		limit    string
		rejected map[string]int
	}{
		{"50,000 entries pass", urlsetN(50_000), Limits{}, 50_000, "", nil},
		{"entry 50,001 stops the document, the first 50,000 are kept", urlsetN(50_001), Limits{}, 50_000, LimitEntries, nil},
		{"text: entry 50,001", textN(50_001), Limits{}, 50_000, LimitEntries, nil},
		{"MaxEntries 3", urlsetN(10), Limits{MaxEntries: 3}, 3, LimitEntries, nil},
		{"rejected entries count", []byte("<urlset><url><loc>ftp://x/</loc></url><url><loc>http://example.com/a</loc></url><url><loc>http://example.com/b</loc></url></urlset>"),
			Limits{MaxEntries: 2}, 1, LimitEntries, map[string]int{RejectNotHTTP: 1}},
		{"loc of 2,048 bytes", []byte(urlset(loc(2048))), Limits{}, 1, "", nil},
		{"loc of 2,049 bytes rejected, not fatal", []byte(urlset(loc(2049), "http://example.com/b")), Limits{}, 1, "", map[string]int{RejectLocTooLong: 1}},
		{"loc of 1 MB rejected, not fatal", []byte(urlset(loc(1<<20), "http://example.com/b")), Limits{MaxTextRun: 2 << 20}, 1, "", map[string]int{RejectLocTooLong: 1}},
		{"text line of 2,049 bytes rejected", []byte(loc(100) + "\n" + loc(2049) + "\n"), Limits{}, 1, "", map[string]int{RejectLocTooLong: 1}},
		{"depth 32", []byte(nested(32)), Limits{}, 1, "", nil},
		{"depth 33", []byte(nested(33)), Limits{}, 0, LimitDepth, nil},
		{"depth 5 of 5", []byte(nested(5)), Limits{MaxDepth: 5}, 1, "", nil},
		{"bytes: exactly MaxBytes", urlsetN(3), Limits{MaxBytes: int64(len(urlsetN(3)))}, 3, "", nil},
		{"bytes: one more than MaxBytes", urlsetN(3), Limits{MaxBytes: int64(len(urlsetN(3)) - 1)}, 3, LimitBytes, nil},
		{"bytes counted decompressed", gz(t, urlsetN(1000)), Limits{MaxBytes: 10_000}, -1, LimitBytes, nil},
		{"text node of MaxTextRun", []byte("<urlset><x>" + strings.Repeat("a", 1000) + "</x><url><loc>http://example.com/a</loc></url></urlset>"), Limits{MaxTextRun: 1000}, 1, "", nil},
		{"text node of MaxTextRun+1", []byte("<urlset><x>" + strings.Repeat("a", 1001) + "</x></urlset>"), Limits{MaxTextRun: 1000}, 0, LimitTextRun, nil},
		{"text node of 300 KiB, default limit", []byte("<urlset><url><loc>http://example.com/a</loc></url><url><loc>http://example.com/b" + strings.Repeat(" ", 300<<10) + "</loc></url></urlset>"), Limits{}, 1, LimitTextRun, nil},
		{"comment run", []byte("<urlset><!--" + strings.Repeat("<a>", 1000) + "--></urlset>"), Limits{MaxTextRun: 1000}, 0, LimitTextRun, nil},
		{"CDATA run", []byte("<urlset><x><![CDATA[" + strings.Repeat("<a>", 1000) + "]]></x></urlset>"), Limits{MaxTextRun: 1000}, 0, LimitTextRun, nil},
		{"attribute run", []byte(`<urlset><url a="` + strings.Repeat("x>", 1000) + `"></url></urlset>`), Limits{MaxTextRun: 1000}, 0, LimitTextRun, nil},
		{"PI run", []byte("<?xml version='1.0'?><?pi " + strings.Repeat("<a>", 1000) + "?><urlset></urlset>"), Limits{MaxTextRun: 1000}, 0, LimitTextRun, nil},
		{"leading whitespace run", []byte(strings.Repeat(" ", 2000) + "<urlset></urlset>"), Limits{MaxTextRun: 1000}, 0, LimitTextRun, nil},
		{"text sitemap line run", []byte("http://example.com/a\nhttp://example.com/" + strings.Repeat("b", 2000) + "\n"), Limits{MaxTextRun: 1000}, 1, LimitTextRun, nil},
		{"alternates over limit", []byte(`<urlset><url><loc>http://example.com/a</loc>` + strings.Repeat(`<xhtml:link rel="alternate" hreflang="x" href="http://example.com/x"/>`, 5) + `</url></urlset>`),
			Limits{MaxAlternates: 3}, 1, "", map[string]int{RejectAlternates: 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es, r, err := readAll(t, c.doc, c.lim)
			if c.entries >= 0 && len(es) != c.entries {
				t.Errorf("%d entries, want %d", len(es), c.entries)
			}
			var le *LimitError
			switch {
			case c.limit == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case c.limit != "" && !errors.As(err, &le):
				t.Errorf("error %v, want the %s limit", err, c.limit)
			case c.limit != "" && (le.Limit != c.limit || !errors.Is(err, ErrLimit)):
				t.Errorf("error %v, want the %s limit", err, c.limit)
			}
			if fmt.Sprint(r.Rejected()) != fmt.Sprint(map[string]int(c.rejected)) && !(len(r.Rejected()) == 0 && c.rejected == nil) {
				t.Errorf("rejected %v, want %v", r.Rejected(), c.rejected)
			}
			lim := c.lim.withDefaults()
			if r.Bytes() > lim.MaxBytes {
				t.Errorf("Bytes %d > MaxBytes %d", r.Bytes(), lim.MaxBytes)
			}
		})
	}
}

// gzipBomb returns a gzip of head then size bytes of fill (size a
// multiple of 4 MiB, fill a divisor of 1 MiB): one member holding head and
// 4 MiB of fill, then the same 4 MiB member repeated (gzip members
// concatenate), so that only 8 MiB are ever compressed.
func gzipBomb(t testing.TB, head, fill string, size int64) []byte {
	const chunk = 4 << 20
	member := func(head string) []byte {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		io.WriteString(zw, head)
		block := []byte(strings.Repeat(fill, (1<<20)/len(fill)))
		for n := 0; n < chunk; n += len(block) {
			zw.Write(block)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	out := member(head)
	again := member("")
	for n := int64(chunk); n < size; n += chunk {
		out = append(out, again...)
	}
	return out
}

// Gzip bombs of 100 MiB, built in the test, in one and two layers: each is
// refused by a limit long before its decompressed size, with the entries
// before it kept. (TestGzipBomb1GiBRSS does 1 GiB with the default limits.)
func TestGzipBombs(t *testing.T) {
	cases := []struct {
		name  string
		head  string
		fill  string
		lim   Limits
		check func(error) bool
	}{
		{"zeros", "", "\x00", Limits{}, func(err error) bool { return errors.Is(err, ErrNotSitemap) }},
		{"one text node", "<urlset><url><loc>http://example.com/a</loc></url><url><loc>", " ", Limits{}, func(err error) bool {
			var le *LimitError
			return errors.As(err, &le) && le.Limit == LimitTextRun && le.Max == defaultMaxTextRun
		}},
		{"elements", "<urlset><url><loc>http://example.com/a</loc></url>", "<x>" + strings.Repeat("y", 1017) + "</x>", Limits{MaxBytes: 5 << 20}, func(err error) bool {
			var le *LimitError
			return errors.As(err, &le) && le.Limit == LimitBytes && le.Max == 5<<20
		}},
		{"blank lines in a text sitemap", "http://example.com/a\n", strings.Repeat(" ", 1023) + "\n", Limits{MaxBytes: 5 << 20}, func(err error) bool {
			var le *LimitError
			return errors.As(err, &le) && le.Limit == LimitBytes
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := gzipBomb(t, c.head, c.fill, 100<<20)
			if len(doc) > 1<<20 {
				t.Fatalf("bomb of %d bytes", len(doc))
			}
			for _, layers := range []int{1, 2} {
				if layers == 2 {
					doc = gz(t, doc)
				}
				es, r, err := readAll(t, doc, c.lim)
				if !c.check(err) {
					t.Errorf("%d layers: error %v", layers, err)
				}
				if c.head != "" && len(es) != 1 {
					t.Errorf("%d layers: %d entries, want the 1 before the bomb", layers, len(es))
				}
				if r.Bytes() > c.lim.withDefaults().MaxBytes {
					t.Errorf("read %d bytes", r.Bytes())
				}
			}
		})
	}
}
