package dialect

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseCheck parses any bytes in every dialect and checks a path for an
// agent: it must not panic, the same bytes must always give the same
// verdicts, Ruleset.Check must agree with the brute-force reference of
// reference_test.go, and a Ruleset's first checks (over the rules in order)
// must agree with its checks through the index. Seeds: the inline ones below and
// testdata/fuzz/FuzzParseCheck (small corpus files: BOM, UTF-16, bare CR,
// an HTML page, wildcards).
func FuzzParseCheck(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /private\nAllow: /private/ok$\n"), "examplebot", "/private/ok")
	f.Add([]byte("User-agent: examplebot\nDisallow: /*a*a*a*a*a*a*a*a*a*b\n"), "examplebot", "/"+strings.Repeat("a", 300))
	f.Add([]byte("user-agent: *\nallow: /dir/index.html\ndisallow: /dir/\n"), "bot", "/dir/")
	f.Add([]byte("User-agent: *\nDisallow:\n\nUser-agent: examplebot\nDisallow: /x\n"), "ExampleBot/2.1", "/x?y")
	f.Add([]byte("User-agent: *\r\nDisallow: /%7euser/%e3%83%84\r\nAllow: /*$\r\n"), "examplebot", "/~user/\u30c4")
	f.Add([]byte("\xEF\xBB\xBFUser-agent: *\rDisallow: /a$b\rDisallow: /$\r"), "*", "/a$b")
	f.Add([]byte("User-agent: googlebot-news\nDisallow: /n\nUser-agent: googlebot\nCrawl-delay: 5\nDisallow: /g*\n"), "googlebot-news-x", "/n%")
	f.Add([]byte("Crawl-delay: 3\nUser-agent: MJ12bot\nCrawl-delay: x\nUser-agent: b\nDisallow: /a<d\"{x}|^`\\\nAllow: /a%3C%7b\n"), "MJ12bot/1.4", "/a%3Cd%22%7Bx%7D%7C%5E%60%5C")
	f.Add([]byte("License: https://a.example/l.xml\nUser-agent: a\nlicense:\t/b.xml # c\nUser-agent: b\nDisallow: /x\n\nSitemap: /s\nLICENSE: /c"), "b", "/x")
	f.Fuzz(func(t *testing.T, body []byte, agent, path string) {
		fuzzOne(t, body, agent, path)
	})
}

func fuzzOne(t *testing.T, body []byte, agent, path string) {
	for _, d := range all {
		sameScan(t, d, string(body[:min(len(body), MaxBodyBytes)]))
		r1 := d.Parse(body)
		r2 := d.ParseString(string(body))
		tokens := strings.Split(agent, ",")
		rs1 := r1.For(tokens...)
		rs2 := r2.For(tokens...)
		rs3 := r1.For(tokens...)
		v1 := rs1.Check(path)
		v1b := rs1.Check(path)
		v2 := rs2.Check(path)
		v3 := rs3.Check(path)
		// The same rules indexed (Check goes over the rules until it
		// builds its index): both ways must agree.
		rs4 := r1.For(tokens...)
		rs4.index()
		v4 := rs4.Check(path)
		for _, v := range []Verdict{v1b, v2, v3, v4} {
			if !sameVerdict(v1, v) {
				t.Fatalf("%s: verdicts differ for %q: %s vs %s", d, path, v1, v)
			}
		}
		if want := refCheck(rs1, path); !refAgree(v1, want) {
			t.Fatalf("%s: agent %q path %q: Check = %s [norm %q], reference = allowed=%v line %d %q [norm %q]\nrules:\n%s",
				d, agent, path, v1, normOf(v1), want.Allowed, want.Line, want.Note, want.Norm, dumpRules(rs1))
		}
		_ = v1.String()
		_ = rs1.CheckURL(path)
		_ = rs1.CheckURL("https://example.com" + path)
		_ = PathOf(path)
		_, _ = rs1.CrawlDelay()
		for _, w := range r1.Warnings() {
			_ = w.String()
		}
		// What the tables of offsets give back must not depend on whether
		// the body was copied (Parse) or not (ParseString).
		if !reflect.DeepEqual(r1.Groups(), r2.Groups()) || !reflect.DeepEqual(rs1.Agents(), rs2.Agents()) ||
			!reflect.DeepEqual(r1.Sitemaps(), r2.Sitemaps()) || !reflect.DeepEqual(r1.Warnings(), r2.Warnings()) ||
			!reflect.DeepEqual(rs1.Licenses(), rs2.Licenses()) {
			t.Fatalf("%s: Parse and ParseString read %q differently", d, body)
		}
		if a, b := rs1.CrawlDelayLine(), rs2.CrawlDelayLine(); a != b {
			t.Fatalf("%s: crawl-delay lines %d and %d", d, a, b)
		}
		if n, _ := r1.Size(); n > MaxBodyBytes {
			t.Fatalf("%s: read %d bytes", d, n)
		}
	}
	_ = ProductToken(agent)
}

func sameVerdict(a, b Verdict) bool {
	if a.Allowed != b.Allowed || a.Reason != b.Reason || (a.Rule == (Rule{})) != (b.Rule == (Rule{})) {
		return false
	}
	return a.Rule == (Rule{}) || a.Rule.Line == b.Rule.Line && a.Rule.Note == b.Rule.Note && a.Rule.norm == b.Rule.norm
}

func normOf(v Verdict) string {
	if v.Rule == (Rule{}) {
		return ""
	}
	return v.Rule.norm
}

func dumpRules(rs *Ruleset) string {
	var sb strings.Builder
	for _, r := range rs.Rules() {
		sb.WriteString("  line " + strconv.Itoa(r.Line) + ": " + r.String() + " [norm " + strings.ReplaceAll(r.norm, "\n", `\n`) + "] " + r.Note + "\n")
	}
	return sb.String()
}

// TestCheckMatchesReference runs the reference cross-check over the shared
// corpus: every file, every dialect, the file's own URLs plus a sample of
// urls.txt, for two agents.
func TestCheckMatchesReference(t *testing.T) {
	c := loadCorpus(t)
	sample := c.urls
	if len(sample) > 100 {
		sample = sample[:100]
	}
	if testing.Short() {
		sample = sample[:25]
	}
	bad := 0
	for _, f := range c.files {
		urls := f.urls
		if len(urls) > 100 {
			urls = urls[:100]
		}
		urls = append(append([]string(nil), urls...), sample...)
		for _, d := range all {
			r := d.Parse(f.body)
			for _, agent := range []string{benchAgent, "googlebot"} {
				rs := r.For(agent)
				norms := refNorms(rs)
				for _, u := range urls {
					v := rs.Check(u)
					if want := refCheckNorms(rs, norms, u); !refAgree(v, want) {
						bad++
						if bad <= 20 {
							t.Errorf("%s %s agent %s path %q: Check = %s [norm %q], reference: allowed=%v line %d %q [norm %q]",
								d, f.name, agent, u, v, normOf(v), want.Allowed, want.Line, want.Note, want.Norm)
						}
					}
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d disagreements in all", bad)
	}
}
