package robots

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/politecrawl/robots/hostlimit"
)

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

// pauseBound is the longest 429/5xx pause a request waits out at the host's
// gate (WithDeferWait, at least a second).
func (p *Plugin) pauseBound() time.Duration { return max(p.cfg.deferWait, time.Second) }

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

// earlyWait waits for the host's turn (Limiter.WaitMax), in OnRequest
// where no LimitRule slot is held. A pause of a second or less is always
// waited out: handing a request back for it would cost more than it
// saves; a longer one than WithDeferWait hands the request back as
// Deferred. With colly.CacheDir there is no early wait: Colly may answer
// from its disk cache without a request, and tells no one which (its
// cache path is private); the transport's gate spaces what reaches the
// network.
func (f *flow) earlyWait() outcome {
	if f.c.CacheDir != "" {
		return goOn
	}
	w, err := f.p.lim.WaitMax(f.ctx, f.pol.Authority(), f.delay, f.p.pauseBound())
	if err == nil {
		f.waited += w
		return goOn
	}
	var pe *hostlimit.PausedError
	if errors.As(err, &pe) {
		return f.stop(Block{Kind: Deferred, Verdict: f.v, Until: pe.Until,
			Reason: "the host answered 429 or 5xx and is paused until " + pe.Until.UTC().Format(time.RFC3339) + ", longer than WithDeferWait"})
	}
	return f.stop(Block{Kind: Canceled, Verdict: f.v, Reason: err.Error()})
}
