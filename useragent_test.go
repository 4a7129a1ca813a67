package robots

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/testkit/testutil"
)

const goodUA = "Mozilla/5.0 (compatible; ExampleBot/0.1; +https://www.example.com/bot.html)"

// userAgentLacks, case by case: a product token with a version, and a
// contact URL, as draft-illyes-webbotauth-cbcp's example has them.
func TestUserAgentLacks(t *testing.T) {
	const both, token, contact = "product token and contact URL", "product token", "contact URL"
	for _, tc := range []struct{ ua, want string }{
		{goodUA, ""},
		{"Googlebot/2.1 (+http://www.google.com/bot.html)", ""},
		{"ExampleBot/1.0 (+HTTPS://example.com/bot)", ""},
		{"Mozilla/5.0 (compatible;ExampleBot/1.0;+https://example.com)", ""},
		{"ExampleBot/1.0", contact},
		{"ExampleBot/1.0 (https://example.com/bot)", contact}, // no '+'
		{"ExampleBot/1.0 (+https://)", contact},               // no host
		{"ExampleBot/1.0 (+ftp://example.com/bot)", contact},  // not a web page
		{"ExampleBot/1.0 (mailto:bot@example.com)", contact},  // an address is no URL describing the crawler
		{"ExampleBot (+https://example.com/bot)", token},      // no version
		{"ExampleBot/ (+https://example.com/bot)", token},     // empty version
		{"Mozilla/5.0 (compatible; +https://example.com/bot)", token},
		{"colly - https://github.com/gocolly/colly", both}, // Colly's default names the library
		{"colly - https://github.com/gocolly/colly/v2", both},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36", both},
		{"12345", both},
		{"", both},
	} {
		if got := userAgentLacks(tc.ua); got != tc.want {
			t.Errorf("userAgentLacks(%q) = %q, want %q", tc.ua, got, tc.want)
		}
	}
}

// The plugin warns once, at the first request it sends, when the
// User-Agent that request carries lacks a product token or a contact URL:
// the collector's, set before or after Attach, or one set per request by
// an OnRequest callback (as extensions.RandomUserAgent does). A good
// User-Agent is not warned about. Sync and Async, several requests.
func TestPluginWarnsUserAgent(t *testing.T) {
	const browser = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
	cases := []struct {
		name       string
		ua         string // colly.UserAgent; "" keeps Colly's default
		after      string // set as c.UserAgent after Attach
		perRequest string // set on each request by an OnRequest callback after Attach
		want       string // the User-Agent warned about, "" for no warning
		missing    string
	}{
		{"good", goodUA, "", "", "", ""},
		{"Colly's default", "", "", "", colly.NewCollector().UserAgent, "product token and contact URL"},
		{"no contact URL", "ExampleBot/1.0", "", "", "ExampleBot/1.0", "contact URL"},
		{"good, set after Attach", "ExampleBot/1.0", goodUA, "", "", ""},
		{"bad, set after Attach", goodUA, "ExampleBot (+https://example.com/bot)", "", "ExampleBot (+https://example.com/bot)", "product token"},
		{"per request", goodUA, "", browser, browser, "product token and contact URL"},
	}
	for _, tc := range cases {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/async=%v", tc.name, async), func(t *testing.T) {
				f := testutil.NewFarm(t, map[string]*testutil.Site{"ua.test": {Robots: "User-agent: *\nAllow: /\n"}})
				var buf testutil.Buffer
				p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0), WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))))
				var o []colly.CollectorOption
				if tc.ua != "" {
					o = append(o, colly.UserAgent(tc.ua))
				}
				if async {
					o = append(o, colly.Async(true))
				}
				c := colly.NewCollector(o...)
				if err := p.Attach(c); err != nil {
					t.Fatal(err)
				}
				if tc.after != "" {
					c.UserAgent = tc.after
				}
				if tc.perRequest != "" {
					c.OnRequest(func(r *colly.Request) { r.Headers.Set("User-Agent", tc.perRequest) })
				}
				for i := range 4 {
					c.Visit(fmt.Sprintf("http://ua.test/p%d", i))
				}
				c.Wait()
				if n := len(f.Paths("ua.test")); n != 4 {
					t.Fatalf("the server saw %d pages, want 4", n)
				}
				var warned []string
				for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
					var rec struct {
						Level     string `json:"level"`
						Msg       string `json:"msg"`
						UserAgent string `json:"user_agent"`
						Missing   string `json:"missing"`
					}
					if line == "" {
						continue
					}
					if err := json.Unmarshal([]byte(line), &rec); err != nil {
						t.Fatalf("log line %q: %v", line, err)
					}
					if rec.Msg != userAgentWarning {
						continue
					}
					warned = append(warned, rec.UserAgent)
					if rec.Level != "WARN" || rec.Missing != tc.missing {
						t.Errorf("warning %s, want level WARN and missing %q", line, tc.missing)
					}
				}
				switch {
				case tc.want == "" && len(warned) != 0:
					t.Errorf("warned about %q, want no warning", warned)
				case tc.want != "" && (len(warned) != 1 || warned[0] != tc.want):
					t.Errorf("warned about %q, want one warning about %q", warned, tc.want)
				}
			})
		}
	}
}
