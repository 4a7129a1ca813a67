package robots

import "net/http"

// The signing layers of WithSigner, in the order a request meets them:
//
//	Answering   (p.net.signing.Answering): a challenge answered once, above the gate
//	checkTransport / robotsTransport: the robots check and the host's gate
//	p.net.signing   (botauth.Transport): signed when it leaves
//	baseTransport: the base transport (WithTransport, or the collector's)
//
// Answering must sit above the gate: beneath it, the answer would wait for
// the host's permit that the challenged response still holds.

// baseTransport is the transport beneath the signer: the plugin's base as
// it is at each request (Attach and ensureTransport may adopt another).
type baseTransport struct{ p *Plugin }

func (t baseTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.p.net.base.Load().RoundTripper.RoundTrip(req)
}

// sender is the transport a request goes through once its host's gate let
// it through: the signer when there is one, else the base transport.
func (p *Plugin) sender() http.RoundTripper {
	if p.net.signing != nil {
		return p.net.signing
	}
	return p.net.base.Load().RoundTripper
}

// robotsFetches is the transport of the resolver's robots.txt fetches:
// gate and base, with challenges answered above the gate when signing.
func (p *Plugin) robotsFetches() http.RoundTripper {
	rt := &robotsTransport{p: p}
	if p.net.signing == nil {
		return rt
	}
	return p.net.signing.Answering(rt)
}

// challengeRound is the next transport of a page's Answering layer: the
// plugin's send, told on its first call (the request itself) to return a
// 429 carrying Accept-Signature rather than retry it, and on its second
// (the answer) to retry as usual. Answering calls it at most twice, one
// call after the other.
type challengeRound struct {
	send  func(req *http.Request, first bool) (*http.Response, error)
	calls int
}

func (r *challengeRound) RoundTrip(req *http.Request) (*http.Response, error) {
	r.calls++
	return r.send(req, r.calls == 1)
}
