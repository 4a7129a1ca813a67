package policy_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
)

// A resolver fetches each authority's robots.txt once and answers for every
// URL of it, saying why.
func Example() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /\n\nUser-agent: examplebot\nDisallow: /private\nAllow: /private/press\n")
		}
	}))
	defer site.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	}))
	defer down.Close()

	r, err := policy.NewResolver(
		policy.WithDialect(dialect.RFC9309),
		policy.WithUserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"),
	)
	if err != nil { // an option value out of range
		fmt.Println(err)
		return
	}
	for _, raw := range []string{site.URL + "/private/x", site.URL + "/private/press/1", site.URL + "/about", down.URL + "/page"} {
		u, _ := url.Parse(raw)
		v, err := r.Check(context.Background(), u)
		if err != nil {
			fmt.Println(err)
			continue
		}
		host := site.URL
		if v.Reason == dialect.ReasonFetch {
			host = down.URL
		}
		fmt.Printf("%-5v %s: %s\n", v.Allowed, raw[len(host):], firstWords(v.String(), 6))
	}
	// Output:
	// false /private/x: line 5: Disallow: /private
	// true  /private/press/1: line 6: Allow: /private/press
	// true  /about: no matching rule
	// false /page: robots.txt: 503 Service Unavailable, complete disallow
}

// firstWords keeps the first n words of s (the retry time varies).
func firstWords(s string, n int) string {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			if n--; n == 0 {
				return s[:i]
			}
		}
	}
	return s
}

// An option value out of range is an error naming the option and the
// value (each one, when there are several), and no resolver is made.
func ExampleNewResolver_invalid() {
	r, err := policy.NewResolver(policy.WithTTL(-time.Hour), policy.WithCapacity(-1))
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = r // use r
	// Output:
	// policy: WithTTL(-1h0m0s): cannot be negative
	// policy: WithCapacity(-1): cannot be negative
}

// Authority gives the key a robots.txt applies to: the default port is
// dropped, the host lower-cased and converted to punycode, IPv6 literals
// keep their brackets.
func ExampleAuthority() {
	for _, raw := range []string{
		"https://Example.COM:443/a?b=c",
		"http://example.com:8080/",
		"https://bücher.example/katalog",
		"http://[2001:DB8::1]:80/x",
		"ftp://example.com/file",
	} {
		u, _ := url.Parse(raw)
		a, err := policy.Authority(u)
		if errors.Is(err, policy.ErrUnsupportedURL) {
			fmt.Println(raw, "=> unsupported")
			continue
		}
		fmt.Println(raw, "=>", a)
	}
	// Output:
	// https://Example.COM:443/a?b=c => https://example.com
	// http://example.com:8080/ => http://example.com:8080
	// https://bücher.example/katalog => https://xn--bcher-kva.example
	// http://[2001:DB8::1]:80/x => http://[2001:db8::1]
	// ftp://example.com/file => unsupported
}

// A Policy is fetched once per authority; Check then answers for each URL of
// the authority without the network, and the Verdict says why.
func ExamplePolicy_Check() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: examplebot\nDisallow: /search\nAllow: /search/help\nCrawl-delay: 2\n")
	}))
	defer site.Close()

	r, err := policy.NewResolver(policy.WithAgents("examplebot"))
	if err != nil {
		fmt.Println(err)
		return
	}
	home, _ := url.Parse(site.URL + "/")
	p, err := r.Policy(context.Background(), home)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Reason())
	d, _ := p.CrawlDelay()
	fmt.Println("crawl delay:", d)
	for _, path := range []string{"/", "/search?q=go", "/search/help", "/robots.txt"} {
		u, _ := url.Parse(site.URL + path)
		v := p.Check(u)
		fmt.Printf("%-5v %-13s %-10v %s\n", v.Allowed, path, v.Reason, v)
	}
	// Output:
	// robots.txt: 200 OK, 76 bytes parsed
	// crawl delay: 2s
	// true  /             no rule    no matching rule
	// false /search?q=go  rule       line 2: Disallow: /search
	// true  /search/help  rule       line 3: Allow: /search/help
	// true  /robots.txt   robots.txt /robots.txt is always allowed
}

// Two resolvers (in two processes, say) that share a Store fetch each
// robots.txt once between them.
func ExampleNewMemoryStore() {
	var fetches atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fetches.Add(1)
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		}
	}))
	defer site.Close()

	store := policy.NewMemoryStore(nil) // or a store shared between processes
	first, err := policy.NewResolver(policy.WithStore(store))
	if err != nil {
		fmt.Println(err)
		return
	}
	second, err := policy.NewResolver(policy.WithStore(store))
	if err != nil {
		fmt.Println(err)
		return
	}

	u, _ := url.Parse(site.URL + "/private/report")
	for _, r := range []*policy.Resolver{first, second} {
		v, err := r.Check(context.Background(), u)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(v.Allowed, v)
	}
	fmt.Println("robots.txt fetches:", fetches.Load(), "stored:", store.Len())
	// Output:
	// false line 2: Disallow: /private
	// false line 2: Disallow: /private
	// robots.txt fetches: 1 stored: 1
}

// What a site allows its content to be used for: robots.txt's preference
// for a URL (package usage adds what the response and the site's other
// documents state).
func ExamplePolicy_Usage() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nContent-Signal: search=yes, ai-train=no\nContent-Usage: /open/ train-ai=y\n")
	}))
	defer site.Close()
	r, err := policy.NewResolver(policy.WithUserAgent("ExampleBot/1.0 (+https://example.com/bot)"))
	if err != nil {
		fmt.Println(err)
		return
	}
	u, _ := url.Parse(site.URL + "/open/data")
	p, err := r.Policy(context.Background(), u)
	if err != nil {
		fmt.Println(err)
		return
	}
	v := p.Usage(u)
	fmt.Println("robots.txt:", v.Usage, "-", v.Explain(dialect.TrainAI))
	// Output:
	// robots.txt: train-ai=y - line 3: Content-Usage: /open/ train-ai=y
}
