package robots

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/policy"
)

// decide is the one decision path: what robots.txt's verdict v for u
// (under its host's policy pol), the declared usage and the host's
// Crawl-delay make of a request. The OnRequest hook calls it for every
// request of an attached collector (flow.decide), the transport for the
// requests no OnRequest hook saw: redirect hops and the requests of a
// clone the plugin is not attached to. It returns the host's spacing, and
// the stop when the request may not go (nil when it may), in this order:
//
//   - rules: a URL robots.txt disallows, by a rule or by its fetch
//     outcome (Deferred while that outcome ends at a retry time);
//   - usage: a URL whose robots.txt, tdmrep.json or licence refuses a
//     declared purpose or use level (usage.go);
//   - spacing: the host's delay, or the host skipped when its Crawl-delay
//     is above the largest honoured and the plugin skips such hosts.
func (p *core) decide(ctx context.Context, u *url.URL, pol *policy.Policy, v policy.Verdict) (time.Duration, *Block) {
	if !v.Allowed {
		b := &Block{Kind: Disallowed, Verdict: v, Reason: v.String()}
		if v.Reason == dialect.ReasonFetch && temporary(pol.Action()) {
			b.Kind, b.Until = Deferred, pol.Expires()
		}
		return 0, b
	}
	if b, refused := p.usageStop(ctx, u, v); refused {
		stop := b // a copy: taking b's address would move b to the heap on every call
		return 0, &stop
	}
	d, skip := p.delayOf(pol)
	if skip {
		cd, _ := pol.CrawlDelay()
		return 0, &Block{Kind: Skipped, Verdict: v, Reason: fmt.Sprintf("Crawl-delay %s is above the largest honoured, %s", cd, p.cfg.maxCrawlDelay)}
	}
	return d, nil
}

// outcome says what a stage of the OnRequest hook did with its request.
type outcome uint8

const (
	goOn       outcome = iota // the next stage takes it
	halted                    // stopped and reported (handoff.go carries the stop to OnError)
	handedBack                // handed back to its frontier, to come at its host's turn
	notOurs                   // not http(s): no robots.txt applies, the plugin leaves it be
)

// flow is one request on its way through the OnRequest hook
// ([Plugin.onRequest]): what the stages it passed learned of it.
type flow struct {
	p       *core
	h       *handoff
	c       *colly.Collector
	cs      *collectorSlot
	r       *colly.Request
	ctx     context.Context // the collector's Context
	answers int             // answers asking to back off in its earlier rounds (handoff.go)
	pol     *policy.Policy  // the host's policy (loadPolicy)
	v       policy.Verdict  // robots.txt's verdict for the URL (loadPolicy)
	delay   time.Duration   // the host's spacing (decide)
	waited  time.Duration   // how long the stages held the request
	// windowed: a sitemap page's request holding a place in its walk's
	// window (sitemaps.go), which no frontier hands back.
	windowed bool
}

// decide runs the decision path for the request.
func (f *flow) decide() outcome {
	d, b := f.p.decide(f.ctx, f.r.URL, f.pol, f.v)
	if b != nil {
		return f.stop(*b)
	}
	f.delay = d
	return goOn
}

// stop ends the flow: the request is stopped with b and reported with it.
func (f *flow) stop(b Block) outcome {
	f.h.stop(f.p, f.cs, f.r, b, f.pol, f.answers)
	return halted
}

// temporary reports whether a fetch-outcome action ends at a retry time.
func temporary(a dialect.Action) bool {
	return a == dialect.ActionDisallowAll || a == dialect.ActionExcludeHost
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
