package sitemap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"
)

// fuzzSeeds are small documents of every format and of every limit's edge.
func fuzzSeeds(t testing.TB) [][]byte {
	docs := []string{
		urlset("http://example.com/a", "/rel", "http://example.com/?a=1&b=2"),
		`<urlset xmlns:xhtml="http://www.w3.org/1999/xhtml"><url><loc>http://example.com/a</loc><lastmod>2024-01-02T03:04:05+01:00</lastmod><changefreq>daily</changefreq><priority>0.5</priority><xhtml:link rel="alternate" hreflang="de" href="/de/a"/></url></urlset>`,
		`<sitemapindex><sitemap><loc>http://example.com/s.xml.gz</loc><lastmod>2024-01-02</lastmod></sitemap></sitemapindex>`,
		"http://example.com/a\r\nhttps://example.com/b\n\nftp://x/\n",
		`<rss version="2.0"><channel><link>http://example.com/</link><item><link>http://example.com/1</link><pubDate>Mon, 02 Jan 2006 15:04:05 GMT</pubDate></item></channel></rss>`,
		`<feed xmlns="http://www.w3.org/2005/Atom"><entry><link rel="self" href="x"/><link href="http://example.com/e"/><updated>2024-01-02T03:04:05Z</updated></entry></feed>`,
		"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset><url><loc>http://example.com/caf\xe9</loc></url></urlset>",
		"\xEF\xBB\xBF<urlset><url><loc><![CDATA[http://example.com/x]]></loc></url></urlset>",
		"\xFF\xFE<\x00u\x00r\x00l\x00s\x00e\x00t\x00>\x00",
		`<!DOCTYPE urlset [<!ENTITY a "b">]><urlset/>`,
		"<!DOCTYPE html><html><body>404</body></html>",
		`<urlset><url><loc>http://example.com/a</loc><url><loc>http://example.com/b</loc></urlset>`,
		`<urlset><a><a><a><a><a><url><loc>http://example.com/deep</loc></url></a></a></a></a></a></urlset>`,
		`<urlset><!-- c --><?pi x?><url><loc>http://example.com/a</loc><image:image><image:loc>http://example.com/i.jpg</image:loc></image:image></url></urlset>`,
		`<urlset><url><loc>http://example.com/a</loc></url><url><loc>http://exam`,
		`{"a": 1}`,
	}
	var out [][]byte
	for _, d := range docs {
		out = append(out, []byte(d))
	}
	out = append(out, gz(t, []byte(docs[0])), gz(t, gz(t, []byte(docs[3]))), gz(t, gz(t, gz(t, []byte(docs[0])))))
	return out
}

// FuzzReader: whatever the bytes, reading ends without a panic, within
// every limit, with entries that are absolute http(s) URLs, and with an
// error that stays.
func FuzzReader(f *testing.F) {
	for _, d := range fuzzSeeds(f) {
		f.Add(d, false)
		f.Add(d, true)
	}
	f.Fuzz(func(t *testing.T, doc []byte, small bool) {
		lim := Limits{}
		if small {
			lim = Limits{MaxBytes: 2048, MaxEntries: 4, MaxLocLength: 48, MaxDepth: 4, MaxTextRun: 128, MaxAlternates: 2}
		}
		fuzzOne(t, doc, lim)
		if !small {
			fuzzReference(t, doc)
		}
	})
}

// fuzzReference: where encoding/xml (through the same Reader logic) reads
// a document to its clean end, xmlScanner gives the same entries and ends
// cleanly too.
func fuzzReference(t *testing.T, doc []byte) (compared bool) {
	ref := NewReader(bytes.NewReader(doc), "https://example.com/dir/sitemap.xml", Limits{})
	ref.newTokenizer = func(src io.Reader) tokenizer { return newXMLRef(ref, src) }
	var want []Entry
	for e, err := range ref.All() {
		if err != nil {
			return false // the reference failed: nothing to compare
		}
		want = append(want, e)
	}
	if ref.Format() == FormatText {
		return false
	}
	r := NewReader(bytes.NewReader(doc), "https://example.com/dir/sitemap.xml", Limits{})
	var got []Entry
	for e, err := range r.All() {
		if err != nil {
			t.Fatalf("scanner: %v after %d entries; encoding/xml read %d entries to the end", err, len(got), len(want))
		}
		got = append(got, e)
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Fatalf("scanner entries differ from encoding/xml's:\n%+v\n%+v", got, want)
	}
	return true
}

func fuzzOne(t *testing.T, doc []byte, lim Limits) {
	// Termination: a document of any size is read in well under a second;
	// one still running after 20 s is a hang, reported with its input.
	watchdog := time.AfterFunc(20*time.Second, func() { panic(fmt.Sprintf("sitemap: reading %q did not end", doc)) })
	defer watchdog.Stop()
	r := NewReader(bytes.NewReader(doc), "https://example.com/dir/sitemap.xml", lim)
	l := lim.withDefaults()
	n := 0
	var err error
	for {
		var e Entry
		e, err = r.Next()
		if err != nil {
			break
		}
		if n++; n > l.MaxEntries {
			t.Fatalf("%d entries > MaxEntries %d", n, l.MaxEntries)
		}
		checkURL(t, e.Loc, l)
		if e.Priority != -1 && (e.Priority < 0 || e.Priority > 1) {
			t.Fatalf("priority %v", e.Priority)
		}
		if len(e.Alternates) > l.MaxAlternates {
			t.Fatalf("%d alternates", len(e.Alternates))
		}
		for _, a := range e.Alternates {
			checkURL(t, a.Href, l)
		}
		if len(e.ChangeFreq) > maxFieldBytes {
			t.Fatalf("changefreq of %d bytes", len(e.ChangeFreq))
		}
	}
	if r.Bytes() > l.MaxBytes {
		t.Fatalf("Bytes %d > MaxBytes %d", r.Bytes(), l.MaxBytes)
	}
	if _, err2 := r.Next(); err2 != err {
		t.Fatalf("Next after %v: %v", err, err2)
	}
	if n > 0 && r.Format() == FormatUnknown {
		t.Fatalf("%d entries of an unknown format", n)
	}
	if err != io.EOF && errors.Is(err, ErrNotSitemap) && (n > 0 || r.Format() != FormatUnknown) {
		t.Fatalf("not a sitemap after %d entries of %v", n, r.Format())
	}
	if w := r.Warnings(); len(w) > maxWarnings+1 {
		t.Fatalf("%d warnings", len(w))
	}
	var le *LimitError
	if errors.As(err, &le) && !errors.Is(err, ErrLimit) {
		t.Fatalf("LimitError %v is not ErrLimit", err)
	}
}

func checkURL(t *testing.T, s string, l Limits) {
	t.Helper()
	if len(s) > l.MaxLocLength {
		t.Fatalf("loc of %d bytes > MaxLocLength %d", len(s), l.MaxLocLength)
	}
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("loc %q does not parse: %v", s, err)
	}
	if plainURL(s) && u.String() != s {
		t.Fatalf("loc %q kept as written, but url.String gives %q", s, u.String())
	}
	if sc := strings.ToLower(u.Scheme); sc != "http" && sc != "https" || u.Host == "" {
		t.Fatalf("loc %q is not an absolute http(s) URL", s)
	}
}
