package robots

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/time/rate"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/sitemap"
)

// Defaults of the plugin's options.
const (
	DefaultMaxCrawlDelay = 30 * time.Second
	DefaultDeferWait     = 30 * time.Second
	// DefaultDelay spaces a host whose robots.txt gives no Crawl-delay (as
	// StormCrawler's default does).
	DefaultDelay = time.Second
	// DefaultStatsCapacity is how many authorities [Plugin.Stats] keeps by
	// default.
	DefaultStatsCapacity = 100_000
)

// OverDelay says what the plugin does with a host whose Crawl-delay is above
// the largest it honours ([WithMaxCrawlDelay]).
type OverDelay uint8

const (
	// CapDelay spaces the host's requests by the largest honoured delay.
	CapDelay OverDelay = iota
	// SkipHost stops every request to the host, each reported.
	SkipHost
	// ObeyDelay spaces the host's requests by its Crawl-delay, however long.
	ObeyDelay
)

// String names the choice: "cap", "skip", "obey", or "OverDelay(n)" for a
// value that is none of them.
func (o OverDelay) String() string {
	switch o {
	case CapDelay:
		return "cap"
	case SkipHost:
		return "skip"
	case ObeyDelay:
		return "obey"
	}
	return "OverDelay(" + strconv.Itoa(int(o)) + ")"
}

// Option configures a [Plugin].
type Option func(*config)

// config is the plugin's configuration: its own settings, and the policy
// options it hands to its resolver.
type config struct {
	policy        []policy.Option
	logger        *slog.Logger
	limiter       Limiter
	minDelay      time.Duration
	defaultDelay  time.Duration
	delayFactor   float64
	maxCrawlDelay time.Duration
	overDelay     OverDelay
	spacing       Spacing
	transport     http.RoundTripper
	onBlocked     func(Block)
	deferWait     time.Duration
	retryAfterCap time.Duration
	backoffBase   time.Duration
	backoffMax    time.Duration
	statsCap      int
	maxRate       *rate.Limiter  // nil: no crawler-wide cap
	sitemaps      *sitemapConfig // nil: sitemaps are not followed (WithSitemaps)
	onSitemap     func(sitemap.Report)
	problems      []string // out-of-range option values, logged once by New
}

// problem records an option value out of range; New logs it once and the
// default stays in force.
func (c *config) problem(format string, args ...any) {
	c.problems = append(c.problems, "robots: "+fmt.Sprintf(format, args...))
}

// WithPolicy passes options to the plugin's robots.txt resolver
// ([policy.NewResolver]), after the plugin's own defaults (the collector's
// User-Agent, robots.txt fetched through the plugin's transport and gate),
// so that they override them. The With* functions below that configure
// the resolver are shorthands for it.
func WithPolicy(opts ...policy.Option) Option {
	return func(c *config) { c.policy = append(c.policy, opts...) }
}

// WithDialect is WithPolicy([policy.WithDialect](d)): how robots.txt is read
// and what fetch outcomes mean (default [dialect.RFC9309]).
func WithDialect(d *dialect.Dialect) Option { return WithPolicy(policy.WithDialect(d)) }

// WithAgents is WithPolicy([policy.WithAgents](tokens...)): the crawler's
// product tokens, most specific first (default: derived from the
// collector's User-Agent).
func WithAgents(tokens ...string) Option { return WithPolicy(policy.WithAgents(tokens...)) }

// WithUserAgent is WithPolicy([policy.WithUserAgent](ua)): the User-Agent of
// robots.txt requests (default: the collector's).
func WithUserAgent(ua string) Option { return WithPolicy(policy.WithUserAgent(ua)) }

// WithHTTPClient is WithPolicy([policy.WithHTTPClient](c)): a client of its
// own for robots.txt fetches (default: one on the plugin's transport and
// gate).
func WithHTTPClient(c *http.Client) Option { return WithPolicy(policy.WithHTTPClient(c)) }

// WithTimeouts is WithPolicy([policy.WithTimeouts](connect, header, total)).
// Under the plugin robots.txt goes through [WithTransport], so connect and
// header apply only with [WithHTTPClient]'s default; total always applies.
func WithTimeouts(connect, header, total time.Duration) Option {
	return WithPolicy(policy.WithTimeouts(connect, header, total))
}

// WithTTL is WithPolicy([policy.WithTTL](ttl)).
func WithTTL(ttl time.Duration) Option { return WithPolicy(policy.WithTTL(ttl)) }

// WithMaxAgeBounds is WithPolicy([policy.WithMaxAgeBounds](lo, hi)).
func WithMaxAgeBounds(lo, hi time.Duration) Option {
	return WithPolicy(policy.WithMaxAgeBounds(lo, hi))
}

// WithCapacity is WithPolicy([policy.WithCapacity](n)).
func WithCapacity(n int) Option { return WithPolicy(policy.WithCapacity(n)) }

// WithCacheBytes is WithPolicy([policy.WithCacheBytes](n)).
func WithCacheBytes(n int64) Option { return WithPolicy(policy.WithCacheBytes(n)) }

// WithStore is WithPolicy([policy.WithStore](s)): a shared [policy.Store]
// behind the memory cache.
func WithStore(s policy.Store) Option { return WithPolicy(policy.WithStore(s)) }

// WithStoreTimeout is WithPolicy([policy.WithStoreTimeout](d)).
func WithStoreTimeout(d time.Duration) Option { return WithPolicy(policy.WithStoreTimeout(d)) }

// WithClock is WithPolicy([policy.WithClock](clock)): the clock of cache
// lifetimes and retry times, which the plugin's deferral also reads.
func WithClock(clock policy.Clock) Option { return WithPolicy(policy.WithClock(clock)) }

// WithLogger sets where the plugin logs stopped requests and warnings, and
// where its resolver logs fetches and Store errors (default: warnings and
// errors to slog's default handler, on stderr unless the program set
// another; the rest nowhere). WithPolicy(policy.WithLogger(l2)) gives the
// resolver a logger of its own.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithStatsCapacity bounds the per-authority statistics to about n
// authorities (default [DefaultStatsCapacity]; n ≤ 0 keeps the default).
// When a new authority takes it over n, the least recently updated ones
// are folded into the totals ([Plugin.Totals] stays exact) and dropped from
// [Plugin.Stats] until nine tenths of n remain; updates that race with a
// fold may leave a few more for a while. The README gives the cost per
// authority.
func WithStatsCapacity(n int) Option {
	return func(c *config) {
		if n <= 0 {
			c.problem("WithStatsCapacity(%d): must be above 0; using %d", n, DefaultStatsCapacity)
			return
		}
		c.statsCap = n
	}
}

// WithDefaultDelay sets the time between two requests to a host whose
// policy gives no Crawl-delay for the crawler (default [DefaultDelay], 1 s;
// 0 turns it off). It applies under every dialect that reads none, google
// included, and while robots.txt is unavailable.
func WithDefaultDelay(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.problem("WithDefaultDelay(%s): a delay cannot be negative; using %s", d, DefaultDelay)
			return
		}
		c.defaultDelay = d
	}
}

// WithMaxRate caps the crawler's requests over all hosts at r per second
// on average, with bursts of up to burst requests (a token bucket,
// golang.org/x/time/rate): what Crawlee calls maxRequestsPerMinute. Pages,
// redirect hops and robots.txt fetches all count; each takes its token at
// the transport, before its host's gate, so the per-host spacing still
// holds under the cap. Default: no cap. r ≤ 0 or burst < 1 is logged and
// ignored.
func WithMaxRate(r rate.Limit, burst int) Option {
	return func(c *config) {
		if r <= 0 || burst < 1 {
			c.problem("WithMaxRate(%v, %d): the rate must be above 0 and the burst at least 1; no cap", float64(r), burst)
			return
		}
		c.maxRate = rate.NewLimiter(r, burst)
	}
}

// WithDelayFactor makes the default limiter space each host by at least
// f times its recent response time (Heritrix's delay factor, Scrapy's
// AutoThrottle): a server that slows down is asked less often. Default 0,
// off. It does not apply to a limiter given with [WithLimiter].
func WithDelayFactor(f float64) Option {
	return func(c *config) {
		if f < 0 || f != f {
			c.problem("WithDelayFactor(%v): must be 0 or more; off", f)
			return
		}
		c.delayFactor = f
	}
}

// WithMinDelay sets the least time between two requests to one host
// (default 0), whatever the policy: a floor under the Crawl-delay and the
// default delay, which can raise it, never lower it.
func WithMinDelay(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.problem("WithMinDelay(%s): a delay cannot be negative; using 0", d)
			return
		}
		c.minDelay = d
	}
}

// WithMaxCrawlDelay sets the largest Crawl-delay honoured as it is (default
// [DefaultMaxCrawlDelay], 30 s) and what happens to a host that asks for more
// (default [CapDelay]).
func WithMaxCrawlDelay(d time.Duration, over OverDelay) Option {
	return func(c *config) {
		if d <= 0 {
			c.problem("WithMaxCrawlDelay(%s, %s): the delay must be above 0; using %s", d, over, DefaultMaxCrawlDelay)
		} else {
			c.maxCrawlDelay = d
		}
		if over > ObeyDelay {
			c.problem("WithMaxCrawlDelay(%s, %s): not a choice; using %s", d, over, CapDelay)
			return
		}
		c.overDelay = over
	}
}

// WithSpacing sets how the default limiter measures the delay between two
// requests to one host: [EndToStart] (default: from the end of one response
// to the next send, one request in flight per host while a delay applies)
// or [StartToStart] (between sends; more throughput). It does not apply to
// a limiter given with [WithLimiter].
func WithSpacing(s Spacing) Option {
	return func(c *config) {
		if s != EndToStart && s != StartToStart {
			c.problem("WithSpacing(%s): not a spacing; using %s", s, EndToStart)
			return
		}
		c.spacing = s
	}
}

// WithTransport sets the HTTP transport the collector's requests and the
// robots.txt fetches go through (default: a clone of
// [http.DefaultTransport]). Give your proxy or custom dialer here, in one
// line, rather than with the collector's SetProxy or WithTransport, which
// would replace the plugin's gate.
func WithTransport(rt http.RoundTripper) Option {
	return func(c *config) { c.transport = rt }
}

// WithOnBlocked sets a function called for every request the plugin stops,
// with the reason. It is called from the request's goroutine and must be
// safe for concurrent use.
func WithOnBlocked(fn func(Block)) Option {
	return func(c *config) { c.onBlocked = fn }
}

// WithDeferWait sets how long a request may wait in OnRequest for a
// robots.txt that is temporarily unreachable (a 5xx or no answer that the
// dialect reads as "disallow all, retry later"), or for the end of its
// host's 429/503 pause, before it is handed back: stopped, reported as
// [Deferred] and kept for [Plugin.RetryDeferred]. (A pause is judged when
// the request arrives, with a limiter that has WaitMax, as
// [hostlimit.Limiter] does; a pause of a second or less is always waited
// out.)
// Default [DefaultDeferWait]; 0 hands such requests back at once.
func WithDeferWait(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.problem("WithDeferWait(%s): a wait cannot be negative; using %s", d, DefaultDeferWait)
			return
		}
		c.deferWait = d
	}
}

// WithRetryAfter sets, for the default limiter, the longest pause taken
// from a Retry-After header of a 429 or 503 response (default 10 minutes),
// and the base and cap of the exponential backoff used when there is none
// (default 1 s and 10 minutes). Zero keeps a default; a negative maxPause
// honours any Retry-After, however long (as hostlimit.Config.MaxRetryAfter
// does).
func WithRetryAfter(maxPause, backoffBase, backoffMax time.Duration) Option {
	return func(c *config) {
		if backoffBase < 0 || backoffMax < 0 {
			c.problem("WithRetryAfter(%s, %s, %s): a backoff cannot be negative; using the defaults for it", maxPause, backoffBase, backoffMax)
			backoffBase, backoffMax = max(backoffBase, 0), max(backoffMax, 0)
		}
		c.retryAfterCap, c.backoffBase, c.backoffMax = maxPause, backoffBase, backoffMax
	}
}
