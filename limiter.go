package robots

import (
	"context"
	"fmt"
	"time"

	"github.com/politecrawl/robots/policy"
)

// delayOf returns the spacing for a host under policy pol, and whether the
// host is to be skipped.
func (p *core) delayOf(pol *policy.Policy) (time.Duration, bool) {
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
func (p *core) cachedDelay(host string) time.Duration {
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
func (p *core) pauseBound() time.Duration { return max(p.cfg.deferWait, time.Second) }

// takeToken waits for a token of the crawler-wide cap (WithMaxRate), if
// there is one.
func (p *core) takeToken(ctx context.Context) error {
	if p.cfg.maxRate == nil {
		return nil
	}
	if err := p.cfg.maxRate.Wait(ctx); err != nil {
		return fmt.Errorf("robots: gave up waiting for the crawler-wide rate: %w", err)
	}
	return nil
}
