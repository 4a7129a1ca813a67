package robots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/internal/gatewait"
	"github.com/politecrawl/robots/policy"
)

// checkTransport is the collectors' transport: it checks every request
// against robots.txt (redirect hops, which no Colly callback sees, and the
// requests of collectors guarded only through the transport), then passes
// it through the host's gate to the base transport.
type checkTransport struct{ p *Plugin }

func (t *checkTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p := t.p
	if v := req.Header[stopHeader]; len(v) > 0 {
		// Stopped in OnRequest: fail it here so that OnError sees why.
		closeBody(req)
		return nil, p.stoppedError(req, v[0])
	}
	// A request OnRequest let through, or a redirect hop of one (net/http
	// copies the mark to each hop): a stop is held for the OnError hook,
	// which reports it with its Colly request.
	var tk ticket
	if pv := req.Header[passHeader]; len(pv) > 0 {
		tk = p.slots.ticket(pv[0])
		delete(req.Header, passHeader) // never sent
	}
	answers := 0
	if v := req.Header[answersHeader]; len(v) > 0 {
		answers, _ = strconv.Atoi(v[0])
		delete(req.Header, answersHeader) // never sent
	}
	if p.broken != nil {
		// A collector guarded only through the transport (an unattached clone).
		b := p.stop(Block{Kind: Canceled, URL: req.URL.String(), Redirect: req.Response != nil, Reason: p.broken.Error()}, nil, nil)
		closeBody(req)
		return nil, &BlockedError{Block: b}
	}
	base := p.sender()
	res := p.resolver()
	pol, err := res.Policy(req.Context(), req.URL)
	if errors.Is(err, policy.ErrUnsupportedURL) {
		return base.RoundTrip(req)
	}
	if err != nil {
		// The request's context ended while robots.txt was being fetched.
		return nil, p.cancelStop(req, err, nil, tk)
	}
	v := pol.Check(req.URL)
	d, skip := p.delayOf(pol)
	ub, refused := p.usageStop(pol, req.URL, v)
	if v.Allowed && !skip && !refused {
		p.checkUserAgent(req)
		if p.signing == nil {
			return p.send(base, req, pol, d, tk, answers, false)
		}
		round := &challengeRound{send: func(r *http.Request, first bool) (*http.Response, error) {
			return p.send(base, r, pol, d, tk, answers, first)
		}}
		return p.signing.Answering(round).RoundTrip(req)
	}
	b := Block{Redirect: req.Response != nil, URL: req.URL.String()}
	switch {
	case refused:
		b = ub
		b.Redirect, b.URL = req.Response != nil, req.URL.String()
	case !v.Allowed:
		b.Kind, b.Verdict, b.Reason = Disallowed, v, v.String()
		if v.Reason == dialect.ReasonFetch && temporary(pol.Action()) {
			b.Kind, b.Until = Deferred, pol.Expires()
		}
	default: // skip
		b.Kind, b.Reason = Skipped, "Crawl-delay above the largest honoured"
	}
	b.Reason = hopReason(req, b.Reason)
	closeBody(req)
	return nil, p.stopAt(req, b, pol, nil, tk)
}

// send passes req through the crawler-wide rate and its host's gate to
// base. An answer whose status asks to back off (hostlimit.BackoffStatus:
// 429, every 5xx but 501 and 505) pauses the host (the limiter's Observe);
// the request is then sent again once the pause is over, until it has had
// 1 + WithRetries such answers (answers counts those of its earlier
// rounds, before a hand-back), unless its body cannot be sent again. A
// pause that ends later than WithDeferWait (at least a second) hands the
// request back as Deferred; the last answer of a request out of retries
// goes to Colly as it is. A sitemap document is sent once: the walker
// retries it. With keepChallenge, a 429 carrying Accept-Signature is
// returned at once, for the challenge's answer (WithSigner) to be sent
// instead of an unsigned retry.
func (p *Plugin) send(base http.RoundTripper, req *http.Request, pol *policy.Policy, d time.Duration, tk ticket, answers int, keepChallenge bool) (*http.Response, error) {
	host := pol.Authority()
	retries := p.cfg.retries
	if isSitemapFetch(req) {
		retries = 0
	}
	prefix := "" // what the previous answer was, on a retry
	gate, fresh, budget := gateContext(req, tk.cs)
	for attempt := answers; ; attempt++ {
		entry := time.Now()
		if err := p.takeToken(gate); err != nil {
			return nil, p.cancelStop(req, err, pol, tk)
		}
		permit, err := p.lim.AcquireMax(gate, host, d, p.pauseBound())
		if err != nil {
			if b, ok := pausedStop(req, err, prefix); ok {
				closeBody(req)
				be := p.stopAt(req, b, pol, nil, tk)
				be.answers = attempt
				return nil, be
			}
			return nil, p.cancelStop(req, fmt.Errorf("%sgave up waiting for the host's turn: %w", prefix, err), pol, tk)
		}
		if attempt > 0 {
			p.stats.record(host, HostStats{Retried: 1})
			p.log.Debug("robots: sent again after the host's pause", slog.String("url", req.URL.String()), slog.Int("retry", attempt))
		}
		sreq, cancel := freshDeadline(req, fresh, budget, entry, attempt > answers)
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

// pausedStop is the Deferred stop of req when err says its host is paused
// past maxPause; prefix says what came before (a 429 answer).
func pausedStop(req *http.Request, err error, prefix string) (Block, bool) {
	var pe *hostlimit.PausedError
	if !errors.As(err, &pe) {
		return Block{}, false
	}
	return Block{Kind: Deferred, URL: req.URL.String(), Redirect: req.Response != nil, Until: pe.Until,
		Reason: hopReason(req, prefix+"the host is paused until "+pe.Until.UTC().Format(time.RFC3339)+", longer than WithDeferWait")}, true
}

// cancelStop stops req, whose context ended while the transport held it
// (err says where), and returns its error.
func (p *Plugin) cancelStop(req *http.Request, err error, pol *policy.Policy, tk ticket) error {
	closeBody(req)
	return p.stopAt(req, canceledHop(req, err), pol, err, tk)
}

// stopAt is the error of req, which the transport stops with b (cause:
// the context's error of a cancellation, else nil). A request OnRequest
// let through (its ticket names its collector and Colly request) is held
// for the OnError hook of its collector, which reports it with its Colly
// request (see [Plugin.onError]): Colly calls OnError for every request
// whose round trip failed, even when net/http replaced the error with its
// own (Colly's request timeout). Any other request (of a collector the
// plugin guards only through its transport, or a sitemap document) is
// reported now.
func (p *Plugin) stopAt(req *http.Request, b Block, pol *policy.Policy, cause error, tk ticket) *BlockedError {
	b.Sitemap = isSitemapFetch(req)
	b = p.complete(b, pol, nil)
	be := &BlockedError{Block: b, cause: cause}
	if tk.cs != nil {
		p.held.Store(tk, be)
		return be
	}
	p.report(b)
	return be
}

// canceledHop is the report of a request whose context ended while the
// transport held it.
func canceledHop(req *http.Request, err error) Block {
	a, _ := policy.Authority(req.URL)
	return Block{Kind: Canceled, URL: req.URL.String(), Authority: a, Redirect: req.Response != nil, Reason: hopReason(req, err.Error())}
}

// hopReason is reason, said of a redirect hop when req is one.
func hopReason(req *http.Request, reason string) string {
	if req.Response == nil {
		return reason
	}
	return "redirect from " + redact(req.Response.Request.URL) + " not followed: " + reason
}

func redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Redacted()
}

// sitemapTransport is the transport of sitemap fetches: the host's turn is
// waited for first, as OnRequest does for a page, telling the walker's
// document timeout to stop meanwhile (gatewait), but never a 429/5xx pause
// longer than WithDeferWait (the fetch is then stopped as Deferred, in the
// request-less form: Block.Sitemap); then the collectors' transport checks
// robots.txt and passes the gate, at once, and sends the document once
// (the walker retries it: sitemap.Config.Retries).
type sitemapTransport struct{ p *Plugin }

// sitemapFetch marks the context of a sitemap fetch (isSitemapFetch).
type sitemapFetch struct{}

// isSitemapFetch reports whether req is a sitemap document's fetch.
func isSitemapFetch(req *http.Request) bool { return req.Context().Value(sitemapFetch{}) != nil }

func (t *sitemapTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p := t.p
	req = req.WithContext(context.WithValue(req.Context(), sitemapFetch{}, true))
	if pol, err := p.resolver().Policy(req.Context(), req.URL); err == nil {
		if d, skip := p.delayOf(pol); !skip {
			hook := gatewait.From(req.Context())
			if hook != nil {
				hook.Pause()
			}
			_, err = p.lim.WaitMax(req.Context(), pol.Authority(), d, p.pauseBound())
			if hook != nil {
				hook.Resume()
			}
			if err != nil {
				closeBody(req)
				if b, ok := pausedStop(req, err, ""); ok {
					return nil, p.stopAt(req, b, pol, nil, ticket{})
				}
				return nil, fmt.Errorf("robots: gave up waiting for the host's turn: %w", err)
			}
		}
	}
	return p.coll.RoundTrip(req)
}

// pluginOf returns the plugin whose transport c uses, or nil.
func pluginOf(c *colly.Collector) *Plugin {
	tr, _ := collyTransport(c)
	if ct, ok := tr.(*checkTransport); ok {
		return ct.p
	}
	return nil
}
