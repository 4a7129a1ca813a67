package robots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/policy"
)

// Plugin enforces robots.txt and spaces requests per host for the Colly
// collectors it is attached to. One Plugin may serve several collectors
// (clones included): they share its robots.txt resolver, its per-host
// limiter and its statistics. It is safe for concurrent use.
type Plugin struct {
	cfg  config
	lim  Limiter
	wait func(context.Context, string, time.Duration) (time.Duration, error) // lim's WaitTime
	base http.RoundTripper                                                   // the transport behind the gate
	coll http.RoundTripper                                                   // the collectors' transport: robots check, gate, base
	log  *slog.Logger

	once sync.Once
	res  atomic.Pointer[policy.Resolver]

	stats    stats
	deferred deferredList
	warned   atomic.Bool
}

// New returns a plugin configured by opts; attach it with [Plugin.Attach] or
// [Plugin.Option].
func New(opts ...Option) *Plugin {
	p := &Plugin{cfg: config{maxCrawlDelay: DefaultMaxCrawlDelay, deferWait: DefaultDeferWait, statsCap: DefaultStatsCapacity}}
	for _, o := range opts {
		o(&p.cfg)
	}
	p.log = p.cfg.logger
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.base = p.cfg.transport
	if p.base == nil {
		p.base = http.DefaultTransport.(*http.Transport).Clone()
	}
	p.lim = p.cfg.limiter
	if p.lim == nil {
		p.lim = hostlimit.New(hostlimit.Config{
			Spacing:       p.cfg.spacing,
			MaxRetryAfter: p.cfg.retryAfterCap,
			BackoffBase:   p.cfg.backoffBase,
			BackoffMax:    p.cfg.backoffMax,
		})
	}
	p.wait = waitTimeOf(p.lim)
	p.stats.capacity = p.cfg.statsCap
	p.coll = &checkTransport{p: p}
	return p
}

// WithRobots returns a Colly option that attaches a new plugin configured by
// opts: colly.NewCollector(robots.WithRobots(...)). Use [New] and
// [Plugin.Option], or [Attach], to keep a handle for statistics.
func WithRobots(opts ...Option) colly.CollectorOption {
	return New(opts...).Option()
}

// Attach attaches a new plugin configured by opts to an existing collector
// and returns it.
func Attach(c *colly.Collector, opts ...Option) *Plugin {
	p := New(opts...)
	p.Attach(c)
	return p
}

// Option returns a Colly option that attaches p.
func (p *Plugin) Option() colly.CollectorOption { return p.Attach }

// Attach makes c obey robots.txt through p: it turns Colly's own robots.txt
// check off, routes c's requests through p's transport (robots.txt check of
// every hop, per-host gate, Retry-After) and registers p's OnRequest hook
// (verdict, deferral, early wait). Attach a clone made with c.Clone() too: a
// clone shares c's transport, so it is still guarded at the transport, but
// only an attached clone aborts disallowed requests before sending and waits
// outside Colly's LimitRule slots.
//
// Colly applies COLLY_IGNORE_ROBOTSTXT after the options of NewCollector; if
// it turns Colly's own check back on, the plugin logs a warning.
func (p *Plugin) Attach(c *colly.Collector) {
	if v, ok := os.LookupEnv("COLLY_IGNORE_ROBOTSTXT"); ok && !collyYes(v) && p.warned.CompareAndSwap(false, true) {
		p.log.Warn("robots: COLLY_IGNORE_ROBOTSTXT=" + v + " turns Colly's own robots.txt check back on after the options; it runs before the plugin and its blocks are not reported (unset it)")
	}
	c.IgnoreRobotsTxt = true
	c.WithTransport(p.coll)
	c.OnRequest(func(r *colly.Request) { p.onRequest(c, r) })
	c.OnError(p.onError)
}

// collyYes reads a COLLY_* boolean as Colly does.
func collyYes(v string) bool {
	switch strings.ToLower(v) {
	case "1", "yes", "true", "y":
		return true
	}
	return false
}

// resolver returns the plugin's resolver, created on first use so that the
// collector's User-Agent (set by later options or the environment) is known.
func (p *Plugin) resolver(userAgent string) *policy.Resolver {
	p.once.Do(func() {
		// The plugin's defaults first: the user's policy options override them.
		opts := []policy.Option{
			policy.WithUserAgent(userAgent),
			policy.WithHTTPClient(&http.Client{Transport: &robotsTransport{p: p}}),
			policy.WithLogger(p.log),
		}
		r := policy.NewResolver(append(opts, p.cfg.policy...)...)
		if len(r.Agents()) == 0 {
			p.log.Warn("robots: no product token could be derived from the User-Agent; only the * groups of robots.txt apply (set robots.WithAgents)",
				slog.String("user_agent", r.UserAgent()))
		}
		p.res.Store(r)
	})
	return p.res.Load()
}

// Resolver returns the plugin's robots.txt resolver (nil before the first
// request).
func (p *Plugin) Resolver() *policy.Resolver { return p.res.Load() }

// Limiter returns the plugin's per-host limiter: the one given with
// [WithLimiter], else a *[hostlimit.Limiter].
func (p *Plugin) Limiter() Limiter { return p.lim }

// onRequest is the OnRequest hook: verdict, deferral, early wait.
func (p *Plugin) onRequest(c *colly.Collector, r *colly.Request) {
	if !c.IgnoreRobotsTxt && p.warned.CompareAndSwap(false, true) {
		p.log.Warn("robots: Colly's own robots.txt check is on (COLLY_IGNORE_ROBOTSTXT?); it runs before the plugin")
	}
	ctx := c.Context
	if ctx == nil {
		ctx = context.Background()
	}
	res := p.resolver(c.UserAgent)
	var (
		start  time.Time // of the first deferral
		waited time.Duration
		pol    *policy.Policy
		err    error
		v      policy.Verdict
	)
	for {
		pol, err = res.Policy(ctx, r.URL)
		if errors.Is(err, policy.ErrUnsupportedURL) {
			return // not http(s): no robots.txt applies
		}
		if err != nil {
			p.stop(r, Block{Kind: Canceled, Reason: err.Error()}, nil)
			return
		}
		v = pol.Check(r.URL)
		if v.Allowed {
			break
		}
		if v.Reason != dialect.ReasonFetch || !temporary(pol.Action()) {
			p.stop(r, Block{Kind: Disallowed, Verdict: v, Reason: v.String()}, pol)
			return
		}
		// robots.txt is unreachable for now: wait for the retry, within
		// the defer budget, else hand the request back.
		if start.IsZero() {
			start = time.Now()
		}
		wait := pol.Expires().Sub(res.Now())
		if time.Since(start)+wait > p.cfg.deferWait {
			p.stop(r, Block{Kind: Deferred, Verdict: v, Reason: v.String()}, pol)
			return
		}
		// Sleep in short steps: the resolver's clock may not be the wall clock.
		if !sleep(ctx, min(max(wait, time.Millisecond), deferPoll)) {
			p.stop(r, Block{Kind: Canceled, Verdict: v, Reason: ctx.Err().Error()}, pol)
			return
		}
	}
	authority := pol.Authority()
	d, skip := p.delayOf(pol)
	if skip {
		cd, _ := pol.CrawlDelay()
		p.stop(r, Block{Kind: Skipped, Verdict: v, Reason: fmt.Sprintf("Crawl-delay %s is above the largest honoured, %s", cd, p.cfg.maxCrawlDelay)}, pol)
		return
	}
	if !start.IsZero() {
		waited = time.Since(start)
	}
	w, err := p.wait(ctx, authority, d)
	if err != nil {
		p.stop(r, Block{Kind: Canceled, Verdict: v, Reason: err.Error()}, pol)
		return
	}
	p.stats.record(authority, HostStats{Allowed: 1, Waited: waited + w})
}

// deferPoll is how often a deferred request looks at the policy again.
const deferPoll = 200 * time.Millisecond

// temporary reports whether a fetch-outcome action ends at a retry time.
func temporary(a dialect.Action) bool {
	return a == dialect.ActionDisallowAll || a == dialect.ActionExcludeHost
}

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

// stop aborts r (when not nil) and reports b.
func (p *Plugin) stop(r *colly.Request, b Block, pol *policy.Policy) {
	if r != nil {
		r.Abort()
		b.Request = r
		if b.URL == "" {
			b.URL = r.URL.String()
		}
		if b.Kind == Deferred {
			p.keepDeferred(r, pol)
		}
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
	switch b.Kind {
	case Disallowed:
		p.stats.record(b.Authority, HostStats{Disallowed: 1})
	case Deferred:
		p.stats.record(b.Authority, HostStats{Deferred: 1})
	case Skipped:
		p.stats.record(b.Authority, HostStats{Skipped: 1})
	case Canceled:
		p.stats.record(b.Authority, HostStats{Canceled: 1})
	}
	p.log.Info("robots: request stopped", slog.String("kind", b.Kind.String()), slog.String("url", b.URL),
		slog.String("dialect", b.Dialect), slog.Bool("redirect", b.Redirect), slog.String("reason", b.Reason))
	if fn := p.cfg.onBlocked; fn != nil {
		fn(b)
	}
}
