package robots

import (
	"net/http"
	"time"
)

// Defaults of the plugin's options.
const (
	DefaultMaxCrawlDelay = 30 * time.Second
	DefaultDeferWait     = 30 * time.Second
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

func (o OverDelay) String() string { return [...]string{"cap", "skip", "obey"}[o] }

type pluginConfig struct {
	minDelay      time.Duration
	maxCrawlDelay time.Duration
	overDelay     OverDelay
	spacing       Spacing
	transport     http.RoundTripper
	onBlocked     func(Block)
	deferWait     time.Duration
	deferWaitSet  bool
	retryAfterCap time.Duration
	backoffBase   time.Duration
	backoffMax    time.Duration
	statsCap      int
}

// DefaultStatsCapacity is how many authorities [Plugin.Stats] keeps by
// default.
const DefaultStatsCapacity = 100_000

// WithStatsCapacity bounds the per-authority statistics to about n
// authorities (default [DefaultStatsCapacity]; n ≤ 0 keeps the default).
// When a new authority takes it over n, the least recently updated ones
// are folded into the totals ([Plugin.Totals] stays exact) and dropped from
// [Plugin.Stats] until nine tenths of n remain; updates that race with a
// fold may leave a few more for a while. Each authority costs about 190
// bytes (the authority string is shared with the policy cache).
func WithStatsCapacity(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.plugin.statsCap = n
		}
	}
}

// WithMinDelay sets the least time between two requests to one host
// (default 0). robots.txt can raise it with Crawl-delay, never lower it.
func WithMinDelay(d time.Duration) Option {
	return func(c *config) { c.plugin.minDelay = max(d, 0) }
}

// WithMaxCrawlDelay sets the largest Crawl-delay honoured as it is (default
// [DefaultMaxCrawlDelay], 30 s) and what happens to a host that asks for more
// (default [CapDelay]).
func WithMaxCrawlDelay(d time.Duration, over OverDelay) Option {
	return func(c *config) {
		if d > 0 {
			c.plugin.maxCrawlDelay = d
		}
		c.plugin.overDelay = over
	}
}

// WithSpacing sets how the delay between two requests to one host is
// measured: [EndToStart] (default: from the end of one response to the next
// send, one request in flight per host while a delay applies) or
// [StartToStart] (between sends; more throughput).
func WithSpacing(s Spacing) Option {
	return func(c *config) { c.plugin.spacing = s }
}

// WithTransport sets the HTTP transport the collector's requests and the
// robots.txt fetches go through (default: a clone of
// [http.DefaultTransport]). Give your proxy or custom dialer here, in one
// line, rather than with the collector's SetProxy or WithTransport, which
// would replace the plugin's gate.
func WithTransport(rt http.RoundTripper) Option {
	return func(c *config) { c.plugin.transport = rt }
}

// WithOnBlocked sets a function called for every request the plugin stops,
// with the reason. It is called from the request's goroutine and must be
// safe for concurrent use.
func WithOnBlocked(fn func(Block)) Option {
	return func(c *config) { c.plugin.onBlocked = fn }
}

// WithDeferWait sets how long a request may wait in OnRequest for a
// robots.txt that is temporarily unreachable (a 5xx or no answer that the
// dialect reads as "disallow all, retry later") before it is handed back:
// aborted, reported as [Deferred] and kept for [Plugin.RetryDeferred].
// Default [DefaultDeferWait]; 0 hands such requests back at once.
func WithDeferWait(d time.Duration) Option {
	return func(c *config) { c.plugin.deferWait, c.plugin.deferWaitSet = max(d, 0), true }
}

// WithRetryAfter sets the longest pause taken from a Retry-After header of a
// 429 or 503 response (default 10 minutes), and the base and cap of the
// exponential backoff used when there is none (default 1 s and 10 minutes).
// Zero keeps a default; a negative maxPause honours any Retry-After, however
// long (as LimiterConfig.MaxRetryAfter does).
func WithRetryAfter(maxPause, backoffBase, backoffMax time.Duration) Option {
	return func(c *config) {
		c.plugin.retryAfterCap, c.plugin.backoffBase, c.plugin.backoffMax = maxPause, backoffBase, backoffMax
	}
}
