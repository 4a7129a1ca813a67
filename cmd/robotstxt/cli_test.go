package main

import (
	"bytes"
	"encoding/json"
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
