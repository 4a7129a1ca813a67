package botauth

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/robots/testkit/testutil"
)

// seedKey is a Key made from a seed of n repeated.
func seedKey(t testing.TB, n byte) Key {
	t.Helper()
	k, err := NewKey(ed25519.NewKeyFromSeed([]byte(strings.Repeat(string([]byte{n}), ed25519.SeedSize))))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// crawlerSetup is a crawler's identity as a site sees it: its directory
// served over TLS, and a verifier that trusts its certificate and accepts
// signatures lasting up to the window.
type crawlerSetup struct {
	clock *testutil.StepClock
	keys  []Key
	agent string
	v     *Verifier
}

func newCrawlerSetup(t *testing.T, window time.Duration, keys ...Key) *crawlerSetup {
	t.Helper()
	clock := testutil.NewStepClock()
	var dir *Directory
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { dir.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	dir, err := NewDirectory(srv.URL+DirectoryPath, keys, WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	agent := srv.URL + DirectoryPath
	v, err := NewVerifier(VerifyClient(srv.Client()), VerifyClock(clock.Now), VerifyWindow(window))
	if err != nil {
		t.Fatal(err)
	}
	return &crawlerSetup{clock: clock, keys: keys, agent: agent, v: v}
}

// seen is one request a site received, as the verifier judged it.
type seen struct {
	path  string
	input string // the Signature-Input field as received
	body  string
	c     Result
	err   error // the verdict and its reason unless verified
}

// site is a server that verifies every request it receives.
type site struct {
	mu   sync.Mutex
	seen []seen
}

func (s *site) record(v *Verifier, r *http.Request) seen {
	c := v.Verify(r)
	var err error
	if c.Verdict != Verified {
		err = fmt.Errorf("%v: %s", c.Verdict, c.Reason)
	}
	body, _ := io.ReadAll(r.Body)
	e := seen{r.URL.Path, r.Header.Get("Signature-Input"), string(body), c, err}
	s.mu.Lock()
	s.seen = append(s.seen, e)
	s.mu.Unlock()
	return e
}

// TestSignedRedirectHops sends a request through a real http.Client with
// the Transport to a site that redirects to another host, and has each
// hop checked by the site's Verifier: both verify (each for its own
// authority) naming the crawler's directory, each was signed when it was sent (the clock moves 5 s
// while the first host answers), with expires the configured window after
// created, and fresh nonces.
func TestSignedRedirectHops(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []Option
		window time.Duration
		comps  [2]string // of each hop: /start, then /landing?x=1
	}{
		{"default", nil, defaultWindow, [2]string{`"@authority" "signature-agent"`, `"@authority" "signature-agent"`}},
		{"cover", []Option{Cover("@method", "@path", "@query")}, defaultWindow, [2]string{
			`"@authority" "signature-agent" "@method" "@path"`, // no query, no "@query" in the String form
			`"@authority" "signature-agent" "@method" "@path" "@query"`}},
		{"dictionary", []Option{WithForm(DictionaryForm), WithWindow(10 * time.Minute), Cover("@query")}, 10 * time.Minute, [2]string{
			`"@authority" "signature-agent";key="sig1" "@query"`,
			`"@authority" "signature-agent";key="sig1" "@query"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := newCrawlerSetup(t, tc.window, seedKey(t, 1))
			s, err := NewSigner(cs.agent, cs.keys, append(tc.opts, WithClock(cs.clock.Now))...)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := NewTransport(nil, s)
			if err != nil {
				t.Fatal(err)
			}
			var st site
			b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				st.record(cs.v, r)
			}))
			defer b.Close()
			bu, _ := url.Parse(b.URL)
			bu.Host = "localhost:" + bu.Port() // another host name
			a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				st.record(cs.v, r)
				cs.clock.Advance(5 * time.Second)
				http.Redirect(w, r, bu.String()+"/landing?x=1", http.StatusFound)
			}))
			defer a.Close()
			au, _ := url.Parse(a.URL)

			start := cs.clock.Now().Unix() - int64(defaultSkew/time.Second) // created is back-dated
			resp, err := (&http.Client{Transport: tr}).Get(a.URL + "/start")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(st.seen) != 2 {
				t.Fatalf("the sites saw %d requests, want 2", len(st.seen))
			}
			for i, want := range []struct {
				path, authority string
				created         int64
			}{{"/start", au.Host, start}, {"/landing", bu.Host, start + 5}} {
				got := st.seen[i]
				if got.err != nil {
					t.Fatalf("hop %d (%s): %v", i, got.path, got.err)
				}
				if got.path != want.path || got.c.Agent != cs.agent || got.c.Created.Unix() != want.created ||
					got.c.Expires.Unix() != want.created+int64(tc.window/time.Second) || got.c.KeyID != cs.keys[0].Thumbprint() {
					t.Errorf("hop %d: %s %+v; want %s at %s created %d", i, got.path, got.c, want.path, want.authority, want.created)
				}
				if comps := strings.Join(got.c.Components, " "); comps != tc.comps[i] {
					t.Errorf("hop %d covers %s, want %s", i, comps, tc.comps[i])
				}
			}
			if st.seen[0].c.Nonce == st.seen[1].c.Nonce {
				t.Error("both hops carry the same nonce")
			}
		})
	}
}

// TestRetrySignedAgain: a request sent twice through RoundTrip (as a retry
// layer does) is signed afresh each time, and the caller's request keeps
// its header as it was.
func TestRetrySignedAgain(t *testing.T) {
	cs := newCrawlerSetup(t, defaultWindow, seedKey(t, 2))
	s, err := NewSigner(cs.agent, cs.keys, WithClock(cs.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTransport(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	var st site
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st.record(cs.v, r)
	}))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/page", nil)
	for range 2 {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		cs.clock.Advance(3 * time.Second)
	}
	if len(req.Header) != 0 {
		t.Errorf("the caller's request was changed: %v", req.Header)
	}
	if len(st.seen) != 2 || st.seen[0].err != nil || st.seen[1].err != nil {
		t.Fatalf("seen %+v", st.seen)
	}
	if st.seen[1].c.Created.Sub(st.seen[0].c.Created) != 3*time.Second || st.seen[0].c.Nonce == st.seen[1].c.Nonce {
		t.Errorf("the retry was not signed again: %+v then %+v", st.seen[0].c, st.seen[1].c)
	}
}

// TestVerifierRejects shows the verifier can fail: a good signature, then
// a fresh one sent to another host, one with another Signature-Agent,
// without it, signed by a key the directory lacks, and one past expiry.
func TestVerifierRejects(t *testing.T) {
	cs := newCrawlerSetup(t, defaultWindow, seedKey(t, 3))
	sign := func(keys []Key) http.Header {
		s, err := NewSigner(cs.agent, keys)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("GET", "http://shop.example/cart", nil)
		if err := s.Sign(req, cs.clock.Now()); err != nil {
			t.Fatal(err)
		}
		return req.Header
	}
	at := func(host string, h http.Header) *http.Request {
		r := httptest.NewRequest("GET", "http://"+host+"/cart", nil)
		r.Header = h.Clone()
		return r
	}
	if res := cs.v.Verify(at("shop.example", sign(cs.keys))); res.Verdict != Verified {
		t.Fatalf("good signature: %v: %s", res.Verdict, res.Reason)
	}
	otherAgent := sign(cs.keys)
	otherAgent.Set("Signature-Agent", strings.Replace(otherAgent.Get("Signature-Agent"), DirectoryPath, "/other", 1))
	noAgent := sign(cs.keys)
	noAgent.Del("Signature-Agent")
	for name, r := range map[string]*http.Request{
		"sent elsewhere": at("bank.example", sign(cs.keys)),
		"other agent":    at("shop.example", otherAgent),
		"no agent":       at("shop.example", noAgent),
		"unknown key":    at("shop.example", sign([]Key{seedKey(t, 4)})),
	} {
		if res := cs.v.Verify(r); res.Verdict == Verified {
			t.Errorf("%s: verified", name)
		}
	}
	late := sign(cs.keys)
	cs.clock.Advance(defaultWindow + defaultVerifySkew + time.Second)
	if res := cs.v.Verify(at("shop.example", late)); res.Verdict != Expired {
		t.Errorf("expired: %v", res.Verdict)
	}
}

// TestRotation: with an old key about to expire and a new one published
// early, the directory lists both with their nbf and exp and signs with
// both; the signer signs with the old one until the new one starts, then
// with the new one; past the old one's expiry the directory drops it.
func TestRotation(t *testing.T) {
	start := testutil.ClockStart
	old, next := seedKey(t, 5), seedKey(t, 6)
	old.Expires = start.Add(2 * time.Hour)
	next.NotBefore = start.Add(time.Hour)
	cs := newCrawlerSetup(t, defaultWindow, old, next)
	if keys, err := cs.v.directory(context.Background(), cs.agent); len(keys) != 2 {
		t.Fatalf("directory gives %d signed keys, want 2 (%v)", len(keys), err)
	}
	s, err := NewSigner(cs.agent, cs.keys, WithClock(cs.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	keyAt := func() string {
		req := httptest.NewRequest("GET", "http://shop.example/", nil)
		if err := s.Sign(req, cs.clock.Now()); err != nil {
			t.Fatal(err)
		}
		res := cs.v.Verify(req)
		if res.Verdict != Verified {
			t.Fatalf("%v: %s", res.Verdict, res.Reason)
		}
		return res.KeyID
	}
	if k := keyAt(); k != old.Thumbprint() {
		t.Errorf("before the new key starts: signed with %s", k)
	}
	cs.clock.Advance(time.Hour)
	if k := keyAt(); k != next.Thumbprint() {
		t.Errorf("once the new key started: signed with %s", k)
	}
	cs.clock.Advance(time.Hour)
	d, err := NewDirectory("https://bot.example"+DirectoryPath, cs.keys, WithClock(cs.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest("GET", "https://bot.example"+DirectoryPath, nil))
	body, _ := io.ReadAll(rec.Body)
	if strings.Contains(string(body), old.Thumbprint()) || !strings.Contains(string(body), `"nbf":`) ||
		len(rec.Header().Values("Signature")) != 1 {
		t.Errorf("after the old key expired: %s %v", body, rec.Header())
	}
}
