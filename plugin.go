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
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/frontier"
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
	log  *slog.Logger

	once sync.Once
	res  atomic.Pointer[policy.Resolver]

	stats    stats
	deferred deferredList
	warned   atomic.Bool
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
	} else if len(p.cfg.purposes) > 0 && !r.Dialect().ReadsUsage() {
		p.cfg.fail("WithPurposes: the %s dialect reads no usage preferences", r.Dialect())
	}
	if len(p.cfg.purposes) == 0 && (p.cfg.strictUsage || p.cfg.onUsage != nil) {
		p.cfg.fail("WithStrictPurposes and WithOnUsageRefused need WithPurposes")
	}
	if err := errors.Join(p.cfg.errs...); err != nil {
		return nil, err
	}
	p.log = p.cfg.logger
	if p.log == nil {
		p.log = slog.New(warnings{slog.Default().Handler()})
	}
	base := p.cfg.transport
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	p.base.Store(&roundTripper{base})
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
		p = broken(err, opts)
	}
	return func(c *colly.Collector) {
		if err := p.Attach(c); err != nil {
			p.log.Error(err.Error())
		}
	}
}

// broken returns a plugin that stops every request with err, the error of
// New for opts: the fail-closed plugin of WithRobots.
func broken(err error, opts []Option) *Plugin {
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

// pluginOf returns the plugin whose transport c uses, or nil.
func pluginOf(c *colly.Collector) *Plugin {
	tr, _ := collyTransport(c)
	if ct, ok := tr.(*checkTransport); ok {
		return ct.p
	}
	return nil
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
	c.OnError(func(r *colly.Response, err error) { p.onError(cs, r, err) })
	c.OnResponse(p.onResponse)
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

// resolver returns the plugin's resolver, created on first use so that the
// User-Agent of the collector it was first attached to (set by later
// options or COLLY_USER_AGENT) is known. The crawler's name is fixed then,
// once: never from a request's header (extensions.RandomUserAgent changes
// those), and a User-Agent set on the collector later does not change it.
func (p *Plugin) resolver() *policy.Resolver {
	if r := p.res.Load(); r != nil {
		return r
	}
	p.once.Do(func() {
		p.mu.Lock()
		var userAgent string
		if p.first != nil {
			userAgent = p.first.UserAgent
		}
		p.mu.Unlock()
		// The plugin's defaults first: the user's policy options override them.
		opts := []policy.Option{
			policy.WithUserAgent(userAgent),
			policy.WithHTTPClient(&http.Client{Transport: &robotsTransport{p: p}}),
			policy.WithLogger(p.log),
		}
		r, err := policy.NewResolver(append(opts, p.cfg.policy...)...)
		if err != nil {
			// New checked the user's options: not reached. Never a panic
			// if it is: the plugin's own defaults alone.
			p.log.Error("robots: WithPolicy: the resolver's options are invalid; using the plugin's defaults alone",
				slog.Any("error", err))
			r, _ = policy.NewResolver(opts...)
		}
		if len(r.Agents()) == 0 {
			p.log.Warn("robots: no product token could be derived from the User-Agent; only the * groups of robots.txt apply (set robots.WithAgents)",
				slog.String("user_agent", r.UserAgent()))
		}
		p.tokens = r.Agents()
		p.res.Store(r)
	})
	return p.res.Load()
}

// agents returns the resolver's product tokens (not to be modified).
func (p *Plugin) agents() []string {
	p.resolver()
	return p.tokens
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

// onRequest is the OnRequest hook: verdict, deferral, early wait.
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
	p.ensureTransport(c)
	if p.broken != nil {
		p.stopRequest(r, Block{Kind: Canceled, Reason: p.broken.Error()}, nil)
		return
	}
	if b, stop := nofollowStop(r); stop {
		p.stopRequest(r, b, nil)
		if !c.AllowURLRevisit {
			cs.visits.forget(r)
		}
		return
	}
	if !c.IgnoreRobotsTxt && p.warned.CompareAndSwap(false, true) {
		p.log.Warn("robots: Colly's own robots.txt check is on (COLLY_IGNORE_ROBOTSTXT?); it runs before the plugin")
	}
	ctx := c.Context
	if ctx == nil {
		ctx = context.Background()
	}
	res := p.resolver()
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
			p.stopRequest(r, Block{Kind: Canceled, Reason: err.Error()}, nil)
			return
		}
		if p.cfg.sitemaps != nil {
			p.walkSitemaps(c, pol)
		}
		v = pol.Check(r.URL)
		if v.Allowed {
			break
		}
		if v.Reason != dialect.ReasonFetch || !temporary(pol.Action()) {
			p.stopRequest(r, Block{Kind: Disallowed, Verdict: v, Reason: v.String()}, pol)
			return
		}
		// robots.txt is unreachable for now: wait for the retry, within
		// the defer budget, else hand the request back.
		if start.IsZero() {
			start = time.Now()
		}
		wait := pol.Expires().Sub(res.Now())
		if time.Since(start)+wait > p.cfg.deferWait {
			p.stopRequest(r, Block{Kind: Deferred, Verdict: v, Until: pol.Expires(), Reason: v.String()}, pol)
			return
		}
		// Sleep in short steps: the resolver's clock may not be the wall clock.
		if !sleep(ctx, min(max(wait, time.Millisecond), deferPoll)) {
			p.stopRequest(r, Block{Kind: Canceled, Verdict: v, Reason: ctx.Err().Error()}, pol)
			return
		}
	}
	if b, refused := p.usageStop(pol, r.URL, v); refused {
		p.stopRequest(r, b, pol)
		return
	}
	authority := pol.Authority()
	d, skip := p.delayOf(pol)
	if skip {
		cd, _ := pol.CrawlDelay()
		p.stopRequest(r, Block{Kind: Skipped, Verdict: v, Reason: fmt.Sprintf("Crawl-delay %s is above the largest honoured, %s", cd, p.cfg.maxCrawlDelay)}, pol)
		return
	}
	if !start.IsZero() {
		waited = time.Since(start)
	}
	if c.CacheDir != "" {
		// Colly may answer from its disk cache without a request, and tells
		// no one which (its cache path is private): no early wait, the
		// transport's gate spaces what reaches the network.
		p.pass(r, cs, ctx, authority, waited)
		return
	}
	if p.postpone(c, r, pol, d) {
		return
	}
	// A pause of a second or less is always waited out: handing a request
	// back for it would cost more than it saves.
	w, err := p.lim.WaitMax(ctx, authority, d, p.maxPause())
	if err != nil {
		p.waitFailed(r, v, pol, err)
		return
	}
	p.pass(r, cs, ctx, authority, waited+w)
}

// postponeMin is the shortest wait for the host's turn that the plugin
// hands back to a frontier rather than wait out on the queue thread.
const postponeMin = 50 * time.Millisecond

// postpone hands r back to the frontier of c that handed it out (see
// [AttachFrontier]) when its host's robots.txt was fetched less than the
// delay d ago, so that the host's turn is still at least postponeMin away:
// the frontier handed the request out as ready, not knowing of the fetch
// its first request brings. It reports whether r was handed back (then
// aborted, and counted under Postponed).
func (p *Plugin) postpone(c *colly.Collector, r *colly.Request, pol *policy.Policy, d time.Duration) bool {
	v, ok := p.postponers.Load(c)
	if !ok || !c.AllowURLRevisit || slotOf(r) != nil {
		return false
	}
	lease := FrontierLease(r.Ctx)
	fetched := pol.Fetch().Time
	wait := fetched.Add(d).Sub(p.res.Load().Now())
	if lease == "" || fetched.IsZero() || wait < postponeMin {
		return false
	}
	if !v.(frontier.Postponer).Postpone(lease, time.Now().Add(wait)) {
		return false
	}
	r.Abort()
	p.stats.record(pol.Authority(), HostStats{Postponed: 1})
	p.log.Debug("robots: request handed back to the frontier until its host's turn",
		slog.String("url", r.URL.String()), slog.Time("robots_fetched", fetched), slog.Duration("delay", d))
	return true
}

// waitFailed stops r after its early wait failed: deferred when its host
// is paused for longer than WithDeferWait, else canceled.
func (p *Plugin) waitFailed(r *colly.Request, v policy.Verdict, pol *policy.Policy, err error) {
	var pe *hostlimit.PausedError
	if errors.As(err, &pe) {
		p.stopRequest(r, Block{Kind: Deferred, Verdict: v, Until: pe.Until,
			Reason: "the host answered 429 or 5xx and is paused until " + pe.Until.UTC().Format(time.RFC3339) + ", longer than WithDeferWait"}, pol)
		return
	}
	p.stopRequest(r, Block{Kind: Canceled, Verdict: v, Reason: err.Error()}, pol)
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
	if fn := p.cfg.onBlocked; fn != nil {
		fn(b)
	}
}
