package usage

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestParseLinks(t *testing.T) {
	got := parseLinks([]string{
		`<https://a/l.xml>; rel="license"; type="application/rsl+xml", </x>;rel=next;title="a, \"b\"";rel=prev`,
		`garbage, <https://c/>; REL=License; anchor; title*=UTF-8''x`,
		`<https://d/>; rel="unterminated`,
		`<https://e/>; =x, <https://f/>; rel=license`,
		`<no-end`,
	})
	want := []link{
		{"https://a/l.xml", map[string]string{"rel": "license", "type": "application/rsl+xml"}},
		{"/x", map[string]string{"rel": "next", "title": `a, "b"`}},
		{"https://c/", map[string]string{"rel": "License", "anchor": "", "title*": "UTF-8''x"}},
		{"https://d/", map[string]string{}},
		{"https://e/", map[string]string{}},
		{"https://f/", map[string]string{"rel": "license"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseLinks =\n%q\nwant\n%q", got, want)
	}
	if r := got[2].Rels(); !reflect.DeepEqual(r, []string{"license"}) {
		t.Errorf("Rels = %q", r)
	}
	many := strings.Repeat("<https://a/>, ", 3*maxPointers)
	if n := len(parseLinks([]string{many, many})); n != maxPointers {
		t.Errorf("%d links, want at most %d", n, maxPointers)
	}
}

func TestLicenseLinks(t *testing.T) {
	base, _ := url.Parse("https://example.com/articles/a.html")
	got := licenseLinks([]string{
		`<https://example.com/license.xml>; rel="license"; type="application/rsl+xml"`,
		`</rel.xml>; rel="license"`,                             // no type, relative: resolved
		`<https://cc/by/4.0/>; rel="license"; type="text/html"`, // not RSL
		`<https://x/l.xml>; rel="license"; anchor="/other"`,     // about another resource
		`<https://x/next>; rel="next"`,
		`<https://x/multi.xml>; rel="alternate license"; type="Application/RSL+XML; charset=utf-8"`,
		`<mailto:a@b>; rel=license`,
	}, base)
	want := []string{"https://example.com/license.xml", "https://example.com/rel.xml", "https://x/multi.xml"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LicenseLinks = %q, want %q", got, want)
	}
}

func TestHTMLLicenses(t *testing.T) {
	base, _ := url.Parse("https://example.com/dir/page.html")
	for _, tc := range []struct {
		doc  string
		want []string
	}{
		{`<head><link rel="license" type="application/rsl+xml" href="https://example.com/license.xml"></head>`,
			[]string{"https://example.com/license.xml"}},
		{`<link rel=LICENSE href="l.xml?a=1&amp;b=2">`, []string{"https://example.com/dir/l.xml?a=1&b=2"}},
		{`<base href="/base/"><link rel="license" href="l.xml">`, []string{"https://example.com/base/l.xml"}},
		{`<link rel="license" type="text/html" href="https://cc/by/">`, nil},
		{`<link rel="stylesheet" href="a.css">`, nil},
		{`<link rel="license">`, nil},
		{`<script><link rel="license" href="/l.xml"></script>`, nil},
		{`</head><link rel="license" href="/l.xml">`, nil},
		{`<body><link rel="license" href="/l.xml">`, nil},
		{`<link rel="license" href="javascript:x">`, nil},
	} {
		if got := htmlLicenses([]byte(tc.doc), base); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("HTMLLicenses(%q) = %q, want %q", tc.doc, got, tc.want)
		}
	}
	many := []byte(strings.Repeat(`<link rel="license" href="/l.xml">`, 2*maxPointers))
	if n := len(htmlLicenses(many, base)); n != maxPointers {
		t.Errorf("%d pointers, want %d", n, maxPointers)
	}
}
