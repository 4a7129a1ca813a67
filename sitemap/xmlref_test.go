package sitemap

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// xmlRef is a tokenizer over encoding/xml (Strict off, HTML entities), the
// reference the fuzz target holds xmlScanner to: where it reads a
// document to its clean end, the scanner must give the same entries.
type xmlRef struct{ d *xml.Decoder }

func newXMLRef(r *Reader, src io.Reader) tokenizer {
	d := xml.NewDecoder(src)
	d.Strict = false
	d.Entity = xml.HTMLEntity
	d.CharsetReader = func(label string, input io.Reader) (io.Reader, error) {
		if cr := r.charsetReader(label, input); cr != nil {
			return cr, nil
		}
		return input, nil
	}
	return &xmlRef{d: d}
}

func qname(n xml.Name) []byte {
	if n.Space == "" {
		return []byte(n.Local)
	}
	return []byte(n.Space + ":" + n.Local)
}

func (x *xmlRef) next() (token, error) {
	for {
		t, err := x.d.RawToken()
		if err != nil {
			return token{}, err
		}
		switch t := t.(type) {
		case xml.StartElement:
			var a bytes.Buffer
			for _, at := range t.Attr {
				a.WriteByte(' ')
				a.Write(qname(at.Name))
				a.WriteString(`="`)
				a.WriteString(strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;").Replace(at.Value))
				a.WriteByte('"')
			}
			return token{kind: tokStart, name: qname(t.Name), attrs: a.Bytes()}, nil
		case xml.EndElement:
			return token{kind: tokEnd, name: qname(t.Name)}, nil
		case xml.CharData:
			return token{kind: tokText, text: bytes.Clone(t), literal: true}, nil
		case xml.Directive:
			return token{kind: tokDirective, text: bytes.Clone(t)}, nil
		}
	}
}

// The scanner reads every fixture, the real corpus when present and a
// generated urlset as encoding/xml does.
func TestScannerMatchesEncodingXML(t *testing.T) {
	docs := fuzzSeeds(t)
	docs = append(docs, benchURLSet(500), []byte(`<?xml version='1.0' encoding='utf-8'?>
<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9' xmlns:xhtml='http://www.w3.org/1999/xhtml'>`+"\r\n"+`
 <url ><loc >http://example.com/a?x=1&amp;y=&#50;&#x33;&lt;&gt;&quot;&apos;&eacute;</loc ><lastmod>2024-01-01</lastmod >
  <xhtml:link rel='alternate' hreflang = 'de'  href = "http://example.com/de?a=1&amp;b=2" />
  <xhtml:link	rel="alternate"	hreflang="fr"	href="http://example.com/&#x66;r"/>
 </url>
 <!-- a comment with <url><loc>http://example.com/no</loc></url> -->
 <url><loc>http://example.com/b<![CDATA[?q=<&>]]>&amp;c</loc><priority>.5</priority></url>
 <?pi <url><loc>http://example.com/no</loc></url> ?>
</urlset>`))
	for _, dir := range []string{filepath.Join("..", "..", "shared", "corpus", "sitemaps")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.xml"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				docs = append(docs, b)
			}
		}
	}
	n := 0
	for i, d := range docs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if fuzzReference(t, d) {
				n++
			}
		})
	}
	t.Logf("%d of %d documents compared (the others encoding/xml does not read to a clean end, or are text)", n, len(docs))
	if n < len(docs)/2 {
		t.Errorf("only %d of %d documents compared", n, len(docs))
	}
}

// The same documents given one byte per Read (a slow network), half a
// buffer per Read, or with their last bytes and io.EOF together give the
// same entries and the same error as from a bytes.Reader.
func TestScannerReadSizes(t *testing.T) {
	docs := append(fuzzSeeds(t), benchURLSet(300), []byte(`<urlset><url><loc>http://example.com/?a=1&amp;b=&#x32;&eacute;</loc></url>`+
		strings.Repeat("<!-- pad -->", 3000)+`<url><loc>http://example.com/&amp;&amp;&amp;`+strings.Repeat("&amp;", 2000)+`</loc></url></urlset>`))
	read := func(src io.Reader) string {
		r := NewReader(src, docURL, Limits{})
		var b strings.Builder
		for e, err := range r.All() {
			if err != nil {
				fmt.Fprintf(&b, "error %v", err)
				break
			}
			fmt.Fprintf(&b, "%+v\n", e)
		}
		fmt.Fprintf(&b, "%v %v", r.Rejected(), r.Warnings())
		return b.String()
	}
	for i, d := range docs {
		want := read(bytes.NewReader(d))
		for name, src := range map[string]io.Reader{
			"one byte": iotest.OneByteReader(bytes.NewReader(d)),
			"half":     iotest.HalfReader(bytes.NewReader(d)),
			"data+EOF": iotest.DataErrReader(bytes.NewReader(d)),
		} {
			if got := read(src); got != want {
				t.Errorf("doc %d, %s reads:\n%s\nwant\n%s", i, name, truncate(got, 300), truncate(want, 300))
			}
		}
	}
}
