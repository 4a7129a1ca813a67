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
// capped as [WithMaxCrawlDelay] says, or [WithDefaultDelay])), so an
// implementation needs no other source of delays. Hosts are authorities
// ([policy.Authority]).
//
// [hostlimit.Limiter] implements it (the default, in memory); the fleet
// limiter of package github.com/politecrawl/robots/redisfleet implements it
// with the same guarantee across processes. An implementation must be safe
// for concurrent use and must end every wait when ctx is done, returning an
// error that wraps ctx.Err().
type Limiter interface {
	// WaitMax is the early, non-reserving stage, called in Colly's
	// OnRequest where waiting holds no LimitRule slot: it blocks until the
	// host is likely to admit a request at once and returns how long it
	// blocked. It does not wait out a 429/5xx pause that ends more than
	// maxPause from now, nor one that starts while it waits: it returns an
	// error wrapping a *[hostlimit.PausedError], and the plugin hands the
	// request back ([Deferred]); a negative maxPause waits out any pause. Its
	// return promises nothing.
	WaitMax(ctx context.Context, host string, delay, maxPause time.Duration) (time.Duration, error)
	// AcquireMax is the binding stage, called at the transport right
	// before the send: it blocks until the host admits the request and
	// returns the permit the request runs under. Like WaitMax, it does not
	// wait out a pause ending more than maxPause from now, nor one that
	// starts while it waits: it returns an error wrapping a
	// *[hostlimit.PausedError] and takes nothing (the plugin hands the
	// request back, [Deferred]); a negative maxPause waits out any pause
	// (robots.txt fetches). The plugin marks the permit sent once the
	// request is written (in StartToStart mode, when the permit needs it),
	// passes the response's status and header to its Observe (429 and 5xx
	// pause the host, [hostlimit.BackoffStatus]), and releases it when the response body is done or
	// the round trip failed ([hostlimit.RoundTrip]).
	AcquireMax(ctx context.Context, host string, delay, maxPause time.Duration) (hostlimit.Permit, error)
	// Stats returns the host's gate statistics for [Plugin.Stats], false
	// when the limiter keeps none for it.
	Stats(host string) (hostlimit.Stats, bool)
}

// WithLimiter makes the plugin space requests with l instead of a
// [hostlimit.Limiter] of its own with the default [hostlimit.Config]. Give
// hostlimit.New(hostlimit.Config{...}) to set the default limiter's spacing
// mode, delay factor and Retry-After bounds. Several plugins (or processes,
// for a fleet limiter) may share one.
func WithLimiter(l Limiter) Option {
	return func(c *config) {
		if l == nil {
			c.fail("WithLimiter(nil): no limiter")
			return
		}
		c.limiter = l
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
// A host seen first has no delay yet: its robots.txt fetch owes the host no
// gap of its own, and the first page waits the delay robots.txt sets (a
// Crawl-delay shorter than the default delay included), not the default.
// Requests sent before are still owed their gap: the gate keeps the gap
// owed at each release.
func (p *Plugin) cachedDelay(host string) time.Duration {
	if r := p.res.Load(); r != nil {
		if pol := r.Cached(host); pol != nil {
			d, _ := p.delayOf(pol)
			return d
		}
	}
	return p.cfg.minDelay
}
