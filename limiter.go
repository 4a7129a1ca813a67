package robots

import (
	"context"
	"time"

	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/policy"
)

// Limiter is the per-host gate the plugin drives: the seam between the
// plugin and a limiter. The plugin passes every call the delay in force for
// the host (max([WithMinDelay], the Crawl-delay for the crawler's tokens,
// capped as [WithMaxCrawlDelay] says)), so an implementation needs no
// other source of delays. Hosts are authorities ([policy.Authority]).
//
// [hostlimit.Limiter] implements it (the default, in memory); a fleet
// limiter on shared storage implements it with the same guarantee across
// processes. An implementation must be safe for concurrent use and must
// end every wait when ctx is done, returning an error that wraps ctx.Err().
type Limiter interface {
	// Wait is the early, non-reserving stage, called in Colly's OnRequest
	// where waiting holds no LimitRule slot: it blocks until the host is
	// likely to admit a request at once. Its return promises nothing.
	Wait(ctx context.Context, host string, delay time.Duration) error
	// Acquire is the binding stage, called at the transport right before
	// the send: it blocks until the host admits the request and returns
	// the permit the request runs under. The plugin marks the permit sent
	// once the request is written (in StartToStart mode, when the permit
	// needs it), passes the response's status and header to its Observe
	// (429 and 503 pause the host), and releases it when the response body
	// is done or the round trip failed ([hostlimit.RoundTrip]).
	Acquire(ctx context.Context, host string, delay time.Duration) (hostlimit.Permit, error)
}

// Spacing selects how the default limiter measures a host's delay; see
// [hostlimit.Spacing].
type Spacing = hostlimit.Spacing

// The spacings of the default limiter.
const (
	EndToStart   = hostlimit.EndToStart
	StartToStart = hostlimit.StartToStart
)

// WithLimiter makes the plugin space requests with l instead of a
// [hostlimit.Limiter] of its own (configured by [WithSpacing] and
// [WithRetryAfter], which then do not apply). Several plugins (or
// processes, for a fleet limiter) may share one.
func WithLimiter(l Limiter) Option {
	return func(c *config) { c.limiter = l }
}

// Optional methods of a Limiter the plugin uses when they are there.
type (
	// waitMaxer tells how long a Wait blocked, and does not wait out a
	// pause longer than maxPause (hostlimit.Limiter.WaitMax): it saves the
	// plugin two clock reads per request and lets it hand back the
	// requests of a host that keeps answering 429/503.
	waitMaxer interface {
		WaitMax(ctx context.Context, host string, delay, maxPause time.Duration) (time.Duration, error)
	}
	// hostStatser gives a host's limiter statistics for [Plugin.Stats].
	hostStatser interface {
		Stats(host string) (hostlimit.Stats, bool)
	}
)

// waitFunc returns the plugin's early wait on l: WaitMax with the longest
// pause worth waiting in OnRequest, or Wait timed by the clock.
func waitFunc(l Limiter, maxPause time.Duration) func(context.Context, string, time.Duration) (time.Duration, error) {
	if wm, ok := l.(waitMaxer); ok {
		return func(ctx context.Context, host string, d time.Duration) (time.Duration, error) {
			return wm.WaitMax(ctx, host, d, maxPause)
		}
	}
	return func(ctx context.Context, host string, d time.Duration) (time.Duration, error) {
		start := time.Now()
		err := l.Wait(ctx, host, d)
		return time.Since(start), err
	}
}

// delayOf returns the spacing for a host under policy pol, and whether the
// host is to be skipped.
func (p *Plugin) delayOf(pol *policy.Policy) (time.Duration, bool) {
	d := p.cfg.minDelay
	cd, ok := pol.CrawlDelay()
	if !ok {
		return max(d, p.cfg.defaultDelay), false
	}
	if cd > p.cfg.maxCrawlDelay {
		switch p.cfg.overDelay {
		case SkipHost:
			return 0, true
		case CapDelay:
			cd = p.cfg.maxCrawlDelay
		}
	}
	return max(d, cd), false
}

// cachedDelay is the delay of a host whose robots.txt is being fetched: the
// delay of the policy in memory (expired or not), else the minimum delay.
func (p *Plugin) cachedDelay(host string) time.Duration {
	if r := p.res.Load(); r != nil {
		if pol := r.Cached(host); pol != nil {
			d, _ := p.delayOf(pol)
			return d
		}
	}
	return max(p.cfg.minDelay, p.cfg.defaultDelay)
}
