package usage

import (
	"net/url"
	"testing"

	"github.com/politecrawl/robots/policy"
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// newResolver is policy.NewResolver for options that are valid: an error
// fails the test.
func newResolver(tb testing.TB, opts ...policy.Option) *policy.Resolver {
	tb.Helper()
	r, err := policy.NewResolver(opts...)
	if err != nil {
		tb.Fatalf("NewResolver: %v", err)
	}
	return r
}
