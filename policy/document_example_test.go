package policy_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/politecrawl/robots/policy"
)

// A document a site names beside robots.txt, fetched and kept as
// robots.txt is: once however many ask, within its size limit.
func ExampleResolver_Document() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "terms: read only")
	}))
	defer site.Close()
	r, _ := policy.NewResolver()
	page, _ := url.Parse(site.URL + "/") // the page that names the document
	kind := &policy.DocumentKind{Name: "terms", Accept: "text/plain", MaxBytes: 1 << 10,
		Parse: func(b []byte) (any, time.Duration, error) {
			if b == nil {
				return nil, 0, nil // no document: kept as its answer says
			}
			return strings.TrimPrefix(string(b), "terms: "), 0, nil
		}}
	d, err := r.Document(context.Background(), page, site.URL+"/terms.txt", kind)
	if err != nil {
		return
	}
	fmt.Println(d.Status, d.Value)
	// Output: 200 read only
}
