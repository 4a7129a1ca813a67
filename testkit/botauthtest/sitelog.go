// Package botauthtest is test support for signed crawls: a record of the
// requests a site receives, each with its botauth verifier's result. It
// lives apart from testutil, which botauth's own tests import.
package botauthtest

import (
	"net/http"
	"sync"

	"github.com/politecrawl/robots/botauth"
)

// Request is one request a site received, with its verifier's result.
type Request struct {
	Host, Path string
	Input      string // its Signature-Input field
	Signed     bool   // it carried Signature, Signature-Input or Signature-Agent
	Res        botauth.Result
}

// SiteLog records every request the handlers it wraps receive, each
// verified by V's middleware, whose result the handlers read with
// botauth.ResultOf. It is safe for concurrent use.
type SiteLog struct {
	V    *botauth.Verifier
	mu   sync.Mutex
	seen []Request
}

// Wrap returns h behind V's middleware, recording each request.
func (l *SiteLog) Wrap(h http.Handler) http.Handler {
	return l.V.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, _ := botauth.ResultOf(r)
		s := Request{Host: r.Host, Path: r.URL.Path, Input: r.Header.Get("Signature-Input"), Res: res,
			Signed: r.Header.Get("Signature") != "" || r.Header.Get("Signature-Input") != "" || r.Header.Get("Signature-Agent") != ""}
		l.mu.Lock()
		l.seen = append(l.seen, s)
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
}

// Seen returns the requests received so far, in order.
func (l *SiteLog) Seen() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Request(nil), l.seen...)
}
