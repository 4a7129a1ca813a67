package robots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
)

// BlockKind says why the plugin stopped a request.
type BlockKind uint8

const (
	// Disallowed: robots.txt disallows the URL for the crawler, by a rule or
	// by its fetch outcome (e.g. "complete disallow" under rfc9309 after a
	// 5xx that lasts).
	Disallowed BlockKind = iota
	// Deferred: robots.txt is temporarily unreachable and the dialect says to
	// wait; the request was handed back (see [Plugin.RetryDeferred]).
	Deferred
	// Skipped: the host's Crawl-delay is above the largest honoured and the
	// plugin is set to skip such hosts ([SkipHost]).
	Skipped
	// Canceled: the collector's context ended while the request waited.
	Canceled
)

func (k BlockKind) String() string {
	return [...]string{"disallowed", "deferred", "skipped", "canceled"}[k]
}

// Block reports one request the plugin stopped.
type Block struct {
	Kind      BlockKind
	URL       string
	Authority string
	Dialect   string
	// Verdict says which rule (and line) or which fetch outcome decided, for
	// Disallowed and Deferred.
	Verdict Verdict
	// Redirect is true when the URL is a redirect target: the redirect was
	// not followed.
	Redirect bool
	// Request is the Colly request that was aborted in OnRequest; nil for a
	// request stopped at the transport (a redirect hop, or a request of a
	// cloned collector the plugin was not attached to).
	Request *colly.Request
	// Reason is the explanation in words.
	Reason string
}

func (b Block) String() string { return b.Kind.String() + " " + b.URL + ": " + b.Reason }

// ErrBlocked is wrapped by the error a stopped redirect hop (or a request of
// a collector the plugin guards only through its transport) fails with;
// Colly passes it to OnError. Use errors.As with *BlockedError for details.
var ErrBlocked = errors.New("robots: request stopped")

// BlockedError is the error of a request stopped at the transport.
type BlockedError struct{ Block Block }

func (e *BlockedError) Error() string { return "robots: " + e.Block.String() }
func (e *BlockedError) Unwrap() error { return ErrBlocked }

// HostStats are the plugin's statistics for one authority.
type HostStats struct {
	Allowed    int64 // requests let through in OnRequest
	Disallowed int64 // stopped by robots.txt (rules or fetch outcome), redirect hops included
	Deferred   int64 // handed back while robots.txt was unreachable
	Skipped    int64 // stopped because the Crawl-delay is above the largest honoured
	// Waited is the time allowed requests were held in OnRequest: waiting
	// for the retry of an unreachable robots.txt and for the host's turn
	// (not the robots.txt fetch itself, nor the final gate at send time).
	Waited time.Duration
	// Limiter holds the host's gate statistics while the limiter keeps its
	// state (it drops idle hosts); zero otherwise.
	Limiter HostLimitStats
}

// hostCounters are one authority's statistics. Updates hold mu, so that
// an update racing with the authority's fold goes to the totals instead.
type hostCounters struct {
	allowed, disallowed, deferred, skipped atomic.Int64
	waited                                 atomic.Int64
	touched                                atomic.Int64 // Plugin.tick at the latest update
	mu                                     sync.Mutex
	gone                                   bool // folded into the totals; guarded by mu
}

func (c *hostCounters) snapshot() HostStats {
	return HostStats{
		Allowed: c.allowed.Load(), Disallowed: c.disallowed.Load(), Deferred: c.deferred.Load(),
		Skipped: c.skipped.Load(), Waited: time.Duration(c.waited.Load()),
	}
}

// add adds s's counts to c.
func (c *hostCounters) add(s HostStats) {
	c.allowed.Add(s.Allowed)
	c.disallowed.Add(s.Disallowed)
	c.deferred.Add(s.Deferred)
	c.skipped.Add(s.Skipped)
	c.waited.Add(int64(s.Waited))
}

// Plugin enforces robots.txt and spaces requests per host for the Colly
// collectors it is attached to. One Plugin may serve several collectors
// (clones included): they share its robots.txt cache, its per-host limiter
// and its statistics. It is safe for concurrent use.
type Plugin struct {
	opts []Option
	cfg  config // opts applied to a zero config: the plugin's own settings
	lim  *Limiter
	rt   *limitedTransport // base behind the limiter's gate: robots.txt fetches
	coll http.RoundTripper // rt behind a robots check: the collectors' requests
	log  *slog.Logger

	once sync.Once
	res  atomic.Pointer[Resolver]

	stats         sync.Map     // authority → *hostCounters
	nstats        atomic.Int64 // entries in stats
	tick          atomic.Int64 // logical clock of stats updates
	folded        hostCounters // counts of the authorities dropped from stats
	foldMu        sync.Mutex   // one fold at a time
	mu            sync.Mutex
	deferred      []*colly.Request
	deferredUntil time.Time // the latest retry time of the robots.txt files that deferred them
	warned        atomic.Bool
}

// New returns a plugin configured by opts; attach it with [Plugin.Attach] or
// [Plugin.Option].
func New(opts ...Option) *Plugin {
	p := &Plugin{opts: opts}
	p.cfg.plugin = pluginConfig{maxCrawlDelay: DefaultMaxCrawlDelay, deferWait: DefaultDeferWait, statsCap: DefaultStatsCapacity}
	for _, o := range opts {
		o(&p.cfg)
	}
	pc := &p.cfg.plugin
	p.log = p.cfg.logger
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
		p.cfg.logger = p.log
	}
	base := pc.transport
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	p.lim = NewLimiter(LimiterConfig{
		Spacing:       pc.spacing,
		Delay:         p.cachedDelay,
		MaxRetryAfter: pc.retryAfterCap,
		BackoffBase:   pc.backoffBase,
		BackoffMax:    pc.backoffMax,
	})
	p.rt = &limitedTransport{l: p.lim, next: base}
	p.coll = &checkTransport{p: p, next: p.rt}
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

// onError keeps for [Plugin.RetryDeferred] the Colly request behind a
// request deferred at the transport (a redirect hop to an authority whose
// robots.txt is unreachable for now, or a policy that expired between
// OnRequest and the send), so that it is not lost: Colly has marked its URL
// visited.
func (p *Plugin) onError(r *colly.Response, err error) {
	var be *BlockedError
	if r != nil && r.Request != nil && errors.As(err, &be) && be.Block.Kind == Deferred {
		p.keepDeferred(r.Request, be.Block.Verdict.Policy)
	}
}

// maxDeferred bounds the requests kept for RetryDeferred.
const maxDeferred = 100_000

// keepDeferred adds r, deferred by pol, to the requests kept for
// RetryDeferred, unless maxDeferred are kept already (then it says so in
// the log).
func (p *Plugin) keepDeferred(r *colly.Request, pol *Policy) {
	p.mu.Lock()
	full := len(p.deferred) >= maxDeferred
	if !full {
		p.deferred = append(p.deferred, r)
		if pol != nil && pol.Expires().After(p.deferredUntil) {
			p.deferredUntil = pol.Expires()
		}
	}
	p.mu.Unlock()
	if full {
		p.log.Warn("robots: deferred request not kept for RetryDeferred: already keeping the most allowed; call RetryDeferred",
			slog.String("url", r.URL.String()), slog.Int("kept", maxDeferred))
	}
}

// resolver returns the plugin's resolver, created on first use so that the
// collector's User-Agent (set by later options or the environment) is known.
func (p *Plugin) resolver(userAgent string) *Resolver {
	p.once.Do(func() {
		var opts []Option
		if p.cfg.userAgent == "" && userAgent != "" {
			opts = append(opts, WithUserAgent(userAgent))
		}
		if p.cfg.client == nil {
			opts = append(opts, WithHTTPClient(&http.Client{Transport: p.rt}))
		}
		opts = append(opts, p.opts...)
		opts = append(opts, WithLogger(p.log))
		r := NewResolver(opts...)
		if len(r.cfg.tokens) == 0 {
			p.log.Warn("robots: no product token could be derived from the User-Agent; only the * groups of robots.txt apply (set robots.WithAgents)",
				slog.String("user_agent", r.cfg.userAgent))
		}
		p.res.Store(r)
	})
	return p.res.Load()
}

// Resolver returns the plugin's robots.txt resolver (nil before the first
// request).
func (p *Plugin) Resolver() *Resolver { return p.res.Load() }

// Limiter returns the plugin's per-host limiter.
func (p *Plugin) Limiter() *Limiter { return p.lim }

// delayOf returns the spacing for a host under policy pol, and whether the
// host is to be skipped.
func (p *Plugin) delayOf(pol *Policy) (time.Duration, bool) {
	pc := &p.cfg.plugin
	d := pc.minDelay
	cd, ok := pol.CrawlDelay()
	if !ok {
		return d, false
	}
	if cd > pc.maxCrawlDelay {
		switch pc.overDelay {
		case SkipHost:
			return 0, true
		case CapDelay:
			cd = pc.maxCrawlDelay
		}
	}
	return max(d, cd), false
}

// cachedDelay gives the limiter the delay of a host whose state it creates.
func (p *Plugin) cachedDelay(host string) time.Duration {
	if r := p.res.Load(); r != nil {
		if pol := r.cache.peek(host); pol != nil {
			d, _ := p.delayOf(pol)
			return d
		}
	}
	return p.cfg.plugin.minDelay
}

// record adds d to authority's statistics.
func (p *Plugin) record(authority string, d HostStats) {
	c := p.counters(authority)
	c.mu.Lock()
	if c.gone {
		p.folded.add(d)
	} else {
		c.add(d)
	}
	c.mu.Unlock()
}

// counters returns authority's counters, marked as updated now.
func (p *Plugin) counters(authority string) *hostCounters {
	v, ok := p.stats.Load(authority)
	if !ok {
		c := &hostCounters{}
		c.touched.Store(p.tick.Add(1))
		var loaded bool
		v, loaded = p.stats.LoadOrStore(authority, c)
		if !loaded {
			if p.nstats.Add(1) > int64(p.cfg.plugin.statsCap) {
				p.fold()
			}
			return c
		}
	}
	c := v.(*hostCounters)
	c.touched.Store(p.tick.Add(1))
	return c
}

// fold moves the least recently updated authorities out of stats into the
// totals, down to nine tenths of the capacity; no count is lost (see
// hostCounters). One goroutine folds at a time; the others go on.
func (p *Plugin) fold() {
	if !p.foldMu.TryLock() {
		return
	}
	defer p.foldMu.Unlock()
	keep := p.cfg.plugin.statsCap * 9 / 10
	for p.nstats.Load() > int64(p.cfg.plugin.statsCap) {
		p.foldTo(keep)
	}
}

func (p *Plugin) foldTo(keep int) {
	var ticks []int64
	p.stats.Range(func(_, v any) bool {
		ticks = append(ticks, v.(*hostCounters).touched.Load())
		return true
	})
	if len(ticks) <= keep {
		return
	}
	slices.Sort(ticks)
	limit := ticks[len(ticks)-keep-1]
	var gone []*hostCounters
	p.stats.Range(func(k, v any) bool {
		c := v.(*hostCounters)
		if c.touched.Load() <= limit {
			if _, ok := p.stats.LoadAndDelete(k); ok {
				p.nstats.Add(-1)
				gone = append(gone, c)
			}
		}
		return true
	})
	for _, c := range gone {
		c.mu.Lock()
		c.gone = true
		p.folded.add(c.snapshot())
		c.mu.Unlock()
	}
}

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
		pol    *Policy
		err    error
		v      Verdict
	)
	for {
		pol, err = res.Policy(ctx, r.URL)
		if errors.Is(err, ErrUnsupportedURL) {
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
		if v.Cause != CauseFetch || !temporary(pol.Action()) {
			p.stop(r, Block{Kind: Disallowed, Verdict: v, Reason: v.String()}, pol)
			return
		}
		// robots.txt is unreachable for now: wait for the retry, within
		// the defer budget, else hand the request back.
		if start.IsZero() {
			start = time.Now()
		}
		wait := pol.Expires().Sub(res.clock.Now())
		if time.Since(start)+wait > p.cfg.plugin.deferWait {
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
		p.stop(r, Block{Kind: Skipped, Verdict: v, Reason: fmt.Sprintf("Crawl-delay %s is above the largest honoured, %s", cd, p.cfg.plugin.maxCrawlDelay)}, pol)
		return
	}
	if !start.IsZero() {
		waited = time.Since(start)
	}
	w, err := p.lim.wait(ctx, authority, d, true)
	if err != nil {
		p.stop(r, Block{Kind: Canceled, Verdict: v, Reason: err.Error()}, pol)
		return
	}
	p.record(authority, HostStats{Allowed: 1, Waited: waited + w})
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
func (p *Plugin) stop(r *colly.Request, b Block, pol *Policy) {
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
		b.Authority, _ = Authority(r.URL)
	}
	if b.Dialect == "" {
		b.Dialect = p.cfg.dialectName()
	}
	switch b.Kind {
	case Disallowed:
		p.record(b.Authority, HostStats{Disallowed: 1})
	case Deferred:
		p.record(b.Authority, HostStats{Deferred: 1})
	case Skipped:
		p.record(b.Authority, HostStats{Skipped: 1})
	}
	p.log.Info("robots: request stopped", slog.String("kind", b.Kind.String()), slog.String("url", b.URL),
		slog.String("dialect", b.Dialect), slog.Bool("redirect", b.Redirect), slog.String("reason", b.Reason))
	if fn := p.cfg.plugin.onBlocked; fn != nil {
		fn(b)
	}
}

func (c *config) dialectName() string {
	if c.dialect == nil {
		return dialect.RFC9309.Name()
	}
	return c.dialect.Name()
}

// Deferred returns the requests handed back while robots.txt was
// unreachable, oldest first, and forgets them.
func (p *Plugin) Deferred() []*colly.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.deferred
	p.deferred, p.deferredUntil = nil, time.Time{}
	return d
}

// DeferredUntil returns when robots.txt is next fetched for every request
// kept for [Plugin.RetryDeferred]: the latest retry time among the policies
// that deferred them (by the resolver's clock, see [WithClock]), and false
// when none is kept. Retrying earlier defers a request again.
func (p *Plugin) DeferredUntil() (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.deferredUntil, len(p.deferred) > 0
}

// RetryDeferred submits again every request handed back while robots.txt was
// unreachable (with colly's Request.Retry, which skips the visited check)
// and returns how many it submitted. Each goes through the plugin afresh, so
// call it once robots.txt's retry time has come ([Plugin.DeferredUntil]; a
// dialect retries a failing robots.txt after 10 minutes, or an hour for a
// coccoc host without answer): earlier, the requests are deferred again.
// Call it from outside any callback, e.g. after c.Wait(), then c.Wait()
// again; with a collector that is not Async, it returns only once the
// requests are done.
func (p *Plugin) RetryDeferred() int {
	reqs := p.Deferred()
	for _, r := range reqs {
		if err := r.Retry(); err != nil {
			p.log.Warn("robots: retrying a deferred request failed", slog.String("url", r.URL.String()), slog.Any("error", err))
		}
	}
	return len(reqs)
}

// Stats returns a snapshot of the statistics per authority: of the
// [WithStatsCapacity] most recently updated ones at most.
func (p *Plugin) Stats() map[string]HostStats {
	out := map[string]HostStats{}
	p.stats.Range(func(k, v any) bool {
		s := v.(*hostCounters).snapshot()
		s.Limiter, _ = p.lim.Stats(k.(string))
		out[k.(string)] = s
		return true
	})
	return out
}

// Totals returns the statistics summed over every authority the plugin has
// seen, those dropped from [Plugin.Stats] by [WithStatsCapacity] included
// (Limiter is zero).
func (p *Plugin) Totals() HostStats {
	t := p.folded.snapshot()
	p.stats.Range(func(_, v any) bool {
		s := v.(*hostCounters).snapshot()
		t.Allowed += s.Allowed
		t.Disallowed += s.Disallowed
		t.Deferred += s.Deferred
		t.Skipped += s.Skipped
		t.Waited += s.Waited
		return true
	})
	return t
}

// Authorities returns the authorities with statistics, sorted.
func (p *Plugin) Authorities() []string {
	var a []string
	p.stats.Range(func(k, _ any) bool { a = append(a, k.(string)); return true })
	sort.Strings(a)
	return a
}

// checkTransport checks every request against robots.txt before it reaches
// the per-host gate: redirect hops (which no Colly callback sees) and the
// requests of collectors guarded only through the transport.
type checkTransport struct {
	p    *Plugin
	next *limitedTransport
}

func (t *checkTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p := t.p
	res := p.resolver(req.Header.Get("User-Agent"))
	pol, err := res.Policy(req.Context(), req.URL)
	if errors.Is(err, ErrUnsupportedURL) {
		return t.next.RoundTrip(req)
	}
	if err != nil {
		// The request's context ended while robots.txt was being fetched.
		p.stop(nil, t.canceled(req, err), nil)
		closeBody(req)
		return nil, err
	}
	v := pol.Check(req.URL)
	d, skip := p.delayOf(pol)
	if v.Allowed && !skip {
		resp, err := t.next.roundTrip(req, pol.Authority(), d, true, nil)
		if err != nil {
			if gw := (*gateWaitError)(nil); errors.As(err, &gw) {
				p.stop(nil, t.canceled(req, gw), pol)
			}
		}
		return resp, err
	}
	b := Block{Redirect: req.Response != nil, URL: req.URL.String()}
	switch {
	case !v.Allowed:
		b.Kind, b.Verdict, b.Reason = Disallowed, v, v.String()
		if v.Cause == CauseFetch && temporary(pol.Action()) {
			b.Kind = Deferred
		}
	default: // skip
		b.Kind, b.Reason = Skipped, "Crawl-delay above the largest honoured"
	}
	b.Reason = hopReason(req, b.Reason)
	p.stop(nil, b, pol)
	closeBody(req)
	return nil, &BlockedError{Block: b}
}

// canceled is the report of a request whose context ended while the
// transport held it.
func (t *checkTransport) canceled(req *http.Request, err error) Block {
	return Block{Kind: Canceled, URL: req.URL.String(), Redirect: req.Response != nil, Reason: hopReason(req, err.Error())}
}

// hopReason is reason, said of a redirect hop when req is one.
func hopReason(req *http.Request, reason string) string {
	if req.Response == nil {
		return reason
	}
	return "redirect from " + redact(req.Response.Request.URL) + " not followed: " + reason
}

func redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Redacted()
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
