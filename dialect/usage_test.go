package dialect

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The vocabulary's processing rules (draft-ietf-aipref-vocab-08), one value
// per case; want is the Dictionary of what is stated ("" = nothing).
func TestParseUsage(t *testing.T) {
	cases := []struct{ value, want string }{
		{"train-ai=n", "train-ai=n"},
		{"train-ai=y, search=n", "train-ai=y, search=n"},
		{"search=n,train-ai=y", "train-ai=y, search=n"},
		{"  train-ai=n  ", "train-ai=n"},
		{"", ""},
		{"train-ai=n, train-ai=y", "train-ai=y"}, // a key given twice: the last value
		{"train-ai=y, train-ai", ""},             // ... a bare key is Boolean true: unknown
		{"train-ai", ""},                         // Boolean
		{"train-ai=?0", ""},                      // Boolean false is no Token
		{`train-ai="n"`, ""},                     // a String is no Token
		{"train-ai=no", ""},                      // another Token
		{"train-ai=N", ""},                       // Tokens are case-sensitive
		{"train-ai=1", ""},                       // an Integer
		{"train-ai=(n)", ""},                     // an Inner List
		{"train-ai=n;reason=x, search=y;q=1", "train-ai=n, search=y"}, // parameters ignored
		{"foo=n, train-ai=n, bar", "train-ai=n"},                      // unknown keys ignored
		{"Train-AI=n", ""},                                            // an uppercase key: no Dictionary, nothing stated
		{"train-ai=n, Search=n", ""},                                  // ... anywhere in the value
		{"train-ai=n,", ""},                                           // a trailing comma: no Dictionary
		{"train-ai=n search=y", ""},                                   // no comma: no Dictionary
		{"ai-input=n", ""},                                            // not a label of the vocabulary
		{"ai-train=n", ""},                                            // Content-Signal's name, not the vocabulary's
		{"train-ai=n, search=y, train-ai=y", "train-ai=y, search=y"},
	}
	for _, c := range cases {
		if got := ParseUsage(c.value).String(); got != c.want {
			t.Errorf("ParseUsage(%q) = %q, want %q", c.value, got, c.want)
		}
	}
}

// Content-Signal's names and values, mapped onto the vocabulary; the
// lenient reading of ParseContentSignal.
func TestParseContentSignal(t *testing.T) {
	cases := []struct{ value, want string }{
		{"search=yes, ai-input=yes, ai-train=no", "train-ai=n, search=y, ai-input=y"},
		{"ai-train=no", "train-ai=n"},
		{"ai-input=no", "ai-input=n"},
		{"search=yes,ai-train=no", "train-ai=n, search=y"},
		{"train-ai=n", ""}, // the vocabulary's name is not a signal
		{"ai-train=n", ""}, // nor its value
		{"ai-train=NO", "train-ai=n"},
		{"AI-Train=no, Search=Yes", "train-ai=n, search=y"}, // keys and values in any case
		{" ai-train = no ,search= yes ", "train-ai=n, search=y"},
		{"ai-train=no;x=1, other=yes", "train-ai=n"}, // parameters and other keys ignored
		{"ai-train=disallow, ai-input=allow, search=allow", "train-ai=n, search=y, ai-input=y"},
		{"ai-train=maybe, search=yes", "search=y"}, // an unknown value: no preference
		{"ai-train=1", ""},
		{`ai-train="no"`, ""},
		{"ai-train", ""},
		{"ai-train=no, ai-train=yes", "train-ai=y"},          // the last value
		{"ai-train=no, ai-train=perhaps", ""},                // ... even an unknown one
		{"human-authored, copyright=x, jurisdiction=EU", ""}, // free text
		{"search=yes,ai-train=no,use=reference", "train-ai=n, search=y, use=reference"},
		{"use=immediate", "use=immediate"},
		{"USE = Full", "use=full"},
		{"use=partial", ""}, // an unknown level: none
		{"use=full, use=unknown", ""},
		{"use=reference;x, ai-train=no,", "train-ai=n, use=reference"},
		{"", ""},
		{",,=,", ""},
	}
	for _, c := range cases {
		if got := ParseContentSignal(c.value).String(); got != c.want {
			t.Errorf("ParseContentSignal(%q) = %q, want %q", c.value, got, c.want)
		}
	}
}

func TestUseLevel(t *testing.T) {
	cases := []struct {
		s    string
		want UseLevel
		ok   bool
	}{
		{"immediate", UseImmediate, true},
		{"reference", UseReference, true},
		{"full", UseFull, true},
		{"Reference", UseReference, true},
		{"unknown", UseUnknown, false},
		{"", UseUnknown, false},
		{"fully", UseUnknown, false},
	}
	for _, c := range cases {
		if got, ok := ParseUseLevel(c.s); got != c.want || ok != c.ok {
			t.Errorf("ParseUseLevel(%q) = %v, %v", c.s, got, ok)
		}
	}
	if !(UseUnknown < UseImmediate && UseImmediate < UseReference && UseReference < UseFull) {
		t.Error("levels out of order")
	}
	combine := []struct{ a, b, want UseLevel }{
		{UseUnknown, UseUnknown, UseUnknown},
		{UseUnknown, UseFull, UseFull}, // unknown is no level, not the lowest
		{UseFull, UseUnknown, UseFull},
		{UseFull, UseReference, UseReference},
		{UseImmediate, UseReference, UseImmediate},
	}
	for _, c := range combine {
		u := Usage(0).With(TrainAI, PrefAllow).WithUse(c.a).Combine(Usage(0).With(Search, PrefDisallow).WithUse(c.b))
		if u.Use() != c.want || u.Pref(TrainAI) != PrefAllow || u.Pref(Search) != PrefDisallow {
			t.Errorf("%v combined with %v: %q, want use %v", c.a, c.b, u, c.want)
		}
	}
	if u := Usage(0).With(AIInput, PrefDisallow).WithUse(UseFull).WithUse(UseImmediate); u.Use() != UseImmediate || u.Pref(AIInput) != PrefDisallow {
		t.Errorf("WithUse: %q", u)
	}
}

// The use level in force for a path, and the line that decided it (0: no
// usage rule applied).
func TestUsageUseLevel(t *testing.T) {
	cases := []struct {
		name, body, agent, path, want string
		line                          int
	}{
		{"Cloudflare's managed block", "User-agent: *\nContent-Signal: search=yes,ai-train=no,use=reference\nAllow: /\n", "bot", "/a", "train-ai=n, search=y, use=reference", 2},
		{"no use= key: unknown, decided by the first rule",
			"User-agent: *\nContent-Signal: search=yes\n", "bot", "/a", "search=y", 2},
		{"the lower level of two lines of the group",
			"User-agent: *\nContent-Signal: use=full\nContent-Signal: use=immediate\nContent-Signal: use=reference\n", "bot", "/a", "use=immediate", 3},
		{"a line without use= does not lift the level",
			"User-agent: *\nContent-Signal: ai-train=yes\nContent-Signal: use=reference\n", "bot", "/a", "train-ai=y, use=reference", 3},
		{"merged * groups (the origin's file after the managed block)",
			"User-agent: *\nContent-Signal: use=reference\nAllow: /\n\nUser-agent: *\nContent-Signal: use=full\n", "bot", "/a", "use=reference", 2},
		{"group scope: the crawler's own group",
			"User-agent: *\nContent-Signal: use=reference\nAllow: /\n\nUser-agent: claudebot\nDisallow: /x\nContent-Signal: use=immediate\n", "claudebot", "/a", "use=immediate", 7},
		{"group scope: another crawler's group does not apply",
			"User-agent: *\nContent-Signal: use=reference\nAllow: /\n\nUser-agent: claudebot\nDisallow: /x\nContent-Signal: use=immediate\n", "bot", "/a", "use=reference", 2},
		{"a Content-Usage rule with a longer path beats the level",
			"User-agent: *\nContent-Signal: use=full\nContent-Usage: /a train-ai=n\n", "bot", "/a/b", "train-ai=n", 3},
		{"Content-Usage with no path combines with the level",
			"User-agent: *\nContent-Usage: train-ai=n\nContent-Signal: use=immediate\n", "bot", "/b", "train-ai=n, use=immediate", 3},
		{"a disallowed path has no level",
			"User-agent: *\nDisallow: /a\nContent-Signal: use=full\n", "bot", "/a", "", 0},
		{"no usage rule", "User-agent: *\nDisallow: /x\n", "bot", "/a", "", 0},
	}
	for _, d := range []*Dialect{RFC9309, Google, CocCoc} {
		for _, c := range cases {
			v := d.ParseString(c.body).For(c.agent).Usage(c.path)
			line := 0
			if r := v.UseRule(); r != nil {
				line = r.Line
			}
			if got := v.Usage.String(); got != c.want || line != c.line {
				t.Errorf("%s: %s: %q decided by line %d, want %q by line %d", d, c.name, got, line, c.want, c.line)
			}
		}
	}
}

func TestUsageCombine(t *testing.T) {
	u := ParseUsage("train-ai=y, search=y")
	o := ParseUsage("train-ai=n")
	if got := u.Combine(o).String(); got != "train-ai=n, search=y" {
		t.Errorf("combine: %q", got)
	}
	if got := o.Combine(u).String(); got != "train-ai=n, search=y" {
		t.Errorf("combine is not symmetric: %q", got)
	}
	if got := Usage(0).Combine(u); got != u {
		t.Errorf("unknown combined with u: %q", got)
	}
	for _, c := range Categories() {
		if got, ok := ParseCategory(c.String()); !ok || got != c {
			t.Errorf("ParseCategory(%q) = %v, %v", c, got, ok)
		}
	}
	if _, ok := ParseCategory("TRAIN-AI"); ok {
		t.Error("labels are case-sensitive")
	}
}

// uc is one usage check: body, crawler token, path; want is the Dictionary
// in force ("" = nothing stated); line is the line that decided train-ai
// (0: no usage rule applied); crawl is whether the path may be fetched.
type uc struct {
	name  string
	body  string
	agent string
	path  string
	crawl bool
	want  string
	line  int
}

// The attach draft's worked example (draft-ietf-aipref-attach-05).
const attachExample = `User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
`

var usageCases = []uc{
	{"draft example: /test", attachExample, "otherbot", "/test", true, "train-ai=n", 4},
	{"draft example: a disallowed path has no preference", attachExample, "otherbot", "/never/test", false, "", 0},
	{"draft example: /ai-ok/ is longer", attachExample, "otherbot", "/ai-ok/test", true, "train-ai=y", 5},
	{"draft example: ExampleBot's own group", attachExample, "ExampleBot", "/never/test", true, "train-ai=y", 9},
	{"draft example: ExampleBot, any path", attachExample, "examplebot", "/ai-ok/x", true, "train-ai=y", 9},

	{"no usage rule", "User-agent: *\nDisallow: /x\n", "bot", "/a", true, "", 0},
	{"a specific group without preferences states nothing",
		"User-agent: *\nContent-Usage: train-ai=n\nAllow: /\n\nUser-agent: bot\nAllow: /\n", "bot", "/a", true, "", 0},
	{"the * group's preferences for another crawler",
		"User-agent: *\nContent-Usage: train-ai=n\nAllow: /\n\nUser-agent: bot\nAllow: /\n", "other", "/a", true, "train-ai=n", 2},
	{"longest match: the longer path wins",
		"User-agent: *\nContent-Usage: /a/b train-ai=y\nContent-Usage: /a train-ai=n\n", "bot", "/a/b/c", true, "train-ai=y", 2},
	{"longest match: a rule without a path counts as /",
		"User-agent: *\nContent-Usage: /a train-ai=y\nContent-Usage: train-ai=n\n", "bot", "/b", true, "train-ai=n", 3},
	{"the longest rule applies whole: what it leaves out is unknown",
		"User-agent: *\nContent-Usage: train-ai=n, search=n\nContent-Usage: /a search=y\n", "bot", "/a", true, "search=y", 3},
	{"identical paths: the most restrictive",
		"User-agent: *\nContent-Usage: /a train-ai=y\nContent-Usage: /a train-ai=n, search=y\n", "bot", "/a", true, "train-ai=n, search=y", 3},
	{"identical paths: no path and / are the same",
		"User-agent: *\nContent-Usage: / train-ai=n\nContent-Usage: train-ai=y, search=y\n", "bot", "/a", true, "train-ai=n, search=y", 2},
	{"equal-length patterns that differ combine too",
		"User-agent: *\nContent-Usage: /a* train-ai=y\nContent-Usage: /ab train-ai=n\n", "bot", "/abc", true, "train-ai=n", 3},
	{"equal-length pattern that does not match is left out",
		"User-agent: *\nContent-Usage: /a train-ai=y\nContent-Usage: /ab train-ai=n\nContent-Usage: /ac search=n\n", "bot", "/abc", true, "train-ai=n", 3},
	{"wildcards and $ as in Allow/Disallow",
		"User-agent: *\nContent-Usage: train-ai=y\nContent-Usage: /*.pdf$ train-ai=n\n", "bot", "/docs/a.pdf", true, "train-ai=n", 3},
	{"wildcards: $ anchors",
		"User-agent: *\nContent-Usage: train-ai=y\nContent-Usage: /*.pdf$ train-ai=n\n", "bot", "/docs/a.pdf?x", true, "train-ai=y", 2},
	{"percent-encoding as in Allow/Disallow",
		"User-agent: *\nContent-Usage: /é train-ai=n\n", "bot", "/%C3%A9/a", true, "train-ai=n", 2},
	{"the label is case-insensitive, spaces around the colon ignored",
		"User-agent: *\n  CONTENT-usage  :  train-ai=n  # comment\n", "bot", "/a", true, "train-ai=n", 2},
	{"a path alone states nothing",
		"User-agent: *\nContent-Usage: /a\n", "bot", "/a", true, "", 2},
	{"a path and a tab", "User-agent: *\nContent-Usage: /a\ttrain-ai=n\n", "bot", "/a", true, "train-ai=n", 2},
	{"a value not starting with / is all preference",
		"User-agent: *\nContent-Usage: *.pdf train-ai=n\n", "bot", "/a.pdf", true, "", 2},
	{"a failed Dictionary states nothing, and still applies",
		"User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /a Train-AI=n\n", "bot", "/a", true, "", 3},
	{"interleaved with Allow and Disallow",
		"User-agent: *\nContent-Usage: train-ai=n\nDisallow: /x\nContent-Usage: /x/y search=n\nAllow: /x/y\n", "bot", "/x/y/z", true, "search=n", 4},
	{"disallowed path: no preference however long the usage rule",
		"User-agent: *\nDisallow: /a\nContent-Usage: /a/b/c train-ai=y\n", "bot", "/a/b/c", false, "", 0},
	{"Content-Signal: every path",
		"User-agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n", "bot", "/any", true, "train-ai=n, search=y", 2},
	{"Content-Signal and Content-Usage without a path combine",
		"User-agent: *\nContent-Signal: ai-train=yes, ai-input=no\nContent-Usage: train-ai=n\n", "bot", "/a", true, "train-ai=n, ai-input=n", 3},
	{"Content-Usage with a path beats Content-Signal",
		"User-agent: *\nContent-Signal: ai-train=no\nContent-Usage: /open train-ai=y\n", "bot", "/open/a", true, "train-ai=y", 3},
	{"usage rules of merged * groups",
		"User-agent: *\nContent-Usage: train-ai=y\nAllow: /\n\nUser-agent: x\nDisallow: /\n\nUser-agent: *\nContent-Usage: train-ai=n\n", "bot", "/a", true, "train-ai=n", 9},
	{"before any User-agent line: ignored",
		"Content-Usage: train-ai=n\nUser-agent: *\nDisallow: /x\n", "bot", "/a", true, "", 0},
}

func TestUsageRFC9309(t *testing.T) { runUsageCases(t, RFC9309, usageCases) }
func TestUsageGoogle(t *testing.T)  { runUsageCases(t, Google, usageCases) }
func TestUsageCocCoc(t *testing.T)  { runUsageCases(t, CocCoc, usageCases) }

func runUsageCases(t *testing.T, d *Dialect, cases []uc) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := d.ParseString(c.body).For(c.agent)
			v := rs.Usage(c.path)
			if v.Crawl.Allowed != c.crawl {
				t.Fatalf("%s: %s crawl allowed=%v (%s), want %v", d, c.path, v.Crawl.Allowed, v.Crawl, c.crawl)
			}
			if got := v.Usage.String(); got != c.want {
				t.Fatalf("%s: usage of %s = %q (%s), want %q\nrobots.txt:\n%s", d, c.path, got, v.Explain(TrainAI), c.want, c.body)
			}
			line := 0
			if r := v.Rule(TrainAI); r != nil {
				line = r.Line
			}
			if line != c.line {
				t.Fatalf("%s: train-ai decided by line %d (%s), want line %d", d, line, v.Explain(TrainAI), c.line)
			}
		})
	}
}

// Which dialect reads usage lines, and where they end a group's user-agent
// lines: in rfc9309 Content-Usage is a rule of the group (attach-05), so a
// User-agent line after it opens a new group; google and coccoc read the
// lines as extensions that leave the groups as their crawlers form them;
// koster1994 reads neither line.
func TestUsageDialects(t *testing.T) {
	body := "User-agent: a\nContent-Usage: train-ai=n\nUser-agent: b\nDisallow: /\n"
	cases := []struct {
		d           *Dialect
		reads       bool
		aDisallowed bool // a shares b's group: Disallow: / binds it
		bUsage      string
	}{
		{RFC9309, true, false, ""},
		{Google, true, true, "train-ai=n"},
		{CocCoc, true, true, "train-ai=n"},
		{Koster1994, false, true, ""},
	}
	for _, c := range cases {
		if c.d.ReadsUsage() != c.reads {
			t.Errorf("%s: ReadsUsage = %v", c.d, !c.reads)
		}
		r := c.d.ParseString(body)
		if v := r.For("a").Check("/x"); v.Allowed == c.aDisallowed {
			t.Errorf("%s: a on /x allowed=%v (%s), want %v", c.d, v.Allowed, v, !c.aDisallowed)
		}
		if got := r.For("b").Usage("/robots.txt").Usage.String(); c.d == RFC9309 && got != "" {
			t.Errorf("%s: b's group has no usage rule, got %q", c.d, got)
		}
		if got := r.For("a").Usage("/x"); got.Crawl.Allowed && got.Usage.String() != c.bUsage && c.d != RFC9309 {
			t.Errorf("%s: a's usage %q, want %q", c.d, got.Usage, c.bUsage)
		}
		if c.d == RFC9309 {
			if got := r.For("a").Usage("/x").Usage.String(); got != "train-ai=n" {
				t.Errorf("rfc9309: a's own group states %q, want train-ai=n", got)
			}
		}
		if !c.reads && len(r.Groups()) > 0 && len(r.Groups()[0].Usage) > 0 {
			t.Errorf("%s read a usage line", c.d)
		}
	}
}

func TestUsageExplain(t *testing.T) {
	rs := RFC9309.ParseString(attachExample).For("bot")
	cases := []struct{ path, want string }{
		{"/test", "line 4: Content-Usage: train-ai=n"},
		{"/ai-ok/x", "line 5: Content-Usage: /ai-ok/ train-ai=y"},
		{"/never/x", "disallowed (line 3: Disallow: /never/)"},
	}
	for _, c := range cases {
		v := rs.Usage(c.path)
		if got := v.Explain(TrainAI); got != c.want {
			t.Errorf("%s: %q, want %q", c.path, got, c.want)
		}
	}
	v := RFC9309.ParseString("User-agent: *\nDisallow: /x\n").For("bot").Usage("/a")
	if got := v.Explain(Search); got != "no usage rule" {
		t.Errorf("%q", got)
	}
}

// The usage lookup allocates nothing for paths up to 512 bytes, in every
// dialect, and leaves Check's allocations (none) as they were.
func TestUsageAllocs(t *testing.T) {
	body := attachExample + "User-agent: *\nContent-Usage: /a*b*c$ search=n\nContent-Usage: /%7Eu search=y\n"
	for _, d := range []*Dialect{RFC9309, Google, CocCoc} {
		rs := d.ParseString(body).For("bot")
		for _, p := range []string{"/test", "/ai-ok/x", "/a/x/b/y/c", "/~u/é/" + strings.Repeat("x", 300)} {
			if n := testing.AllocsPerRun(50, func() { _ = rs.Usage(p) }); n != 0 {
				t.Errorf("%s: Usage(%.20s...) allocates %v", d, p, n)
			}
		}
	}
}

// The index agrees with a plain reading of the draft on every rule of the
// case list and every path it names.
func TestUsageAgainstReference(t *testing.T) {
	for _, d := range []*Dialect{RFC9309, Google, CocCoc} {
		for _, c := range usageCases {
			rs := d.ParseString(c.body).For(c.agent)
			for _, p := range []string{c.path, "/", "/a", "/ab", "/a/b", "/x/y", "/never/", "/open/x", "/docs/a.pdf"} {
				checkUsageReference(t, d, rs, p)
			}
		}
	}
}

// checkUsageReference compares rs.Usage(p) with a brute-force reading:
// every rule's pattern tried on its own by the reference matcher of
// reference_test.go, the longest kept, ties combined.
func checkUsageReference(t *testing.T, d *Dialect, rs *Ruleset, p string) {
	t.Helper()
	v := rs.Usage(p)
	if !v.Crawl.Allowed {
		if v.Usage != 0 || v.Rule(TrainAI) != nil {
			t.Errorf("%s %q: a disallowed path states %q", d, p, v.Usage)
		}
		return
	}
	np := p
	if np == "" {
		np = "/"
	}
	if d.s.encoding == encRFC3986 {
		np = refRFC3986(np, true)
	}
	best, want := -1, Usage(0)
	for _, r := range rs.UsageRules() {
		if !refMatch(r.norm, np, d.s.wildcards) {
			continue
		}
		switch {
		case len(r.norm) > best:
			best, want = len(r.norm), r.Usage
		case len(r.norm) == best:
			want = want.Combine(r.Usage)
		}
	}
	if v.Usage != want || (best < 0) != (v.Rule(TrainAI) == nil) {
		t.Errorf("%s %q: Usage %q (rule %v), reference %q (matched: %v)", d, p, v.Usage, v.Rule(TrainAI), want, best >= 0)
	}
}

// FuzzUsage parses any bytes in every dialect that reads usage lines and
// asks for the usage of a path: no panic, no preference on a disallowed
// path, and the index agrees with the brute-force reading; any value given
// to ParseUsage and ParseContentSignal states only known categories.
func FuzzUsage(f *testing.F) {
	f.Add([]byte(attachExample), "otherbot", "/ai-ok/x", "train-ai=n, search=y")
	f.Add([]byte("User-agent: *\nContent-Signal: search=yes, ai-input=yes, ai-train=no\nAllow: /\n"), "bot", "/a", `train-ai="n";p=1`)
	f.Add([]byte("User-agent: *\nContent-Usage: /a* train-ai=y\nContent-Usage: /ab train-ai=n\nContent-Usage: /*b$ search=n\n"), "bot", "/ab", "train-ai=(y n)")
	f.Add([]byte("User-agent: *\nContent-Usage: /%7e%zz\ttrain-ai=y, train-ai\nDisallow: /%7E\n"), "bot", "/~", "Train-AI=n")
	f.Add([]byte("License: https://a.example/l.xml\nUser-agent: *\nContent-Signal: search=yes,ai-train=no,use=reference\nAllow: /\n\nUser-agent: bot\nLicense: /b.xml\nContent-signal: use = Immediate\n"), "bot", "/a", "AI-Train = disallow, use=full;x")
	f.Fuzz(func(t *testing.T, body []byte, agent, path, value string) {
		for _, d := range []*Dialect{RFC9309, Google, CocCoc} {
			rs := d.Parse(body).For(strings.Split(agent, ",")...)
			checkUsageReference(t, d, rs, path)
			v := rs.Usage(path)
			for _, c := range Categories() {
				_ = v.Explain(c)
			}
			if (v.UseRule() == nil) != (v.Rule(TrainAI) == nil) || v.Usage.Use() != UseUnknown && v.UseRule().Usage.Use() != v.Usage.Use() {
				t.Fatalf("%s: use %v decided by %v", d, v.Usage.Use(), v.UseRule())
			}
			for _, l := range rs.Licenses() {
				if l.URL == "" || !strings.Contains(string(body), l.URL) {
					t.Fatalf("%s: license %+v not in the body", d, l)
				}
			}
		}
		for _, u := range []Usage{ParseUsage(value), ParseContentSignal(value)} {
			if u.Use() > UseFull {
				t.Fatalf("%q states an unknown level: %08b", value, u)
			}
			for _, c := range Categories() {
				if u.Pref(c) > PrefDisallow {
					t.Fatalf("%q: %s = %d", value, c, u.Pref(c))
				}
			}
		}
		if u := ParseUsage(value); u.Pref(AIInput) != PrefUnknown || u.Use() != UseUnknown {
			t.Fatalf("%q: Content-Usage states ai-input", value)
		}
	})
}

// License lines that apply to a crawler (RSL 1.0 with its errata): its
// groups' lines, else the global ones; want lists "line URL".
func TestLicenses(t *testing.T) {
	const rsl = "User-agent: ExampleBot\nLicense: https://example.com/examplebot-license.xml\nAllow: /\n\n" +
		"User-agent: *\nLicense: https://example.com/default-license.xml\nDisallow: /private/\n"
	cases := []struct {
		name, body, agent string
		want              []string
	}{
		{"the RSL example: the crawler's own group", rsl, "ExampleBot", []string{"2 https://example.com/examplebot-license.xml"}},
		{"the RSL example: the * group", rsl, "otherbot", []string{"6 https://example.com/default-license.xml"}},
		{"global lines, the group has none",
			"License: https://a.example/l.xml\nlicense:  https://b.example/l.xml \nUser-agent: *\nDisallow: /x\n", "bot",
			[]string{"1 https://a.example/l.xml", "2 https://b.example/l.xml"}},
		{"the group's lines replace the global ones",
			"License: https://a.example/global.xml\nUser-agent: *\nLICENSE: https://a.example/group.xml\n", "bot", []string{"3 https://a.example/group.xml"}},
		{"no group for the crawler: the global lines",
			"License: https://a.example/global.xml\nUser-agent: other\nLicense: https://a.example/other.xml\n", "bot", []string{"1 https://a.example/global.xml"}},
		{"merged groups, in file order",
			"User-agent: *\nLicense: /one.xml\nAllow: /\nUser-agent: x\nDisallow: /\nUser-agent: *\nLicense: /two.xml\n", "bot",
			[]string{"2 /one.xml", "7 /two.xml"}},
		{"after a blank line and a Sitemap: still the group's line",
			"User-agent: x\nDisallow: /\n\nSitemap: https://a.example/s.xml\nLicense: https://a.example/x.xml\n", "x", []string{"5 https://a.example/x.xml"}},
		{"... so not a global line for another crawler",
			"User-agent: x\nDisallow: /\n\nSitemap: https://a.example/s.xml\nLicense: https://a.example/x.xml\n", "bot", nil},
		{"between user-agent lines: it does not end the list",
			"User-agent: a\nLicense: https://a.example/l.xml\nUser-agent: b\nDisallow: /\n", "b", []string{"2 https://a.example/l.xml"}},
		{"an empty value is no line", "License:\nUser-agent: *\nLicense: \n", "bot", nil},
		{"none", "User-agent: *\nDisallow: /\n", "bot", nil},
	}
	for _, d := range []*Dialect{RFC9309, Google, CocCoc} {
		for _, c := range cases {
			var got []string
			for _, l := range d.ParseString(c.body).For(c.agent).Licenses() {
				got = append(got, strconv.Itoa(l.Line)+" "+l.URL)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%s: %s: %q, want %q", d, c.name, got, c.want)
			}
		}
	}
	if got := Koster1994.ParseString(rsl).For("ExampleBot").Licenses(); got != nil {
		t.Errorf("koster1994 read License lines: %v", got)
	}
}

// A License line is no rule: like Sitemap and unknown keys it never ends a
// group's user-agent lines, so a and b share one group in every dialect.
func TestLicenseKeepsAgents(t *testing.T) {
	for _, body := range []string{
		"User-agent: a\nLicense: https://x.example/l.xml\nUser-agent: b\nDisallow: /\n",
		"User-agent: a\nSitemap: https://x.example/s.xml\nUser-agent: b\nDisallow: /\n",
		"User-agent: a\nFoo: bar\nUser-agent: b\nDisallow: /\n",
	} {
		for _, d := range []*Dialect{RFC9309, Google, CocCoc, Koster1994} {
			if v := d.ParseString(body).For("a").Check("/x"); v.Allowed || v.Rule.Line != 4 {
				t.Errorf("%s: %q: a on /x: %s, want line 4's Disallow", d, body, v)
			}
		}
	}
}
