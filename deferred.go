package robots

import (
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
)

// maxDeferred bounds the requests kept for RetryDeferred.
const maxDeferred = 100_000

// deferredList holds the requests handed back as Deferred, for
// [Plugin.RetryDeferred].
type deferredList struct {
	mu    sync.Mutex
	reqs  []*colly.Request
	until time.Time // the latest retry time (robots.txt's, or a pause's end) of the requests kept
}

// onError is the OnError hook of the collector of slot cs: it reports a
// stop the transport held for it (see stopAt) with its Colly request,
// completes a stop's error with its Colly request, and keeps for
// [Plugin.RetryDeferred] the Colly request behind a request deferred at
// the transport (its host paused past WithDeferWait, a redirect hop to an
// authority whose robots.txt is unreachable for now, a policy that expired
// between OnRequest and the send), so that it is not lost: Colly has
// marked its URL visited.
func (p *Plugin) onError(cs *collectorSlot, r *colly.Response, err error) {
	if r == nil || r.Request == nil {
		return
	}
	var be *BlockedError
	if v, ok := p.held.LoadAndDelete(ticket{cs, r.Request.ID}); ok {
		// Let through in OnRequest, stopped at the transport: counted
		// under its stop instead, and reported with its request. The
		// error may not be err's (net/http replaces the error of a
		// request that ran out of Colly's request timeout).
		be = v.(*BlockedError)
		be.Block.Request = r.Request
		p.stats.record(be.Block.Authority, HostStats{Allowed: -1})
		p.report(be.Block)
	} else if !errors.As(err, &be) {
		return
	}
	if be.Block.Request == nil {
		// The transport does not know the Colly request; Colly gives it
		// here, and a sync Visit returns this same error.
		be.Block.Request = r.Request
	}
	if be.Block.Kind == Deferred {
		if be.answers > 0 && r.Request.Headers != nil {
			(*r.Request.Headers)[answersHeader] = []string{strconv.Itoa(be.answers)}
		}
		p.keepDeferred(r.Request, be.Block.Until)
	}
}

// keepDeferred adds r, deferred until the given time, to the requests
// kept for RetryDeferred, unless maxDeferred are kept already (then it
// says so in the log).
func (p *Plugin) keepDeferred(r *colly.Request, until time.Time) {
	d := &p.deferred
	d.mu.Lock()
	full := len(d.reqs) >= maxDeferred
	if !full {
		d.reqs = append(d.reqs, r)
		if until.After(d.until) {
			d.until = until
		}
	}
	d.mu.Unlock()
	if full {
		p.log.Warn("robots: deferred request not kept for RetryDeferred: already keeping the most allowed; call RetryDeferred",
			slog.String("url", r.URL.String()), slog.Int("kept", maxDeferred))
	}
}

// Deferred returns the requests handed back as [Deferred] (robots.txt
// unreachable, or the host paused for longer than WithDeferWait), oldest
// first, and forgets them.
func (p *Plugin) Deferred() []*colly.Request {
	d := &p.deferred
	d.mu.Lock()
	defer d.mu.Unlock()
	reqs := d.reqs
	d.reqs, d.until = nil, time.Time{}
	return reqs
}

// DeferredUntil returns when retrying helps every request kept for
// [Plugin.RetryDeferred]: the latest of the retry times of the robots.txt
// files that deferred them (by the resolver's clock, see [WithClock]) and
// the ends of the 429/5xx pauses of the hosts that did; false when none is
// kept. Retrying earlier defers a request again.
func (p *Plugin) DeferredUntil() (time.Time, bool) {
	d := &p.deferred
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.until, len(d.reqs) > 0
}

// RetryDeferred submits again every request handed back as [Deferred]
// (with colly's Request.Retry, which skips the visited check) and returns
// how many it submitted. Each goes through the plugin afresh, so call it
// once [Plugin.DeferredUntil] has come (a dialect retries a failing
// robots.txt after 10 minutes, or an hour for a coccoc host without answer;
// a paused host, at its Retry-After): earlier, the requests are deferred
// again.
// Call it from outside any callback, e.g. after c.Wait(), then c.Wait()
// again; with a collector that is not Async, it returns only once the
// requests are done.
func (p *Plugin) RetryDeferred() int {
	reqs := p.Deferred()
	// The requests that had no answer go first: those whose own answers
	// paused their host would otherwise pause it again ahead of them.
	slices.SortStableFunc(reqs, func(a, b *colly.Request) int { return answered(a) - answered(b) })
	for _, r := range reqs {
		// A stop again is reported already, and a sync request's own
		// error (its answer) went to OnError: only a refusal by Colly is news.
		if err := r.Retry(); err != nil {
			if _, refused := visitRefusal(err, false); refused || errors.Is(err, colly.ErrRetryBodyUnseekable) {
				p.log.Warn("robots: retrying a deferred request failed", slog.String("url", r.URL.String()), slog.Any("error", err))
			}
		}
	}
	return len(reqs)
}

// answered is 1 when r was handed back after answers asking to back off
// (answersHeader), else 0.
func answered(r *colly.Request) int {
	if r.Headers != nil && r.Headers.Get(answersHeader) != "" {
		return 1
	}
	return 0
}
