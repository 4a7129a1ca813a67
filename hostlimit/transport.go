package hostlimit

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"

	"github.com/politecrawl/robots/internal/authority"
	"github.com/politecrawl/robots/internal/gatewait"
)

// Transport returns an http.RoundTripper that passes each request to next
// (http.DefaultTransport if nil) through the gate of its host, keyed by the
// authority of the request URL (see [Limiter]), with the host's delay as
// it is (SetDelay, Config.Delay); requests without an authority (not http
// or https) pass ungated. Every round trip is gated, so redirect hops and
// robots.txt fetches made through it are spaced too; the timeout of a
// robots.txt fetch of package policy does not run while it waits here.
//
// RoundTrip acquires a permit with the request's context (on failure it
// closes the request body and returns an error wrapping the context's
// error), then sends the request as [RoundTrip] does. The caller must close
// response bodies, as net/http requires: that releases the permit.
func (l *Limiter) Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &limitedTransport{l: l, next: next}
}

type limitedTransport struct {
	l    *Limiter
	next http.RoundTripper
}

func (t *limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var buf [128]byte
	key, err := authority.Append(buf[:0], req.URL)
	if err != nil {
		return t.next.RoundTrip(req)
	}
	p := new(permit)
	hook := gatewait.From(req.Context())
	if hook != nil {
		hook.Pause()
	}
	err = t.l.acquire(req.Context(), string(key), p, KeepDelay, -1)
	if hook != nil {
		hook.Resume()
	}
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("hostlimit: gave up waiting for %s's turn: %w", key, err)
	}
	return RoundTrip(t.next, req, p)
}

// RoundTrip sends req through next under the permit p, which it owns from
// then on. In StartToStart mode (for a permit of another limiter: always)
// it marks the send through an httptrace.ClientTrace WroteRequest hook
// (net/http's Transport calls it once the request is written; with a next
// that never calls it, Release counts as the send). It passes the
// response's status and header to p.Observe, and releases p when the round
// trip fails, when the response has no body (or is a 101 Switching
// Protocols), or when the body is done (releaseOnClose). It is the second
// half of [Limiter.Transport], for a gate that acquires its permits itself.
// Caveat: a request that net/http retries by itself on a fresh connection
// is one round trip here.
func RoundTrip(next http.RoundTripper, req *http.Request, p Permit) (*http.Response, error) {
	track := true
	if lp, ok := p.(*permit); ok {
		track = lp.track
	}
	if track {
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { p.Sent() }}
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	}
	resp, err := next.RoundTrip(req)
	if err != nil || resp == nil {
		p.Release()
		return resp, err
	}
	p.Observe(resp.StatusCode, resp.Header)
	if resp.Body == nil || resp.Body == http.NoBody || resp.StatusCode == http.StatusSwitchingProtocols {
		p.Release()
		return resp, nil
	}
	resp.Body = releaseOnClose(p, resp.Body)
	return resp, nil
}

// releaseOnClose returns body wrapped so that p is released once body
// returns an error or io.EOF from Read, or is closed. For a permit of a
// Limiter it allocates nothing: the permit is the wrapper.
func releaseOnClose(p Permit, body io.ReadCloser) io.ReadCloser {
	if lp, ok := p.(*permit); ok {
		lp.rc = body
		return (*permitBody)(lp)
	}
	return &releasingBody{p: p, rc: body}
}

// permitBody is a Limiter's permit as the body it releases.
type permitBody permit

func (b *permitBody) Read(buf []byte) (int, error) {
	n, err := b.rc.Read(buf)
	if err != nil {
		(*permit)(b).Release()
	}
	return n, err
}

func (b *permitBody) Close() error {
	err := b.rc.Close()
	(*permit)(b).Release()
	return err
}

// releasingBody releases a permit of another limiter.
type releasingBody struct {
	p  Permit
	rc io.ReadCloser
}

func (b *releasingBody) Read(buf []byte) (int, error) {
	n, err := b.rc.Read(buf)
	if err != nil {
		b.p.Release()
	}
	return n, err
}

func (b *releasingBody) Close() error {
	err := b.rc.Close()
	b.p.Release()
	return err
}
