package botauth

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

const formAgent = "https://bot.example" + DirectoryPath

// signedBase signs a GET of u with s at now and returns the base and the
// Signature-Agent field.
func signedBase(t *testing.T, s *Signer, u string, now time.Time) (base, agent string) {
	t.Helper()
	req := httptest.NewRequest("GET", u, nil)
	base, err := s.sign(req, now, &s.spec)
	if err != nil {
		t.Fatal(err)
	}
	return base, req.Header.Get("Signature-Agent")
}

// TestForms: the default form is the String one, covered bare; the
// Dictionary form is WithForm(DictionaryForm), covered with its key.
func TestForms(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		opts      []Option
		agent, id string
	}{
		{nil, `"` + formAgent + `"`, `"signature-agent": "` + formAgent + `"`},
		{[]Option{WithForm(StringForm)}, `"` + formAgent + `"`, `"signature-agent": "` + formAgent + `"`},
		{[]Option{WithForm(DictionaryForm)}, `sig1="` + formAgent + `"`, `"signature-agent";key="sig1": "` + formAgent + `"`},
	} {
		s, err := NewSigner(formAgent, []Key{seedKey(t, 40)}, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		base, agent := signedBase(t, s, "https://shop.example/", now)
		if agent != tc.agent || !strings.Contains(base, "\n"+tc.id+"\n") {
			t.Errorf("%v: Signature-Agent %s, base\n%s\nwant %s and the line %s", tc.opts, agent, base, tc.agent, tc.id)
		}
	}
}

// TestChallengeOtherForm: a challenge asking for the form the signer does
// not send by default is answered in the form asked.
func TestChallengeOtherForm(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		form      Form
		ask       string
		agent, id string
	}{
		{StringForm, `sig1=("@authority" "signature-agent";key="sig1");created`, `sig1="` + formAgent + `"`, `"signature-agent";key="sig1"`},
		{DictionaryForm, `sig1=("@authority" "signature-agent");created`, `"` + formAgent + `"`, `"signature-agent"`},
	} {
		s, err := NewSigner(formAgent, []Key{seedKey(t, 41)}, WithForm(tc.form))
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("GET", "https://shop.example/", nil)
		sp, err := s.readChallenge([]string{tc.ask}, req, now)
		if err != nil {
			t.Fatal(err)
		}
		base, err := s.sign(req, now, sp)
		if err != nil {
			t.Fatal(err)
		}
		if got := req.Header.Get("Signature-Agent"); got != tc.agent || !strings.Contains(base, "\n"+tc.id+": \""+formAgent+"\"\n") {
			t.Errorf("%v answering %s: Signature-Agent %s, base\n%s", tc.form, tc.ask, got, base)
		}
	}
}

// TestQueryCovered: in the String form "@query" is covered only for a URL
// with a query ("?" alone is none, as Cloudflare's packages read it); the
// Dictionary form covers it always, "?" for none (RFC 9421 §2.2.7).
func TestQueryCovered(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		form Form
		url  string
		line string // the "@query" line of the base, "" for none
	}{
		{StringForm, "https://shop.example/a", ""},
		{StringForm, "https://shop.example/a?", ""},
		{StringForm, "https://shop.example/a?x=1&y", `"@query": ?x=1&y`},
		{DictionaryForm, "https://shop.example/a", `"@query": ?`},
		{DictionaryForm, "https://shop.example/a?x=1", `"@query": ?x=1`},
	} {
		s, err := NewSigner(formAgent, []Key{seedKey(t, 42)}, WithForm(tc.form), Cover("@path", "@query"))
		if err != nil {
			t.Fatal(err)
		}
		base, _ := signedBase(t, s, tc.url, now)
		got := ""
		for _, l := range strings.Split(base, "\n") {
			if strings.HasPrefix(l, `"@query"`) {
				got = l
			}
		}
		params := base[strings.LastIndex(base, "\n")+1:]
		if got != tc.line || strings.Contains(params, `"@query"`) != (tc.line != "") {
			t.Errorf("%v %s: @query line %q, parameters %s; want %q", tc.form, tc.url, got, params, tc.line)
		}
	}
}

// TestSkew: created is the skew before the signing instant (5 s by
// default, WithSkew otherwise), expires the window after created.
func TestSkew(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		opts             []Option
		created, expires int64
	}{
		{nil, 1_800_000_000 - 5, 1_800_000_000 - 5 + 60},
		{[]Option{WithSkew(0)}, 1_800_000_000, 1_800_000_060},
		{[]Option{WithSkew(30 * time.Second), WithWindow(10 * time.Minute)}, 1_800_000_000 - 30, 1_800_000_000 - 30 + 600},
	} {
		s, err := NewSigner(formAgent, []Key{seedKey(t, 43)}, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		base, _ := signedBase(t, s, "https://shop.example/", now)
		want := ";created=" + strconv.FormatInt(tc.created, 10) + ";"
		wantExp := ";expires=" + strconv.FormatInt(tc.expires, 10) + ";"
		if !strings.Contains(base, want) || !strings.Contains(base, wantExp) {
			t.Errorf("%v: %s; want %s and %s", tc.opts, base, want, wantExp)
		}
	}
}

// TestDirectoryMisdirected: the directory answers 421, unsigned, a request
// naming another Host than its own URL's; its own authority, however the
// client spells it (case, default port), gets the signed directory over
// "@authority";req of its own authority.
func TestDirectoryMisdirected(t *testing.T) {
	d, err := NewDirectory("https://bot.example"+DirectoryPath, []Key{seedKey(t, 44)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host string
		code int
	}{
		{"bot.example", 200},
		{"BOT.example:443", 200},
		{"evil.example", http.StatusMisdirectedRequest},
		{"bot.example:8443", 421},
		{"bot.example.evil.example", 421},
	} {
		req := httptest.NewRequest("GET", "https://bot.example"+DirectoryPath, nil)
		req.Host = tc.host
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, req)
		sig := rec.Header().Get("Signature")
		if rec.Code != tc.code || (sig != "") != (tc.code == 200) {
			t.Errorf("Host %s: %d, Signature %q; want %d", tc.host, rec.Code, sig, tc.code)
		}
		if tc.code == 200 && !strings.Contains(rec.Header().Get("Signature-Input"), `("@authority";req "content-digest")`) {
			t.Errorf("Host %s: Signature-Input %s", tc.host, rec.Header().Get("Signature-Input"))
		}
	}
	// The signature is over the directory's own authority: checked against
	// the draft's vector in TestDirectoryVector; here, a request through a
	// proxy that rewrote nothing but the scheme still gets it.
	req := httptest.NewRequest("GET", "http://bot.example"+DirectoryPath, nil)
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Errorf("behind a TLS proxy: %d", rec.Code)
	}
}
