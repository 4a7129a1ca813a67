package dialect

import (
	"testing"
	"time"
)

// The examples of the source documents, each under the dialect it defines.

// RFC 9309 §5.1 and §5.2 (the simple and longest-match examples) and the
// tables of §2.2.2 and §2.2.3.
func TestRFC9309Examples(t *testing.T) {
	simple := "User-Agent : foobot\nDisallow : /example/page.html\nDisallow : /example/disallowed.gif\n\n" +
		"User-Agent : barbot\nUser-Agent : bazbot\nAllow : /example/page.html\nDisallow : /example/disallowed.gif\n\n" +
		"User-Agent: quxbot\n\n/eof\n"
	longest := "User-Agent : foobot\nAllow : /example/page/\nDisallow : /example/page/disallowed.gif\n"
	runCases(t, RFC9309, []tc{
		{body: simple, agents: "foobot", url: "/example/page.html", allow: false, line: 2},
		{body: simple, agents: "foobot", url: "/example/disallowed.gif", allow: false, line: 3},
		{body: simple, agents: "foobot", url: "/example/other.html", allow: true, line: -1},
		{body: simple, agents: "barbot", url: "/example/page.html", allow: true, line: 7},
		{body: simple, agents: "bazbot", url: "/example/disallowed.gif", allow: false, line: 8},
		{body: simple, agents: "quxbot", url: "/example/disallowed.gif", allow: true, line: -1},
		{body: simple, agents: "otherbot", url: "/example/page.html", allow: true, line: -1},
		{body: longest, agents: "foobot", url: "/example/page/disallowed.gif", allow: false, line: 3},
		{body: longest, agents: "foobot", url: "/example/page/other.gif", allow: true, line: 2},
		// §2.2.2 table: the encoded and unencoded forms are the same path.
		{body: "user-agent: *\ndisallow: /foo/bar?baz=quz\n", agents: "a", url: "/foo/bar?baz=quz", allow: false},
		{body: "user-agent: *\ndisallow: /foo/bar?baz=http://foo.bar\n", agents: "a", url: "/foo/bar?baz=http://foo.bar", allow: false},
		{body: "user-agent: *\ndisallow: /foo/bar/\u30c4\n", agents: "a", url: "/foo/bar/%E3%83%84", allow: false},
		{body: "user-agent: *\ndisallow: /foo/bar/%E3%83%84\n", agents: "a", url: "/foo/bar/\u30c4", allow: false},
		{body: "user-agent: *\ndisallow: /foo/bar/%e3%83%84\n", agents: "a", url: "/foo/bar/%E3%83%84", allow: false},
		{body: "user-agent: *\ndisallow: /foo/bar/%62%61%7A\n", agents: "a", url: "/foo/bar/baz", allow: false},
		{body: "user-agent: *\ndisallow: /foo/bar/baz\n", agents: "a", url: "/foo/bar/%62%61%7A", allow: false},
		// §2.2.3: special characters.
		{body: "user-agent: *\ndisallow: /\nallow: /this/path/exactly$\n", agents: "a", url: "/this/path/exactly", allow: true, line: 3},
		{body: "user-agent: *\ndisallow: /\nallow: /this/path/exactly$\n", agents: "a", url: "/this/path/exactly/x", allow: false, line: 2},
		{body: "user-agent: *\ndisallow: /\nallow: /this/*/exactly\n", agents: "a", url: "/this/a/b/exactly", allow: true},
		{body: "user-agent: *\ndisallow: /path/file-with-a-%2A.html\n", agents: "a", url: "/path/file-with-a-*.html", allow: false},
		{body: "user-agent: *\ndisallow: /path/file-with-a-%2A.html\n", agents: "a", url: "/path/file-with-a-x.html", allow: true},
		{body: "user-agent: *\ndisallow: /path/foo-%24\n", agents: "a", url: "/path/foo-$", allow: false},
		{body: "user-agent: *\ndisallow: /path/foo-%24\n", agents: "a", url: "/path/foo-", allow: true},
		{body: "user-agent: *\ndisallow: /x # comment\n# comment at the end\n", agents: "a", url: "/x", allow: false},
		// §2.2.2: /robots.txt is implicitly allowed; allow wins a tie.
		{body: "user-agent: *\ndisallow: /\n", agents: "a", url: "/robots.txt", allow: true},
		{body: "user-agent: *\ndisallow: /a\nallow: /a\n", agents: "a", url: "/a", allow: true, line: 3},
		// Rules before the first user-agent line are ignored.
		{body: "disallow: /\nuser-agent: *\ndisallow: /x\n", agents: "a", url: "/y", allow: true},
	})
}

// Google's wildcard table and situations 1-6 (seed 002).
func TestGoogleExamples(t *testing.T) {
	type m struct {
		rule    string
		matches []string
		not     []string
	}
	table := []m{
		{"/", []string{"/", "/x", "/fish/a"}, nil},
		{"/*", []string{"/", "/x"}, nil},
		{"/$", []string{"/"}, []string{"/x", "/page.htm"}},
		{"/fish", []string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html", "/fish.php?id=anything"},
			[]string{"/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"}},
		{"/fish*", []string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html", "/fish.php?id=anything"},
			[]string{"/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"}},
		{"/fish/", []string{"/fish/", "/fish/?id=anything", "/fish/salmon.htm"}, []string{"/fish", "/fish.html", "/animals/fish/", "/Fish/Salmon.asp"}},
		{"/*.php", []string{"/index.php", "/filename.php", "/folder/filename.php", "/folder/filename.php?parameters", "/folder/any.php.file.html", "/filename.php/"},
			[]string{"/", "/windows.PHP"}},
		{"/*.php$", []string{"/filename.php", "/folder/filename.php"}, []string{"/filename.php?parameters", "/filename.php/", "/filename.php5", "/windows.PHP"}},
		{"/fish*.php", []string{"/fish.php", "/fishheads/catfish.php?parameters"}, []string{"/Fish.PHP"}},
	}
	for _, d := range []*Dialect{Google, RFC9309, CocCoc} {
		for _, e := range table {
			rs := d.ParseString("user-agent: *\ndisallow: " + e.rule + "\n").For("bot")
			for _, u := range e.matches {
				if v := rs.Check(u); v.Allowed {
					t.Errorf("%s: disallow %s should match %s", d, e.rule, u)
				}
			}
			for _, u := range e.not {
				if v := rs.Check(u); !v.Allowed {
					t.Errorf("%s: disallow %s should not match %s (%s)", d, e.rule, u, v)
				}
			}
		}
	}
	runCases(t, Google, []tc{
		{name: "situation 1", body: "user-agent: *\nallow: /p\ndisallow: /\n", agents: "bot", url: "https://example.com/page", allow: true, line: 2},
		{name: "situation 2", body: "user-agent: *\nallow: /folder\ndisallow: /folder\n", agents: "bot", url: "https://example.com/folder/page", allow: true, line: 2},
		{name: "situation 3", body: "user-agent: *\nallow: /page\ndisallow: /*.htm\n", agents: "bot", url: "https://example.com/page.htm", allow: false, line: 3},
		{name: "situation 4", body: "user-agent: *\nallow: /page\ndisallow: /*.ph\n", agents: "bot", url: "https://example.com/page.php5", allow: true, line: 2},
		{name: "situation 5", body: "user-agent: *\nallow: /$\ndisallow: /\n", agents: "bot", url: "https://example.com/", allow: true, line: 2},
		{name: "situation 6", body: "user-agent: *\nallow: /$\ndisallow: /\n", agents: "bot", url: "https://example.com/page.htm", allow: false, line: 3},
	})
	// Group selection examples.
	groups := "user-agent: googlebot-news\ndisallow: /1\n\nuser-agent: *\ndisallow: /2\n\nuser-agent: googlebot\ndisallow: /3\n"
	runCases(t, Google, []tc{
		{body: groups, agents: "googlebot-news", url: "/1", allow: false, line: 2},
		{body: groups, agents: "googlebot-news", url: "/3", allow: true},
		{body: groups, agents: "googlebot", url: "/3", allow: false, line: 8},
		{body: groups, agents: "Storebot-Google", url: "/2", allow: false, line: 5},
		{body: groups, agents: "otherbot", url: "/1", allow: true},
		// Several tokens: the first with a group of its own decides.
		{body: groups, agents: "googlebot-image,googlebot", url: "/3", allow: false, line: 8},
	})
	merge := "user-agent: googlebot-news\ndisallow: /fish\n\nuser-agent: *\ndisallow: /carrots\n\nuser-agent: googlebot-news\ndisallow: /shrimp\n"
	runCases(t, Google, []tc{
		{body: merge, agents: "googlebot-news", url: "/fish", allow: false, line: 2},
		{body: merge, agents: "googlebot-news", url: "/shrimp", allow: false, line: 8},
		{body: merge, agents: "googlebot-news", url: "/carrots", allow: true},
		{body: merge, agents: "otherbot", url: "/carrots", allow: false},
	})
	// A sitemap line does not end a group: both a and b are disallowed.
	sm := "user-agent: a\nsitemap: https://example.com/sitemap.xml\n\nuser-agent: b\ndisallow: /\n"
	runCases(t, Google, []tc{
		{body: sm, agents: "a", url: "/x", allow: false},
		{body: sm, agents: "b", url: "/x", allow: false},
	})
	// "user-agent: a / disallow: /c ..." four groups example.
	four := "user-agent: a\ndisallow: /c\n\nuser-agent: b\ndisallow: /d\n\nuser-agent: e\nuser-agent: f\ndisallow: /g\n\nuser-agent: h\n"
	runCases(t, Google, []tc{
		{body: four, agents: "a", url: "/c", allow: false},
		{body: four, agents: "a", url: "/d", allow: true},
		{body: four, agents: "e", url: "/g", allow: false},
		{body: four, agents: "f", url: "/g", allow: false},
		{body: four, agents: "h", url: "/c", allow: true},
	})
	// The "includes" example at the top of the page.
	inc := "User-agent: *\nDisallow: /includes/\n\nUser-agent: Googlebot\nAllow: /includes/\n\nSitemap: https://example.com/sitemap.xml\n"
	runCases(t, Google, []tc{
		{body: inc, agents: "Googlebot", url: "/includes/a.js", allow: true},
		{body: inc, agents: "otherbot", url: "/includes/a.js", allow: false},
	})
	if got := Google.ParseString(inc).Sitemaps(); len(got) != 1 || got[0].URL != "https://example.com/sitemap.xml" || got[0].Line != 7 {
		t.Errorf("sitemaps = %+v", got)
	}
}

// Coc Coc's examples (seed 000).
func TestCocCocExamples(t *testing.T) {
	noUA := "Disallow: /cgi-bin\n"
	star := "User-agent: *\nDisallow: /cgi-bin\n"
	cc := "User-agent: *\nAllow: /\n\nUser-agent: coccocbot\nDisallow: /cgi-bin\n"
	web := "User-agent: *\nAllow: /\n\nUser-agent: coccocbot\nDisallow: /cgi-bin\n\nUser-agent: coccocbot-web\nUser-agent: coccocbot-image\nDisallow: /ajax\n"
	repeated := "User-agent: coccocbot\nDisallow: /cgi-bin\n\nUser-agent: *\nAllow: /\n\nUser-agent: coccocbot\nDisallow: /ajax\n"
	specific := "User-agent: coccocbot\nDisallow: /cats\nAllow: /cats/wild\nDisallow: /cats/wild/tigers\n"
	tie := "User-agent: coccocbot\nDisallow: /dogs/naughty\nAllow: /dogs/naughty\n"
	runCases(t, CocCoc, []tc{
		{body: noUA, agents: "coccocbot-web", url: "/cgi-bin/x", allow: true},
		{body: star, agents: "coccocbot-web", url: "/cgi-bin/x", allow: false},
		{body: cc, agents: "coccocbot-web", url: "/cgi-bin/x", allow: false, line: 5},
		{body: cc, agents: "otherbot", url: "/cgi-bin/x", allow: true},
		{body: web, agents: "coccocbot-web", url: "/ajax/x", allow: false, line: 9},
		{body: web, agents: "coccocbot-web", url: "/cgi-bin/x", allow: true},
		{body: web, agents: "coccocbot-image", url: "/ajax/x", allow: false},
		{body: web, agents: "coccocbot-news", url: "/cgi-bin/x", allow: false, line: 5},
		{body: web, agents: "coccocbot-news", url: "/ajax/x", allow: true},
		{body: web, agents: "otherbot", url: "/ajax", allow: true},
		{body: repeated, agents: "coccocbot", url: "/cgi-bin", allow: false, line: 2},
		{body: repeated, agents: "coccocbot", url: "/ajax", allow: false, line: 8},
		{body: repeated, agents: "otherbot", url: "/ajax", allow: true},
		{body: "User-agent: *\nDisallow: /\n", agents: "coccocbot", url: "/", allow: false},
		{body: "User-agent: coccocbot-image\nDisallow: /cgi-bin\n", agents: "coccocbot-image", url: "/cgi-bin/a", allow: false},
		{body: "User-agent: coccocbot\nDisallow: /\nAllow: /docs\n", agents: "coccocbot", url: "/docs/x", allow: true, line: 3},
		{body: "User-agent: coccocbot\nDisallow: /\nAllow: /docs\n", agents: "coccocbot", url: "/x", allow: false, line: 2},
		{body: specific, agents: "coccocbot", url: "/cats/x", allow: false, line: 2},
		{body: specific, agents: "coccocbot", url: "/cats/wild/x", allow: true, line: 3},
		{body: specific, agents: "coccocbot", url: "/cats/wild/tigers/x", allow: false, line: 4},
		{body: tie, agents: "coccocbot", url: "/dogs/naughty/1", allow: true, line: 3},
		// Empty Disallow allows everything; empty Allow is ignored.
		{body: "User-agent: coccocbot\nDisallow:\n", agents: "coccocbot", url: "/x", allow: true, line: 2},
		{body: "User-agent: coccocbot\nDisallow: /\nAllow:\n", agents: "coccocbot", url: "/x", allow: false, line: 2},
		{body: "User-agent: coccocbot\nDisallow: /*private\n", agents: "coccocbot", url: "/a/private/b", allow: false},
		{body: "User-agent: coccocbot\nDisallow: /*.ajax$\n", agents: "coccocbot", url: "/a/b.ajax", allow: false},
		{body: "User-agent: coccocbot\nDisallow: /*.ajax$\n", agents: "coccocbot", url: "/a/b.ajax?x", allow: true},
	})
	delays := []struct {
		body, agent string
		want        time.Duration
	}{
		{"User-agent: *\nCrawl-delay: 10\n", "coccocbot", 10 * time.Second},
		{"User-agent: *\nCrawl-delay: 10\n\nUser-agent: coccocbot\nCrawl-delay: 5\n", "coccocbot", 5 * time.Second},
		{"User-agent: *\nCrawl-delay: 10\n\nUser-agent: coccocbot\nCrawl-delay: 5\n", "otherbot", 10 * time.Second},
		{"User-agent: *\nCrawl-delay: 100\n", "coccocbot", 10 * time.Second},
		{"User-agent: *\nCrawl-delay: 2.5\n", "coccocbot", 3 * time.Second},
	}
	for _, c := range delays {
		got, ok := CocCoc.ParseString(c.body).For(c.agent).CrawlDelay()
		if !ok || got != c.want {
			t.Errorf("coccoc crawl-delay for %s in %q = %v %v, want %v", c.agent, c.body, got, ok, c.want)
		}
	}
	sm := CocCoc.ParseString("User-agent: coccocbot\nDisallow: /x\nSitemap: http://site.vn/sitemaps1.xml\nSitemap: http://site.vn/sitemaps2.xml\n").Sitemaps()
	if len(sm) != 2 || sm[0].URL != "http://site.vn/sitemaps1.xml" || sm[1].URL != "http://site.vn/sitemaps2.xml" {
		t.Errorf("coccoc sitemaps = %+v", sm)
	}
}

// The 1994 standard's examples (seed 004).
func TestKoster1994Examples(t *testing.T) {
	ex1 := "# robots.txt for http://www.site.com\nUser-Agent: *\nDisallow: /cyberworld/map/ # this is an infinite virtual URL space\nDisallow: /tmp/ # these will soon disappear\n"
	ex2 := "# robots.txt for http://www.site.com\nUser-Agent: *\nDisallow: /cyberworld/map/ # this is an infinite virtual URL space\n\n# Cybermapper knows where to go\nUser-Agent: cybermapper\nDisallow:\n"
	ex3 := "# robots.txt for http://www.site.com\nUser-Agent: *\nDisallow: /\n"
	help := "User-agent: *\nDisallow: /help\n"
	helpDir := "User-agent: *\nDisallow: /help/\n"
	runCases(t, Koster1994, []tc{
		{body: ex1, agents: "anybot", url: "/cyberworld/map/index.html", allow: false, line: 3},
		{body: ex1, agents: "anybot", url: "/tmp/x", allow: false, line: 4},
		{body: ex1, agents: "anybot", url: "/cyberworld/", allow: true},
		{body: ex2, agents: "anybot", url: "/cyberworld/map/x", allow: false},
		{body: ex2, agents: "CyberMapper", url: "/cyberworld/map/x", allow: true, line: 7},
		{body: ex3, agents: "anybot", url: "/", allow: false},
		{body: ex3, agents: "anybot", url: "/robots.txt", allow: false},
		{body: help, agents: "a", url: "/help.html", allow: false},
		{body: help, agents: "a", url: "/help/index.html", allow: false},
		{body: helpDir, agents: "a", url: "/help.html", allow: true},
		{body: helpDir, agents: "a", url: "/help/index.html", allow: false},
		// Translator's note: several names on one User-Agent line.
		{body: "User-Agent: webcrawler lycra\tinfoseek\nDisallow: /\n", agents: "lycra", url: "/x", allow: false},
		{body: "User-Agent: webcrawler lycra\tinfoseek\nDisallow: /\n", agents: "INFOSEEK", url: "/x", allow: false},
		{body: "User-Agent: webcrawler lycra\tinfoseek\nDisallow: /\n", agents: "other", url: "/x", allow: true},
		// Empty or malformed file: no restrictions.
		{body: "", agents: "a", url: "/x", allow: true},
		{body: "<html><body>Not found</body></html>", agents: "a", url: "/x", allow: true},
	})
}
