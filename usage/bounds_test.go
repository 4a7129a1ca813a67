package usage

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/politecrawl/robots/dialect"
)

// A tdmrep.json of more rules than MaxTDMRules is read up to the limit:
// its rule 0's reservation holds, and the evidence says how many rules
// were not read.
func TestUsageTDMRepPastRuleLimit(t *testing.T) {
	body := `[{"location": "/", "tdm-reservation": 1}` + strings.Repeat(`,{"location": "/x", "tdm-reservation": 0}`, MaxTDMRules+99) + `]`
	if len(body) > MaxTDMRepSize {
		t.Fatalf("the file is %d bytes, over the size limit", len(body))
	}
	site := newUsageSite(t, map[string]string{"/robots.txt": "User-agent: *\nAllow: /\n", tdmPath: body})
	got := refusal(usage(t, newResolver(t), site.URL+"/a", trainAI), trainAI)
	if want := "train-ai=n: tdmrep.json rule 0 (location /) (100 rules past 4096 not read): 1"; got != want {
		t.Errorf("refusal %q, want %q", got, want)
	}
}

// A tdmrep.json redirected to another origin is read (the protocol lets
// the file's URL redirect), and the evidence names the URL it was read
// from.
func TestUsageTDMRepOtherOrigin(t *testing.T) {
	other := newUsageSite(t, map[string]string{"/rules.json": `[{"location": "/", "tdm-reservation": 1}]`})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = w.Write([]byte("User-agent: *\nAllow: /\n"))
		case tdmPath:
			http.Redirect(w, r, other.URL+"/rules.json", http.StatusFound)
		}
	}))
	defer site.Close()
	got := refusal(usage(t, newResolver(t), site.URL+"/a", trainAI), trainAI)
	if want := "train-ai=n: tdmrep.json rule 0 (location /) of " + other.URL + "/rules.json: 1"; got != want {
		t.Errorf("refusal %q, want %q", got, want)
	}
}

// A value a site states is quoted in a signal up to 256 bytes, at a rune
// boundary, then "…": a header of 1 MB does not make a reason of 1 MB.
func TestUsageQuotedValuesBounded(t *testing.T) {
	site := newUsageSite(t, map[string]string{"/robots.txt": "User-agent: *\nAllow: /\n"})
	big := "train-ai=n, x=\"" + strings.Repeat("é", 512<<10) + "\""
	h := http.Header{"Content-Usage": {big}, "Tdm-Reservation": {"1"}, "Tdm-Policy": {"https://p.example/" + strings.Repeat("a", 1<<20)}}
	rep, err := CheckResponse(context.Background(), newResolver(t), mustURL(t, site.URL+"/a"), h, nil, dialect.TrainAI)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Signals) == 0 {
		t.Fatal("no signal")
	}
	for _, s := range rep.Signals {
		str := s.String()
		if len(str) > 1024 || !utf8.ValidString(str) {
			t.Errorf("a signal of %d bytes (valid UTF-8 %v): %.80s…", len(str), utf8.ValidString(str), str)
		}
	}
	for _, s := range rep.Signals {
		if s.Carrier == ContentUsageHeader && (!strings.HasSuffix(s.Value, "…") || len(s.Value) > maxQuoted+len("…")) {
			t.Errorf("Content-Usage value of %d bytes: %.80s", len(s.Value), s.Value)
		}
		if s.Carrier == TDMHeader && (!strings.HasSuffix(s.Policy, "…") || len(s.Policy) > maxQuoted+len("…")) {
			t.Errorf("tdm-policy of %d bytes: %.80s", len(s.Policy), s.Policy)
		}
	}
}
