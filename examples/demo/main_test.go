package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/dialect"
)

func TestDemo(t *testing.T) {
	var out strings.Builder
	run(&out, dialect.RFC9309)
	got := out.String()
	for _, want := range []string{
		"fetched  200 http://shop.demo/products/1",
		"fetched  200 http://blog.demo/posts/robots",
		"disallowed http://shop.demo/cart ",
		"disallowed http://blog.demo/drafts/secret",
		"redirect from http://shop.demo/old-offer not followed: line 3: Disallow: /cart",
		"sitemap http://shop.demo/sitemap.xml (line 11)",
		// Pages no link reaches, fetched because the sitemap lists them.
		"fetched  200 http://shop.demo/products/3  (from sitemap http://shop.demo/sitemap-products.xml.gz)",
		"fetched  200 http://shop.demo/products/4  (from sitemap http://shop.demo/sitemap-products.xml.gz)",
		"found only through the sitemap (no link reaches them):\n    http://shop.demo/products/3\n    http://shop.demo/products/4\n",
		"http://shop.demo/sitemap.xml               sitemapindex found 1, handed over 0\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("demo output lacks %q:\n%s", want, got)
		}
	}
	// The sitemap's report: of its 5 URLs, the other host's is rejected; the
	// 4 others are handed over, or filtered as already visited when a link
	// got there first (which depends on timing).
	rep := regexp.MustCompile(`http://shop\.demo/sitemap-products\.xml\.gz +urlset +found 5, handed over (\d)(?:, filtered (\d) \(already visited\))?, rejected 1 \(other host\)\n`).FindStringSubmatch(got)
	if rep == nil {
		t.Errorf("no report line for the products sitemap:\n%s", got)
	} else if h, f := atoi(rep[1]), atoi(rep[2]); h+f != 4 || h < 2 {
		t.Errorf("products sitemap: handed %d + already visited %d, want 4 with products/3 and /4 handed:\n%s", h, f, got)
	}
	// Each page once, the sitemap's included; the disallowed page the
	// sitemap lists is stopped, the other host's page never asked for.
	for _, page := range []string{"http://shop.demo/products/1", "http://shop.demo/products/3", "http://shop.demo/products/4"} {
		if n := strings.Count(got, "fetched  200 "+page+"\n") + strings.Count(got, "fetched  200 "+page+"  ("); n != 1 {
			t.Errorf("%s fetched %d times:\n%s", page, n, got)
		}
	}
	if strings.Contains(got, "blog.demo/posts/hidden") {
		t.Errorf("the sitemap's page on another host was followed:\n%s", got)
	}
	if strings.Contains(got, "fetched  200 http://shop.demo/cart") || strings.Contains(got, "fetched  200 http://shop.demo/account/orders") {
		t.Errorf("a disallowed page was fetched:\n%s", got)
	}
	// The shortest gaps the server saw respect each host's Crawl-delay.
	re := regexp.MustCompile(`(shop|blog)\.demo +the server saw \d+ requests, the shortest gap between two: (\S+)`)
	m := re.FindAllStringSubmatch(got, -1)
	if len(m) != 2 {
		t.Fatalf("no gap lines:\n%s", got)
	}
	for _, x := range m {
		gap, err := time.ParseDuration(x[2])
		want := map[string]time.Duration{"shop": 300 * time.Millisecond, "blog": 200 * time.Millisecond}[x[1]]
		if err != nil || gap < want-time.Millisecond { // the figure is rounded to the millisecond
			t.Errorf("%s: shortest gap %s, want at least %s", x[1], x[2], want)
		}
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
