package dialect

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The same file, four readings.
func TestSameFileDifferentDialects(t *testing.T) {
	type want struct{ rfc, google, coccoc, koster bool }
	cases := []struct {
		name, body, agent, url string
		want                   want
	}{
		{"allow lines exist only after 1994",
			"User-agent: *\nDisallow: /\nAllow: /public\n", "bot", "/public/a", want{true, true, true, false}},
		{"wildcards are literal in 1994",
			"User-agent: *\nDisallow: /*.gif$\n", "bot", "/a.gif", want{false, false, false, true}},
		{"index.html also allows its directory only in google",
			"User-agent: *\nAllow: /dir/index.html\nDisallow: /\n", "bot", "/dir/", want{false, true, false, false}},
		{"/robots.txt is exempt only in rfc9309",
			"User-agent: *\nDisallow: /\n", "bot", "/robots.txt", want{true, false, false, false}},
		{"percent-decoding of unreserved characters: rfc9309 and coccoc",
			"User-agent: *\nDisallow: /%7Euser\n", "bot", "/~user/x", want{false, true, false, true}},
		{"the most closely matching name: coccoc only",
			"User-agent: *\nDisallow: /\n\nUser-agent: coccoc\nAllow: /\n", "coccocbot", "/x", want{false, false, true, false}},
		{"several names on one line: 1994 only",
			"User-agent: a b\nDisallow: /\n", "b", "/x", want{true, true, true, false}},
		{"missing colon: google only",
			"User-agent: *\nDisallow /\n", "bot", "/x", want{true, false, true, true}},
		{"missing colon: a vertical tab separates nothing, as in Google's parser",
			"User-agent: *\nDisalow\v/x\n", "bot", "/x", want{true, true, true, true}},
		{"missing colon: a form feed inside the value stays in it, as in Google's parser",
			"User-agent *\fx\nDisallow: /\n", "bot", "/x", want{true, false, true, true}},
		{"key prefix and misspelling: google only",
			"User-agent: *\nDissallow: /x\n", "bot", "/x", want{true, false, true, true}},
		{"blank line ends a record in 1994 only",
			"User-agent: *\n\nDisallow: /\n", "bot", "/x", want{false, false, false, true}},
		{"comment line does not end a 1994 record",
			"User-agent: *\n# note\nDisallow: /\n", "bot", "/x", want{false, false, false, false}},
		{"empty disallow in a crawler's own group hides the * group everywhere",
			"User-agent: *\nDisallow: /\n\nUser-agent: bot\nDisallow:\n", "bot", "/x", want{true, true, true, true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, d := range []struct {
				d    *Dialect
				want bool
			}{{RFC9309, c.want.rfc}, {Google, c.want.google}, {CocCoc, c.want.coccoc}, {Koster1994, c.want.koster}} {
				v := d.d.ParseString(c.body).For(c.agent).Check(c.url)
				if v.Allowed != d.want {
					t.Errorf("%s: allowed=%v (%s), want %v", d.d, v.Allowed, v, d.want)
				}
			}
		})
	}
}

// Where the crawler has no group of its own, every "*" group applies, merged
// (the published RFC 9309 dropped the draft's "first"); koster1994 merges
// its "*" records too.
func TestStarGroupsMerged(t *testing.T) {
	body := "User-agent: *\nDisallow: /one\n\nUser-agent: other\nDisallow: /x\n\nUser-agent: *\nDisallow: /two\n"
	for _, d := range All() {
		rs := d.ParseString(body).For("bot")
		for _, p := range []string{"/one", "/two"} {
			if v := rs.Check(p); v.Allowed {
				t.Errorf("%s: %s allowed: both * groups must apply", d, p)
			}
		}
		if v := rs.Check("/x"); !v.Allowed {
			t.Errorf("%s: /x of another crawler's group applied", d)
		}
	}
}

// The documented choice: a reserved character and its percent-encoded form
// are not equated (RFC 3986 §2.2), in rules or URLs.
func TestReservedCharactersComparedAsWritten(t *testing.T) {
	for _, d := range []*Dialect{RFC9309, CocCoc} {
		rs := d.ParseString("User-agent: *\nDisallow: /q?u=http://x\nDisallow: /r%3Fs\n").For("bot")
		for p, allowed := range map[string]bool{
			"/q?u=http://x":       false,
			"/q?u=http%3A%2F%2Fx": true,
			"/r%3fs":              false, // %xx upper-cased
			"/r?s":                true,
		} {
			if v := rs.Check(p); v.Allowed != allowed {
				t.Errorf("%s: %s: %s, want allowed=%v", d, p, v, allowed)
			}
		}
	}
}

// rfc9309 and coccoc: the printable ASCII characters RFC 3986 has no place
// for (" < > \\ ^ ` { | }) are percent-encoded in rules and URLs alike before
// they are compared, so that the raw and the encoded form are one path, as
// for octets outside ASCII. Reserved characters ([ ] included) still compare
// as written; google and koster1994 compare such characters as written.
func TestCharactersOutsideURIGrammar(t *testing.T) {
	lt := "User-agent: *\nDisallow: /a<d.html\n"
	cpython := "User-agent: *\nDisallow: /a%3cd.html\n"
	for _, d := range []*Dialect{RFC9309, CocCoc} {
		cases := []tc{
			{body: lt, agents: "bot", url: "/a%3Cd.html", allow: false, line: 2},
			{body: lt, agents: "bot", url: "/a%3cd.html", allow: false, line: 2},
			{body: lt, agents: "bot", url: "/a<d.html", allow: false, line: 2},
			{body: lt, agents: "bot", url: "/a%3Ed.html", allow: true, line: -1},
			{body: cpython, agents: "bot", url: "/a<d.html", allow: false, line: 2},
			// Each character, raw in the rule and encoded in the URL, and the
			// other way round.
			{body: "User-agent: *\nDisallow: /q\"<>\\^`{|}\n", agents: "bot", url: "/q%22%3C%3E%5C%5E%60%7B%7C%7D", allow: false, line: 2},
			{body: "User-agent: *\nDisallow: /q%22%3c%3E%5c%5E%60%7b%7C%7d\n", agents: "bot", url: "/q\"<>\\^`{|}", allow: false, line: 2},
			{body: "User-agent: *\nDisallow: /x|y$\n", agents: "bot", url: "/x%7Cy", allow: false, line: 2},
			{body: "User-agent: *\nDisallow: /*{id}\n", agents: "bot", url: "/a/%7Bid%7D/b", allow: false, line: 2},
			// Encoded, the two rules are as long: Allow wins the tie.
			{body: "User-agent: *\nDisallow: /a%3C\nAllow: /a<\n", agents: "bot", url: "/a<b", allow: true, line: 3},
			// Reserved characters are not touched.
			{body: "User-agent: *\nDisallow: /a[1]\n", agents: "bot", url: "/a%5B1%5D", allow: true, line: -1},
			{body: "User-agent: *\nDisallow: /a[1]\n", agents: "bot", url: "/a[1]", allow: false, line: 2},
		}
		runCases(t, d, cases)
	}
	runCases(t, Google, []tc{
		{body: lt, agents: "bot", url: "/a%3Cd.html", allow: true, line: -1},
		{body: lt, agents: "bot", url: "/a<d.html", allow: false, line: 2},
	})
	runCases(t, Koster1994, []tc{
		{body: lt, agents: "bot", url: "/a%3Cd.html", allow: true, line: -1},
		{body: lt, agents: "bot", url: "/a<d.html", allow: false, line: 2},
	})
}

// A NUL byte is an ordinary byte of the value outside the google dialect.
func TestNULOnlyEndsGoogleLines(t *testing.T) {
	body := "User-agent: *\nDisallow: /a\x00junk\n"
	for _, d := range []*Dialect{RFC9309, CocCoc, Koster1994} {
		if v := d.ParseString(body).For("bot").Check("/ab"); !v.Allowed {
			t.Errorf("%s: /ab disallowed by %s", d, v)
		}
	}
}

func TestLineEndingsAndBOM(t *testing.T) {
	for _, body := range []string{
		"User-agent: bot\nDisallow: /a\nDisallow: /b\n",
		"User-agent: bot\r\nDisallow: /a\r\nDisallow: /b\r\n",
		"User-agent: bot\rDisallow: /a\rDisallow: /b\r",
		"User-agent: bot\rDisallow: /a\r\nDisallow: /b",
		"\xEF\xBB\xBFUser-agent: bot\nDisallow: /a\nDisallow: /b\n",
	} {
		for _, d := range All() {
			rs := d.ParseString(body).For("bot")
			for i, p := range []string{"/a", "/b"} {
				v := rs.Check(p)
				if v.Allowed || v.Rule.Line != i+2 {
					t.Errorf("%s %q: %s -> %s, want disallowed by line %d", d, body, p, v, i+2)
				}
			}
			if w := d.ParseString(body).Warnings(); len(w) != 0 {
				t.Errorf("%s %q: unexpected warnings %v", d, body, w)
			}
		}
	}
}

func TestWarningsAndLeniency(t *testing.T) {
	body := "Disallow: /early\nUser-agent: bot\nthis line has no colon at all\nFoo: bar\nCrawl-delay: soon\nDisallow: /x\n"
	r := RFC9309.ParseString(body)
	want := map[int]string{1: "before any User-agent", 3: "no ':'", 4: "unknown key", 5: "not a number"}
	got := r.Warnings()
	if len(got) != len(want) {
		t.Fatalf("warnings = %v, want lines %v", got, want)
	}
	for _, w := range got {
		if !strings.Contains(w.Message, want[w.Line]) {
			t.Errorf("warning %v, want one on line %d containing %q", w, w.Line, want[w.Line])
		}
	}
	if v := r.For("bot").Check("/x"); v.Allowed || v.Rule.Line != 6 {
		t.Errorf("the readable rule after bad lines must apply: %s", v)
	}
	if v := r.For("bot").Check("/early"); !v.Allowed {
		t.Errorf("a rule before any user-agent must be ignored: %s", v)
	}
}

func TestSizeLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /first\n")
	for b.Len() < MaxBodyBytes-100 {
		b.WriteString("# padding padding padding padding padding padding padding padding\n")
	}
	// A rule that straddles the limit, then one wholly after it.
	b.WriteString(strings.Repeat("#", 100-20) + "\nDisallow: /straddle-and-more\nDisallow: /after\n")
	body := []byte(b.String())
	for _, d := range All() {
		r := d.Parse(body)
		n, cut := r.Size()
		if !cut || n > MaxBodyBytes {
			t.Errorf("%s: size %d cut %v", d, n, cut)
		}
		rs := r.For("bot")
		if v := rs.Check("/first"); v.Allowed {
			t.Errorf("%s: rule before the cut must apply", d)
		}
		for _, p := range []string{"/after", "/straddle-and-more", "/straddle", "/s"} {
			if v := rs.Check(p); !v.Allowed {
				t.Errorf("%s: %s must be allowed (rules at or after the cut are ignored): %s", d, p, v)
			}
		}
		ws := r.Warnings()
		if len(ws) == 0 || !strings.Contains(ws[len(ws)-1].Message, "longer than") {
			t.Errorf("%s: no warning for the cut: %v", d, ws)
		}
	}
}

// A line that ends exactly at the 500 KiB limit (its line break is the
// first byte past it) is whole and applies; with LF, CR or CRLF.
func TestSizeLimitLineEndingAtTheLimit(t *testing.T) {
	for _, eol := range []string{"\n", "\r", "\r\n"} {
		var b strings.Builder
		b.WriteString("User-agent: *" + eol)
		const rule = "Disallow: /edge"
		pad := "#" + strings.Repeat("p", 60) + eol
		for b.Len()+len(pad)+len(rule) <= MaxBodyBytes {
			b.WriteString(pad)
		}
		b.WriteString(strings.Repeat("#", MaxBodyBytes-len(rule)-b.Len()-len(eol)) + eol)
		b.WriteString(rule) // ends at byte MaxBodyBytes
		if b.Len() != MaxBodyBytes {
			t.Fatalf("built %d bytes", b.Len())
		}
		b.WriteString(eol + "Disallow: /after" + eol)
		for _, d := range All() {
			r := d.ParseString(b.String())
			if _, cut := r.Size(); !cut {
				t.Errorf("%s %q: not cut", d, eol)
			}
			rs := r.For("bot")
			if v := rs.Check("/edge"); v.Allowed {
				t.Errorf("%s %q: the rule ending at the limit must apply: %s", d, eol, v)
			}
			if v := rs.Check("/after"); !v.Allowed {
				t.Errorf("%s %q: the rule after the limit must not apply: %s", d, eol, v)
			}
		}
	}
}

func TestGoogleLineCut(t *testing.T) {
	long := "/x/" + strings.Repeat("a", 20000)
	body := "user-agent: bot\ndisallow: " + long + "\n"
	rs := Google.ParseString(body).For("bot")
	// The line is cut after 16,663 bytes: the rule is the first 16,663-len("disallow: ") bytes of the path.
	keep := 2083*8 - 1 - len("disallow: ")
	if v := rs.Check(long[:keep]); v.Allowed {
		t.Errorf("google: the cut rule must match its own prefix: %s", v)
	}
	if v := rs.Check(long[:keep-1]); !v.Allowed {
		t.Errorf("google: shorter path must not match")
	}
	if v := RFC9309.ParseString(body).For("bot").Check(long[:keep]); !v.Allowed {
		t.Errorf("rfc9309 has no line limit: the whole rule must be used")
	}
}

// The choices where other parsers' Crawl-delay and Sitemap cases differ (see
// the package doc): keys are read exactly, HTML is not unwrapped, Sitemap
// values are kept as written, one per line.
func TestPeerCaseChoices(t *testing.T) {
	for _, d := range []*Dialect{RFC9309, CocCoc} {
		for _, body := range []string{
			"User-agent: bot\ncrawl delay: 4\n",
			"User-agent: bot\ncrawldelay: 4\n",
			"User-agent: bot<BR>\nCrawl-Delay: 4<BR>\n",
		} {
			if got, ok := d.ParseString(body).For("bot").CrawlDelay(); ok {
				t.Errorf("%s %q: crawl-delay %v, want none", d, body, got)
			}
		}
		runCases(t, d, []tc{
			{body: "User-agent: *<BR>\nDisallow: /<BR>\n", agents: "bot", url: "/x", allow: true, line: -1},
		})
	}
	body := "sitemap: /rel.xml\nsite map: /c\nhttp://h/bare.xml\nsitemap: http://h/s.xml\nSitemap: http://h/s.xml\nSitemap: A\xc2\xc3\xb1B\n"
	for _, d := range []*Dialect{RFC9309, CocCoc, Google} {
		var got []string
		for _, sm := range d.ParseString(body).Sitemaps() {
			got = append(got, sm.URL+"@"+strconv.Itoa(sm.Line))
		}
		if want := "/rel.xml@1 http://h/s.xml@4 http://h/s.xml@5 A\xc2\xc3\xb1B@6"; strings.Join(got, " ") != want {
			t.Errorf("%s: sitemaps %q, want %q", d, strings.Join(got, " "), want)
		}
	}
}

func TestSitemapsPerDialect(t *testing.T) {
	body := "Sitemap: https://a.example/1.xml\nUser-agent: *\nDisallow: /x\nSitemap: https://a.example/2.xml\n\nsitemap: https://a.example/3.xml\n"
	for _, d := range All() {
		got := d.ParseString(body).Sitemaps()
		var urls []string
		for _, s := range got {
			urls = append(urls, s.URL)
		}
		want := "https://a.example/1.xml https://a.example/2.xml https://a.example/3.xml"
		if d == Koster1994 {
			want = ""
		}
		if strings.Join(urls, " ") != want {
			t.Errorf("%s: sitemaps %v, want %q", d, urls, want)
		}
	}
	if got := Google.ParseString("site-map: https://a.example/s.xml\n").Sitemaps(); len(got) != 1 {
		t.Errorf("google: site-map misspelling: %v", got)
	}
}

func TestKosterRecords(t *testing.T) {
	runCases(t, Koster1994, []tc{
		// A record that does not start with User-agent is ignored to the blank line.
		{body: "Disallow: /a\nUser-agent: *\nDisallow: /b\n\nUser-agent: *\nDisallow: /c\n", agents: "bot", url: "/b", allow: true},
		{body: "Disallow: /a\nUser-agent: *\nDisallow: /b\n\nUser-agent: *\nDisallow: /c\n", agents: "bot", url: "/c", allow: false},
		// Two records for the same name are merged.
		{body: "User-agent: bot\nDisallow: /a\n\nUser-agent: bot\nDisallow: /b\n", agents: "bot", url: "/b", allow: false},
		// Comment-only lines are not record boundaries.
		{body: "User-agent: bot\n# hello\nDisallow: /a\n", agents: "bot", url: "/a", allow: false},
		// Literal bytes: no percent-decoding.
		{body: "User-agent: *\nDisallow: /%7E\n", agents: "bot", url: "/~", allow: true},
	})
}

func TestDecide(t *testing.T) {
	type row struct {
		d    *Dialect
		o    Outcome
		st   FetchState
		want Action
	}
	h := time.Hour
	rows := []row{
		{RFC9309, OutcomeOK, FetchState{}, ActionParse},
		{RFC9309, OutcomeOther2xx, FetchState{}, ActionParse},
		{RFC9309, Outcome4xx, FetchState{}, ActionAllowAll},
		{RFC9309, OutcomeRedirectLimit, FetchState{}, ActionAllowAll},
		{RFC9309, Outcome5xx, FetchState{}, ActionDisallowAll},
		{RFC9309, Outcome5xx, FetchState{HaveLastGood: true, LastGoodAge: 2 * h}, ActionUseLastGood},
		{RFC9309, Outcome5xx, FetchState{HaveLastGood: true, LastGoodAge: 31 * 24 * h, Lasted: 31 * 24 * h}, ActionDisallowAll},
		{RFC9309, OutcomeNoAnswer, FetchState{}, ActionDisallowAll},
		{Google, Outcome4xx, FetchState{}, ActionAllowAll},
		{Google, Outcome429, FetchState{}, ActionDisallowAll},
		{Google, Outcome5xx, FetchState{HaveLastGood: true, LastGoodAge: 2 * h, Lasted: 2 * h}, ActionDisallowAll},
		{Google, Outcome5xx, FetchState{HaveLastGood: true, LastGoodAge: 13 * h, Lasted: 13 * h}, ActionUseLastGood},
		{Google, Outcome5xx, FetchState{Lasted: 13 * h}, ActionAllowAll},
		{Google, Outcome5xx, FetchState{HaveLastGood: true, LastGoodAge: 31 * 24 * h, Lasted: 31 * 24 * h}, ActionAllowAll},
		{Google, OutcomeNoAnswer, FetchState{}, ActionDisallowAll},
		{Google, OutcomeRedirectLimit, FetchState{}, ActionAllowAll},
		{CocCoc, OutcomeOK, FetchState{}, ActionParse},
		{CocCoc, OutcomeOther2xx, FetchState{}, ActionAllowAll},
		{CocCoc, Outcome5xx, FetchState{}, ActionAllowAll},
		{CocCoc, Outcome429, FetchState{}, ActionAllowAll},
		{CocCoc, OutcomeNoAnswer, FetchState{}, ActionExcludeHost},
		{Koster1994, Outcome4xx, FetchState{}, ActionAllowAll},
		{Koster1994, Outcome5xx, FetchState{HaveLastGood: true}, ActionDisallowAll},
		{Koster1994, OutcomeNoAnswer, FetchState{}, ActionDisallowAll},
	}
	for _, r := range rows {
		got := r.d.Decide(r.o, r.st)
		if got.Action != r.want {
			t.Errorf("%s %s %+v: %s, want %s", r.d, r.o, r.st, got, r.want)
		}
		if (got.Action == ActionDisallowAll || got.Action == ActionExcludeHost) && got.Retry <= 0 {
			t.Errorf("%s %s: %s has no retry time", r.d, r.o, got)
		}
	}
	for code, want := range map[int]Outcome{200: OutcomeOK, 204: OutcomeOther2xx, 206: OutcomeOther2xx, 301: OutcomeOtherStatus,
		401: Outcome4xx, 404: Outcome4xx, 429: Outcome429, 500: Outcome5xx, 503: Outcome5xx, 100: OutcomeOtherStatus, 999: OutcomeOtherStatus} {
		if got := ClassifyStatus(code); got != want {
			t.Errorf("ClassifyStatus(%d) = %s, want %s", code, got, want)
		}
	}
	for _, d := range All() {
		if d.MaxRedirects() != 5 || d.CacheTTL() != 24*time.Hour {
			t.Errorf("%s: redirects %d ttl %s", d, d.MaxRedirects(), d.CacheTTL())
		}
	}
}

func TestProductToken(t *testing.T) {
	for in, want := range map[string]string{
		"Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)":       "ExampleBot",
		"colly - https://github.com/gocolly/colly/v2":                              "colly",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)": "Googlebot",
		"Googlebot-Image/1.0": "Googlebot-Image",
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120 Safari/537": "",
		"": "", "   ": "", "123bot": "",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116": "bingbot",
		"curl/8.5.0":     "curl",
		"MJ12bot/v1.4.8": "MJ12bot",
		"Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)": "MJ12bot",
		"12345": "", "360Spider": "",
		"Mozilla/5.0 (compatible; (": "",
	} {
		if got := ProductToken(in); got != want {
			t.Errorf("ProductToken(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPathOf(t *testing.T) {
	for in, want := range map[string]string{
		"": "/", "http://www.example.com": "/", "http://www.example.com/": "/", "http://www.example.com/a": "/a",
		"http://www.example.com/a/b?c=http://d.e/": "/a/b?c=http://d.e/", "http://www.example.com/a/b?c=d&e=f#fragment": "/a/b?c=d&e=f",
		"example.com": "/", "example.com/a/": "/a/", "a": "/", "a/": "/", "/a": "/a", "a/b": "/b", "example.com?a": "/?a",
		"example.com/a;b#c": "/a;b", "//a/b/c": "/b/c", "http://h#x/y": "/",
	} {
		if got := PathOf(in); got != want {
			t.Errorf("PathOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLookupAndVerdictText(t *testing.T) {
	for _, n := range Names() {
		d, err := Lookup(strings.ToUpper(n))
		if err != nil || d.Name() != n {
			t.Errorf("Lookup(%q) = %v, %v", n, d, err)
		}
	}
	if _, err := Lookup("bing"); err == nil || !strings.Contains(err.Error(), "rfc9309") {
		t.Errorf("unknown dialect error = %v", err)
	}
	r := RFC9309.ParseString("User-agent: *\n\nDisallow: /private\n")
	rs := r.For("bot")
	if got := rs.Check("/private/x").String(); got != "line 3: Disallow: /private" {
		t.Errorf("explain = %q", got)
	}
	if got := rs.Check("/public").String(); got != "no matching rule" {
		t.Errorf("explain = %q", got)
	}
	if got := rs.Check("/robots.txt").String(); got != "/robots.txt is always allowed" {
		t.Errorf("explain = %q", got)
	}
	if got := Google.ParseString("User-agent: *\nAllow: /d/index.html\nDisallow: /\n").For("bot").Check("/d/").String(); !strings.Contains(got, "line 2: Allow: /d/index.html (Google") {
		t.Errorf("explain = %q", got)
	}
	if got := CocCoc.ParseString("User-agent: *\nDisallow:\n").For("bot").Check("/x").String(); got != "line 2: Disallow: (empty Disallow: allows everything)" {
		t.Errorf("explain = %q", got)
	}
}

// Pathological wildcards must not backtrack: this finishes at once because
// each '*' is resolved by one forward search.
func TestNoBacktracking(t *testing.T) {
	path := "/" + strings.Repeat("a", 2048)
	for _, d := range All() {
		rs := d.ParseString("User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a*b\n").For("bot")
		want := d == Koster1994 // literal: no match, allowed
		if v := rs.Check(path); v.Allowed != true {
			t.Errorf("%s: %s", d, v)
		}
		if v := rs.Check(path + "b"); v.Allowed != want {
			t.Errorf("%s: with a final b: %s", d, v)
		}
	}
}

// Many wildcard rules indexed by the same three-byte piece, which the path
// repeats, must be tried a bounded number of times per check (once through
// the gram index, once more if lookupWild falls back to going over them in
// order), not once per occurrence of the piece: that would make a check cost
// rules × path length². The count of tries is structural: nothing is timed.
func TestWildcardRulesTriedOncePerCheck(t *testing.T) {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for k := range len(letters) { // more rules than gramIndexMin and maxGramTries
		// "aaa" is each rule's only segment of three bytes: its gram.
		fmt.Fprintf(&b, "Disallow: /*aaa*x%c\n", letters[k])
	}
	rules := len(letters)
	for _, d := range []*Dialect{RFC9309, Google, CocCoc} {
		rs := d.ParseString(b.String()).For("bot")
		for _, n := range []int{100, 1000, 8000} {
			path := "/" + strings.Repeat("a", n)
			var st lookState
			if r := rs.index().lookupState(path, &st); r != noRule {
				t.Fatalf("%s: %d a's: a rule matched", d, n)
			}
			if st.tries > maxGramTries+rules {
				t.Errorf("%s: %d a's: %d wildcard tries for %d rules", d, n, st.tries, rules)
			}
			if v := rs.Check(path + "xc"); v.Allowed || v.Rule == (Rule{}) || v.Rule.Pattern != "/*aaa*xc" {
				t.Errorf("%s: %d a's then xc: %s, want the /*aaa*xc rule", d, n, v)
			}
		}
	}
}

func TestVerdictNamesRuleAsWrittenAndItsGroup(t *testing.T) {
	r := Google.ParseString("user-agent: a\ndisallow: /x\n\nUser-Agent: b\nDissallow: /y\n")
	v := r.For("b").Check("/y/1")
	if v.Allowed || v.Rule.String() != "Dissallow: /y" || v.Rule.Line != 5 || v.Rule.Group != 1 {
		t.Fatalf("verdict %s, rule %+v", v, v.Rule)
	}
	if g := r.Groups()[v.Rule.Group]; g.Agents[0].Value != "b" || g.Agents[0].Line != 4 {
		t.Errorf("group of the deciding rule: %+v", g)
	}
}

func TestLastGoodMaxAge(t *testing.T) {
	for d, want := range map[*Dialect]time.Duration{RFC9309: 30 * 24 * time.Hour, Google: 30 * 24 * time.Hour, CocCoc: 0, Koster1994: 0} {
		if got := d.LastGoodMaxAge(); got != want {
			t.Errorf("%s: %s, want %s", d, got, want)
		}
	}
}

// A Ruleset's first checks go over its rules and a later one builds the
// index; checks from many goroutines on a fresh Ruleset, across that point,
// must all give the verdicts of a Ruleset whose index is built (run with
// -race: the index is published once).
func TestCheckConcurrentFirstUse(t *testing.T) {
	g := generated()[1] // wildcards: both ways of matching are exercised
	urls := g.urls[:4*indexAfter]
	for _, d := range all {
		r := d.Parse(g.body)
		want := r.For(benchAgent)
		want.index()
		rs := r.For(benchAgent)
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range urls {
					u := urls[(i+w*indexAfter/2)%len(urls)]
					if v, wv := rs.Check(u), want.Check(u); !sameVerdict(v, wv) {
						t.Errorf("%s: Check(%q) = %s, with the index %s", d, u, v, wv)
						return
					}
				}
			}()
		}
		wg.Wait()
		if rs.idx.Load() == nil {
			t.Errorf("%s: no index after %d checks", d, 4*len(urls))
		}
	}
}
