package robots

import "net/http"

// The signing layers of WithSigner, in the order a request meets them:
//
//	Answering   (p.signing.Answering): a challenge answered once, above the gate
//	checkTransport / robotsTransport: the robots check and the host's gate
//	p.signing   (botauth.Transport): signed when it leaves
//	baseTransport: the base transport (WithTransport, or the collector's)
//
// Answering must sit above the gate: beneath it, the answer would wait for
// the host's permit that the challenged response still holds.

// baseTransport is the transport beneath the signer: the plugin's base as
// it is at each request (Attach and ensureTransport may adopt another).
type baseTransport struct{ p *core }

func (t baseTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.p.base.Load().RoundTripper.RoundTrip(req)
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
