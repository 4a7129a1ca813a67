package robots

import (
	"errors"
	"strconv"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/usage"
)

// BlockKind says why the plugin stopped a request.
type BlockKind uint8

const (
	// Disallowed: robots.txt disallows the URL for the crawler, by a rule or
	// by its fetch outcome (e.g. "complete disallow" under rfc9309 after a
	// 5xx that lasts).
	Disallowed BlockKind = iota
	// Deferred: the request was handed back (see [Plugin.RetryDeferred])
	// because robots.txt is temporarily unreachable and the dialect says to
	// wait, or because its host is paused (after a 429 or 5xx answer) for
	// longer than WithDeferWait.
	Deferred
	// Skipped: the host's Crawl-delay is above the largest honoured and the
	// plugin is set to skip such hosts ([SkipHost]).
	Skipped
	// Canceled: the collector's context ended while the request waited,
	// or the plugin was given an invalid configuration ([WithRobots]
	// fails closed).
	Canceled
	// UsageDisallowed: robots.txt says the content of the URL may not be
	// used for a purpose the crawler declared ([WithUsage]), so it is
	// not fetched.
	UsageDisallowed
	// Nofollow: the page the request was made from (with Colly's
	// Request.Visit, which keeps the page's Context) says nofollow or none
	// for the crawler, in its X-Robots-Tag header or a robots meta element.
	Nofollow
)

// String names the kind: "disallowed", "deferred", "skipped", "canceled",
// "usage-disallowed", "nofollow", or "BlockKind(n)" for a value that is
// none of them.
func (k BlockKind) String() string {
	if names := [...]string{"disallowed", "deferred", "skipped", "canceled", "usage-disallowed", "nofollow"}; int(k) < len(names) {
		return names[k]
	}
	return "BlockKind(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText returns the kind's name, as String gives it.
func (k BlockKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Block reports one request the plugin stopped.
type Block struct {
	Kind      BlockKind
	URL       string
	Authority string
	Dialect   string
	// Verdict says which rule (and line) or which fetch outcome decided, for
	// Disallowed and Deferred.
	Verdict policy.Verdict
	// Until is, for Deferred, when retrying can help: the retry time of
	// robots.txt (by the resolver's clock, see policy.WithClock), or the end of
	// the host's pause after a 429 or 5xx answer.
	Until time.Time
	// Redirect is true when the URL is a redirect target: the redirect was
	// not followed.
	Redirect bool
	// Request is the Colly request that was stopped. In the error that
	// reaches OnError and Visit it is filled in by the plugin's OnError
	// hook (a hook registered before the plugin's may see it nil). A
	// request stopped at the transport after OnRequest let it through (its
	// context ended while it waited for a LimitRule slot, a token of
	// WithMaxRate or the host's turn; its host paused) is reported to
	// WithOnBlocked from that hook, with its request, whatever ended the
	// wait (the collector's Context, its deadline, Colly's request
	// timeout). A redirect hop's report carries the request redirected.
	// Request is nil in two cases only: a request of a cloned collector
	// the plugin was not attached to, and a sitemap document (Sitemap).
	Request *colly.Request
	// Sitemap is true when the stop is of a sitemap document the plugin
	// fetched for [WithSitemaps] (URL is the document's): no Colly request
	// is behind it, so Request is nil and nothing reaches OnError; the
	// sitemap's report ([SitemapWalk]'s OnReport, [Plugin.SitemapTotals])
	// counts it as failed.
	Sitemap bool
	// Reason is the explanation in words.
	Reason string
	// Usage is, for UsageDisallowed, what the site states about the URL
	// before the fetch: every signal, the deciding one first in Reason.
	Usage *usage.Report
}

func (b Block) String() string { return b.Kind.String() + " " + b.URL + ": " + b.Reason }

// ErrBlocked is wrapped by the error a stopped redirect hop (or a request of
// a collector the plugin guards only through its transport) fails with;
// Colly passes it to OnError. Use errors.As with *BlockedError for details.
var ErrBlocked = errors.New("robots: request stopped")

// BlockedError is the error of a request the plugin stopped, as OnError
// and a sync Visit see it. It wraps [ErrBlocked]; a [Disallowed] stop, and a
// [Deferred] one while robots.txt is unreachable, also wrap
// colly.ErrRobotsTxtBlocked, as Colly's own robots.txt check does, so
// that code written for that check recognises it; a request canceled while
// the plugin held it also wraps the cause (the context's error).
type BlockedError struct {
	Block Block
	cause error
	// answers is how many answers asking to back off the request got
	// before it was stopped: a hand-back carries them to its next round,
	// so that WithRetries counts over deferrals.
	answers int
}

// Error says why, without the URL, which the error that wraps it names
// already (Colly's client: Get "URL": ...; for a redirect hop, the hop's
// URL, and the reason names the URL redirected from).
func (e *BlockedError) Error() string {
	return "robots: " + e.Block.Kind.String() + ": " + e.Block.Reason
}

// Unwrap returns ErrBlocked, colly.ErrRobotsTxtBlocked for a Disallowed
// stop and for a Deferred one that robots.txt's fetch outcome decided
// (Colly's check disallows on a 5xx robots.txt), and the cause of a
// cancellation if any.
func (e *BlockedError) Unwrap() []error {
	switch {
	case e.cause != nil:
		return []error{ErrBlocked, e.cause}
	case e.Block.Kind == Disallowed,
		e.Block.Kind == Deferred && !e.Block.Verdict.Allowed && e.Block.Verdict.Reason == dialect.ReasonFetch:
		return []error{ErrBlocked, colly.ErrRobotsTxtBlocked}
	}
	return []error{ErrBlocked}
}

// visitRefusals are the errors with which Colly refuses a request before
// making it, and the reasons the reports count them under.
var visitRefusals = []struct {
	err    error
	reason string
}{
	{colly.ErrForbiddenDomain, "forbidden domain"},
	{colly.ErrForbiddenURL, "forbidden URL"},
	{colly.ErrNoURLFiltersMatch, "no URL filter matches"},
	{colly.ErrMaxDepth, "max depth"},
	{colly.ErrMaxRequests, "max requests"},
	{colly.ErrRobotsTxtBlocked, "blocked by Colly's robots.txt check"},
	{colly.ErrMissingURL, "missing URL"},
	{colly.ErrQueueFull, "queue full"},
}

// reasonCollyOther is the reason a refusal by Colly that is none of
// visitRefusals is counted under (a URL Colly's parser refuses, an error of
// the collector's storage, ...): one key, whatever the error's text, which
// may contain the URL. Each such error is logged (debug level).
const reasonCollyOther = "refused by Colly (other error)"

// visitRefusal says whether err, returned by c.Request, means Colly refused
// the URL before making a request, and why: one of a fixed set of reasons,
// never the error's text. In sync mode Request also returns the error of
// the request it made (a 404, a robots.txt stop): that URL was handed over.
func visitRefusal(err error, async bool) (string, bool) {
	if err == nil || errors.Is(err, ErrBlocked) {
		return "", false // the plugin's own stop of a request handed over (sync)
	}
	var av *colly.AlreadyVisitedError
	if errors.As(err, &av) {
		return "already visited", true
	}
	for _, v := range visitRefusals {
		if errors.Is(err, v.err) {
			return v.reason, true
		}
	}
	if async {
		// An Async Request returns before the request is made: any error
		// is a refusal.
		return reasonCollyOther, true
	}
	return "", false
}
