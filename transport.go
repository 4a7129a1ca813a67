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

// BlockKind says why the plugin stopped a request.
type BlockKind uint8

const (
	// Disallowed: robots.txt disallows the URL for the crawler, by a rule or
	// by its fetch outcome (e.g. "complete disallow" under rfc9309 after a
	// 5xx that lasts).
	Disallowed BlockKind = iota
	// Deferred: the request was handed back (see [Plugin.RetryDeferred])
	// because robots.txt is temporarily unreachable and the dialect says to
	// wait, or because its host is paused (after a 429 or 5xx answer) for
	// longer than WithDeferWait.
	Deferred
	// Skipped: the host's Crawl-delay is above the largest honoured and the
	// plugin is set to skip such hosts ([SkipHost]).
	Skipped
	// Canceled: the collector's context ended while the request waited,
	// or the plugin was given an invalid configuration ([WithRobots]
	// fails closed).
	Canceled
	// UsageDisallowed: robots.txt says the content of the URL may not be
	// used for a purpose the crawler declared ([WithPurposes]), so it is
	// not fetched.
	UsageDisallowed
	// Nofollow: the page the request was made from (with Colly's
	// Request.Visit, which keeps the page's Context) says nofollow or none
	// for the crawler, in its X-Robots-Tag header or a robots meta element.
	Nofollow
)

// String names the kind: "disallowed", "deferred", "skipped", "canceled",
// "usage-disallowed", "nofollow", or "BlockKind(n)" for a value that is
// none of them.
func (k BlockKind) String() string {
	switch k {
	case Disallowed:
		return "disallowed"
	case Deferred:
		return "deferred"
	case Skipped:
		return "skipped"
	case Canceled:
		return "canceled"
	case UsageDisallowed:
		return "usage-disallowed"
	case Nofollow:
		return "nofollow"
	}
	return "BlockKind(" + strconv.Itoa(int(k)) + ")"
}

// Block reports one request the plugin stopped.
type Block struct {
	Kind      BlockKind
	URL       string
	Authority string
	Dialect   string
	// Verdict says which rule (and line) or which fetch outcome decided, for
	// Disallowed and Deferred.
	Verdict policy.Verdict
	// Until is, for Deferred, when retrying can help: the retry time of
	// robots.txt (by the resolver's clock, see WithClock), or the end of
	// the host's pause after a 429 or 5xx answer.
	Until time.Time
	// Redirect is true when the URL is a redirect target: the redirect was
	// not followed.
	Redirect bool
	// Request is the Colly request that was stopped. In the error that
	// reaches OnError and Visit it is filled in by the plugin's OnError
	// hook (a hook registered before the plugin's may see it nil). A
	// request stopped at the transport after OnRequest let it through (its
	// context ended while it waited for a LimitRule slot, a token of
	// WithMaxRate or the host's turn; its host paused) is reported to
	// WithOnBlocked from that hook, with its request, whatever ended the
	// wait (the collector's Context, its deadline, Colly's request
	// timeout). A redirect hop's report carries the request redirected.
	// Request is nil in two cases only: a request of a cloned collector
	// the plugin was not attached to, and a sitemap document (Sitemap).
	Request *colly.Request
	// Sitemap is true when the stop is of a sitemap document the plugin
	// fetched for [WithSitemaps] (URL is the document's): no Colly request
	// is behind it, so Request is nil and nothing reaches OnError; the
	// sitemap's report ([SitemapWalk]'s OnReport, [Plugin.SitemapTotals])
	// counts it as failed.
	Sitemap bool
	// Reason is the explanation in words.
	Reason string
}

func (b Block) String() string { return b.Kind.String() + " " + b.URL + ": " + b.Reason }

// ErrBlocked is wrapped by the error a stopped redirect hop (or a request of
// a collector the plugin guards only through its transport) fails with;
// Colly passes it to OnError. Use errors.As with *BlockedError for details.
var ErrBlocked = errors.New("robots: request stopped")

// BlockedError is the error of a request the plugin stopped, as OnError
// and a sync Visit see it. It wraps [ErrBlocked]; a [Disallowed] stop, and a
// [Deferred] one while robots.txt is unreachable, also wrap
// colly.ErrRobotsTxtBlocked, as Colly's own robots.txt check does, so
// that code written for that check recognises it; a request canceled while
// the plugin held it also wraps the cause (the context's error).
type BlockedError struct {
	Block Block
	cause error
	// answers is how many answers asking to back off the request got
	// before it was stopped: a hand-back carries them to its next round,
	// so that WithRetries counts over deferrals.
	answers int
}

// Error says why, without the URL, which the error that wraps it names
// already (Colly's client: Get "URL": ...; for a redirect hop, the hop's
// URL, and the reason names the URL redirected from).
func (e *BlockedError) Error() string {
	return "robots: " + e.Block.Kind.String() + ": " + e.Block.Reason
}

// Unwrap returns ErrBlocked, colly.ErrRobotsTxtBlocked for a Disallowed
// stop and for a Deferred one that robots.txt's fetch outcome decided
// (Colly's check disallows on a 5xx robots.txt), and the cause of a
// cancellation if any.
func (e *BlockedError) Unwrap() []error {
	switch {
	case e.cause != nil:
		return []error{ErrBlocked, e.cause}
	case e.Block.Kind == Disallowed,
		e.Block.Kind == Deferred && !e.Block.Verdict.Allowed && e.Block.Verdict.Reason == dialect.ReasonFetch:
		return []error{ErrBlocked, colly.ErrRobotsTxtBlocked}
	}
	return []error{ErrBlocked}
}

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
	base := p.base.Load().RoundTripper
	res := p.resolver()
	pol, err := res.Policy(req.Context(), req.URL)
	if errors.Is(err, policy.ErrUnsupportedURL) {
		return base.RoundTrip(req)
	}
	if err != nil {
		// The request's context ended while robots.txt was being fetched.
		return nil, p.canceled(req, err, nil, tk)
	}
	v := pol.Check(req.URL)
	d, skip := p.delayOf(pol)
	ub, refused := p.usageStop(pol, req.URL, v)
	if v.Allowed && !skip && !refused {
		p.checkUserAgent(req)
		return p.send(base, req, pol, d, tk, answers)
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
// retries it.
func (p *Plugin) send(base http.RoundTripper, req *http.Request, pol *policy.Policy, d time.Duration, tk ticket, answers int) (*http.Response, error) {
	host := pol.Authority()
	retries := p.cfg.retries
	if isSitemapFetch(req) {
		retries = 0
	}
	prefix := "" // what the previous answer was, on a retry
	gate, fresh, budget := gateContext(req, tk.slot)
	for attempt := answers; ; attempt++ {
		entry := time.Now()
		if err := p.takeToken(gate); err != nil {
			return nil, p.canceled(req, err, pol, tk)
		}
		permit, err := p.lim.AcquireMax(gate, host, d, p.maxPause())
		if err != nil {
			if b, ok := pausedStop(req, err, prefix); ok {
				closeBody(req)
				be := p.stopAt(req, b, pol, nil, tk)
				be.answers = attempt
				return nil, be
			}
			return nil, p.canceled(req, fmt.Errorf("%sgave up waiting for the host's turn: %w", prefix, err), pol, tk)
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
			attempt >= retries || req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
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

// maxPause is the longest 429/5xx pause a request waits out at the host's
// gate (WithDeferWait, at least a second).
func (p *Plugin) maxPause() time.Duration { return max(p.cfg.deferWait, time.Second) }

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

// robotsTransport is the transport of the plugin's robots.txt fetches: the
// host's gate (with the delay of the policy in memory), with the fetch's
// timeout stopped while it waits there, then the base transport.
type robotsTransport struct{ p *Plugin }

func (t *robotsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p := t.p
	base := p.base.Load().RoundTripper
	var buf [128]byte
	key, err := policy.AppendAuthority(buf[:0], req.URL)
	if err != nil {
		return base.RoundTrip(req)
	}
	host := string(key)
	hook := gatewait.From(req.Context())
	if hook != nil {
		hook.Pause()
	}
	err = p.takeToken(req.Context())
	var permit hostlimit.Permit
	if err == nil {
		permit, err = p.lim.AcquireMax(req.Context(), host, p.cachedDelay(host), -1)
	}
	if hook != nil {
		hook.Resume()
	}
	if err != nil {
		closeBody(req)
		return nil, fmt.Errorf("robots: gave up waiting for the host's turn: %w", err)
	}
	return hostlimit.RoundTrip(base, req, permit)
}

// takeToken waits for a token of the crawler-wide cap (WithMaxRate), if
// there is one.
func (p *Plugin) takeToken(ctx context.Context) error {
	if p.cfg.maxRate == nil {
		return nil
	}
	if err := p.cfg.maxRate.Wait(ctx); err != nil {
		return fmt.Errorf("robots: gave up waiting for the crawler-wide rate: %w", err)
	}
	return nil
}

// canceled stops req, whose context ended while the transport held it
// (err says where), and returns its error.
func (p *Plugin) canceled(req *http.Request, err error, pol *policy.Policy, tk ticket) error {
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
	if tk.slot != nil {
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

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
