package botauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
)

// A Transport signs each request with its [Signer] at the moment it is
// sent, then passes it to its base: Go's http.Client calls a transport
// once per redirect hop, so every hop is signed afresh for its own
// authority, and a retry that goes through RoundTrip again is signed again.
// Under a politeness gate (a per-host delay), place the Transport beneath
// the gate, so that a signature's created is the send time and not the
// start of the wait.
//
// A Transport answers no challenge by itself; see [Transport.Answering].
type Transport struct {
	base       http.RoundTripper
	signer     *Signer
	challenged bool
}

// NewTransport returns a Transport that signs with s and sends through
// base (http.DefaultTransport when nil). Option: [OnlyWhenChallenged].
func NewTransport(base http.RoundTripper, s *Signer, opts ...Option) (*Transport, error) {
	c, err := newConfig("NewTransport", forTransport, opts)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("%w: NewTransport: nil Signer", ErrOption)
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return &Transport{base: base, signer: s, challenged: c.challenged}, nil
}

// answerKey is the context key of the spec of a challenge's answer.
type answerKey struct{}

// RoundTrip signs a copy of req (the caller's request is not changed) at
// the signer's clock and sends it to the base transport. A request that
// answers a challenge (sent by [Transport.Answering]) is signed as the
// challenge asked; with [OnlyWhenChallenged] other requests go unsigned.
// When the request cannot be signed (no key in force), it is not sent and
// the error wraps the cause.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	sp, answer := req.Context().Value(answerKey{}).(*spec)
	if !answer {
		if t.challenged {
			return t.base.RoundTrip(req)
		}
		sp = &t.signer.spec
	}
	r := req.WithContext(req.Context())
	r.Header = req.Header.Clone()
	if r.Header == nil {
		r.Header = make(http.Header)
	}
	if _, err := t.signer.sign(r, t.signer.now(), sp); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("botauth: request not sent: %w", err)
	}
	return t.base.RoundTrip(r)
}

// Answering returns a RoundTripper that sends each request through next
// and answers a challenge once: when the answer is a 401, 403 or 429 with
// an Accept-Signature field that asks for a signature the signer can make
// honestly (see below), it sends the request again through next, carrying
// the request for t to sign, and returns what that brings (a challenge to
// the answer is not answered). next must lead to t, and should pass its
// politeness gate on the way so that the second request waits its turn:
// with a gate in a transport of its own, Answering(gate(t)); with none,
// Answering(t). next nil is t.
//
// The answer carries exactly the label and components asked, and the
// parameters asked, bare ones filled in and valued ones used as given;
// created, expires and keyid are added when not asked for. A challenge is
// declined, and the first answer returned as it is, when it asks for a
// signature that would cover neither "@authority" nor "@target-uri", for a
// field the request lacks, for a key not in force, for an algorithm other
// than ed25519 or for parameters or lifetimes it cannot honour (see
// [MaxWindow]); also when the request's body cannot be sent again (no
// GetBody). A declined challenge is logged at Debug level.
func (t *Transport) Answering(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = t
	}
	return &answerer{t: t, next: next}
}

type answerer struct {
	t    *Transport
	next http.RoundTripper
}

func (a *answerer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := a.next.RoundTrip(req)
	if err != nil || !challengeStatus(resp.StatusCode) || resp.Header.Get("Accept-Signature") == "" ||
		req.Context().Value(answerKey{}) != nil {
		return resp, err
	}
	sp, err := a.answer(req, resp)
	if err != nil {
		slog.Debug("botauth: challenge not answered", slog.String("url", req.URL.Redacted()),
			slog.Int("status", resp.StatusCode), slog.String("reason", err.Error()))
		return resp, nil
	}
	ans := req.Clone(context.WithValue(req.Context(), answerKey{}, sp))
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			slog.Debug("botauth: challenge not answered", slog.String("url", req.URL.Redacted()),
				slog.Int("status", resp.StatusCode), slog.String("reason", err.Error()))
			return resp, nil
		}
		ans.Body = body
	}
	// Let the connection be reused, and a gate that holds the host until
	// the body is closed let the answer through.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return a.next.RoundTrip(ans)
}

// answer is the spec answering resp's challenge to req, or why there is
// none.
func (a *answerer) answer(req *http.Request, resp *http.Response) (*spec, error) {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return nil, errors.New("the request's body cannot be sent again")
	}
	s := a.t.signer
	return s.readChallenge(resp.Header.Values("Accept-Signature"), req, s.now())
}
