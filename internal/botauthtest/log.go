package botauthtest

import (
	"net/http"
	"sync"
)

// Seen is one request a site received, as its Verifier judged it.
type Seen struct {
	Host, Path string // the request's Host and URL path
	Signed     bool   // it carried Signature, Signature-Input or Signature-Agent
	Input      string // its Signature-Input field
	Check      Check  // what Verify found, when Err is nil
	Err        error  // why Verify refused it
}

// Log records every request the handlers it wraps receive, each judged by
// V. It is safe for concurrent use.
type Log struct {
	V    *Verifier
	mu   sync.Mutex
	seen []Seen
}

// Wrap returns h with every request recorded before h serves it.
func (l *Log) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := Seen{Host: r.Host, Path: r.URL.Path, Input: r.Header.Get("Signature-Input"),
			Signed: r.Header.Get("Signature") != "" || r.Header.Get("Signature-Input") != "" || r.Header.Get("Signature-Agent") != ""}
		s.Check, s.Err = l.V.Verify(r)
		l.mu.Lock()
		l.seen = append(l.seen, s)
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// Seen returns the requests recorded so far, in arrival order.
func (l *Log) Seen() []Seen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Seen(nil), l.seen...)
}
