package robots

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
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
	// DefaultRetries is how many times a request answered 429 or a 5xx
	// (but 501 and 505) is sent again after its host's pause
	// ([WithRetries]), as Scrapy retries them by default.
	DefaultRetries = 2
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

// Option configures a [Plugin]. An option given a value it cannot use
// makes [New] (and [Attach]) return an error naming it.
type Option func(*config)

// config is the plugin's configuration: its own settings, and the policy
// options it hands to its resolver.
type config struct {
	policy        []policy.Option
	logger        *slog.Logger
	limiter       Limiter
	minDelay      time.Duration
	defaultDelay  time.Duration
	maxCrawlDelay time.Duration
	overDelay     OverDelay
	transport     http.RoundTripper
	onBlocked     func(Block)
	deferWait     time.Duration
	statsCap      int
	retries       int
	maxRate       *rate.Limiter  // nil: no crawler-wide cap
	sitemaps      *sitemapConfig // nil: sitemaps are not followed (WithSitemaps)
	purposes      []dialect.Category
	strictUsage   bool
	onUsage       func(*colly.Response, ResponseUsage)
	errs          []error // option values out of range, joined by New
}

// fail records an option value New refuses.
func (c *config) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("robots: "+format, args...))
}

// WithPolicy passes options to the plugin's robots.txt resolver
// ([policy.NewResolver]), after the plugin's own defaults (the collector's
// User-Agent, robots.txt fetched through the plugin's transport and gate),
// so that they override them: policy.WithTTL, policy.WithStore (a cache
// shared by a fleet), policy.WithClock, policy.WithTimeout, ... A
// policy.WithHTTPClient takes robots.txt fetches off the plugin's transport,
// gate and [WithMaxRate]. A value policy.NewResolver refuses (a negative
// policy.WithTTL, policy.WithTimeout, ...) is an error of [New], named as
// policy.NewResolver names it.
func WithPolicy(opts ...policy.Option) Option {
	return func(c *config) { c.policy = append(c.policy, opts...) }
}

// WithDialect sets how robots.txt is read and what each fetch outcome means
// (default [dialect.RFC9309]); it is WithPolicy([policy.WithDialect](d)).
func WithDialect(d *dialect.Dialect) Option {
	return func(c *config) {
		if d == nil {
			c.fail("WithDialect(nil): no dialect")
			return
		}
		c.policy = append(c.policy, policy.WithDialect(d))
	}
}

// WithAgents sets the crawler's product tokens, most specific first, that
// select its groups in robots.txt (default: derived from the collector's
// User-Agent); it is WithPolicy([policy.WithAgents](tokens...)).
func WithAgents(tokens ...string) Option { return WithPolicy(policy.WithAgents(tokens...)) }

// WithLogger sets where the plugin logs stopped requests and warnings, and
// where its resolver logs fetches and Store errors (default: warnings and
// errors to slog's default handler, on stderr unless the program set
// another; the rest nowhere). WithPolicy(policy.WithLogger(l2)) gives the
// resolver a logger of its own.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithStatsCapacity bounds the per-authority statistics to about n
// authorities (default [DefaultStatsCapacity]; n ≤ 0 is an error).
// When a new authority takes it over n, the least recently updated ones
// are folded into the totals ([Plugin.Totals] stays exact) and dropped from
// [Plugin.Stats] until nine tenths of n remain; updates that race with a
// fold may leave a few more for a while.
func WithStatsCapacity(n int) Option {
	return func(c *config) {
		if n <= 0 {
			c.fail("WithStatsCapacity(%d): must be above 0", n)
			return
		}
		c.statsCap = n
	}
}

// WithDefaultDelay sets the time between two requests to a host whose
// policy gives no Crawl-delay for the crawler (default [DefaultDelay], 1 s;
// 0 turns it off; negative is an error). It applies under every dialect that
// reads none, google included, and while robots.txt is unavailable.
func WithDefaultDelay(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.fail("WithDefaultDelay(%s): a delay cannot be negative", d)
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
// holds under the cap. Default: no cap. r ≤ 0 or burst < 1 is an error.
func WithMaxRate(r rate.Limit, burst int) Option {
	return func(c *config) {
		if !(r > 0) || burst < 1 {
			c.fail("WithMaxRate(%v, %d): the rate must be above 0 and the burst at least 1", float64(r), burst)
			return
		}
		c.maxRate = rate.NewLimiter(r, burst)
	}
}

// WithMinDelay sets the least time between two requests to one host
// (default 0; negative is an error), whatever the policy: a floor under the
// Crawl-delay and the default delay, which can raise it, never lower it.
func WithMinDelay(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.fail("WithMinDelay(%s): a delay cannot be negative", d)
			return
		}
		c.minDelay = d
	}
}

// WithMaxCrawlDelay sets the largest Crawl-delay honoured as it is (default
// [DefaultMaxCrawlDelay], 30 s) and what happens to a host that asks for more
// (default [CapDelay]). d ≤ 0 or an unknown over is an error.
func WithMaxCrawlDelay(d time.Duration, over OverDelay) Option {
	return func(c *config) {
		if d <= 0 || over > ObeyDelay {
			c.fail("WithMaxCrawlDelay(%s, %s): the delay must be above 0 and the choice one of CapDelay, SkipHost, ObeyDelay", d, over)
			return
		}
		c.maxCrawlDelay, c.overDelay = d, over
	}
}

// WithTransport sets the HTTP transport the collector's requests and the
// robots.txt fetches go through (default: the transport the collector has
// when the plugin is attached, else a clone of [http.DefaultTransport]).
// Give your proxy, custom dialer and connection timeouts here, in one line,
// rather than with the collector's SetProxy or WithTransport, which the
// plugin then has to adopt.
func WithTransport(rt http.RoundTripper) Option {
	return func(c *config) {
		if rt == nil {
			c.fail("WithTransport(nil): no transport")
			return
		}
		c.transport = rt
	}
}

// WithOnBlocked sets a function called once for every request the plugin
// stops, with the reason. It is called from the request's goroutine and
// must be safe for concurrent use.
func WithOnBlocked(fn func(Block)) Option {
	return func(c *config) { c.onBlocked = fn }
}

// WithDeferWait sets how long a request may wait in OnRequest for a
// robots.txt that is temporarily unreachable (a 5xx or no answer that the
// dialect reads as "disallow all, retry later"), or for the end of its
// host's pause after a 429 or 5xx, before it is handed back: stopped, reported as
// [Deferred] and kept for [Plugin.RetryDeferred]. A pause is judged when
// the request arrives ([Limiter].WaitMax); a pause of a second or less is
// always waited out. Default [DefaultDeferWait]; 0 hands such requests back
// at once; negative is an error.
func WithDeferWait(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.fail("WithDeferWait(%s): a wait cannot be negative", d)
			return
		}
		c.deferWait = d
	}
}

// WithRetries sets how many times a request answered with a status that
// asks to back off is sent again, once the host's pause (its Retry-After,
// else the limiter's backoff) is over (default [DefaultRetries]; 0 sends
// none again; negative is an error). Those statuses are
// [hostlimit.BackoffStatus]'s: 429 (Too Many Requests) and every 5xx
// (500, 502, 503, 504, a CDN's 52x, ...) but 501 (Not Implemented) and 505
// (HTTP Version Not Supported), which describe the request, not the
// server's state, and come back the same; the server errors of RFC 9110
// §15.6 are the signal draft-illyes-webbotauth-cbcp asks a crawler to back
// off on. 408 (Request Timeout) is not among them: it is about the
// client's request, not the server's load. The retry
// happens at the transport, unseen by Colly's callbacks: OnError sees only
// the answer of a request out of retries. A pause that ends later than
// [WithDeferWait] hands the request back as [Deferred] instead, kept for
// [Plugin.RetryDeferred]. A request whose body cannot be sent again
// (no GetBody) is not retried. Redirect hops are retried alike.
func WithRetries(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.fail("WithRetries(%d): cannot be negative", n)
			return
		}
		c.retries = n
	}
}
