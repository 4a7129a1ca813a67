package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

const docURL = "https://example.com/dir/sitemap.xml"

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func urlset(locs ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, l := range locs {
		fmt.Fprintf(&b, "<url><loc>%s</loc></url>\n", l)
	}
	b.WriteString("</urlset>\n")
	return b.String()
}

// readAll reads every entry of doc; err is the final error (nil at a clean end).
func readAll(t testing.TB, doc []byte, lim Limits) ([]Entry, *Reader, error) {
	t.Helper()
	r := NewReader(bytes.NewReader(doc), docURL, lim)
	var es []Entry
	for {
		e, err := r.Next()
		if err == io.EOF {
			return es, r, nil
		}
		if err != nil {
			// after an error Next keeps returning it
			if _, err2 := r.Next(); err2 != err {
				t.Errorf("second Next after %v returned %v", err, err2)
			}
			return es, r, err
		}
		es = append(es, e)
	}
}

func locs(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Loc
	}
	return out
}

// Each format and each lenient reading: the document, the locs it gives,
// its format, its error.
func TestFormats(t *testing.T) {
	iso := []byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset><url><loc>http://example.com/caf\xe9</loc></url></urlset>")
	utf16 := func(le bool, s string) []byte {
		out := []byte{0xFE, 0xFF}
		if le {
			out = []byte{0xFF, 0xFE}
		}
		for _, c := range s { // ASCII + BMP only
			hi, lo := byte(c>>8), byte(c)
			if le {
				out = append(out, lo, hi)
			} else {
				out = append(out, hi, lo)
			}
		}
		return out
	}
	u16doc := `<?xml version="1.0" encoding="UTF-16"?><urlset><url><loc>http://example.com/ü</loc></url></urlset>`
	cases := []struct {
		name    string
		doc     []byte
		format  Format
		locs    []string
		wantErr error
	}{
		{"urlset", []byte(urlset("http://example.com/a", "http://example.com/b")), FormatURLSet,
			[]string{"http://example.com/a", "http://example.com/b"}, nil},
		{"urlset without namespace or declaration", []byte("<urlset><url><loc>http://example.com/a</loc></url></urlset>"), FormatURLSet,
			[]string{"http://example.com/a"}, nil},
		{"urlset under an unknown namespace prefix", []byte(`<sm:urlset xmlns:sm="urn:x"><sm:url><sm:loc>http://example.com/a</sm:loc></sm:url></sm:urlset>`), FormatURLSet,
			[]string{"http://example.com/a"}, nil},
		{"upper-case element names", []byte("<URLSET><URL><LOC>http://example.com/a</LOC></URL></URLSET>"), FormatURLSet,
			[]string{"http://example.com/a"}, nil},
		{"sitemapindex", []byte(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>http://example.com/s1.xml.gz</loc><lastmod>2024-01-02</lastmod></sitemap><sitemap><loc>http://example.com/s2.xml</loc></sitemap></sitemapindex>`), FormatIndex,
			[]string{"http://example.com/s1.xml.gz", "http://example.com/s2.xml"}, nil},
		{"gzip", gz(t, []byte(urlset("http://example.com/a"))), FormatURLSet, []string{"http://example.com/a"}, nil},
		{"double gzip", gz(t, gz(t, []byte(urlset("http://example.com/a")))), FormatURLSet, []string{"http://example.com/a"}, nil},
		{"triple gzip refused", gz(t, gz(t, gz(t, []byte(urlset("http://example.com/a"))))), FormatUnknown, nil, ErrLimit},
		{"text", []byte("http://example.com/a\r\n\nhttps://example.com/b\rHTTP://example.com/c"), FormatText,
			[]string{"http://example.com/a", "https://example.com/b", "http://example.com/c"}, nil},
		{"text: lines that are not absolute URLs are rejected", []byte("http://example.com/a\n/relative\n# comment\nftp://example.com/x\nhttp://example.com/b\n"), FormatText,
			[]string{"http://example.com/a", "http://example.com/b"}, nil},
		{"text after a UTF-8 BOM and blank lines", []byte("\xEF\xBB\xBF\n\n  http://example.com/a  \n"), FormatText,
			[]string{"http://example.com/a"}, nil},
		{"rss 2.0", []byte(`<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>http://example.com/</link><item><title>x</title><link>http://example.com/p1</link><pubDate>Mon, 02 Jan 2006 15:04:05 GMT</pubDate></item><item><link> http://example.com/p2 </link></item></channel></rss>`), FormatRSS,
			[]string{"http://example.com/p1", "http://example.com/p2"}, nil},
		{"rss 1.0", []byte(`<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"><channel><link>http://example.com/</link></channel><item><link>http://example.com/p1</link></item></rdf:RDF>`), FormatRSS,
			[]string{"http://example.com/p1"}, nil},
		{"atom", []byte(`<feed xmlns="http://www.w3.org/2005/Atom"><link href="http://example.com/"/><entry><link rel="self" href="http://example.com/self"/><link href="http://example.com/e1"/><updated>2024-01-02T03:04:05Z</updated></entry><entry><link rel="alternate" href="/e2"/></entry></feed>`), FormatAtom,
			[]string{"http://example.com/e1", "https://example.com/e2"}, nil},
		{"whitespace and newlines inside loc", []byte("<urlset><url><loc>\n\t  http://example.com/a\n   b\n</loc></url></urlset>"), FormatURLSet,
			[]string{"http://example.com/a%20%20%20b"}, nil},
		{"bare ampersand", []byte("<urlset><url><loc>http://example.com/?a=1&b=2&amp;c=3</loc></url></urlset>"), FormatURLSet,
			[]string{"http://example.com/?a=1&b=2&c=3"}, nil},
		{"bare ampersand at the end of a loc", []byte("<urlset><url><loc>http://example.com/?a=1&</loc></url></urlset>"), FormatURLSet,
			[]string{"http://example.com/?a=1&"}, nil},
		{"CDATA loc", []byte("<urlset><url><loc><![CDATA[http://example.com/?a=1&b=2]]></loc></url></urlset>"), FormatURLSet,
			[]string{"http://example.com/?a=1&b=2"}, nil},
		{"relative loc resolved against the document URL", []byte("<urlset><url><loc>page.html</loc></url><url><loc>/root</loc></url></urlset>"), FormatURLSet,
			[]string{"https://example.com/dir/page.html", "https://example.com/root"}, nil},
		{"ISO-8859-1 declared", iso, FormatURLSet, []string{"http://example.com/caf%C3%A9"}, nil},
		{"UTF-16LE with BOM", utf16(true, u16doc), FormatURLSet, []string{"http://example.com/%C3%BC"}, nil},
		{"UTF-16BE with BOM", utf16(false, u16doc), FormatURLSet, []string{"http://example.com/%C3%BC"}, nil},
		{"UTF-16LE without BOM", utf16(true, u16doc)[2:], FormatURLSet, []string{"http://example.com/%C3%BC"}, nil},
		{"image, video and news elements are not pages", []byte(`<urlset xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
<url><loc>http://example.com/p</loc>
 <image:image><image:loc>http://example.com/i.jpg</image:loc></image:image>
 <video:video><video:content_loc>http://example.com/v.mp4</video:content_loc><video:player_loc>http://example.com/player</video:player_loc><video:thumbnail_loc>http://example.com/t.jpg</video:thumbnail_loc></video:video>
 <news:news><news:publication><news:name>N</news:name></news:publication><news:title>T</news:title></news:news>
</url></urlset>`), FormatURLSet, []string{"http://example.com/p"}, nil},
		{"loc of an extension before the page loc", []byte(`<urlset><url><image:image><image:loc>http://example.com/i.jpg</image:loc></image:image><loc>http://example.com/p</loc></url></urlset>`), FormatURLSet,
			[]string{"http://example.com/p"}, nil},
		{"stylesheet PI and comments", []byte(`<?xml version="1.0"?><?xml-stylesheet type="text/xsl" href="/s.xsl"?><!-- generated --><urlset><!-- x --><url><loc>http://example.com/a</loc></url></urlset>`), FormatURLSet,
			[]string{"http://example.com/a"}, nil},
		{"DOCTYPE without internal subset is allowed", []byte(`<!DOCTYPE urlset SYSTEM "http://example.com/x.dtd"><urlset><url><loc>http://example.com/a</loc></url></urlset>`), FormatURLSet,
			[]string{"http://example.com/a"}, nil},
		{"missing </url> forgiven", []byte(`<urlset><url><loc>http://example.com/a</loc><url><loc>http://example.com/b</loc></url></urlset>`), FormatURLSet,
			[]string{"http://example.com/a", "http://example.com/b"}, nil},
		{"missing </url> at the end forgiven", []byte(`<urlset><url><loc>http://example.com/a</loc></urlset>`), FormatURLSet,
			[]string{"http://example.com/a"}, nil},
		{"nothing after the root is read", []byte(urlset("http://example.com/a") + "<urlset><url><loc>http://example.com/b</loc></url></urlset>"), FormatURLSet,
			[]string{"http://example.com/a"}, nil},

		{"HTML soft 404", []byte("<!DOCTYPE html>\n<html><head><title>Not found</title></head><body><a href=\"http://example.com/x\">x</a></body></html>"), FormatUnknown, nil, ErrNotSitemap},
		{"HTML without doctype", []byte("\n\n<html><body><loc>http://example.com/x</loc></body></html>"), FormatUnknown, nil, ErrNotSitemap},
		{"other XML root", []byte(`<?xml version="1.0"?><project><url><loc>http://example.com/x</loc></url></project>`), FormatUnknown, nil, ErrNotSitemap},
		{"JSON", []byte(`{"urls": ["http://example.com/x"]}`), FormatUnknown, nil, ErrNotSitemap},
		{"plain-text error page", []byte("Not Found\nhttp://example.com/x\n"), FormatUnknown, nil, ErrNotSitemap},
		{"empty", []byte(" \n\t "), FormatUnknown, nil, ErrNotSitemap},
		{"gzip of an HTML page", gz(t, []byte("<html><body>moved</body></html>")), FormatUnknown, nil, ErrNotSitemap},
		{"DOCTYPE with internal subset", []byte(`<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY a "aaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><urlset><url><loc>http://example.com/&b;</loc></url></urlset>`), FormatUnknown, nil, ErrDoctype},
		{"truncated XML keeps the entries before", []byte(urlset("http://example.com/a", "http://example.com/b")[:150]), FormatURLSet,
			[]string{"http://example.com/a"}, io.ErrUnexpectedEOF},
		{"truncated inside a tag", []byte(`<urlset><url><loc>http://example.com/a</loc></url><url><loc>http://example.com/b</loc></ur`), FormatURLSet,
			[]string{"http://example.com/a"}, nil /* any error */},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es, r, err := readAll(t, c.doc, Limits{})
			if got := strings.Join(locs(es), " "); got != strings.Join(c.locs, " ") {
				t.Errorf("locs %q, want %q", got, strings.Join(c.locs, " "))
			}
			if r.Format() != c.format {
				t.Errorf("format %v, want %v", r.Format(), c.format)
			}
			switch {
			case c.wantErr != nil && !errors.Is(err, c.wantErr):
				t.Errorf("error %v, want %v", err, c.wantErr)
			case c.wantErr == nil && strings.HasPrefix(c.name, "truncated") && err == nil:
				t.Errorf("no error for a truncated document")
			case c.wantErr == nil && !strings.HasPrefix(c.name, "truncated") && err != nil:
				t.Errorf("error %v, want none", err)
			}
		})
	}
}

func TestEntryFields(t *testing.T) {
	doc := `<urlset xmlns:xhtml="http://www.w3.org/1999/xhtml">
<url><loc>http://example.com/a</loc><lastmod>2024-03-04T05:06:07+02:00</lastmod><changefreq> Weekly </changefreq><priority>0.8</priority>
  <xhtml:link rel="alternate" hreflang="de" href="http://example.com/de/a"/>
  <xhtml:link rel="alternate" hreflang="fr" href="/fr/a"/>
  <xhtml:link rel="canonical" href="http://example.com/x"/>
</url>
<url><loc>http://example.com/b</loc><lastmod>yesterday</lastmod><priority>1.5</priority></url>
</urlset>`
	es, r, err := readAll(t, []byte(doc), Limits{})
	if err != nil || len(es) != 2 {
		t.Fatalf("%d entries, error %v", len(es), err)
	}
	a, b := es[0], es[1]
	if want := time.Date(2024, 3, 4, 3, 6, 7, 0, time.UTC); !a.LastMod.Equal(want) {
		t.Errorf("lastmod %v, want %v", a.LastMod, want)
	}
	if a.ChangeFreq != "weekly" || a.Priority != 0.8 {
		t.Errorf("changefreq %q priority %v", a.ChangeFreq, a.Priority)
	}
	wantAlt := []Alternate{{"http://example.com/de/a", "de"}, {"https://example.com/fr/a", "fr"}}
	if fmt.Sprint(a.Alternates) != fmt.Sprint(wantAlt) {
		t.Errorf("alternates %v, want %v", a.Alternates, wantAlt)
	}
	if !b.LastMod.IsZero() || b.Priority != -1 || b.ChangeFreq != "" || b.Alternates != nil {
		t.Errorf("unreadable fields not unknown: %+v", b)
	}
	if len(r.Warnings()) != 1 || !strings.Contains(r.Warnings()[0], "/fr/a") {
		t.Errorf("warnings %q, want the relative alternate", r.Warnings())
	}
}

func TestLastmodForms(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s int) time.Time {
		return time.Date(y, mo, d, h, mi, s, 0, time.UTC)
	}
	cases := []struct {
		in   string
		want time.Time // zero: unknown
	}{
		{"2024-01-02T03:04:05Z", utc(2024, 1, 2, 3, 4, 5)},
		{"2024-01-02T03:04:05.123+01:00", utc(2024, 1, 2, 2, 4, 5).Add(123 * time.Millisecond)},
		{"2024-01-02T03:04+01:00", utc(2024, 1, 2, 2, 4, 0)},
		{"2024-01-02", utc(2024, 1, 2, 0, 0, 0)},
		{"2024-01", utc(2024, 1, 1, 0, 0, 0)},
		{"2024", utc(2024, 1, 1, 0, 0, 0)},
		{"2024-01-02T03:04:05", utc(2024, 1, 2, 3, 4, 5)},
		{"2024-01-02T03:04", utc(2024, 1, 2, 3, 4, 0)},
		{"2024-01-02 03:04:05", utc(2024, 1, 2, 3, 4, 5)},
		{"2024-01-02T03:04:05+0100", utc(2024, 1, 2, 2, 4, 5)},
		{"2024-01-02t03:04:05z", time.Time{}},
		{" 2024-01-02T03:04:05z ", utc(2024, 1, 2, 3, 4, 5)},
		{"Tue, 02 Jan 2024 03:04:05 GMT", utc(2024, 1, 2, 3, 4, 5)},
		{"Tue, 02 Jan 2024 03:04:05 +0100", utc(2024, 1, 2, 2, 4, 5)},
		{"Tue, 2 Jan 2024 03:04:05 -0000", utc(2024, 1, 2, 3, 4, 5)},
		{"02 Jan 2024 03:04:05 +0000", utc(2024, 1, 2, 3, 4, 5)},
		{"Tuesday, 02-Jan-24 03:04:05 UTC", utc(2024, 1, 2, 3, 4, 5)},
		{"", time.Time{}},
		{"yesterday", time.Time{}},
		{"2024-13-45", time.Time{}},
		{"0", time.Time{}},
	}
	for _, c := range cases {
		got := parseLastmod(c.in)
		if !got.Equal(c.want) || got.IsZero() != c.want.IsZero() {
			t.Errorf("parseLastmod(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// The Reader's accessors and iterator, as the contract states them.
func TestReaderContract(t *testing.T) {
	doc := "<urlset>" + strings.Repeat("<url><loc>/p</loc></url>", 25) + "</urlset>"
	r := NewReader(strings.NewReader(doc), docURL, Limits{})
	if r.Format() != FormatUnknown || r.Bytes() != 0 {
		t.Errorf("before Next: format %v, bytes %d", r.Format(), r.Bytes())
	}
	n := 0
	for _, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 10 {
			break // breaking out is fine, Next goes on
		}
	}
	for {
		if _, err := r.Next(); err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
		n++
	}
	if n != 25 || r.Bytes() != int64(len(doc)) || r.Format() != FormatURLSet {
		t.Errorf("%d entries, %d bytes, format %v", n, r.Bytes(), r.Format())
	}
	w := r.Warnings()
	if len(w) != maxWarnings+1 || w[maxWarnings] != "(5 more warnings)" {
		t.Errorf("warnings: %d, last %q", len(w), w[len(w)-1])
	}
	// All after the end yields nothing more; after an error, the error once.
	for range r.All() {
		t.Error("entry after the end")
	}
	r = NewReader(strings.NewReader("<html></html>"), docURL, Limits{})
	var errs []error
	for _, err := range r.All() {
		errs = append(errs, err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], ErrNotSitemap) {
		t.Errorf("All over an HTML page: %v", errs)
	}
}

// A bare & is read as written, with one warning; entities and character
// references are not bare.
func TestBareAmpersandWarning(t *testing.T) {
	for doc, warned := range map[string]bool{
		"<urlset><url><loc>http://example.com/?a=1&b=2</loc></url></urlset>":                                           true,
		"<urlset><url><loc>http://example.com/?a=1&amp;b=2&#38;c=3&#x26;d&nbsp;</loc></url></urlset>":                  false,
		"<urlset><url><loc>http://example.com/?a=1& b</loc></url><url><loc>http://example.com/?&</loc></url></urlset>": true,
		"<urlset><url><loc>http://example.com/?a=1&#;</loc></url></urlset>":                                            true,
	} {
		_, r, err := readAll(t, []byte(doc), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Join(r.Warnings(), "; ")
		if strings.Contains(w, "bare &") != warned || strings.Count(w, "bare &") > 1 {
			t.Errorf("%s: warnings %q", doc, w)
		}
	}
}

// oneRead returns the whole document, and io.EOF, from its first Read.
type oneRead struct{ b []byte }

func (o *oneRead) Read(p []byte) (int, error) {
	n := copy(p, o.b)
	o.b = o.b[n:]
	if len(o.b) == 0 {
		return n, io.EOF
	}
	return n, nil
}

// A source that gives its last bytes with io.EOF in the same Read, and a
// declared encoding switched to after that.
func TestEOFWithLastBytes(t *testing.T) {
	for _, doc := range []string{
		urlset("http://example.com/a"),
		"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset><url><loc>http://example.com/caf\xe9</loc></url></urlset>",
		"http://example.com/a\nhttp://example.com/b",
	} {
		r := NewReader(&oneRead{[]byte(doc)}, docURL, Limits{})
		var got []string
		for e, err := range r.All() {
			if err != nil {
				t.Fatalf("%q: %v", doc, err)
			}
			got = append(got, e.Loc)
		}
		if len(got) == 0 {
			t.Errorf("%q: no entries", doc)
		}
	}
}

// Declared encodings: decoded when known, ignored (with a warning) when a
// BOM decides or the label is unknown.
func TestEncodings(t *testing.T) {
	cases := []struct {
		name, doc, loc, warning string
	}{
		{"windows-1252", "<?xml version='1.0' encoding='windows-1252'?><urlset><url><loc>http://example.com/\x80</loc></url></urlset>", "http://example.com/%E2%82%AC", ""},
		{"Shift_JIS", "<?xml version='1.0' encoding='Shift_JIS'?><urlset><url><loc>http://example.com/\x82\xa0</loc></url></urlset>", "http://example.com/%E3%81%82", ""},
		{"BOM wins over the declaration", "\xEF\xBB\xBF<?xml version='1.0' encoding='ISO-8859-1'?><urlset><url><loc>http://example.com/\xc3\xa9</loc></url></urlset>", "http://example.com/%C3%A9", "byte order mark decides"},
		{"unknown label read as UTF-8", "<?xml version='1.0' encoding='x-klingon'?><urlset><url><loc>http://example.com/\xc3\xa9</loc></url></urlset>", "http://example.com/%C3%A9", "unknown declared encoding"},
		{"UTF-16 declared on 8-bit bytes", "<?xml version='1.0' encoding='UTF-16'?><urlset><url><loc>http://example.com/a</loc></url></urlset>", "http://example.com/a", "not UTF-16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es, r, err := readAll(t, []byte(c.doc), Limits{})
			if err != nil || len(es) != 1 || es[0].Loc != c.loc {
				t.Fatalf("entries %v, error %v; want %s", locs(es), err, c.loc)
			}
			w := strings.Join(r.Warnings(), "; ")
			if c.warning == "" && w != "" || !strings.Contains(w, c.warning) {
				t.Errorf("warnings %q, want %q", w, c.warning)
			}
		})
	}
}

// A document whose bytes stop with a read error before its root element
// (or before the end of a text sitemap's first line) is not judged by what
// was read: Next returns that error, never ErrNotSitemap.
func TestReadErrorBeforeRoot(t *testing.T) {
	errRead := errors.New("connection reset")
	half := gz(t, []byte(urlset("http://example.com/a")))
	half = half[:len(half)/2]
	for _, tc := range []struct{ name, sent string }{
		{"nothing", ""},
		{"XML declaration", `<?xml version="1.0" encoding="UTF-8"?>` + "\n"},
		{"part of a start tag", "<urls"},
		{"UTF-16 byte order mark", "\xff\xfe<\x00"},
		{"part of a text sitemap's first line", "htt"},
		{"half a gzip stream", string(half)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := io.MultiReader(strings.NewReader(tc.sent), iotest.ErrReader(errRead))
			e, err := NewReader(src, docURL, Limits{}).Next()
			if !errors.Is(err, errRead) || errors.Is(err, ErrNotSitemap) || e.Loc != "" {
				t.Errorf("Next: %q, %v; want the read error, not ErrNotSitemap", e.Loc, err)
			}
		})
	}
	// At the clean end of the bytes, what was read decides.
	for _, doc := range []string{"", `<?xml version="1.0" encoding="UTF-8"?>` + "\n", "htt"} {
		if _, err := NewReader(strings.NewReader(doc), docURL, Limits{}).Next(); !errors.Is(err, ErrNotSitemap) {
			t.Errorf("%q then the end: %v, want ErrNotSitemap", doc, err)
		}
	}
}

// A text sitemap whose bytes stop with an error (a read failure, or
// MaxBytes) in the middle of a line does not hand that line over: it may
// be a URL cut short. At the clean end of the bytes a last line without
// its line end is whole.
func TestTextLastLineCut(t *testing.T) {
	errRead := errors.New("connection reset")
	const doc = "http://example.com/a\nhttp://example.com/b"
	for _, tc := range []struct {
		name string
		src  io.Reader
		lim  Limits
		want error
	}{
		{"read error", io.MultiReader(strings.NewReader(doc), iotest.ErrReader(errRead)), Limits{}, errRead},
		{"MaxBytes", strings.NewReader(doc + "ig/page\n"), Limits{MaxBytes: int64(len(doc))}, ErrLimit},
	} {
		es, err := readEntries(NewReader(tc.src, docURL, tc.lim))
		if got := locs(es); !errors.Is(err, tc.want) || len(got) != 1 || got[0] != "http://example.com/a" {
			t.Errorf("%s: %q, %v; want only the first URL, then %v", tc.name, got, err, tc.want)
		}
	}
	es, err := readEntries(NewReader(strings.NewReader(doc), docURL, Limits{}))
	if got := locs(es); err != io.EOF || len(got) != 2 || got[1] != "http://example.com/b" {
		t.Errorf("clean end: %q, %v; want both URLs", got, err)
	}
}

// readEntries calls Next until it fails, and returns the entries and the error.
func readEntries(r *Reader) ([]Entry, error) {
	var es []Entry
	for {
		e, err := r.Next()
		if err != nil {
			return es, err
		}
		es = append(es, e)
	}
}
