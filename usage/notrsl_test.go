package usage

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/politecrawl/robots/dialect"
)

const ccDeed = `<!DOCTYPE html>
<html lang="en"><head><title>Attribution 4.0 International</title></head><body><p>You are free to share.</p></body></html>`

// A licence link that does not say it is RSL (no type, or another type:
// the way pages link Creative Commons) is recorded for each declared
// purpose, never fetched, and refuses nothing; a link typed
// application/rsl+xml in the same response still decides.
func TestLicenseLinksNotRSL(t *testing.T) {
	site := newUsageSite(t, map[string]string{
		"/robots.txt":  "User-agent: *\nAllow: /\n",
		tdmPath:        `[]`,
		"/cc-by/":      ccDeed,
		"/cc-by-sa/":   ccDeed,
		"/license.xml": licenseXML,
	})
	r := newResolver(t)
	cc := site.URL + "/cc-by/"
	h := http.Header{
		"Content-Type": {"text/html"},
		"Link":         {"<" + cc + `>; rel="license", </cc-by-sa/>; rel=license; type="text/html", </cc-by/>; rel=license`},
	}
	body := []byte(`<html><head><link rel="license" href="/cc-by/"></head><body>a page</body></html>`)
	rep, err := CheckResponse(context.Background(), r, mustURL(t, site.URL+"/articles/x"), h, body, aiAll...)
	if err != nil {
		t.Fatal(err)
	}
	if s, refused := rep.Refusal(aiAll, dialect.UseUnknown, true); !refused || s.Carrier != NoCarrier {
		t.Errorf("strict refusal %v: want nothing stated, the links deciding nothing", s)
	}
	if s, refused := rep.Refusal(aiAll, dialect.UseUnknown, false); refused {
		t.Errorf("refused by %v", s)
	}
	if n := site.count("/cc-by/") + site.count("/cc-by-sa/"); n != 0 {
		t.Errorf("the Creative Commons pages were fetched %d times", n)
	}
	var recorded []string
	for _, s := range rep.Signals {
		if s.Carrier != LicenseDocument || s.License == nil {
			continue
		}
		if s.Pref != dialect.PrefUnknown {
			t.Errorf("%v: a link not typed RSL states %v", s, s.Pref)
		}
		if s.Purpose == dialect.Search {
			recorded = append(recorded, s.License.From+" "+s.License.URL+" "+s.License.Type+": "+s.String())
		}
	}
	want := []string{
		"Link header " + cc + " : search=unknown: license " + cc + " (Link header): not an RSL licence (no type)",
		"Link header " + site.URL + "/cc-by-sa/ text/html: search=unknown: license " + site.URL + "/cc-by-sa/ (Link header): not an RSL licence (type text/html)",
		"<link rel=license> " + cc + " : search=unknown: license " + cc + " (<link rel=license>): not an RSL licence (no type)",
	}
	if strings.Join(recorded, "\n") != strings.Join(want, "\n") {
		t.Errorf("recorded\n%s\nwant\n%s", strings.Join(recorded, "\n"), strings.Join(want, "\n"))
	}
	b, err := json.Marshal(rep)
	var back Report
	if err != nil || json.Unmarshal(b, &back) != nil || !reflect.DeepEqual(back, rep) ||
		!strings.Contains(string(b), `{"carrier":"license","where":"`+cc+` (Link header)","value":"not an RSL licence (no type)","license":{"url":"`+cc+`","from":"Link header"},"purpose":"search"}`) {
		t.Errorf("JSON %s (%v) does not read back as %+v", b, err, rep)
	}

	// The same page with a typed RSL link beside them: the licence decides.
	h.Add("Link", `</license.xml>; rel="license"; type="application/rsl+xml"`)
	rep, err = CheckResponse(context.Background(), r, mustURL(t, site.URL+"/articles/x"), h, body, aiAll...)
	if err != nil {
		t.Fatal(err)
	}
	if got := refusal(rep, aiAll); got != "train-ai=n: license "+site.URL+`/license.xml (Link header), content "/articles/": not licensed` {
		t.Errorf("typed RSL link: refusal %q", got)
	}
	if site.count("/license.xml") != 1 || site.count("/cc-by/")+site.count("/cc-by-sa/") != 0 {
		t.Errorf("fetched licence.xml %d, the others %d times", site.count("/license.xml"), site.count("/cc-by/")+site.count("/cc-by-sa/"))
	}
	// Its log record names the RSL licence among the documents that
	// decided, not the links that were not fetched.
	rec := NewLogRecord(r, r.Now(), Decision{URL: mustURL(t, site.URL+"/articles/x"), Outcome: Refused, Purposes: aiAll, Report: &rep})
	var docs []string
	for _, d := range rec.Documents {
		docs = append(docs, d.Kind+" "+strings.TrimPrefix(d.URL, site.URL)+" "+d.Err)
	}
	if want := "[robots.txt /robots.txt  tdmrep.json " + tdmPath + "  license /license.xml ]"; fmt.Sprint(docs) != want {
		t.Errorf("log record's documents %v; want %s", docs, want)
	}
}

// A robots.txt License line is RSL's own pointer: its document is
// fetched. One that is not an RSL document (an HTML page, a text licence)
// is recorded and refuses nothing; one that cannot be obtained, or is RSL
// and invalid, refuses (no fallback to permitted).
func TestRobotsLicenseNotRSL(t *testing.T) {
	site := newUsageSite(t, map[string]string{
		"/robots.txt":  "",
		tdmPath:        `[]`,
		"/deed.html":   ccDeed,
		"/license.txt": "MIT License\n\nPermission is hereby granted, free of charge, ...\n",
		"/broken.xml":  `<rsl xmlns="https://example.com/not-rsl"><content url="/"/></rsl>`,
		"/bad.xml":     `<rsl xmlns="https://rslstandard.org/rsl"><content url="/"></content></rsl>`,
		"/license.xml": licenseXML,
	})
	for _, tc := range []struct{ file, refusal, recorded string }{
		{"/deed.html", "", "not an RSL document: the root is <html>"},
		{"/license.txt", "", "not an RSL document: no root element"},
		{"/missing.xml", "unobtainable: 404 Not Found", ""},
		{"/broken.xml", `unobtainable: rsl: invalid document: the root is <rsl> in "https://example.com/not-rsl", not <rsl> in "https://rslstandard.org/rsl"`, ""},
		{"/bad.xml", "unobtainable: rsl: invalid document: ", ""},
		{"/license.xml", "", ""},
	} {
		site.mu.Lock()
		site.files["/robots.txt"] = "License: " + tc.file + "\nUser-agent: *\nAllow: /\n"
		site.mu.Unlock()
		r := newResolver(t)
		rep := usage(t, r, site.URL+"/a", aiAll)
		s, refused := rep.Refusal(aiAll, dialect.UseUnknown, false)
		switch {
		case tc.refusal == "" && refused:
			t.Errorf("%s: refused by %v", tc.file, s)
		case tc.refusal != "" && (!refused || s.Carrier != LicenseDocument || !strings.HasPrefix(s.Value, tc.refusal)):
			t.Errorf("%s: refusal %v %v, want %q", tc.file, s, refused, tc.refusal)
		}
		var values []string
		for _, s := range rep.Signals {
			if s.Carrier == LicenseDocument && s.Pref == dialect.PrefUnknown {
				values = append(values, s.Purpose.String()+" "+s.Value+" "+s.License.From)
			}
		}
		var want []string
		if tc.recorded != "" {
			for _, c := range aiAll {
				want = append(want, c.String()+" "+tc.recorded+" robots.txt line 1")
			}
		}
		if strings.Join(values, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: recorded %q, want %q", tc.file, values, want)
		}
	}
}
