package robots

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
)

// maxDeferred bounds the requests kept for RetryDeferred.
const maxDeferred = 100_000

// deferredList holds the requests handed back as Deferred, for
// [Plugin.RetryDeferred].
type deferredList struct {
	mu    sync.Mutex
	reqs  []deferredRequest
	until time.Time // the latest retry time (robots.txt's, or a pause's end) of the requests kept
}

// deferredRequest is a request handed back, with the answers asking to
// back off it had.
type deferredRequest struct {
	r       *colly.Request
	answers int
}

// put adds r, deferred until the given time after answers asking to
// back off, to the requests kept for RetryDeferred, unless maxDeferred are
// kept already (then it says so in log).
func (d *deferredList) put(log *slog.Logger, r *colly.Request, until time.Time, answers int) {
	d.mu.Lock()
	full := len(d.reqs) >= maxDeferred
	if !full {
		d.reqs = append(d.reqs, deferredRequest{r, answers})
		if until.After(d.until) {
			d.until = until
		}
	}
	d.mu.Unlock()
	if full {
		log.Warn("robots: deferred request not kept: already keeping the most allowed; retry the deferred requests",
			slog.String("url", r.URL.String()), slog.Int("kept", maxDeferred))
	}
}

// take returns the requests kept, oldest first, and forgets them.
func (d *deferredList) take() []deferredRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	reqs := d.reqs
	d.reqs, d.until = nil, time.Time{}
	return reqs
}

// due is when retrying helps every request kept, false when none is.
func (d *deferredList) due() (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.until, len(d.reqs) > 0
}

// resubmit submits again every request kept (Plugin.RetryDeferred) and
// returns how many it submitted.
func (d *deferredList) resubmit(log *slog.Logger) int {
	reqs := d.take()
	// The requests that had no answer go first: those whose own answers
	// paused their host would otherwise pause it again ahead of them.
	slices.SortStableFunc(reqs, func(a, b deferredRequest) int { return min(a.answers, 1) - min(b.answers, 1) })
	for _, d := range reqs {
		// A stop again is reported already, and a sync request's own
		// error (its answer) went to OnError: only a refusal by Colly is news.
		if err := d.r.Retry(); err != nil {
			if _, refused := visitRefusal(err, false); refused || errors.Is(err, colly.ErrRetryBodyUnseekable) {
				log.Warn("robots: retrying a deferred request failed", slog.String("url", d.r.URL.String()), slog.Any("error", err))
			}
		}
	}
	return len(reqs)
}

// deferPoll is how often a deferred request looks at the policy again.
const deferPoll = 200 * time.Millisecond

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// loadPolicy loads the host's policy. While robots.txt is unreachable for
// now (a fetch outcome that ends at a retry time) it waits for the retry,
// within WithDeferWait, else hands the request back as Deferred. A URL
// that is not http(s) needs nothing of the plugin.
func (f *flow) loadPolicy() outcome {
	p := f.p
	res := p.resolver()
	var start time.Time // of the first wait
	for {
		pol, err := res.Policy(f.ctx, f.r.URL)
		if errors.Is(err, policy.ErrUnsupportedURL) {
			return notOurs
		}
		if err != nil {
			return f.stop(Block{Kind: Canceled, Reason: err.Error()})
		}
		f.pol, f.v = pol, pol.Check(f.r.URL)
		if f.v.Allowed || f.v.Reason != dialect.ReasonFetch || !temporary(pol.Action()) {
			break
		}
		if start.IsZero() {
			start = time.Now()
		}
		wait := pol.Expires().Sub(res.Now())
		if time.Since(start)+wait > p.cfg.deferWait {
			return f.stop(Block{Kind: Deferred, Verdict: f.v, Until: pol.Expires(), Reason: f.v.String()})
		}
		// Sleep in short steps: the resolver's clock may not be the wall clock.
		if !sleep(f.ctx, min(max(wait, time.Millisecond), deferPoll)) {
			return f.stop(Block{Kind: Canceled, Verdict: f.v, Reason: f.ctx.Err().Error()})
		}
	}
	if !start.IsZero() {
		f.waited = time.Since(start)
	}
	return goOn
}
