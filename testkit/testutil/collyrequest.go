package testutil

import (
	"net/url"
	"testing"

	"github.com/gocolly/colly/v2"
)

// CollyRequest returns a GET of u serialised as Colly's queue serialises
// it (colly.Request.Marshal): what a queue.Storage receives in AddRequest.
func CollyRequest(t testing.TB, u string) []byte {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	b, err := (&colly.Request{URL: pu, Method: "GET", Ctx: colly.NewContext()}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
