package robots_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/dialect"
)

// A resolver fetches each authority's robots.txt once and answers for every
// URL of it, saying why.
func ExampleResolver() {
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

	r := robots.NewResolver(
		robots.WithDialect(dialect.RFC9309),
		robots.WithUserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"),
	)
	for _, raw := range []string{site.URL + "/private/x", site.URL + "/private/press/1", site.URL + "/about", down.URL + "/page"} {
		u, _ := url.Parse(raw)
		v, err := r.Check(context.Background(), u)
		if err != nil {
			fmt.Println(err)
			continue
		}
		host := site.URL
		if v.Cause == robots.CauseFetch {
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
