package policy

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Policy.Document gives robots.txt with the hash and bytes of the copy in
// force; with no rules in force, the fetch's outcome and no hash.
// CachedDocument finds a document without fetching it.
func TestPolicyDocument(t *testing.T) {
	const body = "User-agent: *\nDisallow: /private\n"
	mux := http.NewServeMux()
	mux.Handle("/robots.txt", text(200, body))
	mux.Handle("/doc", text(200, "a document"))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	defer gone.Close()
	r := newResolver(t)

	d := mustPolicy(t, r, srv.URL+"/").Document()
	if d.SHA256 != sha256.Sum256([]byte(body)) || string(d.Body()) != body || d.Status != 200 || d.Err != "" ||
		d.URL != srv.URL+"/robots.txt" || d.Fetched.IsZero() || d.Value == nil {
		t.Errorf("robots.txt document: %+v", d)
	}
	d = mustPolicy(t, r, gone.URL+"/").Document()
	if d.SHA256 != ([32]byte{}) || d.Body() != nil || d.Status != 404 || !strings.Contains(d.Err, "404") {
		t.Errorf("a 404 robots.txt: %+v", d)
	}

	kind := &DocumentKind{Name: "test", Accept: "*/*", MaxBytes: 100,
		Parse: func(b []byte) (any, time.Duration, error) { return string(b), 0, nil }}
	if r.CachedDocument(srv.URL+"/doc", kind) != nil {
		t.Fatal("CachedDocument found a document never fetched")
	}
	fetched, err := r.Document(context.Background(), mustURL(t, srv.URL+"/"), srv.URL+"/doc", kind)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.CachedDocument(srv.URL+"/doc", kind); got != fetched || string(got.Body()) != "a document" ||
		got.SHA256 != sha256.Sum256([]byte("a document")) {
		t.Errorf("CachedDocument = %+v; want the document fetched, %+v", got, fetched)
	}
}
