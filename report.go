package robots

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/policy"
)

// stopHeader carries a stop decided in OnRequest to the plugin's
// transport: "KIND UNTIL REASON" (BlockKind, Block.Until in Unix
// nanoseconds or 0, the reason in words). The transport fails the request
// with the stop's BlockedError, so that Colly calls OnError with it and a
// sync Visit returns it; the header never leaves the process. Carrying the
// stop in the request itself leaves nothing behind when the request never
// gets there (another callback aborted it).
const stopHeader = "X-Politecrawl-Robots-Stop"

// passHeader marks a request OnRequest let through, for the transport,
// with its ticket ("SLOT ID"): a stop there (its context ended at the
// gate, a 429 pause past WithDeferWait) is then held for the OnError hook,
// which knows the Colly request, reports it and takes the request out of
// Allowed. The transport removes the mark before anything is sent.
const passHeader = "X-Politecrawl-Robots-Pass"

// answersHeader carries, on a request handed back as Deferred, how many
// answers asking to back off it has had: its next round at the transport
// starts counting WithRetries from there. The transport removes it before
// anything is sent.
const answersHeader = "X-Politecrawl-Robots-Answers"

// pass counts r, let through after waiting w, and marks it for the
// transport (see passHeader) with its collector's slot, which learns ctx,
// the collector's Context.
func (p *Plugin) pass(r *colly.Request, cs *collectorSlot, ctx context.Context, authority string, w time.Duration) {
	p.stats.record(authority, HostStats{Allowed: 1, Waited: w})
	if clientOffsets.ok && r.Headers != nil {
		cs.see(ctx)
		(*r.Headers)[passHeader] = cs.passValue(r.ID)
	}
}

// stopRequest reports b for the Colly request r and marks r so that the
// transport fails it with b's error.
func (p *Plugin) stopRequest(r *colly.Request, b Block, pol *policy.Policy) {
	b.Request = r
	b = p.stop(b, pol, r)
	if !clientOffsets.ok || r.Headers == nil {
		r.Abort() // the transport cannot be vouched for: stop silently
		return
	}
	var until int64
	if !b.Until.IsZero() {
		until = b.Until.UnixNano()
	}
	r.Headers.Set(stopHeader, strconv.Itoa(int(b.Kind))+" "+strconv.FormatInt(until, 10)+" "+strings.ReplaceAll(b.Reason, "\n", " "))
	// Colly would answer a GET from its disk cache (colly.CacheDir) without
	// reaching the transport: make it ask, so that the stop reaches OnError.
	r.Headers.Set("Cache-Control", "no-cache")
}

// stoppedError rebuilds, at the transport, the error of a request stopped
// in OnRequest from its stopHeader value v.
func (p *Plugin) stoppedError(req *http.Request, v string) *BlockedError {
	kind, rest, _ := strings.Cut(v, " ")
	until, reason, _ := strings.Cut(rest, " ")
	k, _ := strconv.Atoi(kind)
	b := Block{Kind: BlockKind(k), URL: req.URL.String(), Reason: reason}
	if n, _ := strconv.ParseInt(until, 10, 64); n != 0 {
		b.Until = time.Unix(0, n)
	}
	b.Authority, _ = policy.Authority(req.URL)
	if res := p.res.Load(); res != nil {
		b.Dialect = res.Dialect().Name()
		if pol := res.Cached(b.Authority); pol != nil && (b.Kind == Disallowed || b.Kind == Deferred || b.Kind == UsageDisallowed) {
			b.Verdict = pol.Check(req.URL)
		}
	}
	return &BlockedError{Block: b}
}

// stop completes b (URL, authority, dialect), counts it, logs it, passes it
// to the OnBlocked callback and returns it. r is the Colly request when
// known.
func (p *Plugin) stop(b Block, pol *policy.Policy, r *colly.Request) Block {
	b = p.complete(b, pol, r)
	p.report(b)
	return b
}

// complete fills in b's URL, authority and dialect.
func (p *Plugin) complete(b Block, pol *policy.Policy, r *colly.Request) Block {
	if r != nil && b.URL == "" {
		b.URL = r.URL.String()
	}
	if pol != nil {
		b.Authority = pol.Authority()
		b.Dialect = pol.Dialect().Name()
	} else if r != nil {
		b.Authority, _ = policy.Authority(r.URL)
	}
	if b.Dialect == "" {
		if res := p.res.Load(); res != nil {
			b.Dialect = res.Dialect().Name()
		}
	}
	return b
}

// report counts b, logs it and passes it to the OnBlocked callback.
func (p *Plugin) report(b Block) {
	switch b.Kind {
	case Disallowed:
		p.stats.record(b.Authority, HostStats{Disallowed: 1})
	case Deferred:
		p.stats.record(b.Authority, HostStats{Deferred: 1})
	case Skipped:
		p.stats.record(b.Authority, HostStats{Skipped: 1})
	case Canceled:
		p.stats.record(b.Authority, HostStats{Canceled: 1})
	case UsageDisallowed:
		p.stats.record(b.Authority, HostStats{UsageDisallowed: 1})
	case Nofollow:
		p.stats.record(b.Authority, HostStats{Nofollow: 1})
	}
	p.log.Info("robots: request stopped", slog.String("kind", b.Kind.String()), slog.String("url", b.URL),
		slog.String("dialect", b.Dialect), slog.Bool("redirect", b.Redirect), slog.String("reason", b.Reason))
	p.logStop(b)
	if fn := p.cfg.onBlocked; fn != nil {
		fn(b)
	}
}

// flow is one request on its way down the OnRequest stages
// ([requestStages]): what the stages it passed learned of it.
type flow struct {
	p      *Plugin
	c      *colly.Collector
	cs     *collectorSlot
	r      *colly.Request
	ctx    context.Context // the collector's Context
	pol    *policy.Policy  // the host's policy (loadPolicy)
	v      policy.Verdict  // robots.txt's verdict for the URL (loadPolicy)
	delay  time.Duration   // the host's spacing (spacing)
	waited time.Duration   // how long the stages held the request
}

// stop ends the flow: the request is stopped with b and reported with it.
func (f *flow) stop(b Block) bool {
	f.p.stopRequest(f.r, b, f.pol)
	return false
}
