package dialect

// Group lines: the keys a dialect reads, user-agent tokens and how
// Crawl-delay attaches to its group.

import (
	"testing"
	"time"
)

func TestGoogleKeys(t *testing.T) {
	runCases(t, Google, []tc{
		{body: "useragent: bot\ndisallow: /a\n", agents: "bot", url: "/a", allow: false},
		{body: "user agent: bot\ndisallow: /a\n", agents: "bot", url: "/a", allow: false},
		{body: "user-agent: bot\nDisallowed: /a\n", agents: "bot", url: "/a", allow: false},
		{body: "user-agent: bot\ndisalow: /a\n", agents: "bot", url: "/a", allow: false},
		{body: "user-agent: bot\ndiasllow: /a\n", agents: "bot", url: "/a", allow: false},
		{body: "user-agent: bot\ndisallaw: /a\n", agents: "bot", url: "/a", allow: false},
		{body: "user-agent: bot\ndissalow: /a\n", agents: "bot", url: "/a", allow: false},
		{body: "user-agent bot\ndisallow /a\n", agents: "bot", url: "/a", allow: false},
		{body: "user-agent bot\ndisallow /a b\n", agents: "bot", url: "/a", allow: true},
		// Without a colon, the second word starts after spaces and tabs
		// alone: a vertical tab or form feed there makes a third word, and
		// the line is ignored; one that starts the value is trimmed.
		{body: "user-agent: bot\ndisallow \v /a\n", agents: "bot", url: "/a", allow: true, line: -1},
		{body: "user-agent: bot\ndisallow \f\t/a\n", agents: "bot", url: "/a", allow: true, line: -1},
		{body: "user-agent: bot\ndisallow \v/a\n", agents: "bot", url: "/a", allow: false, line: 2},
		// "*" followed by more text is still the global group.
		{body: "user-agent: * foo\ndisallow: /a\n", agents: "bot", url: "/a", allow: false},
		// The product token of the value is compared: googlebot/1.2 is googlebot.
		{body: "user-agent: Googlebot/1.2\ndisallow: /a\n", agents: "googlebot", url: "/a", allow: false},
		{body: "user-agent: Googlebot*\ndisallow: /a\n", agents: "googlebot", url: "/a", allow: false},
		// Crawl-delay, sitemap and unknown lines do not end a group.
		{body: "user-agent: a\ncrawl-delay: 5\nuser-agent: bot\ndisallow: /a\n", agents: "a", url: "/a", allow: false},
		{body: "user-agent: a\nfoo: bar\nuser-agent: bot\ndisallow: /a\n", agents: "a", url: "/a", allow: false},
		{body: "user-agent: a\nsitemap: https://h/s.xml\nuser-agent: bot\ndisallow: /a\n", agents: "a", url: "/a", allow: false},
		// A NUL byte ends the line's content, as in Google's parser.
		{body: "user-agent: bot\ndisallow: /a\x00junk\n", agents: "bot", url: "/ab", allow: false},
		// Escaping: non-ASCII in the rule is percent-encoded, URL taken as given.
		{body: "user-agent: bot\ndisallow: /\u00e1\n", agents: "bot", url: "/%C3%A1", allow: false},
		{body: "user-agent: bot\ndisallow: /%aa\n", agents: "bot", url: "/%AA", allow: false},
		{body: "user-agent: bot\ndisallow: /%62\n", agents: "bot", url: "/b", allow: true},
	})
	for _, c := range []struct{ in, want string }{
		{"http://www.example.com", "http://www.example.com"}, {"/a/b/c", "/a/b/c"}, {"\u00e1", "%C3%A1"}, {"%aa", "%AA"}, {"%a", "%a"},
	} {
		if got := googleEscape(c.in); got != c.want {
			t.Errorf("googleEscape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	r := Google.ParseString("user-agent: bot\ncrawl-delay: 5\n")
	if _, ok := r.For("bot").CrawlDelay(); ok {
		t.Errorf("google reads no crawl-delay")
	}
}

func TestCrawlDelayRFC9309(t *testing.T) {
	cases := []struct {
		body string
		want time.Duration
		ok   bool
	}{
		{"User-agent: bot\nCrawl-delay: 0.2\n", 200 * time.Millisecond, true},
		{"User-agent: bot\nCrawl-delay: 3.16\n", 3160 * time.Millisecond, true},
		{"User-agent: bot\nCrawl-delay: 0\n", 0, true},
		{"User-agent: bot\nCrawl-delay: -1\n", 0, false},
		{"User-agent: bot\nCrawl-delay: NaN\n", 0, false},
		{"User-agent: bot\nCrawl-delay: 1s\n", 0, false},
		{"User-agent: bot\nCrawl-delay: 1e300\n", maxCrawlDelay, true},
		{"User-agent: bot\nCrawl-delay: x\nCrawl-delay: 4\nCrawl-delay: 9\n", 4 * time.Second, true},
		{"User-agent: other\nCrawl-delay: 4\n", 0, false},
		{"User-agent: *\nCrawl-delay: 7\n", 7 * time.Second, true},
		{"Crawl-delay: 7\nUser-agent: bot\n", 7 * time.Second, true},
		// A Crawl-delay belongs to the user-agent lines above it in its
		// group: "a" and "bot" share one group, each keeps its own delay.
		{"User-agent: a\nCrawl-delay: 5\nUser-agent: bot\nCrawl-delay: 6\n", 6 * time.Second, true},
	}
	for _, c := range cases {
		got, ok := RFC9309.ParseString(c.body).For("bot").CrawlDelay()
		if got != c.want || ok != c.ok {
			t.Errorf("%q: crawl-delay %v %v, want %v %v", c.body, got, ok, c.want, c.ok)
		}
	}
	for _, d := range []*Dialect{Google, Koster1994} {
		if _, ok := d.ParseString("User-agent: bot\nCrawl-delay: 5\n").For("bot").CrawlDelay(); ok {
			t.Errorf("%s reads no crawl-delay", d)
		}
	}
}

// A Crawl-delay line, valid or not, does not end a group's user-agent lines
// (RFC 9309 §2.2.4: other records must not interfere with the groups; Google:
// only user-agent, allow and disallow lines count); the user-agent lines on
// both sides of it share the rules that follow.
func TestCrawlDelayDoesNotEndAgents(t *testing.T) {
	for _, d := range []*Dialect{RFC9309, CocCoc, Google} {
		runCases(t, d, []tc{
			{body: "User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow: /\n", agents: "a", url: "/x", allow: false, line: 4},
			{body: "User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow: /\n", agents: "b", url: "/x", allow: false, line: 4},
			{body: "User-agent: a\nCrawl-delay: x\nUser-agent: b\nDisallow: /\n", agents: "a", url: "/x", allow: false, line: 4},
			{body: "User-agent: a\nCrawl-delay: -1\nUser-agent: b\nDisallow: /\n", agents: "a", url: "/x", allow: false, line: 4},
			{body: "User-agent: a\nDisallow: /p\nCrawl-delay: 5\nUser-agent: b\nDisallow: /\n", agents: "a", url: "/x", allow: true, line: -1},
			{body: "User-agent: a\nCrawl-delay: 5\nSitemap: https://h/s.xml\nUser-agent: b\nDisallow: /\n", agents: "a", url: "/x", allow: false, line: 5},
		})
	}
}

// In the dialects that read Crawl-delay, a Crawl-delay applies to the
// user-agent lines above it in its group that have none yet (crawler-commons'
// and texting_robots' reading); the crawler obeys the first in file order of
// those of the user-agent lines that selected its groups.
func TestCrawlDelayPerUserAgent(t *testing.T) {
	cascade := "User-Agent: A\nCrawl-Delay: 4\nUser-Agent: B\nUser-Agent: C\nCrawl-Delay: 6\nUser-Agent: D\n" +
		"Crawl-Delay: -1.25\nUser-Agent: E\nCrawl-Delay: 8\nUser-Agent: *\nCRAWL-Delay : 9\nUser-Agent: Zero\nCrawl-Delay: 0\n"
	merged := "User-agent: mybot\nCrawl-delay: 7\nUser-agent: yourbot\nDisallow: /private/\n\nUser-agent: *\nAllow: /\n\n" +
		"User-agent: yourbot\nDisallow: /login/\n\nUser-agent: *\nCrawl-delay: 3\n"
	cases := []struct {
		body, agent string
		want        time.Duration
		line        int // 0: no delay
	}{
		{cascade, "A", 4 * time.Second, 2},
		{cascade, "B", 6 * time.Second, 5},
		{cascade, "C", 6 * time.Second, 5},
		{cascade, "D", 8 * time.Second, 9}, // -1.25 is no delay: D waits for the next
		{cascade, "E", 8 * time.Second, 9},
		{cascade, "other", 9 * time.Second, 11},
		{cascade, "Zero", 0, 13},
		{merged, "mybot", 7 * time.Second, 2},
		{merged, "yourbot", 0, 0},
		{merged, "other", 3 * time.Second, 13},
		// The "*" line shares the group, but the delay is written for bot.
		{"User-agent: bot\nCrawl-delay: 2\nUser-agent: *\nDisallow: /x\n", "other", 0, 0},
		{"User-agent: *\nCrawl-delay: 2\nUser-agent: bot\nDisallow: /x\n", "bot", 0, 0},
		// Several of the crawler's lines: the first Crawl-delay in file order.
		{"User-agent: bot\nCrawl-delay: 2\n\nUser-agent: bot\nCrawl-delay: 1\n", "bot", 2 * time.Second, 2},
	}
	for _, d := range []*Dialect{RFC9309, CocCoc} {
		for _, c := range cases {
			rs := d.ParseString(c.body).For(c.agent)
			got, ok := rs.CrawlDelay()
			if got != c.want || ok != (c.line != 0) || rs.CrawlDelayLine() != c.line {
				t.Errorf("%s: %s in %q: crawl-delay %v %v line %d, want %v line %d", d, c.agent, c.body, got, ok, rs.CrawlDelayLine(), c.want, c.line)
			}
		}
	}
}

// Product tokens with digits: rfc9309 and coccoc compare the leading run of
// [A-Za-z0-9_-] of the user-agent value and of the crawler's token; google
// keeps Google's parser (the value's leading [A-Za-z_-] run, the crawler's
// token whole); koster1994 compares names whole.
func TestAgentTokensWithDigits(t *testing.T) {
	mj := "User-agent: *\nDisallow: /star\n\nUser-agent: MJ12bot\nDisallow: /mj\n"
	gb := "User-agent: *\nDisallow: /star\n\nUser-agent: Googlebot/2.1\nDisallow: /g\n"
	for _, d := range []*Dialect{RFC9309, CocCoc} {
		runCases(t, d, []tc{
			{body: mj, agents: "MJ12bot", url: "/mj", allow: false, line: 5},
			{body: mj, agents: "mj12BOT", url: "/mj", allow: false, line: 5},
			{body: mj, agents: "MJ12bot", url: "/star", allow: true, line: -1},
			{body: mj, agents: "MJ", url: "/star", allow: false, line: 2},
			{body: mj, agents: "MJ12bot/1.4.8", url: "/mj", allow: false, line: 5},
			{body: gb, agents: "Googlebot", url: "/g", allow: false, line: 5},
			{body: gb, agents: "Googlebot/2.1", url: "/g", allow: false, line: 5},
			{body: gb, agents: "Googlebot 2.1", url: "/g", allow: false, line: 5},
		})
	}
	runCases(t, CocCoc, []tc{
		// The longest matching value wins, digits included.
		{body: "User-agent: bot\nDisallow: /a\n\nUser-agent: bot2\nDisallow: /b\n", agents: "bot2-web", url: "/b", allow: false, line: 5},
		{body: "User-agent: bot\nDisallow: /a\n\nUser-agent: bot2\nDisallow: /b\n", agents: "bot2-web", url: "/a", allow: true, line: -1},
	})
	runCases(t, Google, []tc{
		{body: mj, agents: "MJ", url: "/mj", allow: false, line: 5},
		{body: mj, agents: "MJ12bot", url: "/star", allow: false, line: 2},
		{body: gb, agents: "Googlebot", url: "/g", allow: false, line: 5},
		{body: gb, agents: "Googlebot/2.1", url: "/star", allow: false, line: 2},
	})
	runCases(t, Koster1994, []tc{
		{body: mj, agents: "mj12bot", url: "/mj", allow: false, line: 5},
		{body: mj, agents: "MJ", url: "/star", allow: false, line: 2},
		{body: gb, agents: "googlebot/2.1", url: "/g", allow: false, line: 5},
		{body: gb, agents: "Googlebot", url: "/star", allow: false, line: 2},
	})
}

func TestAgentToken(t *testing.T) {
	type want struct {
		compared string
		whole    bool
	}
	cases := []struct {
		token                       string
		rfc, google, coccoc, koster want
	}{
		{"examplebot", want{"examplebot", true}, want{"examplebot", true}, want{"examplebot", true}, want{"examplebot", true}},
		{"Foo_Bar-baz", want{"Foo_Bar-baz", true}, want{"Foo_Bar-baz", true}, want{"Foo_Bar-baz", true}, want{"Foo_Bar-baz", true}},
		{"MJ12bot", want{"MJ12bot", true}, want{"", false}, want{"MJ12bot", true}, want{"MJ12bot", true}},
		{"Googlebot/2.1", want{"Googlebot", false}, want{"", false}, want{"Googlebot", false}, want{"Googlebot/2.1", true}},
		{"Foo Bar", want{"Foo", false}, want{"", false}, want{"Foo", false}, want{"", false}},
		{" examplebot ", want{"examplebot", false}, want{"examplebot", false}, want{"examplebot", false}, want{"examplebot", false}},
		{"/bot", want{"", false}, want{"", false}, want{"", false}, want{"/bot", true}},
		{"*", want{"", false}, want{"", false}, want{"", false}, want{"", false}},
		{"", want{"", false}, want{"", false}, want{"", false}, want{"", false}},
		{"\u00e9bot", want{"", false}, want{"", false}, want{"", false}, want{"\u00e9bot", true}},
	}
	for _, c := range cases {
		for _, d := range []struct {
			d *Dialect
			w want
		}{{RFC9309, c.rfc}, {Google, c.google}, {CocCoc, c.coccoc}, {Koster1994, c.koster}} {
			got, whole := d.d.AgentToken(c.token)
			if got != d.w.compared || whole != d.w.whole {
				t.Errorf("%s.AgentToken(%q) = %q, %v; want %q, %v", d.d, c.token, got, whole, d.w.compared, d.w.whole)
			}
		}
	}
}

// For(token) selects what For(compared) selects, compared being what
// AgentToken says the dialect compares.
func TestForComparesAgentToken(t *testing.T) {
	body := "User-agent: *\nDisallow: /star\n\nUser-agent: MJ12bot\nUser-agent: Googlebot/2.1\nUser-agent: Foo Bar\nUser-agent: /x\nDisallow: /own\n"
	for _, d := range All() {
		r := d.ParseString(body)
		for _, tok := range []string{"MJ12bot", "MJ", "Googlebot", "Googlebot/2.1", "Foo", "Foo Bar", "Bar", "/x", "*", " MJ12bot "} {
			compared, _ := d.AgentToken(tok)
			a, b := r.For(tok), r.For(compared)
			if a.Token() == "" != (b.Token() == "") || a.Check("/own").Allowed != b.Check("/own").Allowed || a.Check("/star").Allowed != b.Check("/star").Allowed {
				t.Errorf("%s: For(%q) and For(%q) differ", d, tok, compared)
			}
		}
	}
}

// A valid Crawl-delay before the first User-agent line applies to every
// crawler whose user-agent lines give it none, also when no group applies
// (rfc9309 and coccoc; google and koster1994 read no Crawl-delay).
func TestCrawlDelayBeforeAnyGroup(t *testing.T) {
	friend := "Crawl-delay: 4\nUser-agent: *\nDisallow: /blah\nUser-agent: friend\nAllow: /\nCrawl-delay: 1\n"
	cases := []struct {
		body, agent string
		want        time.Duration
		line        int // 0: no delay
	}{
		{friend, "other", 4 * time.Second, 1},
		{friend, "friend", 1 * time.Second, 6},
		{"Disallow: /path\nAllow: /path/exception\nCrawl-delay: 7\n", "bot", 7 * time.Second, 3},
		{"Crawl-delay: x\nCrawl-delay: 3\nCrawl-delay: 5\nUser-agent: a\nDisallow: /\n", "other", 3 * time.Second, 2},
		{"Crawl-delay: 4\n\nUser-agent: a\nDisallow: /\n", "a", 4 * time.Second, 1},
		{"Crawl-delay: 4\n\nUser-agent: a\nCrawl-delay: 0\n", "a", 0, 4},
		// After the first User-agent line a Crawl-delay is a group's.
		{"User-agent: a\nDisallow: /\n\nCrawl-delay: 4\n", "other", 0, 0},
	}
	for _, d := range []*Dialect{RFC9309, CocCoc} {
		for _, c := range cases {
			r := d.ParseString(c.body)
			rs := r.For(c.agent)
			got, ok := rs.CrawlDelay()
			if got != c.want || ok != (c.line != 0) || rs.CrawlDelayLine() != c.line {
				t.Errorf("%s: %s in %q: crawl-delay %v %v line %d, want %v line %d", d, c.agent, c.body, got, ok, rs.CrawlDelayLine(), c.want, c.line)
			}
		}
		if w := d.ParseString(friend).Warnings(); len(w) != 0 {
			t.Errorf("%s: a Crawl-delay before any group is used, not warned about: %v", d, w)
		}
	}
	for _, d := range []*Dialect{Google, Koster1994} {
		if _, ok := d.ParseString(friend).For("other").CrawlDelay(); ok {
			t.Errorf("%s reads no crawl-delay", d)
		}
	}
}
