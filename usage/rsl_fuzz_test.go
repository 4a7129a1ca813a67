package usage

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// FuzzParseRSL: any body parses or fails with ErrInvalidRSL, without a panic,
// and a licensed verdict names a matching content element and one of its
// licences.
func FuzzParseRSL(f *testing.F) {
	f.Add(minimal, "/a")
	f.Add(articles, "/articles/x?y")
	f.Add(doc(`<content url="/*.pdf$"><license><permits type="user">education</permits><payment type="free"/></license></content>`), "/x.pdf")
	f.Add(`<!DOCTYPE html><html lang="en"><head><title>CC BY 4.0</title></head></html>`, "/")
	f.Add(doc(`<content url="/"><license><permits type="user">education</permits><prohibits type="geo">EU CN</prohibits></license></content>`), "/")
	f.Fuzz(func(t *testing.T, body, path string) {
		d, err := ParseRSL(strings.NewReader(body))
		if err != nil {
			if !errors.Is(err, ErrInvalidRSL) {
				t.Fatalf("error %v does not wrap ErrInvalidRSL", err)
			}
			return
		}
		target := &url.URL{Scheme: "https", Host: "example.com", Path: path}
		for purpose := range covers {
			v, err := d.Decide(target, RSLUse{Purpose: purpose, User: "personal", Geo: "FR"})
			if err != nil {
				t.Fatal(err)
			}
			if v.Licensed && v.Unmet != "" || len(v.Unmet) > 400 {
				t.Fatalf("%s: licensed %v, unmet %q", purpose, v.Licensed, v.Unmet)
			}
			if v.Licensed && (v.Content == nil || v.License == nil ||
				v.License.unmet(covers[purpose], RSLUse{Purpose: purpose, User: "personal", Geo: "FR"}) != "") {
				t.Fatalf("%s: licensed without evidence: %+v", purpose, v)
			}
		}
	})
}

// FuzzLinks: any link value is read without a panic, within the limit,
// and the licence links found are absolute http(s) URLs.
func FuzzLinks(f *testing.F) {
	f.Add(`<https://a/l.xml>; rel="license"; type="application/rsl+xml", </x>;rel=next;title="a, \"b\""`)
	f.Add(`garbage, <https://c/>; REL=License; anchor; title*=UTF-8''x, <d>; rel="unterminated`)
	f.Add(`<https://creativecommons.org/licenses/by/4.0/>; rel=license; type=text/html, </l.xml>; rel=license; type=application/rsl+xml`)
	base := &url.URL{Scheme: "https", Host: "example.com", Path: "/a/"}
	f.Fuzz(func(t *testing.T, v string) {
		if n := len(parseLinks([]string{v})); n > maxPointers {
			t.Fatalf("%d links", n)
		}
		for _, p := range licenseLinks([]string{v}, base) {
			if !absoluteHTTP(p.url) {
				t.Fatalf("licence link %q", p.url)
			}
		}
		for _, p := range htmlLicenses(readHead(v), base) {
			if !absoluteHTTP(p.url) {
				t.Fatalf("HTML licence %q", p.url)
			}
		}
	})
}
