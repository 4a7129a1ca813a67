package robots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/botauth"
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
	base atomic.Pointer[roundTripper] // the transport behind the gate
	coll *checkTransport              // the collectors' transport: robots check, gate, base
	// signing signs each request past the gate, in front of base, and
	// answers challenges above the gate (WithSigner); nil: nothing signed.
	signing *botauth.Transport
	log     *slog.Logger

	once sync.Once
	res  atomic.Pointer[policy.Resolver]

	stats    stats
	deferred deferredList
	warned   atomic.Bool
	// logFailed is set at the usage log's first write error (logged once).
	logFailed atomic.Bool
	// uaChecked: the User-Agent of a request was checked (checkUserAgent).
	uaChecked atomic.Bool
	// tokens are the resolver's product tokens, set with it (resolver).
	tokens []string

	mu       sync.Mutex                // guards attached and adoptions of a collector's transport
	attached map[*colly.Collector]bool // collectors whose callbacks are registered
	first    *colly.Collector          // the first: its User-Agent names the crawler

	sm sitemapState // WithSitemaps: authorities walked, reports

	broken error // WithRobots with invalid options: every request is stopped with it

	slots slots // of the attached collectors: their contexts, for the transport (clienttimeout.go)

	postponers sync.Map // *colly.Collector → frontier.Postponer: AttachFrontier's frontier, if it postpones

	held sync.Map // ticket → *BlockedError: stops at the transport, for the OnError hook to report
}

// New returns a plugin configured by opts; attach it with [Plugin.Attach].
// It returns an error, naming each option, when an option was given a
// value it cannot use.
func New(opts ...Option) (*Plugin, error) {
	p := &Plugin{cfg: config{maxCrawlDelay: DefaultMaxCrawlDelay, deferWait: DefaultDeferWait, statsCap: DefaultStatsCapacity, defaultDelay: DefaultDelay, retries: DefaultRetries}}
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
		p.signing, _ = botauth.NewTransport(baseTransport{p}, p.cfg.signer, p.cfg.signOpts...) // checked by WithSigner
	}
	p.attached = map[*colly.Collector]bool{}
	p.lim = p.cfg.limiter
	if p.lim == nil {
		p.lim = hostlimit.New(hostlimit.Config{})
	}
	p.stats.capacity = p.cfg.statsCap
	p.coll = &checkTransport{p: p}
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
	p.broken = fmt.Errorf("robots: the plugin's configuration is invalid, every request is stopped: %w", err)
	p.log.Error(p.broken.Error())
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
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.attached[c] {
		return nil
	}
	tr, readable := collyTransport(c)
	if ct, ok := tr.(*checkTransport); ok && ct.p != p {
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
	p.attached[c] = true
	if p.first == nil {
		p.first = c
	}
	c.IgnoreRobotsTxt = true
	c.WithTransport(p.coll)
	cs := p.slots.add()
	cs.visits = wrapVisits(c)
	c.OnRequest(func(r *colly.Request) { p.onRequest(c, cs, r) })
	c.OnError(func(r *colly.Response, err error) { p.onError(c, cs, r, err) })
	c.OnResponse(func(r *colly.Response) { p.onResponse(c, r) })
	if p.cfg.sitemaps != nil {
		// Release the in-flight slot of a sitemap page (Async).
		c.OnScraped(p.releaseSlot)
		c.OnError(func(r *colly.Response, _ error) { p.releaseSlot(r) })
	}
	return err
}

// roundTripper boxes a transport for an atomic.Pointer.
type roundTripper struct{ http.RoundTripper }

// ensureTransport puts the plugin's transport back on c when something
// replaced it since Attach, keeping what replaced it as the transport
// behind the plugin's check and gate (the user's proxy stays in use).
//
// The read is under p.mu, like the write, so that every request's send is
// ordered after an adoption made by a concurrent request. Colly itself
// writes the transport without a lock: changing it while requests are in
// flight races with Colly's own sends; change it between crawls.
func (p *Plugin) ensureTransport(c *colly.Collector) {
	cl := collyClient(c)
	if cl == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
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

// collyYes reads a COLLY_* boolean as Colly does.
func collyYes(v string) bool {
	switch strings.ToLower(v) {
	case "1", "yes", "true", "y":
		return true
	}
	return false
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

// requestStages are the OnRequest hook's stages, in the order a request
// goes down them: each passes it on (true) or ends its way (false: it was
// stopped and reported, handed back, or needs nothing of the plugin).
var requestStages = [...]func(*flow) bool{
	(*flow).admit,      // plugin.go: the plugin's transport in place, a valid configuration
	(*flow).nofollow,   // robotstags.go: a link of a nofollow page
	(*flow).loadPolicy, // deferred.go: the host's policy, an unreachable robots.txt waited for
	(*flow).sitemaps,   // sitemaps.go: the host's sitemaps, walked once
	(*flow).rules,      // resolve.go: robots.txt's verdict
	(*flow).usage,      // usage.go: the purposes declared with WithUsage
	(*flow).spacing,    // limiter.go: the host's delay, or the host skipped
	(*flow).postpone,   // frontier_attach.go: back to the frontier until the host's turn
	(*flow).earlyWait,  // limiter.go: the host's turn, waited for outside LimitRule slots
}

// onRequest is the OnRequest hook of the collector c of slot cs: r goes
// down requestStages, and is let through to the transport if it reaches
// their end.
func (p *Plugin) onRequest(c *colly.Collector, cs *collectorSlot, r *colly.Request) {
	if s := slotOf(r); s != nil {
		if r.IsAbort() {
			s.release() // a callback before this hook stopped it: it goes no further
			return
		}
		defer s.arm() // a callback after this hook may stop it silently: see window
	}
	if r.IsAbort() {
		return // another callback stopped it
	}
	if r.Headers != nil {
		delete(*r.Headers, stopHeader) // a retried request stopped before
		delete(*r.Headers, passHeader)
	}
	ctx := c.Context
	if ctx == nil {
		ctx = context.Background()
	}
	f := &flow{p: p, c: c, cs: cs, r: r, ctx: ctx}
	for _, stage := range requestStages {
		if !stage(f) {
			return
		}
	}
	p.pass(r, cs, ctx, f.pol.Authority(), f.waited)
}

// admit puts the plugin's transport back on the collector if something
// replaced it, and stops every request of a plugin whose configuration is
// invalid (WithRobots).
func (f *flow) admit() bool {
	p := f.p
	p.ensureTransport(f.c)
	if p.broken != nil {
		return f.stop(Block{Kind: Canceled, Reason: p.broken.Error()})
	}
	if !f.c.IgnoreRobotsTxt && p.warned.CompareAndSwap(false, true) {
		p.log.Warn("robots: Colly's own robots.txt check is on (COLLY_IGNORE_ROBOTSTXT?); it runs before the plugin")
	}
	return true
}

// onResponse is the OnResponse hook of the collector c: the response's
// robots directives (nofollow, and the usage mark with WithUsage).
func (p *Plugin) onResponse(c *colly.Collector, r *colly.Response) {
	if r.Request == nil || r.Request.URL == nil || r.Ctx == nil {
		return
	}
	if source := p.nofollowSource(r); source != "" {
		markNofollow(r, source)
	}
	if p.cfg.declaresUsage() {
		p.markUsage(r)
	}
	p.logResponse(r)
}

// onError is the OnError hook of the collector c of slot cs: it reports a
// stop the transport held for it (see stopAt) with its Colly request,
// completes a stop's error with its Colly request, and keeps for
// [Plugin.RetryDeferred] the Colly request behind a request deferred at
// the transport (its host paused past WithDeferWait, a redirect hop to an
// authority whose robots.txt is unreachable for now, a policy that expired
// between OnRequest and the send), so that it is not lost: Colly has
// marked its URL visited.
func (p *Plugin) onError(c *colly.Collector, cs *collectorSlot, r *colly.Response, err error) {
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
		p.logError(c, r, err) // an answer or a failure, not a stop
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
