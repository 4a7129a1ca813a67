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
	many := strings.Repeat("<https://a/>, ", 3*maxPointers)
	if n := len(parseLinks([]string{many, many})); n != maxPointers {
		t.Errorf("%d links, want at most %d", n, maxPointers)
	}
}

func TestLicenseLinks(t *testing.T) {
	base, _ := url.Parse("https://example.com/articles/a.html")
	got := licenseLinks([]string{
		`<https://example.com/license.xml>; rel="license"; type="application/rsl+xml"`,
		`</rel.xml>; rel="license"`,                             // no type: not RSL
		`<https://cc/by/4.0/>; rel="license"; type="text/html"`, // not RSL
		`<https://x/l.xml>; rel="license"; anchor="/other"`,     // about another resource
		`<https://x/next>; rel="next"`,
		`<https://x/multi.xml>; rel="alternate license"; type="Application/RSL+XML; charset=utf-8"`,
		`<mailto:a@b>; rel=license`,
	}, base)
	want := []pointer{
		{"https://example.com/license.xml", "Link header", "application/rsl+xml", true},
		{"https://example.com/rel.xml", "Link header", "", false},
		{"https://cc/by/4.0/", "Link header", "text/html", false},
		{"https://x/multi.xml", "Link header", "Application/RSL+XML; charset=utf-8", true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LicenseLinks = %+v, want %+v", got, want)
	}
}

func TestHTMLLicenses(t *testing.T) {
	base, _ := url.Parse("https://example.com/dir/page.html")
	rsl := func(u string) []pointer { return []pointer{{u, "<link rel=license>", "application/rsl+xml", true}} }
	other := func(u, typ string) []pointer { return []pointer{{u, "<link rel=license>", typ, false}} }
	for _, tc := range []struct {
		doc  string
		want []pointer
	}{
		{`<head><link rel="license" type="application/rsl+xml" href="https://example.com/license.xml"></head>`,
			rsl("https://example.com/license.xml")},
		{`<link rel=LICENSE type=application/rsl+xml href="l.xml?a=1&amp;b=2">`, rsl("https://example.com/dir/l.xml?a=1&b=2")},
		{`<link rel=license type=application/rsl+xml href="l.xml?a=1&amp;amp;b=2">`, rsl("https://example.com/dir/l.xml?a=1&amp;b=2")},
		{`<base href="/base/"><link rel="license" type="application/rsl+xml" href="l.xml">`, rsl("https://example.com/base/l.xml")},
		{`<link rel="license" href="https://creativecommons.org/licenses/by/4.0/">`, other("https://creativecommons.org/licenses/by/4.0/", "")},
		{`<link rel="license" type="text/html" href="https://cc/by/">`, other("https://cc/by/", "text/html")},
		{`<link rel="stylesheet" href="a.css">`, nil},
		{`<link rel="license">`, nil},
		{`<script><link rel="license" href="/l.xml"></script>`, nil},
		{`</head><link rel="license" href="/l.xml">`, nil},
		{`<body><link rel="license" href="/l.xml">`, nil},
		{`<link rel="license" href="javascript:x">`, nil},
	} {
		if got := htmlLicenses(readHead(tc.doc), base); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("HTMLLicenses(%q) = %+v, want %+v", tc.doc, got, tc.want)
		}
	}
	many := []byte(strings.Repeat(`<link rel="license" href="/l.xml">`, 2*maxPointers))
	if n := len(htmlLicenses(readHead(many), base)); n != maxPointers {
		t.Errorf("%d pointers, want %d", n, maxPointers)
	}
}
