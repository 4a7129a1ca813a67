package dialect_test

import (
	"fmt"

	"github.com/politecrawl/robots/dialect"
)

// Parse once, select the rules for a crawler, check paths.
func Example() {
	body := []byte(`User-agent: *
Disallow: /private
Allow: /private/press
Crawl-delay: 0.5
Sitemap: https://example.com/sitemap.xml
`)
	robots := dialect.RFC9309.Parse(body)
	rules := robots.For("examplebot-news", "examplebot") // most specific token first
	for _, path := range []string{"/private/x", "/private/press/1", "/public"} {
		v := rules.Check(path)
		fmt.Printf("%-17s allowed=%-5v %s\n", path, v.Allowed, v)
	}
	delay, _ := rules.CrawlDelay()
	fmt.Println("crawl-delay:", delay)
	fmt.Println("sitemap:", robots.Sitemaps()[0].URL)
	// Output:
	// /private/x        allowed=false line 2: Disallow: /private
	// /private/press/1  allowed=true  line 3: Allow: /private/press
	// /public           allowed=true  no matching rule
	// crawl-delay: 500ms
	// sitemap: https://example.com/sitemap.xml
}

func ExampleLookup() {
	body := "User-agent: *\nDisallow: /*.pdf$\n"
	for _, name := range []string{"rfc9309", "koster1994"} {
		d, err := dialect.Lookup(name)
		if err != nil {
			panic(err)
		}
		v := d.ParseString(body).For("examplebot").CheckURL("https://example.com/a.pdf")
		fmt.Println(name, v.Allowed)
	}
	// Output:
	// rfc9309 false
	// koster1994 true
}

func ExampleRuleset_Check() {
	rules := dialect.Google.ParseString("User-agent: *\nAllow: /$\nDisallow: /\n").For("examplebot")
	fmt.Println(rules.Check("/"))
	fmt.Println(rules.Check("/page.htm"))
	// Output:
	// line 2: Allow: /$
	// line 3: Disallow: /
}

func ExampleProductToken() {
	fmt.Println(dialect.ProductToken("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"))
	fmt.Println(dialect.ProductToken("colly - https://github.com/gocolly/colly/v2"))
	// Output:
	// ExampleBot
	// colly
}

func ExampleDialect_Decide() {
	for _, d := range dialect.All() {
		fmt.Printf("%-10s 503: %s\n", d, d.Decide(dialect.ClassifyStatus(503), dialect.FetchState{}).Action)
	}
	// Output:
	// rfc9309    503: disallow all
	// google     503: disallow all
	// coccoc     503: allow all
	// koster1994 503: disallow all
}

// A site's usage preferences for a path, with the line that decided.
func ExampleRuleset_Usage() {
	body := `User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y
Content-Signal: search=yes
`
	rules := dialect.RFC9309.ParseString(body).For("examplebot")
	for _, path := range []string{"/test", "/ai-ok/test", "/never/test"} {
		v := rules.Usage(path)
		fmt.Printf("%-12s train-ai=%-7s search=%-7s %s\n", path,
			v.Usage.Pref(dialect.TrainAI), v.Usage.Pref(dialect.Search), v.Explain(dialect.TrainAI))
	}
	// Output:
	// /test        train-ai=n       search=y       line 4: Content-Usage: train-ai=n
	// /ai-ok/test  train-ai=y       search=unknown line 5: Content-Usage: /ai-ok/ train-ai=y
	// /never/test  train-ai=unknown search=unknown disallowed (line 3: Disallow: /never/)
}

// A Content-Usage response header, combined with what robots.txt says: the
// most restrictive wins.
func ExampleParseUsage() {
	header := dialect.ParseUsage("train-ai=n, search=y;reason=\"x\"")
	robots := dialect.ParseUsage("train-ai=y, search=y")
	fmt.Println(header.Combine(robots))
	fmt.Println(dialect.ParseUsage("Train-AI=n") == 0) // not a Dictionary: nothing stated
	// Output:
	// train-ai=n, search=y
	// true
}

// Cloudflare's Content Signals: the use level a site allows, against the
// level a crawler declares, with the line that stated it.
func ExampleUsageVerdict_UseRule() {
	body := "User-agent: *\nContent-Signal: search=yes,ai-train=no,use=reference\nAllow: /\n"
	v := dialect.RFC9309.ParseString(body).For("examplebot").Usage("/article")
	declared, _ := dialect.ParseUseLevel("full")
	if site := v.Usage.Use(); site != dialect.UseUnknown && declared > site {
		fmt.Printf("refused: use=%s above the site's %s (line %d)\n", declared, site, v.UseRule().Line)
	}
	// Output:
	// refused: use=full above the site's reference (line 2)
}

// A Content-Signal response header, read as the robots.txt line is.
func ExampleParseContentSignal() {
	fmt.Println(dialect.ParseContentSignal("search=yes, ai-input=yes, ai-train=no"))
	fmt.Println(dialect.ParseContentSignal("AI-Train = disallow, use=immediate, human-authored"))
	// Output:
	// train-ai=n, search=y, ai-input=y
	// train-ai=n, use=immediate
}

// The levels in order: a site's level is the most it allows.
func ExampleParseUseLevel() {
	for _, s := range []string{"immediate", "Reference", "full", "partial"} {
		l, ok := dialect.ParseUseLevel(s)
		fmt.Println(int(l), l, ok)
	}
	// Output:
	// 1 immediate true
	// 2 reference true
	// 3 full true
	// 0 unknown false
}

// The RSL licences that apply to a crawler: its own group's, else the
// global ones.
func ExampleRuleset_Licenses() {
	body := `License: https://example.com/license.xml
User-agent: ExampleBot
License: https://example.com/examplebot-license.xml
Allow: /

User-agent: *
Disallow: /private/
`
	r := dialect.RFC9309.ParseString(body)
	for _, bot := range []string{"ExampleBot", "OtherBot"} {
		for _, l := range r.For(bot).Licenses() {
			fmt.Println(bot, l.Line, l.URL)
		}
	}
	// Output:
	// ExampleBot 3 https://example.com/examplebot-license.xml
	// OtherBot 1 https://example.com/license.xml
}
