package robots

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/policy"
)

// checkTransport is the collectors' transport. A request OnRequest let
// through or stopped carries its ticket (handoff.go): a stop fails there,
// a request let through goes to the host's gate. Any other request (a
// redirect hop, which no Colly callback sees; a request of a clone the
// plugin is not attached to) goes down the decision path first (decide).
type checkTransport struct {
	p     *core
	h     *handoff
	owner any // the *Plugin it is the transport of (pluginOf)
}

func (t *checkTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p := t.p
	tk := t.h.ticketIn(req.Header)
	if be := t.h.stopOf(tk); be != nil {
		// Stopped in OnRequest: fail it here so that OnError sees why.
		closeBody(req)
		return nil, be
	}
	if p.cfg.broken != nil {
		// A collector guarded only through the transport (an unattached clone).
		closeBody(req)
		return nil, t.h.hold(p, req, Block{Kind: Canceled, URL: req.URL.String(), Redirect: req.Response != nil, Reason: p.cfg.broken.Error()}, nil, nil, ticket{})
	}
	var pol *policy.Policy
	passed := tk.cs != nil && req.Response == nil // decided in OnRequest
	if passed {
		pol = p.resolver().Cached(tk.authority) // the policy it was decided under, expired since or not
	}
	if pol == nil {
		var err error
		pol, err = p.resolver().Policy(req.Context(), req.URL)
		if errors.Is(err, policy.ErrUnsupportedURL) {
			return p.sender().RoundTrip(req)
		}
		if err != nil {
			// The request's context ended while robots.txt was being fetched.
			return nil, t.cancelStop(req, err, nil, tk)
		}
	}
	var d time.Duration
	if passed {
		d, _ = p.delayOf(pol)
	} else {
		var b *Block
		if d, b = p.decide(req.Context(), req.URL, pol, pol.Check(req.URL)); b != nil {
			b.Redirect, b.URL, b.Reason = req.Response != nil, req.URL.String(), hopReason(req, b.Reason)
			closeBody(req)
			return nil, t.h.hold(p, req, *b, pol, nil, tk)
		}
	}
	p.checkUserAgent(req)
	base := p.sender()
	if p.signing == nil {
		return t.sendGated(base, req, pol, d, tk, false)
	}
	round := &challengeRound{send: func(r *http.Request, first bool) (*http.Response, error) {
		return t.sendGated(base, r, pol, d, tk, first)
	}}
	return p.signing.Answering(round).RoundTrip(req)
}

// sendGated passes req through the crawler-wide rate and its host's gate to
// base. An answer whose status asks to back off (hostlimit.BackoffStatus:
// 429, every 5xx but 501 and 505) pauses the host (the limiter's Observe);
// the request is then sent again once the pause is over, until it has had
// 1 + WithRetries such answers (its ticket counts those of its earlier
// rounds, before a hand-back), unless its body cannot be sent again. A
// pause that ends later than WithDeferWait (at least a second) hands the
// request back as Deferred; the last answer of a request out of retries
// goes to Colly as it is. A sitemap document is sent once: the walker
// retries it. With keepChallenge, a 429 carrying Accept-Signature is
// returned at once, for the challenge's answer (WithSigner) to be sent
// instead of an unsigned retry.
func (t *checkTransport) sendGated(base http.RoundTripper, req *http.Request, pol *policy.Policy, d time.Duration, tk ticket, keepChallenge bool) (*http.Response, error) {
	p, host := t.p, pol.Authority()
	retries := p.cfg.retries
	if isSitemapFetch(req) {
		retries = 0
	}
	prefix := "" // what the previous answer was, on a retry
	gate, fresh, budget := gateContext(req, tk.cs.userContext())
	for attempt := tk.answers; ; attempt++ {
		entry := time.Now()
		if err := p.takeToken(gate); err != nil {
			return nil, t.cancelStop(req, err, pol, tk)
		}
		permit, err := p.lim.AcquireMax(gate, host, d, p.pauseBound())
		if err != nil {
			if b, ok := pausedStop(req, err, prefix); ok {
				closeBody(req)
				be := t.h.hold(p, req, b, pol, nil, tk)
				be.answers = attempt
				return nil, be
			}
			return nil, t.cancelStop(req, fmt.Errorf("%sgave up waiting for the host's turn: %w", prefix, err), pol, tk)
		}
		if attempt > 0 {
			p.stats.record(host, HostStats{Retried: 1})
			p.log.Debug("robots: sent again after the host's pause", slog.String("url", req.URL.String()), slog.Int("retry", attempt))
		}
		sreq, cancel := freshDeadline(req, fresh, budget, entry, attempt > tk.answers)
		resp, err := hostlimit.RoundTrip(base, sreq, permit)
		if cancel != nil {
			if err != nil || resp.Body == nil {
				cancel()
			} else {
				resp.Body = &cancelOnClose{resp.Body, cancel}
			}
		}
		if err != nil || !hostlimit.BackoffStatus(resp.StatusCode) ||
			attempt >= retries || req.Body != nil && req.Body != http.NoBody && req.GetBody == nil ||
			keepChallenge && resp.Header.Get("Accept-Signature") != "" {
			return resp, err
		}
		status := resp.StatusCode
		// Let the connection be reused; the body's end releases the permit.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		// The retry waits out the pause at the gate, ahead of the requests
		// waiting in OnRequest: in the early queue it would wait behind
		// them while holding its LimitRule slot, and they, once let
		// through, for a slot (each holding the host for WaitClaim).
		prefix = fmt.Sprintf("answered %d; ", status)
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("robots: sending again after a %d: %w", status, err)
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}

// cancelStop stops req, whose context ended while the transport held it
// (err says where), and returns its error.
func (t *checkTransport) cancelStop(req *http.Request, err error, pol *policy.Policy, tk ticket) error {
	closeBody(req)
	return t.h.hold(t.p, req, canceledHop(req, err), pol, err, tk)
}
