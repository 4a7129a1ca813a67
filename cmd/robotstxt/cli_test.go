package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeRobots(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const cliRobots = "User-agent: *\nDisallow: /private\nAllow: /private/press\nCrawl-delay: 2\n\nUser-agent: newsbot\nDisallow: /drafts\n\nSitemap: https://example.com/s1.xml\nSitemap: https://example.com/s2.xml\n"

func TestCheckArgsAndExitCodes(t *testing.T) {
	p := writeRobots(t, cliRobots)
	var out bytes.Buffer
	code, err := run([]string{"check", "-agent", "examplebot", "-explain", p, "https://example.com/private/x", "https://example.com/private/press/1", "/other"}, nil, &out, io.Discard)
	if err != nil || code != 1 {
		t.Fatalf("code %d err %v", code, err)
	}
	want := "disallowed\thttps://example.com/private/x\tline 2: Disallow: /private\n" +
		"allowed\thttps://example.com/private/press/1\tline 3: Allow: /private/press\n" +
		"allowed\t/other\tno matching rule\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	code, err = run([]string{"check", "-agent", "examplebot", p, "/a", "/b"}, nil, &out, io.Discard)
	if err != nil || code != 0 || out.String() != "allowed\t/a\nallowed\t/b\n" {
		t.Errorf("all allowed: code %d err %v out %q", code, err, out.String())
	}
}

func TestCheckStdinAndDialects(t *testing.T) {
	p := writeRobots(t, cliRobots)
	in := "/drafts/1\r\n\n/private\n"
	var out bytes.Buffer
	code, err := run([]string{"check", "-dialect", "koster1994", "-agent", "newsbot-x,newsbot", p}, strings.NewReader(in), &out, io.Discard)
	if err != nil || code != 1 {
		t.Fatalf("code %d err %v", code, err)
	}
	if out.String() != "disallowed\t/drafts/1\nallowed\t/private\n" {
		t.Errorf("output %q", out.String())
	}
}

func TestUsageErrors(t *testing.T) {
	p := writeRobots(t, cliRobots)
	for _, args := range [][]string{
		nil,
		{"frobnicate"},
		{"check", "-dialect", "bing", "-agent", "a", p},
		{"check", "-agent", "a"},
		{"check", "-agent", "a", filepath.Join(t.TempDir(), "missing.txt"), "/x"},
		{"inspect", "-agent", "a", p, "/x"},
		{"check", "-nosuchflag", p},
	} {
		var out, stderr bytes.Buffer
		code := runMain(args, strings.NewReader(""), &out, &stderr)
		msg := stderr.String()
		if code != 2 || strings.Count(msg, "\n") != 1 || !strings.HasSuffix(msg, "\n") || !strings.HasPrefix(msg, "robotstxt: ") {
			t.Errorf("%q: exit %d, stderr %q: want 2 and one line", args, code, msg)
		}
		if out.Len() != 0 {
			t.Errorf("%q: stdout %q", args, out.String())
		}
	}
}

func TestInspectJSON(t *testing.T) {
	p := writeRobots(t, cliRobots+"Bogus line\n")
	var out bytes.Buffer
	code, err := run([]string{"inspect", "-agent", "examplebot", p}, nil, &out, io.Discard)
	if err != nil || code != 0 {
		t.Fatalf("code %d err %v", code, err)
	}
	var got struct {
		Dialect    string   `json:"dialect"`
		AgentGroup []string `json:"agent_group"`
		CrawlDelay *float64 `json:"crawl_delay_seconds"`
		Sitemaps   []string `json:"sitemaps"`
		Rules      []struct {
			Line int    `json:"line"`
			Rule string `json:"rule"`
		} `json:"rules"`
		Warnings []struct {
			Line    int    `json:"line"`
			Message string `json:"message"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got.Dialect != "rfc9309" || strings.Join(got.AgentGroup, ",") != "*" || got.CrawlDelay == nil || *got.CrawlDelay != 2 ||
		strings.Join(got.Sitemaps, " ") != "https://example.com/s1.xml https://example.com/s2.xml" ||
		len(got.Rules) != 2 || got.Rules[0].Line != 2 || got.Rules[1].Rule != "Allow: /private/press" ||
		len(got.Warnings) != 1 || got.Warnings[0].Line != 11 {
		t.Errorf("inspect = %+v", got)
	}
	out.Reset()
	if _, err := run([]string{"inspect", "-dialect", "google", "-agent", "nobot", writeRobots(t, "User-agent: other\nDisallow: /\n")}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"agent_group": []`) || !strings.Contains(out.String(), `"crawl_delay_seconds": null`) {
		t.Errorf("no group / no delay must be [] and null:\n%s", out.String())
	}
}

// An -agent token the dialect does not compare whole gets one warning line on
// stderr; stdout and the exit status are what they are without it.
func TestAgentTokenWarnings(t *testing.T) {
	p := writeRobots(t, "User-agent: *\nDisallow: /private\n\nUser-agent: MJ12bot\nDisallow: /mj\n")
	cases := []struct {
		dialect, agents string
		code            int
		stdout          string
		warnings        []string // one line each, in token order
	}{
		{"rfc9309", "MJ12bot", 1, "disallowed\t/mj\nallowed\t/private\n", nil},
		{"rfc9309", "MJ12bot/1.4.8,examplebot", 1, "disallowed\t/mj\nallowed\t/private\n",
			[]string{`robotstxt: warning: -agent "MJ12bot/1.4.8": read as a User-Agent; using its product token "MJ12bot"`}},
		{"google", "MJ12bot,Foo/1.0", 1, "allowed\t/mj\ndisallowed\t/private\n", []string{
			`robotstxt: warning: -agent "MJ12bot": the google dialect matches it to no user-agent line`,
			`robotstxt: warning: -agent "Foo/1.0": read as a User-Agent; using its product token "Foo"`}},
		{"rfc9309", "MJ12 bot", 1, "allowed\t/mj\ndisallowed\t/private\n",
			[]string{`robotstxt: warning: -agent "MJ12 bot": the rfc9309 dialect compares only "MJ12"`}},
		{"koster1994", "mj12bot", 1, "disallowed\t/mj\nallowed\t/private\n", nil},
	}
	for _, c := range cases {
		for _, cmd := range []string{"check", "inspect"} {
			args := []string{cmd, "-dialect", c.dialect, "-agent", c.agents, p}
			if cmd == "check" {
				args = append(args, "/mj", "/private")
			}
			var out, stderr bytes.Buffer
			code := runMain(args, strings.NewReader(""), &out, &stderr)
			var lines []string
			if s := stderr.String(); s != "" {
				lines = strings.Split(strings.TrimSuffix(s, "\n"), "\n")
			}
			if strings.Join(lines, "\n") != strings.Join(c.warnings, "\n") {
				t.Errorf("%s %s -agent %s: stderr %q, want %q", cmd, c.dialect, c.agents, stderr.String(), c.warnings)
			}
			if cmd == "check" && (code != c.code || out.String() != c.stdout) {
				t.Errorf("check %s -agent %s: exit %d stdout %q, want %d %q", c.dialect, c.agents, code, out.String(), c.code, c.stdout)
			}
			if cmd == "inspect" && (code != 0 || !json.Valid(out.Bytes())) {
				t.Errorf("inspect %s -agent %s: exit %d stdout %q", c.dialect, c.agents, code, out.String())
			}
		}
	}
}

// A file longer than the dialect reads, or not text at all, is still
// checked, but stderr says so: the rules past the limit are ignored, as a
// crawler ignores them.
func TestCheckWarnsOfCutAndBinaryFiles(t *testing.T) {
	long := writeRobots(t, "User-agent: *\nDisallow: /a\n"+strings.Repeat("# padding\n", 60_000)+"Disallow: /late\n")
	r := runCLI(t, "", "check", long, "/late")
	if r.code != 0 || r.stdout != "allowed\t/late\n" || !strings.Contains(r.stderr, "longer than the rfc9309 dialect reads") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("a 600 KB file: exit %d, stdout %q, stderr %q; want the late rule ignored, and said once", r.code, r.stdout, r.stderr)
	}
	bin := writeRobots(t, "\x00\x01\x02PK\x03\x04binary\xff\xfe")
	r = runCLI(t, "", "check", bin, "/x")
	if r.code != 0 || r.stdout != "allowed\t/x\n" || !strings.Contains(r.stderr, "not a text file") {
		t.Errorf("a binary file: exit %d, stdout %q, stderr %q; want a warning", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", "check", writeRobots(t, cliRobots), "/x"); r.stderr != "" {
		t.Errorf("a plain file: stderr %q, want nothing", r.stderr)
	}
}

// draftExample is the worked example of draft-ietf-aipref-attach-05's
// robots.txt section.
const draftExample = "User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n\nUser-Agent: ExampleBot\nAllow: /\nContent-Usage: train-ai=y\n"

// check -usage: one field per category asked, in that order, after URL and
// before the -explain field; the exit status is the crawl verdicts'.
func TestCheckUsage(t *testing.T) {
	cases := []struct {
		name   string
		body   string   // robots.txt
		args   []string // after "check FILE"
		stdin  string
		code   int
		stdout string
	}{
		// The draft's example: any crawler but ExampleBot.
		{"draft, *", draftExample, []string{"-usage", "train-ai", "/test", "/never/test", "/ai-ok/test"}, "", 1,
			"allowed\t/test\ttrain-ai=n\ndisallowed\t/never/test\ttrain-ai=n/a\nallowed\t/ai-ok/test\ttrain-ai=y\n"},
		{"draft, ExampleBot", draftExample, []string{"-agent", "ExampleBot", "-usage", "train-ai", "/test", "/never/test", "/ai-ok/test"}, "", 0,
			"allowed\t/test\ttrain-ai=y\nallowed\t/never/test\ttrain-ai=y\nallowed\t/ai-ok/test\ttrain-ai=y\n"},
		{"draft, -explain last", draftExample, []string{"-usage", "train-ai,search", "-explain", "/test", "/never/test", "https://example.com/ai-ok/test"}, "", 1,
			"allowed\t/test\ttrain-ai=n\tsearch=unknown\tline 2: Allow: /\n" +
				"disallowed\t/never/test\ttrain-ai=n/a\tsearch=n/a\tline 3: Disallow: /never/\n" +
				"allowed\thttps://example.com/ai-ok/test\ttrain-ai=y\tsearch=unknown\tline 2: Allow: /\n"},
		{"draft, order asked", draftExample, []string{"-usage", "search,train-ai", "/test"}, "", 0,
			"allowed\t/test\tsearch=unknown\ttrain-ai=n\n"},
		{"draft, URLs on stdin", draftExample, []string{"-usage", "train-ai"}, "/ai-ok/x\n\n/never/x\r\n", 1,
			"allowed\t/ai-ok/x\ttrain-ai=y\ndisallowed\t/never/x\ttrain-ai=n/a\n"},
		// google reads the lines too, without their ending the group's
		// user-agent lines.
		{"draft, google", draftExample, []string{"-dialect", "google", "-usage", "train-ai", "/test", "/ai-ok/test"}, "", 0,
			"allowed\t/test\ttrain-ai=n\nallowed\t/ai-ok/test\ttrain-ai=y\n"},
		// A key given twice keeps its last value; a bare key is Boolean true.
		{"duplicate, bare last", "User-agent: *\nContent-Usage: train-ai=y, train-ai\n", []string{"-usage", "train-ai", "/x"}, "", 0,
			"allowed\t/x\ttrain-ai=unknown\n"},
		{"duplicate, y last", "User-agent: *\nContent-Usage: train-ai=n, train-ai=y\n", []string{"-usage", "train-ai", "/x"}, "", 0,
			"allowed\t/x\ttrain-ai=y\n"},
		// An uppercase key fails the whole Dictionary: search=n is lost too.
		{"uppercase key", "User-agent: *\nContent-Usage: search=n, Train-AI=n\n", []string{"-usage", "train-ai,search,ai-input", "/x"}, "", 0,
			"allowed\t/x\ttrain-ai=unknown\tsearch=unknown\tai-input=unknown\n"},
		{"string value", "User-agent: *\nContent-Usage: train-ai=\"n\", search=n\n", []string{"-usage", "train-ai,search", "/x"}, "", 0,
			"allowed\t/x\ttrain-ai=unknown\tsearch=n\n"},
		{"parameters ignored", "User-agent: *\nContent-Usage: train-ai=n;x=1\n", []string{"-usage", "train-ai", "/x"}, "", 0,
			"allowed\t/x\ttrain-ai=n\n"},
		// ai-input is no label of the vocabulary: Content-Usage cannot state it.
		{"ai-input in Content-Usage", "User-agent: *\nContent-Usage: ai-input=n\n", []string{"-usage", "ai-input", "/x"}, "", 0,
			"allowed\t/x\tai-input=unknown\n"},
		// The longest match decides alone: /a/ says nothing of search, so
		// the root rule's search=n does not reach /a/x.
		{"longest match", "User-agent: *\nContent-Usage: /a/b/ train-ai=y\nContent-Usage: search=n, train-ai=n\nContent-Usage: /a/ train-ai=n\n",
			[]string{"-usage", "train-ai,search", "-explain", "/a/x", "/a/b/x", "/c"}, "", 0,
			"allowed\t/a/x\ttrain-ai=n\tsearch=unknown\tno matching rule\n" +
				"allowed\t/a/b/x\ttrain-ai=y\tsearch=unknown\tno matching rule\n" +
				"allowed\t/c\ttrain-ai=n\tsearch=n\tno matching rule\n"},
		// Identical paths: the most restrictive, per category.
		{"same path combined", "User-agent: *\nContent-Usage: /a train-ai=y, search=y\nContent-Usage: /a train-ai=n\n", []string{"-usage", "train-ai,search", "/a"}, "", 0,
			"allowed\t/a\ttrain-ai=n\tsearch=y\n"},
		// A group of the agent's own without preferences states nothing,
		// whatever "*" says.
		{"specific group without preferences", "User-agent: *\nContent-Usage: train-ai=n\n\nUser-agent: quietbot\nDisallow: /x\n",
			[]string{"-agent", "quietbot", "-usage", "train-ai", "/a", "/x"}, "", 1,
			"allowed\t/a\ttrain-ai=unknown\ndisallowed\t/x\ttrain-ai=n/a\n"},
		{"specific group, other agent", "User-agent: *\nContent-Usage: train-ai=n\n\nUser-agent: quietbot\nDisallow: /x\n",
			[]string{"-agent", "otherbot", "-usage", "train-ai", "/a", "/x"}, "", 0,
			"allowed\t/a\ttrain-ai=n\nallowed\t/x\ttrain-ai=n\n"},
		{"Content-Signal", "User-agent: *\nContent-Signal: search=yes, ai-train=no\n", []string{"-usage", "train-ai,search,ai-input", "-explain", "/x"}, "", 0,
			"allowed\t/x\ttrain-ai=n\tsearch=y\tai-input=unknown\tno matching rule\n"},
		{"disallowed: n/a, exit 1", "User-agent: *\nDisallow: /\nContent-Usage: train-ai=y\n", []string{"-usage", "train-ai,search", "/x", "/y"}, "", 1,
			"disallowed\t/x\ttrain-ai=n/a\tsearch=n/a\ndisallowed\t/y\ttrain-ai=n/a\tsearch=n/a\n"},
		{"no usage lines", "User-agent: *\nDisallow: /p\n", []string{"-usage", "train-ai", "/x"}, "", 0,
			"allowed\t/x\ttrain-ai=unknown\n"},
		// Content-Signal's use= level, with the line that stated it: the
		// lower of the lines in force; unknown without one.
		{"use level", "User-agent: *\nContent-Signal: search=yes,ai-train=no,use=reference\nAllow: /\nDisallow: /p\n\nUser-agent: *\ncontent-signal: use = Immediate\n",
			[]string{"-usage", "train-ai,use", "-explain", "/x", "/p"}, "", 1,
			"allowed\t/x\ttrain-ai=n\tuse=immediate (line 7)\tline 3: Allow: /\ndisallowed\t/p\ttrain-ai=n/a\tuse=n/a\tline 4: Disallow: /p\n"},
		{"use level unknown", "User-agent: *\nContent-Signal: search=yes\n", []string{"-usage", "use,search", "/x"}, "", 0,
			"allowed\t/x\tuse=unknown\tsearch=y\n"},
		{"Content-Signal read leniently", "User-agent: *\nContent-signal: Search=Yes , AI-train = disallow\n", []string{"-usage", "train-ai,search", "/x"}, "", 0,
			"allowed\t/x\ttrain-ai=n\tsearch=y\n"},
		// License lines: the agent's group's, else the global ones.
		{"licenses, global", "License: https://a.example/l.xml\nLicense: https://a.example/m.xml\nUser-agent: *\nDisallow: /p\n\nUser-agent: bot\nLicense: /bot.xml\n",
			[]string{"-usage", "license", "/x", "/p"}, "", 1,
			"allowed\t/x\tlicense=https://a.example/l.xml https://a.example/m.xml\ndisallowed\t/p\tlicense=n/a\n"},
		{"licenses, the agent's group", "License: https://a.example/l.xml\nUser-agent: *\nDisallow: /p\n\nUser-agent: bot\nLicense: /bot.xml\n",
			[]string{"-agent", "bot", "-usage", "license,train-ai", "/x"}, "", 0,
			"allowed\t/x\tlicense=/bot.xml\ttrain-ai=unknown\n"},
		{"no licenses", draftExample, []string{"-usage", "license", "/test"}, "", 0,
			"allowed\t/test\tlicense=none\n"},
		// Without -usage, the output is check's as ever.
		{"no -usage", draftExample, []string{"/test", "/never/test"}, "", 1,
			"allowed\t/test\ndisallowed\t/never/test\n"},
	}
	for _, c := range cases {
		args := append([]string{"check", writeRobots(t, c.body)}, c.args...)
		r := runCLI(t, c.stdin, args...)
		if r.code != c.code || r.stdout != c.stdout || r.stderr != "" {
			t.Errorf("%s: %q: exit %d stdout %q stderr %q; want %d %q", c.name, c.args, r.code, r.stdout, r.stderr, c.code, c.stdout)
		}
	}
}

// -usage with an unknown or no category, or with a dialect that reads no
// usage lines, is a usage error that says why.
func TestCheckUsageErrors(t *testing.T) {
	p := writeRobots(t, draftExample)
	cases := []struct {
		args []string
		want []string // in the one stderr line
	}{
		{[]string{"check", "-usage", "bogus", p, "/x"}, []string{`"bogus"`, "train-ai, search, ai-input, use, license"}},
		{[]string{"check", "-usage", "train-ai,bogus", p, "/x"}, []string{`"bogus"`, "train-ai, search, ai-input"}},
		{[]string{"check", "-usage", "Train-AI", p, "/x"}, []string{`"Train-AI"`}}, // labels are case-sensitive
		{[]string{"check", "-usage", "ai-train", p, "/x"}, []string{`"ai-train"`}}, // Content-Signal's name, not the category's
		{[]string{"check", "-usage", "Use", p, "/x"}, []string{`"Use"`}},
		{[]string{"check", "-usage", "licence", p, "/x"}, []string{`"licence"`}},
		{[]string{"check", "-usage", "", p, "/x"}, []string{"no category", "train-ai, search, ai-input"}},
		{[]string{"check", "-usage=", p, "/x"}, []string{"no category"}},
		{[]string{"check", "-usage", "train-ai,", p, "/x"}, []string{`""`}},
		{[]string{"check", "-dialect", "koster1994", "-usage", "train-ai", p, "/x"}, []string{"koster1994", "Content-Usage"}},
		{[]string{"check", p, "/x", "-usage"}, []string{"-usage"}},
		{[]string{"inspect", "-usage", "train-ai", p}, []string{"-usage"}},
	}
	for _, c := range cases {
		usageError(t, runCLI(t, "", c.args...), c.args, c.want...)
	}
}

// inspect lists the usage rules of the group(s) in force, with their lines
// and what each states; [] when there are none.
func TestInspectUsageRules(t *testing.T) {
	type usageRule struct {
		Line  int    `json:"line"`
		Path  string `json:"path"`
		Rule  string `json:"rule"`
		Usage string `json:"usage"`
	}
	draft := writeRobots(t, draftExample)
	cases := []struct {
		args []string
		want []usageRule
	}{
		{[]string{draft}, []usageRule{
			{4, "", "Content-Usage: train-ai=n", "train-ai=n"},
			{5, "/ai-ok/", "Content-Usage: /ai-ok/ train-ai=y", "train-ai=y"},
		}},
		{[]string{"-agent", "ExampleBot", draft}, []usageRule{{9, "", "Content-Usage: train-ai=y", "train-ai=y"}}},
		{[]string{"-dialect", "koster1994", draft}, []usageRule{}},
		{[]string{"-agent", "quietbot", writeRobots(t, "User-agent: *\nContent-Usage: train-ai=n\n\nUser-agent: quietbot\nDisallow: /x\n")}, []usageRule{}},
		{[]string{writeRobots(t, "User-agent: *\ncontent-signal: search=yes, ai-train=no, ai-input=yes\nContent-Usage: Train-AI=n\n")}, []usageRule{
			{2, "", "content-signal: search=yes, ai-train=no, ai-input=yes", "train-ai=n, search=y, ai-input=y"},
			{3, "", "Content-Usage: Train-AI=n", ""},
		}},
	}
	for _, c := range cases {
		r := runCLI(t, "", append([]string{"inspect"}, c.args...)...)
		var got struct {
			UsageRules []usageRule `json:"usage_rules"`
			Rules      []struct {
				Rule string `json:"rule"`
			} `json:"rules"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 {
			t.Errorf("%q: exit %d, %v\n%s", c.args, r.code, err, r.stdout)
			continue
		}
		if got.UsageRules == nil || fmt.Sprint(got.UsageRules) != fmt.Sprint(c.want) {
			t.Errorf("%q: usage_rules %+v, want %+v", c.args, got.UsageRules, c.want)
		}
		for _, ru := range got.Rules {
			if strings.Contains(strings.ToLower(ru.Rule), "content-") {
				t.Errorf("%q: usage line among the crawl rules: %q", c.args, ru.Rule)
			}
		}
	}
}
