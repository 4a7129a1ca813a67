package robots

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/botauth"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/policy"
)

// Plugin enforces robots.txt and spaces requests per host for the Colly
// collectors it is attached to. One Plugin may serve several collectors
// (clones included): they share its robots.txt resolver, its per-host
// limiter and its statistics. It is safe for concurrent use.
//
// It holds what its parts share; each feature holds its own state and
// registers its own callbacks when the plugin is attached ([Plugin.Attach]).
type Plugin struct {
	core                     // what its parts share (core.go)
	handoff  handoff         // stops and tickets between OnRequest, the transport and OnError (handoff.go)
	coll     *checkTransport // the collectors' transport (transport.go)
	warned   atomic.Bool     // Colly's own robots.txt check was warned about
	deferred deferredList    // requests handed back, for RetryDeferred (deferred.go)
	sitemaps *sitemapFeature // WithSitemaps (sitemaps.go); nil without it
	frontier frontiers       // AttachFrontier's frontiers (frontiers.go)
}

// New returns a plugin configured by opts; attach it with [Plugin.Attach].
// It returns an error, naming each option, when an option was given a
// value it cannot use.
func New(opts ...Option) (*Plugin, error) {
	p := &Plugin{core: core{cfg: config{maxCrawlDelay: defaultMaxCrawlDelay, deferWait: defaultDeferWait, statsCap: defaultStatsCapacity, defaultDelay: defaultDelay, retries: defaultRetries}}}
	for _, o := range opts {
		if o != nil {
			o(&p.cfg)
		}
	}
	// The resolver is made at the first request (it needs the collector's
	// User-Agent); its options are checked now, so that a bad value is New's
	// error and not a failure later. Quietly: the readings of WithAgents are
	// logged once, when the resolver is made.
	if r, err := policy.NewResolver(append(slices.Clip(p.cfg.policy), policy.WithLogger(nil))...); err != nil {
		p.cfg.errs = append(p.cfg.errs, fmt.Errorf("robots: WithPolicy: %w", err))
	} else if p.cfg.declaresUsage() && !r.Dialect().ReadsUsage() {
		p.cfg.fail("WithUsage: the %s dialect reads no usage preferences", r.Dialect())
	}
	if _, ok := p.cfg.transport.(*botauth.Transport); ok && p.cfg.signer != nil {
		p.cfg.fail("WithSigner and WithTransport(*botauth.Transport): each request would be signed twice; give WithTransport the transport beneath the signer")
	}
	if err := errors.Join(p.cfg.errs...); err != nil {
		return nil, err
	}
	p.log = p.cfg.logger
	if p.log == nil {
		p.log = slog.New(warnings{slog.Default().Handler()})
	}
	p.checkIdentity()
	base := p.cfg.transport
	if base == nil {
		base = defaultTransport()
	}
	p.base.Store(&roundTripper{base})
	if p.cfg.signer != nil {
		p.signing, _ = botauth.NewTransport(baseTransport{&p.core}, p.cfg.signer, p.cfg.signOpts...) // checked by WithSigner
	}
	p.coll = &checkTransport{p: &p.core, h: &p.handoff, owner: p}
	p.colls.attached = map[*colly.Collector]bool{}
	p.lim = p.cfg.limiter
	if p.lim == nil {
		p.lim = hostlimit.New(hostlimit.Config{})
	}
	p.stats.capacity = p.cfg.statsCap
	if p.cfg.sitemaps != nil {
		p.sitemaps = &sitemapFeature{p: &p.core, h: &p.handoff, pages: p.coll, cfg: p.cfg.sitemaps}
	}
	return p, nil
}

// WithRobots returns a Colly option that attaches a new plugin configured by
// opts: colly.NewCollector(robots.WithRobots(...)). Use [New] and
// [Plugin.Attach], or [Attach], to keep a handle for statistics and to see
// a configuration error when it happens.
//
// If opts are invalid (New returns an error), the collector is guarded all
// the same, failing closed: the error is logged at Error level (to the
// WithLogger logger when one was given) and every request is stopped,
// reported as [Canceled] with the error as its reason.
func WithRobots(opts ...Option) colly.CollectorOption {
	p, err := New(opts...)
	if err != nil {
		p = brokenPlugin(err, opts)
	}
	return func(c *colly.Collector) {
		if err := p.Attach(c); err != nil {
			p.log.Error(err.Error())
		}
	}
}

// brokenPlugin returns a plugin that stops every request with err, the error of
// New for opts: the fail-closed plugin of WithRobots.
func brokenPlugin(err error, opts []Option) *Plugin {
	var cfg config
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	p, _ := New(WithDefaultDelay(0))
	if cfg.logger != nil {
		p.log = cfg.logger
	}
	p.cfg.onBlocked = cfg.onBlocked
	p.cfg.broken = fmt.Errorf("robots: the plugin's configuration is invalid, every request is stopped: %w", err)
	p.log.Error(p.cfg.broken.Error())
	return p
}

// Attach attaches a new plugin configured by opts to an existing collector
// and returns it. If the collector already has a plugin (from WithRobots,
// say), Attach returns that one and attaches nothing new, one collector
// never running two plugins; it returns an error too if opts were given,
// since they cannot act.
func Attach(c *colly.Collector, opts ...Option) (*Plugin, error) {
	if q := pluginOf(c); q != nil {
		err := q.Attach(c) // a clone sharing the transport gets the callbacks
		if err == nil && len(opts) > 0 {
			err = errors.New("robots: the collector already has a plugin; Attach returned it and did not apply the options given")
		}
		return q, err
	}
	p, err := New(opts...)
	if err != nil {
		return nil, err
	}
	return p, p.Attach(c)
}

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
//
// The collector's own transport is kept behind the plugin's check and gate
// when [WithTransport] is not given: a proxy set with SetProxy or
// SetProxyFunc before Attach stays in use (with WithTransport, Attach
// returns an error: the collector's transport would be dropped). A
// transport set on the collector after Attach (SetProxy, SetProxyFunc,
// WithTransport, SetClient) is adopted the same way at the next request,
// with a warning, so that no request goes out unchecked or unspaced.
// Attaching p to a collector it is attached to already does nothing;
// attaching it to a collector that has another plugin returns an error and
// attaches nothing (the first keeps the collector).
func (p *Plugin) Attach(c *colly.Collector) error {
	if v, ok := os.LookupEnv("COLLY_IGNORE_ROBOTSTXT"); ok && !collyYes(v) && p.warned.CompareAndSwap(false, true) {
		p.log.Warn("robots: COLLY_IGNORE_ROBOTSTXT=" + v + " turns Colly's own robots.txt check back on after the options; it runs before the plugin and its blocks are not reported (unset it)")
	}
	p.colls.mu.Lock()
	defer p.colls.mu.Unlock()
	if p.colls.attached[c] {
		return nil
	}
	tr, readable := collyTransport(c)
	if ct, ok := tr.(*checkTransport); ok && ct != p.coll {
		return errors.New("robots: the collector already has another robots plugin; this one is not attached (one plugin per collector)")
	}
	var err error
	switch {
	case !readable:
		p.log.Warn("robots: cannot read the collector's transport (a Colly version this plugin does not know): a proxy set on the collector is replaced, and a transport set after Attach is not detected; set it with robots.WithTransport")
	case tr != nil && tr != http.RoundTripper(p.coll):
		if p.cfg.transport == nil {
			p.base.Store(&roundTripper{tr})
		} else {
			err = fmt.Errorf("robots: WithTransport replaces the transport the collector had (%T, set with SetProxy, SetProxyFunc or WithTransport before Attach); the plugin is attached with WithTransport's", tr)
		}
	}
	p.colls.attached[c] = true
	if p.colls.first == nil {
		p.colls.first = c
	}
	c.IgnoreRobotsTxt = true
	c.WithTransport(p.coll)
	cs := p.handoff.add()
	cs.visits = wrapVisits(c)
	// The decision path and the hand-off, then the features, in order:
	// each registers its own callbacks.
	c.OnRequest(func(r *colly.Request) { p.onRequest(c, cs, r) })
	c.OnError(func(r *colly.Response, err error) {
		if r == nil || r.Request == nil {
			return
		}
		switch be := p.handoff.onError(&p.core, cs, r, err); {
		case be == nil:
			p.logError(c, r, err) // an answer or a failure, not a stop
		case be.Block.Kind == Deferred:
			p.deferred.put(p.log, r.Request, be.Block.Until, be.answers)
		}
	})
	p.attachNofollow(c) // robotstags.go
	if p.cfg.declaresUsage() {
		p.attachUsage(c) // usage.go
	}
	if p.cfg.usageLog != nil {
		p.attachUsageLog(c) // usagelog.go
	}
	if p.sitemaps != nil {
		p.sitemaps.attach(c) // sitemaps.go
	}
	return err
}

// ensureTransport puts the plugin's transport back on c when something
// replaced it since Attach, keeping what replaced it as the transport
// behind the plugin's check and gate (the user's proxy stays in use).
//
// The read is under p.colls.mu, like the write, so that every request's send is
// ordered after an adoption made by a concurrent request. Colly itself
// writes the transport without a lock: changing it while requests are in
// flight races with Colly's own sends; change it between crawls.
func (p *Plugin) ensureTransport(c *colly.Collector) {
	cl := collyClient(c)
	if cl == nil {
		return
	}
	p.colls.mu.Lock()
	defer p.colls.mu.Unlock()
	tr := cl.Transport
	if tr == http.RoundTripper(p.coll) {
		return
	}
	if tr != nil {
		if ct, ok := tr.(*checkTransport); ok {
			tr = ct.p.base.Load().RoundTripper // another plugin's transport: use what is behind it
		}
		p.base.Store(&roundTripper{tr})
	}
	p.log.Warn("robots: the collector's transport was replaced after Attach (SetProxy, SetProxyFunc, WithTransport or SetClient); the plugin now checks and spaces requests in front of it (set it with robots.WithTransport to avoid this)",
		slog.String("transport", fmt.Sprintf("%T", cl.Transport)))
	c.WithTransport(p.coll)
}

// Close releases what the plugin holds open once crawling is over: the
// idle keep-alive connections of its transport (and their goroutines).
// The plugin stays usable; a later request opens new connections.
func (p *Plugin) Close() error {
	if ci, ok := p.base.Load().RoundTripper.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
	return nil
}

// Resolver returns the plugin's robots.txt resolver (nil before the first
// request).
func (p *Plugin) Resolver() *policy.Resolver { return p.res.Load() }

// Limiter returns the plugin's per-host limiter: the one given with
// [WithLimiter], else a *[hostlimit.Limiter].
func (p *Plugin) Limiter() Limiter { return p.lim }

// Stats returns a snapshot of the statistics per authority: of the
// [WithStatsCapacity] most recently updated ones at most. It copies every
// entry and asks the limiter for each one's gate statistics; [Plugin.Totals]
// sums without a copy.
func (p *Plugin) Stats() map[string]HostStats { return p.stats.perHost(p.lim) }

// Totals returns the statistics summed over every authority the plugin has
// seen, those dropped from [Plugin.Stats] by [WithStatsCapacity] included
// (Limiter is zero).
func (p *Plugin) Totals() HostStats { return p.stats.total() }

// Deferred returns the requests handed back as [Deferred] (robots.txt
// unreachable, or the host paused for longer than WithDeferWait), oldest
// first, and forgets them.
func (p *Plugin) Deferred() []*colly.Request {
	var reqs []*colly.Request
	for _, d := range p.deferred.take() {
		reqs = append(reqs, d.r)
	}
	return reqs
}

// DeferredUntil returns when retrying helps every request kept for
// [Plugin.RetryDeferred]: the latest of the retry times of the robots.txt
// files that deferred them (by the resolver's clock, see [policy.WithClock]) and
// the ends of the 429/5xx pauses of the hosts that did; false when none is
// kept. Retrying earlier defers a request again.
func (p *Plugin) DeferredUntil() (time.Time, bool) { return p.deferred.due() }

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
func (p *Plugin) RetryDeferred() int { return p.deferred.resubmit(p.log) }

// SitemapTotals returns the sums over every sitemap report.
func (p *Plugin) SitemapTotals() SitemapTotals { return p.sitemaps.sums() }

// onRequest is the OnRequest hook of the collector c of slot cs: the
// decision path of a request, stage after stage, each saying what it did
// (an outcome); a request that goes on through all of them is counted and
// let through to the transport with its ticket (handoff.go).
func (p *Plugin) onRequest(c *colly.Collector, cs *collectorSlot, r *colly.Request) {
	if r.IsAbort() {
		return // another callback stopped it
	}
	f := &flow{p: &p.core, h: &p.handoff, c: c, cs: cs, r: r, ctx: collectorContext(c), answers: p.handoff.start(r)}
	if p.admit(f) != goOn || f.nofollowLink() != goOn || f.loadPolicy() != goOn {
		return
	}
	if p.sitemaps != nil {
		p.sitemaps.walk(f, p.frontier.queue(c))
	}
	if f.decide() != goOn || p.frontier.postpone(f) != goOn || f.earlyWait() != goOn {
		return
	}
	p.leaveUsageMark(r, f.ctx)
	a := f.pol.Authority()
	p.stats.record(a, HostStats{Allowed: 1, Waited: f.waited})
	p.handoff.pass(cs, r, f.ctx, a, f.answers)
}

// admit puts the plugin's transport back on the collector if something
// replaced it, and stops every request of a plugin whose configuration is
// invalid (WithRobots).
func (p *Plugin) admit(f *flow) outcome {
	p.ensureTransport(f.c)
	if p.cfg.broken != nil {
		return f.stop(Block{Kind: Canceled, Reason: p.cfg.broken.Error()})
	}
	if !f.c.IgnoreRobotsTxt && p.warned.CompareAndSwap(false, true) {
		p.log.Warn("robots: Colly's own robots.txt check is on (COLLY_IGNORE_ROBOTSTXT?); it runs before the plugin")
	}
	return goOn
}

// pluginOf returns the plugin whose transport c uses, or nil.
func pluginOf(c *colly.Collector) *Plugin {
	tr, _ := collyTransport(c)
	if ct, ok := tr.(*checkTransport); ok {
		p, _ := ct.owner.(*Plugin)
		return p
	}
	return nil
}
