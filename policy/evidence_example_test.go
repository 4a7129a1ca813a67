package policy_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/politecrawl/robots/policy"
)

// Document gives the robots.txt whose rules decide, with the SHA-256 of
// its bytes: the evidence of what the site said when it was crawled.
func ExamplePolicy_Document() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
	}))
	defer site.Close()
	r, _ := policy.NewResolver(policy.WithUserAgent("ExampleBot/1.0"))
	u, _ := url.Parse(site.URL + "/private/1")
	p, err := r.Policy(context.Background(), u)
	if err != nil {
		fmt.Println(err)
		return
	}
	d := p.Document()
	fmt.Printf("%d %x %q\n", d.Status, d.SHA256[:6], d.Body())
	// Output:
	// 200 efc4db540834 "User-agent: *\nDisallow: /private/\n"
}
