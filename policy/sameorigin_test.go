package policy

import (
	"net/url"
	"testing"
)

func TestSameOrigin(t *testing.T) {
	from, _ := url.Parse("https://news.example:8443/archive/1?x=1")
	cases := []struct {
		target string
		want   bool
	}{
		{"https://news.example:8443/.well-known/tdmrep.json", true},
		{"https://news.example:8443", true},
		{"https://news.example:8443?q", true},
		{"https://news.example:8443#f", true},
		{"https://news.example:84430/x", false},
		{"https://news.example:8443.evil/x", false},
		{"https://news.example:8443@evil/x", false},
		{"http://news.example:8443/x", false},
		{"https://news.example/x", false},
		{"https:/news.example:8443/x", false},
		{"", false},
	}
	for _, c := range cases {
		if got := sameOrigin(from, c.target); got != c.want {
			t.Errorf("sameOrigin(%s, %q) = %v, want %v", from, c.target, got, c.want)
		}
	}
	if sameOrigin(nil, "https://news.example:8443/") || sameOrigin(&url.URL{Scheme: "https"}, "https:///") {
		t.Error("no page, or a page without a host, is no origin")
	}
	if n := testing.AllocsPerRun(100, func() { sameOrigin(from, cases[0].target) }); n != 0 {
		t.Errorf("sameOrigin allocates %v times", n)
	}
}
