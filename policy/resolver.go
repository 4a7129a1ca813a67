package policy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/politecrawl/robots/dialect"
)

// Clock tells the time. The resolver reads it for cache lifetimes and the
// dialects' stale rules; tests give a controllable one.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// DefaultUserAgent is the User-Agent header sent when none is configured.
const DefaultUserAgent = "politecrawl-robots/0.1 (+https://github.com/politecrawl/robots)"

// Defaults of the options (each option's doc states its value).
const (
	defaultCapacity       = 10000
	defaultConnectTimeout = 10 * time.Second
	defaultHeaderTimeout  = 15 * time.Second
	defaultTotalTimeout   = 30 * time.Second
	defaultMinMaxAge      = 10 * time.Minute
	defaultStoreTimeout   = 5 * time.Second
	defaultCacheBytes     = 256 << 20
)

type config struct {
	dialect        *dialect.Dialect
	tokens         []string
	tokensSet      bool
	userAgent      string
	client         *http.Client
	totalTimeout   time.Duration
	ttl            time.Duration // 0: the dialect's
	minAge, maxAge time.Duration // bounds of Cache-Control max-age; maxAge 0: the TTL
	capacity       int
	cacheBytes     int64
	store          Store
	storeTimeout   time.Duration
	clock          Clock
	logger         *slog.Logger
	docFilter      func(*url.URL) bool // the hosts documents may be fetched from
	errs           []error             // out-of-range option values: NewResolver returns them
}

// fail records an option value out of range: NewResolver returns it as an
// error (each one, joined) and no resolver.
func (c *config) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("policy: "+format, args...))
}

// setPositive stores v in *dst when it is above 0 (0 keeps the default)
// and records failure, formatted with v, when it is negative.
func setPositive[T int | int64 | time.Duration](c *config, dst *T, v T, failure string) {
	switch {
	case v < 0:
		c.fail(failure, v)
	case v > 0:
		*dst = v
	}
}

// Option configures a [Resolver].
type Option func(*config)

// WithDialect sets how robots.txt is read and what fetch outcomes mean
// (default [dialect.RFC9309]).
func WithDialect(d *dialect.Dialect) Option {
	return func(c *config) {
		if d != nil {
			c.dialect = d
		}
	}
}

// WithAgents sets the crawler's product tokens, most specific first
// ("examplebot-news", "examplebot"); the first that has a group of its own
// in a robots.txt decides. A User-Agent given as a token ("USpider/1.0",
// anything holding '/' or '(') is reduced to its product token
// ([dialect.ProductToken]), and a token the dialect does not compare whole
// ([dialect.Dialect.AgentToken]: a name with a space) is kept; both are
// logged as warnings when the resolver is made. Default: the token
// [dialect.ProductToken] derives from the User-Agent header; with none,
// only the "*" groups apply.
func WithAgents(tokens ...string) Option {
	return func(c *config) {
		c.tokens, c.tokensSet = nil, true
		for _, t := range tokens {
			if t != "" {
				c.tokens = append(c.tokens, t)
			}
		}
	}
}

// WithUserAgent sets the User-Agent header of robots.txt requests (default
// [DefaultUserAgent]). Use the crawler's own.
func WithUserAgent(ua string) Option {
	return func(c *config) {
		if ua != "" {
			c.userAgent = ua
		}
	}
}

// WithHTTPClient makes robots.txt fetches go through client (its transport,
// proxy, cookie jar and timeout); redirects are counted and followed by the
// resolver whatever the client's CheckRedirect says. Default: a client of
// its own with a 10 s connect (and TLS handshake) timeout and a 15 s
// response-header timeout. Every fetch of the resolver, each redirect hop
// its own request, goes through the client's transport: to sign them (Web
// Bot Auth), give a client whose transport is a botauth.Transport tr,
// wrapped as tr.Answering(tr) to answer signature challenges. The robots
// plugin signs with its own WithSigner instead.
func WithHTTPClient(client *http.Client) Option {
	return func(c *config) { c.client = client }
}

// WithTimeout bounds each robots.txt fetch, from the request to the end of
// the body, redirects included, whatever the client (default 30 s; 0 means
// the default; negative is an error of [NewResolver]). Time spent waiting
// at a per-host gate that reports it through the request context's gate
// hook (the robots plugin's) does not count. Connect and header timeouts
// belong to the transport: the default client's are 10 s and 15 s; give
// [WithHTTPClient] a transport of your own to change them.
func WithTimeout(total time.Duration) Option {
	return func(c *config) {
		setPositive(c, &c.totalTimeout, total, "WithTimeout(%v): a timeout cannot be negative")
	}
}

// WithTTL sets how long a robots.txt answer is used when it has no
// Cache-Control max-age (default: the dialect's, 24 h; 0 means the
// default; negative is an error of [NewResolver]).
func WithTTL(ttl time.Duration) Option {
	return func(c *config) { setPositive(c, &c.ttl, ttl, "WithTTL(%v): cannot be negative") }
}

// WithMaxAgeBounds sets the range a Cache-Control max-age may move the cache
// lifetime in (default: 10 minutes to the TTL, so that max-age can only
// shorten it; raise hi to let it lengthen). A bound of 0 means its default;
// a negative bound is an error of [NewResolver]; lo above hi is read as hi.
// no-cache and no-store count as max-age 0, so as lo.
func WithMaxAgeBounds(lo, hi time.Duration) Option {
	return func(c *config) {
		if lo < 0 || hi < 0 {
			c.fail("WithMaxAgeBounds(%s, %s): a bound cannot be negative", lo, hi)
			return
		}
		if lo > 0 {
			c.minAge = lo
		}
		if hi > 0 {
			c.maxAge = hi
		}
	}
}

// WithCapacity sets how many authorities' policies are kept in memory
// (default 10,000; 0 means the default; negative is an error of
// [NewResolver]); the least recently used is evicted.
func WithCapacity(n int) Option {
	return func(c *config) { setPositive(c, &c.capacity, n, "WithCapacity(%v): cannot be negative") }
}

// WithCacheBytes bounds the memory the cached policies hold, by estimate
// (default 256 MiB; 0 means the default; negative is an error of
// [NewResolver]): the least recently used are evicted while they hold more. A typical policy holds a
// few KB, one for a 500 KiB robots.txt a few MB (robots.txt body, parsed
// rules and their index). The policy just fetched is always kept, even
// when it alone is larger.
func WithCacheBytes(n int64) Option {
	return func(c *config) { setPositive(c, &c.cacheBytes, n, "WithCacheBytes(%v): cannot be negative") }
}

// WithStore puts a shared [Store] behind the memory cache. Each Get and Put
// is bounded by [WithStoreTimeout]; a Store that fails or times out is
// logged and read as a miss (robots.txt is then fetched), never as a policy.
// A Store that is also a [FetchLocker] makes its users fetch each
// robots.txt once between them: one fetches, the others wait for its
// result (at most twice the total timeout plus four Store timeouts, then
// they fetch too).
func WithStore(s Store) Option {
	return func(c *config) { c.store = s }
}

// WithStoreTimeout bounds each call of the Store (default 5 s; 0 means the
// default; negative is an error of [NewResolver]).
func WithStoreTimeout(d time.Duration) Option {
	return func(c *config) { setPositive(c, &c.storeTimeout, d, "WithStoreTimeout(%v): cannot be negative") }
}

// WithClock sets the clock (default: the system clock).
func WithClock(clock Clock) Option {
	return func(c *config) {
		if clock != nil {
			c.clock = clock
		}
	}
}

// WithLogger sets where fetches and Store errors are logged (default:
// nowhere).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithDocumentFilter makes [Resolver.Document] fetch a document, and
// follow each of its redirects, only from a URL allow accepts (the robots
// plugin gives the filters of its collectors: AllowedDomains,
// DisallowedDomains, URLFilters, DisallowedURLFilters). Robots.txt is
// fetched whatever allow says. Default: every URL, within the address
// rules of [Resolver.Document].
func WithDocumentFilter(allow func(u *url.URL) bool) Option {
	return func(c *config) { c.docFilter = allow }
}

// Resolver turns URLs into the policies of their authorities: it fetches
// each authority's robots.txt once (one fetch however many goroutines ask),
// applies the dialect's fetch rules, and caches the result. It is safe for
// concurrent use.
type Resolver struct {
	cfg    config
	client *http.Client
	clock  Clock
	log    *slog.Logger
	cache  *cache
	flight singleflight.Group
	docs   *docCache // the documents of [Resolver.Document]
}

// NewResolver returns a resolver configured by opts, or an error and no
// resolver when an option value is out of range: a negative duration given
// to [WithTimeout], [WithTTL], [WithMaxAgeBounds] or [WithStoreTimeout], a
// negative count given to [WithCapacity] or [WithCacheBytes]. The error
// names each such option and its value ("policy: WithTTL(-1h0m0s): cannot
// be negative"), several joined with [errors.Join]. A 0 given to one of
// these options means its default. No other value is an error: a nil or
// empty value means what its option says (a nil Option is ignored), and
// the agents of [WithAgents] are read leniently (a User-Agent reduced to
// its product token, a token the dialect does not compare whole kept),
// each reading logged as a warning.
func NewResolver(opts ...Option) (*Resolver, error) {
	cfg := config{
		dialect:      dialect.RFC9309,
		userAgent:    DefaultUserAgent,
		totalTimeout: defaultTotalTimeout,
		storeTimeout: defaultStoreTimeout,
		minAge:       defaultMinMaxAge,
		capacity:     defaultCapacity,
		cacheBytes:   defaultCacheBytes,
		clock:        systemClock{},
	}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if err := errors.Join(cfg.errs...); err != nil {
		return nil, err
	}
	if !cfg.tokensSet {
		if t := dialect.ProductToken(cfg.userAgent); t != "" {
			cfg.tokens = []string{t}
		}
	}
	if cfg.ttl == 0 {
		cfg.ttl = cfg.dialect.CacheTTL()
	}
	if cfg.maxAge == 0 {
		cfg.maxAge = max(cfg.ttl, cfg.minAge)
	}
	if cfg.minAge > cfg.maxAge {
		cfg.minAge = cfg.maxAge
	}
	client := cfg.client
	if client == nil {
		client = defaultClient(defaultConnectTimeout, defaultHeaderTimeout)
	}
	log := cfg.logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for i, t := range cfg.tokens {
		// A User-Agent given as an agent ("USpider/1.0", a whole header) is
		// reduced to its product token, as the CLI does.
		if strings.ContainsAny(t, "/(") {
			if pt := dialect.ProductToken(t); pt != "" && pt != t {
				log.Warn("robots: an agent given as a User-Agent is read as its product token",
					slog.String("agent", t), slog.String("token", pt))
				t = pt
				cfg.tokens[i] = pt
			}
		}
		if c, whole := cfg.dialect.AgentToken(t); !whole {
			log.Warn("robots: the dialect does not compare this agent token whole; give the product token alone",
				slog.String("token", t), slog.String("compared", c), slog.String("dialect", cfg.dialect.Name()))
		}
	}
	return &Resolver{
		cfg:    cfg,
		client: noFollow(client),
		clock:  cfg.clock,
		log:    log,
		cache:  newCache(cfg.capacity, cfg.cacheBytes),
		docs:   newDocCache(cfg.capacity, cfg.cacheBytes/4),
	}, nil
}

// Timeout returns the bound of each fetch ([WithTimeout]).
func (r *Resolver) Timeout() time.Duration { return r.cfg.totalTimeout }

// Dialect returns the resolver's dialect.
func (r *Resolver) Dialect() *dialect.Dialect { return r.cfg.dialect }

// Agents returns the product tokens the resolver selects groups with.
func (r *Resolver) Agents() []string { return append([]string(nil), r.cfg.tokens...) }

// UserAgent returns the User-Agent header of the resolver's robots.txt
// requests.
func (r *Resolver) UserAgent() string { return r.cfg.userAgent }

// Now returns the time by the resolver's clock ([WithClock]): the clock of
// [Policy.Expires] and the other times of its policies.
func (r *Resolver) Now() time.Time { return r.clock.Now() }

// Cached returns the policy of authority (in [Authority] form) held in
// memory, current or expired, and nil when there is none. It neither
// fetches nor marks the entry used.
func (r *Resolver) Cached(authority string) *Policy { return r.cache.peek(authority) }

// Len returns how many authorities' policies are in memory.
func (r *Resolver) Len() int { return r.cache.len() }

// Bytes returns about how many bytes the policies in memory hold (see
// [WithCacheBytes]).
func (r *Resolver) Bytes() int64 { return r.cache.bytesHeld() }

// Policy returns the policy of u's authority: from memory when it is there
// and current (without allocating), else from the Store, else by fetching
// robots.txt. Concurrent calls for one authority share one fetch; a caller
// whose ctx ends stops waiting (the fetch goes on for the others, bounded by
// the total timeout). A fetch that fails is not an error: its outcome is the
// policy. Errors are for URLs without a robots.txt ([ErrUnsupportedURL]) and
// for ctx.
func (r *Resolver) Policy(ctx context.Context, u *url.URL) (*Policy, error) {
	var buf [128]byte
	key, err := AppendAuthority(buf[:0], u)
	if err != nil {
		return nil, err
	}
	if p := r.cache.get(key, r.clock.Now()); p != nil {
		return p, nil
	}
	return r.resolve(ctx, string(key))
}

// Check is Policy followed by [Policy.Check].
func (r *Resolver) Check(ctx context.Context, u *url.URL) (Verdict, error) {
	p, err := r.Policy(ctx, u)
	if err != nil {
		return Verdict{}, err
	}
	return p.Check(u), nil
}

// resolve waits for the one load of authority in flight, or starts it.
func (r *Resolver) resolve(ctx context.Context, authority string) (*Policy, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ch := r.flight.DoChan(authority, func() (any, error) {
		// The load must not end with the first caller's context.
		return r.load(context.WithoutCancel(ctx), authority), nil
	})
	select {
	case res := <-ch:
		return res.Val.(*Policy), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// load returns a current policy for authority: the cached one if a flight
// that just ended made it, the Store's, or a new fetch's.
func (r *Resolver) load(ctx context.Context, authority string) *Policy {
	prev := r.cache.peek(authority)
	if prev != nil && r.clock.Now().Before(prev.expires) {
		return prev
	}
	if r.cfg.store != nil {
		if sp := r.storeCurrent(ctx, authority, &prev); sp != nil {
			return sp
		}
		if fl, ok := r.cfg.store.(FetchLocker); ok {
			var sp *Policy
			done, unlock := r.lockFetch(ctx, fl, storeKey(r.cfg.dialect, authority), func() bool {
				sp = r.storeCurrent(ctx, authority, &prev)
				return sp != nil
			})
			if done {
				return sp
			}
			if unlock != nil {
				defer unlock() // after the Put below
			}
		}
	}
	res := r.fetch(ctx, authority+"/robots.txt", "text/plain, */*;q=0.8", dialect.MaxBodyBytes, nil)
	p := r.decide(authority, prev, &res)
	r.cache.put(authority, p)
	if r.cfg.store != nil {
		r.storePut(ctx, p)
	}
	level := slog.LevelDebug
	if !p.failSince.IsZero() || len(res.Warnings) > 0 {
		level = slog.LevelWarn
	}
	r.log.LogAttrs(ctx, level, "robots.txt fetched",
		slog.String("authority", authority), slog.String("dialect", r.cfg.dialect.Name()),
		slog.Int("status", res.Status), slog.String("outcome", res.Outcome.String()),
		slog.String("action", p.decision.Action.String()), slog.Time("expires", p.expires),
		slog.String("reason", p.Reason()), slog.Any("warnings", res.Warnings))
	return p
}

// decide turns a fetch result into a policy, given the previous policy of
// the authority (nil if none): the dialect's Decide with the failure run and
// the last good copy carried over.
func (r *Resolver) decide(authority string, prev *Policy, res *fetchResult) *Policy {
	d := r.cfg.dialect
	now := res.Time
	p := &Policy{authority: authority, dialect: d, fetch: res.FetchInfo}
	base := d.Decide(res.Outcome, dialect.FetchState{})
	switch base.Action {
	case dialect.ActionParse, dialect.ActionAllowAll:
		// A clean answer: it ends any failure run, and it replaces the last
		// good copy (a 4xx means there is no robots.txt any more).
		p.decision = base
		if base.Action == dialect.ActionParse {
			body := string(res.body)
			p.lastGood = &robotsCopy{body: body, robots: d.ParseString(body), fetched: now}
		}
		p.expires = now.Add(r.lifetime(res.MaxAge))
	default:
		st := dialect.FetchState{}
		p.failSince = now
		if prev != nil {
			if !prev.failSince.IsZero() {
				p.failSince = prev.failSince
			}
			p.lastGood = prev.lastGood
		}
		st.Lasted = now.Sub(p.failSince)
		if p.lastGood != nil {
			st.HaveLastGood, st.LastGoodAge = true, now.Sub(p.lastGood.fetched)
		}
		p.decision = d.Decide(res.Outcome, st)
		retry := p.decision.Retry
		if retry <= 0 {
			retry = r.cfg.ttl
		}
		p.expires = now.Add(retry)
	}
	if usesRules(p.decision.Action) {
		if prev != nil && prev.rules != nil && prev.lastGood == p.lastGood {
			p.rules = prev.rules
		} else {
			p.rules = p.lastGood.robots.For(r.cfg.tokens...)
		}
	}
	return p
}

// lifetime is the cache lifetime of a clean answer with the given max-age
// (-1: none).
func (r *Resolver) lifetime(maxAge time.Duration) time.Duration {
	if maxAge < 0 {
		return r.cfg.ttl
	}
	return min(max(maxAge, r.cfg.minAge), r.cfg.maxAge)
}

// storeCurrent returns the Store's policy of authority when it is current
// (and caches it); else it makes *prev the Store's policy if that one is
// more recent than *prev, and returns nil.
func (r *Resolver) storeCurrent(ctx context.Context, authority string, prev **Policy) *Policy {
	sp := r.storeGet(ctx, authority)
	if sp == nil {
		return nil
	}
	if r.clock.Now().Before(sp.expires) {
		r.cache.put(authority, sp)
		return sp
	}
	if *prev == nil || sp.fetch.Time.After((*prev).fetch.Time) {
		*prev = sp // another process fetched more recently
	}
	return nil
}

// fetchLease is the lease the resolver asks of a FetchLocker: a whole
// fetch and its Store calls.
func (r *Resolver) fetchLease() time.Duration {
	return r.cfg.totalTimeout + 2*r.cfg.storeTimeout
}

// lockFetch makes this resolver the one of the Store's users that fetches
// key (robots.txt, or another document of a site), or waits for the one
// that does. current reads the Store and reports whether it holds a
// current copy (another holder stored one): then lockFetch returns true.
// Else it returns false and the unlock func of the lock this resolver now
// holds (nil when the lock failed: the caller fetches without it). It
// waits for others at most twice the lease in all; past that it fetches
// too, with a warning.
func (r *Resolver) lockFetch(ctx context.Context, fl FetchLocker, key string, current func() bool) (bool, func()) {
	lease := r.fetchLease()
	deadline := time.Now().Add(2 * lease)
	for {
		sctx, cancel := context.WithTimeout(ctx, r.cfg.storeTimeout)
		unlock, ok, err := fl.LockFetch(sctx, key, lease)
		cancel()
		if err != nil {
			r.log.LogAttrs(ctx, slog.LevelWarn, "robots: store fetch lock failed; fetching without it",
				slog.String("key", key), slog.Any("error", err))
			return false, nil
		}
		if ok {
			// Another holder may have stored a copy between the miss and
			// the lock.
			if current() {
				unlock()
				return true, nil
			}
			return false, unlock
		}
		wctx, cancel := context.WithDeadline(ctx, deadline)
		err = fl.WaitFetch(wctx, key)
		cancel()
		if current() {
			return true, nil
		}
		if err != nil {
			r.log.LogAttrs(ctx, slog.LevelWarn, "robots: gave up waiting for another fetch; fetching",
				slog.String("key", key), slog.Any("error", err))
			return false, nil
		}
	}
}

func (r *Resolver) storeGet(ctx context.Context, authority string) *Policy {
	sctx, cancel := context.WithTimeout(ctx, r.cfg.storeTimeout)
	b, ok, err := r.cfg.store.Get(sctx, storeKey(r.cfg.dialect, authority))
	cancel()
	if err != nil {
		r.log.LogAttrs(ctx, slog.LevelWarn, "robots: store get failed", slog.String("authority", authority), slog.Any("error", err))
		return nil
	}
	if !ok {
		return nil
	}
	p, err := decodePolicy(b, r.cfg.dialect, r.cfg.tokens)
	if err == nil && p.authority != authority {
		err = errBadStored
	}
	if err != nil {
		r.log.LogAttrs(ctx, slog.LevelWarn, "robots: stored policy ignored", slog.String("authority", authority), slog.Any("error", err))
		return nil
	}
	return p
}

func (r *Resolver) storePut(ctx context.Context, p *Policy) {
	b, err := encodePolicy(p)
	if err == nil {
		ttl := p.expires.Sub(r.clock.Now())
		if p.lastGood != nil {
			ttl += r.cfg.dialect.LastGoodMaxAge() // kept as long as the dialect may use it
		}
		if ttl <= 0 {
			return
		}
		sctx, cancel := context.WithTimeout(ctx, r.cfg.storeTimeout)
		err = r.cfg.store.Put(sctx, storeKey(r.cfg.dialect, p.authority), b, ttl)
		cancel()
	}
	if err != nil {
		r.log.LogAttrs(ctx, slog.LevelWarn, "robots: store put failed", slog.String("authority", p.authority), slog.Any("error", err))
	}
}
