package botauth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// challengeSite answers 403 with a challenge (Accept-Signature: challenge)
// unless the request carries a signature the verifier accepts with the
// label "chal" and the nonce "srv-nonce-1"; always, it challenges every
// request.
func challengeSite(t *testing.T, cs *crawlerSetup, st *site, status int, challenge string, always bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := st.record(cs.v, r)
		if !always && e.err == nil && e.c.Label == "chal" && e.c.Nonce == "srv-nonce-1" {
			fmt.Fprint(w, "welcome")
			return
		}
		w.Header().Set("Accept-Signature", challenge)
		w.WriteHeader(status)
		fmt.Fprint(w, "sign please")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newChallengeTransport(t *testing.T, cs *crawlerSetup, opts ...Option) *Transport {
	t.Helper()
	s, err := NewSigner(cs.agent, cs.keys, WithClock(cs.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTransport(nil, s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func get(t *testing.T, rt http.RoundTripper, u string) (int, string) {
	t.Helper()
	resp, err := (&http.Client{Transport: rt}).Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

const askFor = `chal=("@authority" "@method" "signature-agent";key="chal");created;expires;keyid=%q;nonce="srv-nonce-1";tag="web-bot-auth"`

// TestChallengeAnswered: a 401, 403 or 429 with Accept-Signature is
// answered once, with the label, exactly the components, and the
// parameters asked (bare ones filled in, the nonce as given), whether the
// first request went unsigned (OnlyWhenChallenged) or signed as usual.
func TestChallengeAnswered(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		opts   []Option
	}{
		{"403 only when challenged", 403, []Option{OnlyWhenChallenged()}},
		{"401 signed always", 401, nil},
		{"429 signed always", 429, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := newCrawlerSetup(t, defaultWindow, seedKey(t, 7))
			kid := cs.keys[0].Thumbprint()
			var st site
			srv := challengeSite(t, cs, &st, tc.status, fmt.Sprintf(askFor, kid), false)
			tr := newChallengeTransport(t, cs, tc.opts...)
			code, body := get(t, tr.Answering(tr), srv.URL+"/members")
			if code != 200 || body != "welcome" || len(st.seen) != 2 {
				t.Fatalf("%d %q after %d requests", code, body, len(st.seen))
			}
			first, answer := st.seen[0], st.seen[1]
			if unsigned := first.input == ""; unsigned != (len(tc.opts) > 0) {
				t.Errorf("first request's Signature-Input %q", first.input)
			}
			created := cs.clock.Now().Unix() - int64(defaultSkew/time.Second) // a bare created is back-dated too
			want := fmt.Sprintf(`chal=("@authority" "@method" "signature-agent";key="chal");created=%d;expires=%d;keyid="%s";nonce="srv-nonce-1";tag="web-bot-auth"`, created, created+60, kid)
			if answer.err != nil || answer.input != want {
				t.Errorf("answer: %v\n got %s\nwant %s", answer.err, answer.input, want)
			}
		})
	}
}

// TestChallengeOff: without Answering a challenge goes back to the caller
// as it came, after one request; with OnlyWhenChallenged and no Answering
// nothing is signed.
func TestChallengeOff(t *testing.T) {
	cs := newCrawlerSetup(t, defaultWindow, seedKey(t, 8))
	var st site
	srv := challengeSite(t, cs, &st, 403, fmt.Sprintf(askFor, cs.keys[0].Thumbprint()), false)
	code, body := get(t, newChallengeTransport(t, cs, OnlyWhenChallenged()), srv.URL+"/")
	if code != 403 || body != "sign please" || len(st.seen) != 1 || st.seen[0].input != "" {
		t.Errorf("%d %q, seen %+v", code, body, st.seen)
	}
}

// TestChallengeAnsweredOnce: a site that challenges the answer too gets
// two requests, and its second challenge goes back to the caller.
func TestChallengeAnsweredOnce(t *testing.T) {
	cs := newCrawlerSetup(t, defaultWindow, seedKey(t, 9))
	var st site
	srv := challengeSite(t, cs, &st, 403, fmt.Sprintf(askFor, cs.keys[0].Thumbprint()), true)
	tr := newChallengeTransport(t, cs)
	code, body := get(t, tr.Answering(nil), srv.URL+"/")
	if code != 403 || body != "sign please" || len(st.seen) != 2 {
		t.Errorf("%d %q after %d requests", code, body, len(st.seen))
	}
}

// TestChallengeDeclined: a challenge that cannot be honoured is not
// answered, for the reason readChallenge gives; the caller gets the
// challenge itself, its body unread.
func TestChallengeDeclined(t *testing.T) {
	cs := newCrawlerSetup(t, defaultWindow, seedKey(t, 10))
	for _, tc := range []struct{ name, challenge, reason string }{
		{"no authority", `s=("@method" "signature-agent";key="s");created`, "neither"},
		{"derived unknown", `s=("@authority" "@status")`, `"@status"`},
		{"field absent", `s=("@authority" "x-missing")`, "no such field"},
		{"field parameter", `s=("@authority" "accept";sf)`, `parameter "sf"`},
		{"other key", `s=("@authority");keyid="someone-else"`, "no key"},
		{"other algorithm", `s=("@authority");alg="rsa-pss-sha512"`, "only ed25519"},
		{"expired", `s=("@authority");expires=1`, "expires=1"},
		{"too long", fmt.Sprintf(`s=("@authority");expires=%d`, cs.clock.Now().Add(MaxWindow+time.Hour).Unix()), "after created"},
		{"old created", `s=("@authority");created=1`, "away from now"},
		{"unknown param", `s=("@authority");foo="bar"`, `"foo"`},
		{"item not list", `s="@authority"`, "not an inner list"},
		{"twice", `s=("@authority" "@authority")`, "twice"},
		{"not a dictionary", `(((`, "Accept-Signature:"},
		{"too big", `s=("@authority");nonce="` + strings.Repeat("n", maxChallengeBytes) + `"`, "over"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newChallengeTransport(t, cs)
			req := httptest.NewRequest("GET", "http://shop.example/", nil)
			req.Header.Set("Accept", "text/html")
			if _, err := tr.signer.readChallenge([]string{tc.challenge}, req, cs.clock.Now()); err == nil || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("readChallenge: %v; want a reason with %s", err, tc.reason)
			}
			var st site
			srv := challengeSite(t, cs, &st, 403, tc.challenge, false)
			code, body := get(t, tr.Answering(tr), srv.URL+"/")
			if code != 403 || body != "sign please" || len(st.seen) != 1 {
				t.Errorf("%d %q after %d requests", code, body, len(st.seen))
			}
		})
	}
}

// TestChallengeBody: the answer to a POST carries its body again; a body
// that cannot be sent again (no GetBody) declines the challenge.
func TestChallengeBody(t *testing.T) {
	cs := newCrawlerSetup(t, defaultWindow, seedKey(t, 11))
	var st site
	srv := challengeSite(t, cs, &st, 403, fmt.Sprintf(askFor, cs.keys[0].Thumbprint()), false)
	tr := newChallengeTransport(t, cs)
	client := &http.Client{Transport: tr.Answering(tr)}
	for _, replayable := range []bool{true, false} {
		st.seen = nil
		var body io.Reader = strings.NewReader("q=robots")
		if !replayable {
			body = io.NopCloser(body)
		}
		req, _ := http.NewRequest("POST", srv.URL+"/search", body)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch {
		case replayable && (resp.StatusCode != 200 || len(st.seen) != 2 || st.seen[1].body != "q=robots"):
			t.Errorf("replayable body: %d, seen %+v", resp.StatusCode, st.seen)
		case !replayable && (resp.StatusCode != 403 || len(st.seen) != 1):
			t.Errorf("body without GetBody: %d after %d requests", resp.StatusCode, len(st.seen))
		}
	}
}

// holdGate is a politeness gate as the robots plugin has one: one request
// in flight at a time, held from its send until its response's body is
// closed.
type holdGate struct {
	next   http.RoundTripper
	slot   chan struct{}
	passes atomic.Int32
}

func (g *holdGate) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case g.slot <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	g.passes.Add(1)
	resp, err := g.next.RoundTrip(req)
	if err != nil {
		<-g.slot
		return nil, err
	}
	resp.Body = &releaseBody{ReadCloser: resp.Body, g: g}
	return resp, nil
}

type releaseBody struct {
	io.ReadCloser
	g    *holdGate
	done atomic.Bool
}

func (b *releaseBody) Close() error {
	if !b.done.Swap(true) {
		<-b.g.slot
	}
	return b.ReadCloser.Close()
}

// TestChallengeThroughGate: with the transport beneath a gate that holds
// the host until a response is closed, Answering above the gate sends the
// answer through the gate again (two passes), which it can only do once
// the challenge's response is released.
func TestChallengeThroughGate(t *testing.T) {
	cs := newCrawlerSetup(t, defaultWindow, seedKey(t, 12))
	var st site
	srv := challengeSite(t, cs, &st, 403, fmt.Sprintf(askFor, cs.keys[0].Thumbprint()), false)
	tr := newChallengeTransport(t, cs, OnlyWhenChallenged())
	gate := &holdGate{next: tr, slot: make(chan struct{}, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/", nil)
	resp, err := (&http.Client{Transport: tr.Answering(gate)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || gate.passes.Load() != 2 || len(st.seen) != 2 || st.seen[1].err != nil {
		t.Errorf("%d after %d passes of the gate, seen %+v", resp.StatusCode, gate.passes.Load(), st.seen)
	}
}
