package main

import (
	"bytes"
	"encoding/json"
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
	code, err := run([]string{"check", "-agent", "examplebot", "-explain", p, "https://example.com/private/x", "https://example.com/private/press/1", "/other"}, nil, &out)
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
	code, err = run([]string{"check", "-agent", "examplebot", p, "/a", "/b"}, nil, &out)
	if err != nil || code != 0 || out.String() != "allowed\t/a\nallowed\t/b\n" {
		t.Errorf("all allowed: code %d err %v out %q", code, err, out.String())
	}
}

func TestCheckStdinAndDialects(t *testing.T) {
	p := writeRobots(t, cliRobots)
	in := "/drafts/1\r\n\n/private\n"
	var out bytes.Buffer
	code, err := run([]string{"check", "-dialect", "koster1994", "-agent", "newsbot-x,newsbot", p}, strings.NewReader(in), &out)
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
	code, err := run([]string{"inspect", "-agent", "examplebot", p}, nil, &out)
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
	if _, err := run([]string{"inspect", "-dialect", "google", "-agent", "nobot", writeRobots(t, "User-agent: other\nDisallow: /\n")}, nil, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"agent_group": []`) || !strings.Contains(out.String(), `"crawl_delay_seconds": null`) {
		t.Errorf("no group / no delay must be [] and null:\n%s", out.String())
	}
}
