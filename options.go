package robots

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/politecrawl/robots/botauth"
	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/internal/defaults"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/sitemap"
	"github.com/politecrawl/robots/usage"
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
	if names := [...]string{"cap", "skip", "obey"}; int(o) < len(names) {
		return names[o]
	}
	return "OverDelay(" + strconv.Itoa(int(o)) + ")"
}

// Defaults of the options whose values only the plugin needs.
const (
	defaultDeferWait     = 30 * time.Second
	defaultStatsCapacity = 100_000 // authorities Plugin.Stats keeps
	defaultMaxCrawlDelay = defaults.MaxCrawlDelay
	defaultDelay         = defaults.Delay
	defaultRetries       = defaults.Retries
)

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
	useLevel      dialect.UseLevel
	strictUsage   bool
	who           usage.Who // RSL's user and region (usage.Config.User, Geo)
	reach         bool      // usage.Config.Reach
	onUsage       func(*colly.Response, ResponseUsage)
	usageLog      *usage.Log      // nil: no usage log (usage.Config.Log)
	signer        *botauth.Signer // nil: nothing is signed (WithSigner)
	signOpts      []botauth.Option
	errs          []error // option values out of range, joined by New
	broken        error   // WithRobots with invalid options: every request is stopped with it
}

// checked is the option set when the value it was given is ok, else the
// option that makes New refuse it, with the error format and args say.
func checked(ok bool, set func(*config), format string, args ...any) Option {
	if !ok {
		return func(c *config) { c.fail(format, args...) }
	}
	return set
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
	return checked(d != nil, func(c *config) { c.policy = append(c.policy, policy.WithDialect(d)) }, "WithDialect(nil): no dialect")
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
// authorities (default 100 000; n ≤ 0 is an error).
// When a new authority takes it over n, the least recently updated ones
// are folded into the totals ([Plugin.Totals] stays exact) and dropped from
// [Plugin.Stats] until nine tenths of n remain; updates that race with a
// fold may leave a few more for a while.
func WithStatsCapacity(n int) Option {
	return checked(n > 0, func(c *config) { c.statsCap = n }, "WithStatsCapacity(%d): must be above 0", n)
}

// WithDefaultDelay sets the time between two requests to a host whose
// policy gives no Crawl-delay for the crawler (default 1 s;
// 0 turns it off; negative is an error). It applies under every dialect that
// reads none, google included, and while robots.txt is unavailable.
func WithDefaultDelay(d time.Duration) Option {
	return checked(d >= 0, func(c *config) { c.defaultDelay = d }, "WithDefaultDelay(%s): a delay cannot be negative", d)
}

// WithMaxRate caps the crawler's requests over all hosts at r per second
// on average, with bursts of up to burst requests (a token bucket,
// golang.org/x/time/rate): what Crawlee calls maxRequestsPerMinute. Pages,
// redirect hops and robots.txt fetches all count; each takes its token at
// the transport, before its host's gate, so the per-host spacing still
// holds under the cap. Default: no cap. r ≤ 0 or burst < 1 is an error.
func WithMaxRate(r rate.Limit, burst int) Option {
	return checked(r > 0 && burst >= 1, func(c *config) { c.maxRate = rate.NewLimiter(r, burst) },
		"WithMaxRate(%v, %d): the rate must be above 0 and the burst at least 1", float64(r), burst)
}

// WithMinDelay sets the least time between two requests to one host
// (default 0; negative is an error), whatever the policy: a floor under the
// Crawl-delay and the default delay, which can raise it, never lower it.
func WithMinDelay(d time.Duration) Option {
	return checked(d >= 0, func(c *config) { c.minDelay = d }, "WithMinDelay(%s): a delay cannot be negative", d)
}

// WithMaxCrawlDelay sets the largest Crawl-delay honoured as it is (default
// 30 s) and what happens to a host that asks for more
// (default [CapDelay]). d ≤ 0 or an unknown over is an error.
func WithMaxCrawlDelay(d time.Duration, over OverDelay) Option {
	return checked(d > 0 && over <= ObeyDelay, func(c *config) { c.maxCrawlDelay, c.overDelay = d, over },
		"WithMaxCrawlDelay(%s, %s): the delay must be above 0 and the choice one of CapDelay, SkipHost, ObeyDelay", d, over)
}

// WithTransport sets the HTTP transport the collector's requests and the
// robots.txt fetches go through (default: the transport the collector has
// when the plugin is attached, else a clone of [http.DefaultTransport]).
// Give your proxy, custom dialer and connection timeouts here, in one line,
// rather than with the collector's SetProxy or WithTransport, which the
// plugin then has to adopt.
func WithTransport(rt http.RoundTripper) Option {
	return checked(rt != nil, func(c *config) { c.transport = rt }, "WithTransport(nil): no transport")
}

// WithSigner signs every request the plugin's collectors send with s (Web
// Bot Auth, package [botauth]): pages, each redirect hop, robots.txt and
// sitemap fetches, each retry after a 429 or 5xx ([WithRetries]). Each is
// signed when it leaves, once its host's gate let it through, so that a
// signature's created is the send time: the signing transport sits
// beneath the gate, in front of the base transport ([WithTransport], or
// the collector's). A 401, 403 or 429 whose Accept-Signature asks for a
// signature s can make honestly is answered once
// ([botauth.Transport.Answering]): the request is sent again, signed as
// asked, through the host's gate like any other request, its first answer
// read (at most 64 KiB) and closed. A 429 carrying Accept-Signature is
// answered that way instead of being retried unsigned (a challenge that
// cannot be signed honestly goes back to Colly as it came). opts are
// [botauth.NewTransport]'s: [botauth.OnlyWhenChallenged] signs nothing
// but those answers. Without WithSigner nothing is signed.
//
// A nil s or an option botauth.NewTransport refuses is an error of [New],
// and so is WithTransport given a *botauth.Transport along with
// WithSigner (each request would be signed twice): give the transport
// under it to WithTransport. A [policy.WithHTTPClient] given with
// [WithPolicy] takes robots.txt fetches off the plugin's transport, and so
// off its signer. Each process of a fleet gives its own collector's plugin
// WithSigner with the keys it is given.
func WithSigner(s *botauth.Signer, opts ...botauth.Option) Option {
	return func(c *config) {
		if _, err := botauth.NewTransport(nil, s, opts...); err != nil {
			c.fail("WithSigner: %w", err)
			return
		}
		c.signer, c.signOpts = s, opts
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
// always waited out. Default 30 s; 0 hands such requests back
// at once; negative is an error.
func WithDeferWait(d time.Duration) Option {
	return checked(d >= 0, func(c *config) { c.deferWait = d }, "WithDeferWait(%s): a wait cannot be negative", d)
}

// WithRetries sets how many times a request answered with a status that
// asks to back off is sent again, once the host's pause (its Retry-After,
// else the limiter's backoff) is over (default 2; 0 sends
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
	return checked(n >= 0, func(c *config) { c.retries = n }, "WithRetries(%d): cannot be negative", n)
}

// Limiter is the per-host gate the plugin drives: the seam between the
// plugin and a limiter. The plugin passes every call the delay in force for
// the host (max([WithMinDelay], the Crawl-delay for the crawler's tokens,
// capped as [WithMaxCrawlDelay] says, or [WithDefaultDelay])), so an
// implementation needs no other source of delays. Hosts are authorities
// ([policy.Authority]).
//
// [hostlimit.Limiter] implements it (the default, in memory); the fleet
// limiter of package github.com/politecrawl/robots/redisfleet implements it
// with the same guarantee across processes. An implementation must be safe
// for concurrent use and must end every wait when ctx is done, returning an
// error that wraps ctx.Err().
type Limiter interface {
	// WaitMax is the early, non-reserving stage, called in Colly's
	// OnRequest where waiting holds no LimitRule slot: it blocks until the
	// host is likely to admit a request at once and returns how long it
	// blocked. It does not wait out a 429/5xx pause that ends more than
	// maxPause from now, nor one that starts while it waits: it returns an
	// error wrapping a *[hostlimit.PausedError], and the plugin hands the
	// request back ([Deferred]); a negative maxPause waits out any pause. Its
	// return promises nothing.
	WaitMax(ctx context.Context, host string, delay, maxPause time.Duration) (time.Duration, error)
	// AcquireMax is the binding stage, called at the transport right
	// before the send: it blocks until the host admits the request and
	// returns the permit the request runs under. Like WaitMax, it does not
	// wait out a pause ending more than maxPause from now, nor one that
	// starts while it waits: it returns an error wrapping a
	// *[hostlimit.PausedError] and takes nothing (the plugin hands the
	// request back, [Deferred]); a negative maxPause waits out any pause
	// (robots.txt fetches). The plugin marks the permit sent once the
	// request is written (in StartToStart mode, when the permit needs it),
	// passes the response's status and header to its Observe (429 and 5xx
	// pause the host, [hostlimit.BackoffStatus]), and releases it when the response body is done or
	// the round trip failed ([hostlimit.RoundTrip]).
	AcquireMax(ctx context.Context, host string, delay, maxPause time.Duration) (hostlimit.Permit, error)
	// Stats returns the host's gate statistics for [Plugin.Stats], false
	// when the limiter keeps none for it.
	Stats(host string) (hostlimit.Stats, bool)
}

// WithLimiter makes the plugin space requests with l instead of a
// [hostlimit.Limiter] of its own with the default [hostlimit.Config]. Give
// hostlimit.New(hostlimit.Config{...}) to set the default limiter's spacing
// mode, delay factor and Retry-After bounds. Several plugins (or processes,
// for a fleet limiter) may share one.
func WithLimiter(l Limiter) Option {
	return checked(l != nil, func(c *config) { c.limiter = l }, "WithLimiter(nil): no limiter")
}

// WithUsage declares what the crawler uses the content it fetches for
// (cfg's purposes, use level, strictness, and the user and region RSL
// licences ask about; see [usage.Config]). A site
// states its preferences in several places, each read as a carrier of
// signals (see docs/usage.md): robots.txt (Content-Usage, Content-Signal,
// License), /.well-known/tdmrep.json, RSL licences, and a response's
// headers and meta elements. The plugin honours them:
//
//   - Before the fetch, a URL whose robots.txt, tdmrep.json (fetched once
//     per origin, through the host's gate) or robots.txt licence refuses a
//     declared purpose, or states a use level below the declared one, is
//     not fetched: it is stopped as [UsageDisallowed], the deciding signal
//     in the reason and the evidence in [Block].Usage, reported like every
//     stop (OnError, [WithOnBlocked], [HostStats].UsageDisallowed).
//     Redirect hops too. With cfg.Reach, such a URL is fetched (robots.txt
//     allowing it) so that its links are followed, and its response is
//     marked refused as below.
//   - After the fetch, a response cannot be unfetched: [UsageOf] gives its
//     [ResponseUsage] (what was known before, combined with the response's
//     headers and meta elements, the most restrictive per purpose, with
//     every signal seen) in any callback, whatever the order in which it
//     was registered, and onRefused (at most one) is called from the
//     plugin's OnResponse hook when a declared purpose is refused. Drop
//     the content there.
//
// A use level alone fetches nothing of its own (no tdmrep.json, no
// licence). An unknown preference (nothing stated) allows unless
// cfg.Strict. A value cfg.Parse refuses is an error of [New], and so is a
// dialect that reads no usage lines (koster1994).
func WithUsage(cfg usage.Config, onRefused ...func(r *colly.Response, u ResponseUsage)) Option {
	return func(c *config) {
		purposes, use, err := cfg.Parse()
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("robots: WithUsage: %w", err))
		}
		if len(onRefused) > 1 {
			c.fail("WithUsage: more than one onRefused function")
		}
		c.purposes, c.useLevel, c.strictUsage, c.usageLog = purposes, use, cfg.Strict, cfg.Log
		c.who, c.reach = cfg.Who(), cfg.Reach
		if len(onRefused) > 0 {
			c.onUsage = onRefused[0]
		}
	}
}

// SitemapOption configures [WithSitemaps].
type SitemapOption func(*sitemapConfig)

type sitemapConfig struct {
	settings sitemap.Config      // the user's walk settings (SitemapWalk)
	extra    map[string][]string // authority → extra sitemap URLs
	errs     []error
}

// SitemapURLs adds sitemaps to start from, besides those the robots.txt of
// their authority announces. Each is walked, with the announced ones, the
// first time its authority's policy is loaded (so Visit a URL of that
// authority to start), scoped to its own host. A URL that is not an
// absolute http(s) URL makes New return an error.
func SitemapURLs(urls ...string) SitemapOption {
	return func(c *sitemapConfig) {
		for _, s := range urls {
			u, err := url.Parse(s)
			if err != nil {
				c.errs = append(c.errs, fmt.Errorf("SitemapURLs(%q): %w", s, err))
				continue
			}
			a, err := policy.Authority(u)
			if err != nil {
				c.errs = append(c.errs, fmt.Errorf("SitemapURLs(%q): not an absolute http(s) URL", s))
				continue
			}
			if c.extra == nil {
				c.extra = map[string][]string{}
			}
			c.extra[a] = append(c.extra[a], u.String())
		}
	}
}

// SitemapWalk sets how sitemaps are walked: which pages are handed over
// (Since, Keep, MaxURLs, StrictDirectory), the reader's and walker's bounds
// (Limits, MaxIndexDepth, MaxSitemaps, MaxRedirects, DocTimeout), retries
// (Retries, RetryWait, MaxRetryAfter), SpoolDir, and OnReport, called with
// each document's report after the plugin counted it in
// [Plugin.SitemapTotals]. See [sitemap.Config] for each field. The plugin
// sets Client, UserAgent, Allow and Spool itself (sitemaps go through its
// transport, its robots.txt check and its gate): setting one of them makes
// New return an error.
func SitemapWalk(cfg sitemap.Config) SitemapOption {
	return func(c *sitemapConfig) {
		var owned []string
		if cfg.Client != nil {
			owned = append(owned, "Client")
		}
		if cfg.UserAgent != "" {
			owned = append(owned, "UserAgent")
		}
		if cfg.Allow != nil {
			owned = append(owned, "Allow")
		}
		if cfg.Spool {
			owned = append(owned, "Spool")
		}
		if len(owned) > 0 {
			c.errs = append(c.errs, fmt.Errorf("SitemapWalk: the plugin sets %s itself (sitemaps go through its transport, robots.txt check and gate)", strings.Join(owned, ", ")))
			return
		}
		c.settings = cfg
	}
}

// WithSitemaps makes the plugin feed sitemap URLs back into the collector.
// The first time an authority's policy is loaded (by the first request to
// it; a robots.txt that is temporarily unreachable waits for a later
// request), the sitemaps its robots.txt announces ([policy.Policy.Sitemaps]:
// resolved against the robots.txt URL, each once) and those given with
// [SitemapURLs] are walked ([sitemap.Walker]: streaming, gzip, indexes,
// limits, scope; set with [SitemapWalk]), and each page URL is handed to
// the collector that made the request, with c.Request("GET", url, nil, ctx,
// nil), as Visit would: AllowedDomains, URL filters, MaxDepth and the
// visited set apply, and a URL they refuse is counted as filtered with
// Colly's reason ("already visited", "forbidden domain", ...). The
// request's Context holds [CtxSitemap] and [CtxLastMod]. With no options,
// every announced sitemap is followed.
//
// Sitemaps are fetched through the plugin's transport, with the crawler's
// User-Agent: checked against robots.txt (a disallowed sitemap is not
// fetched, and is reported) and spaced by the host's gate like pages. Each
// document is read whole before its page URLs are handed over (up to 1 MiB
// in memory, the rest in a temporary file): the host's gate holds the host
// while a response is open, and the pages wait at that gate.
//
// The walk runs in the OnRequest hook of the request that loaded the
// policy, in sync and Async mode alike, before that request goes on: it is
// Colly's own goroutine, counted by the collector's wait group, so c.Wait()
// returns only after every page URL was handed over, and it holds no
// LimitRule slot. That request is sent once the walk ends. In sync mode
// each page is visited as it is handed over, on the caller's goroutine. In
// Async mode at most 64 handed-over requests are in flight at once: a
// request frees its place at its own OnScraped or OnError (not at those of
// the pages reached by links from it, which share its Context but have a
// greater Depth). A request that a user's OnRequest callback aborts reaches
// neither; its place is taken back once it has been out of the plugin's
// hook for a hold time of a minute plus 64 times the host's delay (the
// longest a request can queue at the host's gate), as a frontier takes back
// an expired lease. Filter sitemap pages with SitemapWalk's Keep rather
// than by aborting them.
//
// Every sitemap document gets a [sitemap.Report] (found, handed over,
// filtered and rejected by reason, its error), summed by
// [Plugin.SitemapTotals] and passed to SitemapWalk's OnReport; one that
// failed is also logged as a warning. Each authority is walked once per
// plugin, into the collector whose request loaded it (a clone or a second
// collector on the same plugin does not walk it again).
func WithSitemaps(opts ...SitemapOption) Option {
	return func(c *config) {
		sc := &sitemapConfig{}
		for _, o := range opts {
			if o != nil {
				o(sc)
			}
		}
		for _, err := range sc.errs {
			c.fail("WithSitemaps: %w", err)
		}
		c.sitemaps = sc
	}
}

// declaresUsage reports whether the crawler declared a purpose or a use
// level: the plugin then reads what sites state about them.
func (c *config) declaresUsage() bool {
	return len(c.purposes) > 0 || c.useLevel != dialect.UseUnknown
}
