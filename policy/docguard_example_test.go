package policy_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"time"

	"github.com/politecrawl/robots/policy"
)

// The documents a site names are fetched only from the hosts the crawl
// may visit: here, none but the site's own.
func ExampleWithDocumentFilter() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "terms: read only")
	}))
	defer site.Close()
	page, _ := url.Parse(site.URL + "/page")
	r, _ := policy.NewResolver(policy.WithDocumentFilter(func(u *url.URL) bool { return u.Host == page.Host }))
	kind := &policy.DocumentKind{Name: "terms", Accept: "text/plain", MaxBytes: 1 << 10,
		Parse: func(b []byte) (any, time.Duration, error) { return string(b), 0, nil }}
	d, _ := r.Document(context.Background(), page, "http://terms.example/terms.txt", kind)
	fmt.Println(d.Err)
	d, _ = r.Document(context.Background(), page, "http://169.254.169.254/latest/meta-data/", kind)
	fmt.Println(d.Err)
	// Output:
	// not fetched: terms.example is not a host the crawler may visit
	// not fetched: 169.254.169.254 is a link-local or cloud-metadata host
}

// A transport of one's own checks the addresses of documents as it dials
// them, with DialControl on its dialer; other requests are not checked.
func ExampleDialControl() {
	tr := &http.Transport{
		Proxy:       http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{Timeout: 10 * time.Second, ControlContext: policy.DialControl}).DialContext,
	}
	r, err := policy.NewResolver(policy.WithHTTPClient(&http.Client{Transport: tr}))
	fmt.Println(r != nil, err)
	// Output: true <nil>
}

// The bound of each fetch: package usage reads a page's licences within
// it, all together.
func ExampleResolver_Timeout() {
	r, _ := policy.NewResolver(policy.WithTimeout(10 * time.Second))
	fmt.Println(r.Timeout())
	// Output: 10s
}
