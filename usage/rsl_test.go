package usage

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func doc(contents string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<rsl xmlns="https://rslstandard.org/rsl">` + contents + `</rsl>`
}

func mustParse(t *testing.T, s string) *RSL {
	t.Helper()
	d, err := ParseRSL(strings.NewReader(s))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, s)
	}
	return d
}

// minimal is the specification's minimal complete document.
var minimal = doc(`
  <content url="/">
    <license>
      <permits type="usage">search ai-input</permits>
      <prohibits type="usage">ai-train</prohibits>
      <payment type="attribution"/>
    </license>
  </content>`)

// articles is the specification's example of §3.1.2: everything
// site-wide, but no training under /articles/.
var articles = doc(`
  <content url="https://example.com/"><license><permits type="usage">all</permits></license></content>
  <content url="/articles/"><license><prohibits type="usage">ai-train</prohibits></license></content>`)

func TestRSLDecide(t *testing.T) {
	for _, tc := range []struct {
		name, doc, target string
		use               RSLUse
		want              bool
		content           int // the deciding content's index, -1 for none
		license           int // the granting licence's index, -1 for none
	}{
		{"minimal: search permitted", minimal, "https://example.com/a", RSLUse{Purpose: "search"}, true, 0, 0},
		{"minimal: ai-input permitted", minimal, "https://example.com/a", RSLUse{Purpose: "ai-input"}, true, 0, 0},
		{"minimal: ai-train prohibited", minimal, "https://example.com/a", RSLUse{Purpose: "train-ai"}, false, 0, -1},
		{"minimal: ai-index not in the closed list", minimal, "https://example.com/a", RSLUse{Purpose: "ai-index"}, false, 0, -1},
		{"articles: training elsewhere", articles, "https://example.com/about", RSLUse{Purpose: "train-ai"}, true, 0, 0},
		{"articles: no training under /articles/", articles, "https://example.com/articles/x", RSLUse{Purpose: "train-ai"}, false, 1, -1},
		{"articles: search under /articles/", articles, "https://example.com/articles/x", RSLUse{Purpose: "search"}, true, 1, 0},
		{"articles: another host", articles, "https://other.example/about", RSLUse{Purpose: "search"}, false, -1, -1},
		{"articles: scheme and host compare case-insensitively", articles, "HTTPS://EXAMPLE.COM/about", RSLUse{Purpose: "search"}, true, 0, 0},
		// Supersets.
		{"ai-all covers ai-train", doc(`<content url="/"><license><permits>ai-all</permits></license></content>`),
			"https://a/x", RSLUse{Purpose: "train-ai"}, true, 0, 0},
		{"ai-all does not cover search", doc(`<content url="/"><license><permits>ai-all</permits></license></content>`),
			"https://a/x", RSLUse{Purpose: "search"}, false, 0, -1},
		{"prohibiting all", doc(`<content url="/"><license><prohibits type="usage">all</prohibits></license></content>`),
			"https://a/x", RSLUse{Purpose: "search"}, false, 0, -1},
		{"prohibiting ai-all", doc(`<content url="/"><license><prohibits type="usage">ai-all</prohibits></license></content>`),
			"https://a/x", RSLUse{Purpose: "ai-input"}, false, 0, -1},
		{"prohibiting ai-all leaves search", doc(`<content url="/"><license><prohibits type="usage">ai-all</prohibits></license></content>`),
			"https://a/x", RSLUse{Purpose: "search"}, true, 0, 0},
		{"permitted and prohibited", doc(`<content url="/"><license><permits>all</permits><prohibits>search</prohibits></license></content>`),
			"https://a/x", RSLUse{Purpose: "search"}, false, 0, -1},
		{"an empty permits list permits nothing", doc(`<content url="/"><license><permits type="usage"></permits></license></content>`),
			"https://a/x", RSLUse{Purpose: "search"}, false, 0, -1},
		{"no lists: everything", doc(`<content url="/"><license/></content>`), "https://a/x", RSLUse{Purpose: "train-ai"}, true, 0, 0},
		{"0.9 commas, any case", doc(`<content url="/"><license><permits>Search,AI-Train</permits></license></content>`),
			"https://a/x", RSLUse{Purpose: "train-ai"}, true, 0, 0},
		// Scope: the narrowest wins, whatever the order.
		{"narrower first", doc(`<content url="/a/b/"><license><prohibits>all</prohibits></license></content>` +
			`<content url="/a/"><license/></content>`), "https://h/a/b/c", RSLUse{Purpose: "search"}, false, 0, -1},
		{"wildcard length counts", doc(`<content url="/*.pdf$"><license><prohibits>all</prohibits></license></content>` +
			`<content url="/docs/"><license/></content>`), "https://h/docs/x.pdf", RSLUse{Purpose: "search"}, false, 0, -1},
		{"no match", doc(`<content url="/a/"><license/></content>`), "https://h/b", RSLUse{Purpose: "search"}, false, -1, -1},
		{"empty url: the whole placement", doc(`<content url=""><license/></content>`), "https://h/b", RSLUse{Purpose: "search"}, true, 0, 0},
		{"query in scope", doc(`<content url="/s?q="><license><prohibits>all</prohibits></license></content><content url="/"><license/></content>`),
			"https://h/s?q=x", RSLUse{Purpose: "search"}, false, 0, -1},
		{"%-encoding", doc(`<content url="/~u/"><license><prohibits>all</prohibits></license></content><content url="/"><license/></content>`),
			"https://h/%7Eu/x", RSLUse{Purpose: "search"}, false, 0, -1},
		{"a tie: the refusing one", doc(`<content url="/a*"><license/></content><content url="/*b"><license><prohibits>all</prohibits></license></content>`),
			"https://h/ab", RSLUse{Purpose: "search"}, false, 1, -1},
		{"a tie: both grant", doc(`<content url="/a*"><license/></content><content url="/*b"><license/></content>`),
			"https://h/ab", RSLUse{Purpose: "search"}, true, 0, 0},
		// Alternative licences: one that grants suffices, a free one preferred.
		{"the free licence", doc(`<content url="/"><license><payment type="purchase"/></license><license><permits>search</permits></license></content>`),
			"https://h/", RSLUse{Purpose: "search"}, true, 0, 1},
		{"the paid licence", doc(`<content url="/"><license><payment type="training"/></license><license><permits>search</permits></license></content>`),
			"https://h/", RSLUse{Purpose: "train-ai"}, true, 0, 0},
		// User and geo.
		{"user permitted", doc(`<content url="/"><license><permits type="user">education personal</permits></license></content>`),
			"https://h/", RSLUse{Purpose: "search", User: "Education"}, true, 0, 0},
		{"user not permitted", doc(`<content url="/"><license><permits type="user">education</permits></license></content>`),
			"https://h/", RSLUse{Purpose: "search", User: "commercial"}, false, 0, -1},
		{"unknown user and a permits list", doc(`<content url="/"><license><permits type="user">education</permits></license></content>`),
			"https://h/", RSLUse{Purpose: "search"}, false, 0, -1},
		{"user prohibited", doc(`<content url="/"><license><prohibits type="user">commercial</prohibits></license></content>`),
			"https://h/", RSLUse{Purpose: "search", User: "commercial"}, false, 0, -1},
		{"EU stands for its members", doc(`<content url="/"><license><prohibits type="geo">eu</prohibits></license></content>`),
			"https://h/", RSLUse{Purpose: "search", Geo: "fr"}, false, 0, -1},
		{"outside the EU", doc(`<content url="/"><license><prohibits type="geo">EU</prohibits></license></content>`),
			"https://h/", RSLUse{Purpose: "search", Geo: "US"}, true, 0, 0},
		{"geo permitted", doc(`<content url="/"><license><permits type="geo">US CA</permits></license></content>`),
			"https://h/", RSLUse{Purpose: "search", Geo: "CA"}, true, 0, 0},
		{"an unknown type is not applied", doc(`<content url="/"><license><permits type="x:device">phone</permits></license></content>`),
			"https://h/", RSLUse{Purpose: "search"}, true, 0, 0},
	} {
		d := mustParse(t, tc.doc)
		target, err := url.Parse(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		v, err := d.Decide(target, tc.use)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		content, license := -1, -1
		if v.Content != nil {
			content = v.Content.Index
			for i := range v.Content.Licenses {
				if v.License == &v.Content.Licenses[i] {
					license = i
				}
			}
		}
		if v.Licensed != tc.want || content != tc.content || license != tc.license {
			t.Errorf("%s: licensed %v content %d license %d, want %v %d %d", tc.name, v.Licensed, content, license,
				tc.want, tc.content, tc.license)
		}
	}
	if _, err := mustParse(t, minimal).Decide(&url.URL{Path: "/"}, RSLUse{Purpose: "ai-train"}); !errors.Is(err, errUnknownPurpose) {
		t.Errorf("purpose ai-train: %v", err)
	}
}

func TestParseRSLData(t *testing.T) {
	d := mustParse(t, `<rsl xmlns="https://rslstandard.org/rsl" xmlns:x="urn:x" max-age="7">
  <x:note>ignored <rsl>x</rsl></x:note>
  <content url="https://example.com/premium/" server="https://license.example.com" encrypted="true" lastmod="2026-01-02T03:04:05Z">
    <alternate url="https://example.com/feed"/>
    <license>
      <permits type="geo">us, gb</permits>
      <payment type="purchase">
        <standard>https://rslcollective.org/license</standard>
        <custom>https://example.com/terms</custom>
        <amount currency="USD">10.00</amount>
        <accepts type="application/x402+json">https://pay.example.com</accepts>
        <x:extra/>
      </payment>
      <reporting type="telemetry" profile="https://example.com/profile" endpoint="https://example.com/report"/>
      <legal type="contact">legal@example.com</legal>
    </license>
    <copyright type="person">A. Author</copyright>
  </content>
</rsl>`)
	c := d.Contents[0]
	l := c.Licenses[0]
	p := l.Payment
	switch {
	case d.MaxAge != 7*24*time.Hour:
		t.Errorf("MaxAge %v", d.MaxAge)
	case c.Server != "https://license.example.com" || !c.Encrypted || c.LastMod != "2026-01-02T03:04:05Z":
		t.Errorf("content %+v", c)
	case strings.Join(l.Permits["geo"], " ") != "US GB":
		t.Errorf("geo %q", l.Permits["geo"])
	case p.Type != "purchase" || p.Standard[0] != "https://rslcollective.org/license" || p.Custom[0] != "https://example.com/terms" ||
		p.Amount[0] != (Amount{"10.00", "USD"}) || p.Accepts[0] != (Accepts{"application/x402+json", "https://pay.example.com"}):
		t.Errorf("payment %+v", p)
	case l.Reporting[0] != (Reporting{"telemetry", "https://example.com/profile", "https://example.com/report"}):
		t.Errorf("reporting %+v", l.Reporting)
	case l.Legal[0] != (Legal{"contact", "legal@example.com"}):
		t.Errorf("legal %+v", l.Legal)
	}
	for _, maxAge := range []string{`max-age="0"`, `max-age="x"`, ``, `max-age="-3"`} {
		d := mustParse(t, `<rsl xmlns="https://rslstandard.org/rsl" `+maxAge+`><content url="/"><license/></content></rsl>`)
		if d.MaxAge != rslDefaultMaxAge {
			t.Errorf("%s: MaxAge %v", maxAge, d.MaxAge)
		}
	}
}

func TestParseRSLErrors(t *testing.T) {
	for _, s := range []string{
		``,
		`not xml`,
		`<rsl><content url="/"><license/></content></rsl>`,                         // no namespace
		`<x:rsl xmlns:x="urn:other"><content url="/"><license/></content></x:rsl>`, // another namespace
		doc(``),                              // no content
		doc(`<content><license/></content>`), // no url
		doc(`<content url="/"></content>`),   // no licence
		doc(`<content url="example.com/"><license/></content>`), // neither URL nor pattern
		doc(`<content url="/"><license/><bogus/></content>`),    // an unknown RSL element
		doc(`<content url="/"><license><permits>a<b/></permits></license></content>`),
		doc(`<content url="/"><license><permits>all</permits><permits type="usage">search</permits></license></content>`),
		doc(`<content url="/"><license><payment/><payment/></license></content>`),
		doc(`<content url="/"><license><payment><price/></payment></license></content>`),
		doc(`<content url="/"><license>&bogus;</license></content>`),
		doc(`<content url="/"><license>`),
		`<?xml version="1.0" encoding="ISO-8859-1"?><rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license/></content></rsl>`,
		doc(strings.Repeat(`<content url="/"><license/></content>`, MaxContents+1)),
		doc(`<!--` + strings.Repeat("x", MaxRSLSize) + `-->`),
	} {
		if _, err := ParseRSL(strings.NewReader(s)); !errors.Is(err, ErrInvalidRSL) {
			t.Errorf("Parse(%.80q) error = %v, want ErrInvalidRSL", s, err)
		}
	}
	readErr := errors.New("reset")
	if _, err := ParseRSL(iotest.ErrReader(readErr)); !errors.Is(err, readErr) || errors.Is(err, ErrInvalidRSL) {
		t.Errorf("read error = %v", err)
	}
}

// A licence that permits the purpose but not the user or region says which
// term was not met; an undeclared user or region meets no list of its
// type, permits or prohibits; among alternative licences, the first that
// permits the purpose gives the reason.
func TestRSLDecideUnmet(t *testing.T) {
	users := doc(`<content url="/"><license><permits type="user">education personal</permits><prohibits type="geo">CN</prohibits></license></content>`)
	for _, tc := range []struct {
		doc  string
		use  RSLUse
		want string
	}{
		{users, RSLUse{Purpose: "search"}, "user not declared (permits education personal)"},
		{users, RSLUse{Purpose: "search", User: "Commercial"}, "user commercial not permitted (permits education personal)"},
		{users, RSLUse{Purpose: "search", User: "personal"}, "geo not declared (prohibits CN)"},
		{users, RSLUse{Purpose: "search", User: "personal", Geo: "cn"}, "geo CN prohibited (prohibits CN)"},
		{users, RSLUse{Purpose: "search", User: "personal", Geo: "FR"}, ""},
		{doc(`<content url="/"><license><prohibits type="user">commercial</prohibits></license></content>`),
			RSLUse{Purpose: "search"}, "user not declared (prohibits commercial)"},
		{doc(`<content url="/"><license><permits type="geo"></permits></license></content>`),
			RSLUse{Purpose: "search", Geo: "FR"}, "geo FR not permitted (permits nothing)"},
		{doc(`<content url="/"><license><permits type="usage">ai-train</permits></license>` +
			`<license><permits type="usage">search</permits><permits type="user">education</permits></license></content>`),
			RSLUse{Purpose: "search", User: "commercial"}, "user commercial not permitted (permits education)"},
		{doc(`<content url="/"><license><prohibits type="usage">search</prohibits><permits type="user">education</permits></license></content>`),
			RSLUse{Purpose: "search"}, ""},
		{doc(`<content url="/"><license><permits type="user">` + strings.Repeat("personal ", 40) + `</permits></license></content>`),
			RSLUse{Purpose: "search", User: "commercial"}, "user commercial not permitted (permits " + strings.Repeat("personal ", 13) + "per …)"},
	} {
		v, err := mustParse(t, tc.doc).Decide(&url.URL{Scheme: "https", Host: "h", Path: "/"}, tc.use)
		if err != nil || v.Unmet != tc.want || v.Licensed != (tc.want == "" && !strings.Contains(tc.doc, "prohibits type=\"usage\"")) {
			t.Errorf("%+v: licensed %v, unmet %q (%v), want %q", tc.use, v.Licensed, v.Unmet, err, tc.want)
		}
	}
}
