// Package robots makes Colly crawlers polite in one line: robots.txt obeyed
// the way a chosen crawler reads it, and each host crawled no faster than its
// Crawl-delay asks.
//
//	c := colly.NewCollector(
//		colly.UserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"),
//		robots.WithRobots(robots.WithDialect(dialect.Google)),
//	)
//
// or, for a collector that exists, p := robots.Attach(c) (p gives statistics).
//
// # The plugin
//
// Attached to a collector, the plugin turns Colly's own robots.txt check off
// and, for every request:
//
//   - in OnRequest, resolves the policy of the request's authority (one
//     robots.txt fetch per authority, cached); a request the rules disallow is
//     aborted and reported ([WithOnBlocked], the log, [Plugin.Stats]) with the
//     rule and its line, or with the fetch outcome. Colly's Abort is silent and
//     leaves the URL marked visited, so a request held back only because
//     robots.txt is temporarily unreachable is not dropped: it waits for the
//     retry time up to [WithDeferWait] (30 s by default), then is handed back,
//     reported as [Deferred] and kept for [Plugin.RetryDeferred];
//   - still in OnRequest, where no LimitRule slot is held, waits for the
//     host's turn ([Limiter.Wait]);
//   - at the transport, checks the URL again (so redirect hops into disallowed
//     paths are not followed, and a clone the plugin was not attached to is
//     still guarded) and passes the per-host gate, which spaces requests by
//     max([WithMinDelay], the Crawl-delay for our tokens): by default from the
//     end of one response to the next send, one request in flight per host
//     ([EndToStart]); 429 and 503 pause the host until Retry-After, or with
//     exponential backoff.
//
// A Crawl-delay above [WithMaxCrawlDelay] (30 s by default) is capped, or the
// host skipped, or obeyed, as chosen. c.Clone() shares the transport (and so
// the gate and the transport check) but not the callbacks: call
// [Plugin.Attach] on the clone too. Everything the plugin waits on ends with
// the collector's Context. Statistics are kept per authority (about 190
// bytes each) for the [WithStatsCapacity] most recently active authorities,
// the others counted in [Plugin.Totals]; the limiter drops idle hosts' state.
//
// # Resolving policies without Colly
//
// The reading of robots.txt itself (line syntax, group selection, matching)
// is package [github.com/politecrawl/robots/dialect]; [Resolver] adds the
// fetching, the fetch-outcome rules and the cache.
//
//	r := robots.NewResolver(robots.WithDialect(dialect.Google),
//		robots.WithUserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0)"))
//	p, err := r.Policy(ctx, u) // u is a *url.URL
//	if err != nil { ... }      // not an http(s) URL, or ctx ended
//	v := p.Check(u)            // v.Allowed; v.String() says why
//
// A cached lookup ([Resolver.Policy] then [Policy.Check]) does not allocate.
// Measured on a 2-core EPYC VM (BenchmarkCachedPolicy, 10,000 cached
// authorities each with its own 600-byte robots.txt, URLs taken in
// scattered order): about 220 ns for the lookup and 1.2 µs with the check,
// most of it cache misses on the rules of a cold authority.
//
// # Authorities
//
// A robots.txt applies to one authority: scheme, host and port ([Authority]).
// The host is lower-cased and an internationalised name is converted to
// punycode; the default port of the scheme is dropped, so
// https://example.com:443/ and https://example.com/ share a policy while
// https://example.com:8181/ has its own; IPv6 literals keep their brackets.
// Only http and https URLs have one.
//
// # Fetching
//
// The resolver asks scheme://authority/robots.txt with a non-conditional
// GET carrying the configured User-Agent and Accept-Encoding: gzip. It
// follows at most five redirects ([dialect.Dialect.MaxRedirects]), to any
// http(s) authority, and the rules found apply to the first authority. It
// reads at most [dialect.MaxBodyBytes] (500 KiB) of the decoded body, plus
// one byte so that the parser knows it was cut; the rest is never read. A
// body of any kind (HTML, binary, empty) is parsed like any other: the lines
// that make sense are used. The HTTP client is the user's to choose
// ([WithHTTPClient]); every fetch is bounded by a total timeout
// ([WithTimeouts]) that counts its time on the network, not the time it
// waits at the host's gate behind the host's own Crawl-delay or Retry-After
// pause (under the plugin, robots.txt passes the gate too).
//
// # Fetch rules
//
// The outcome of the fetch is classified by [dialect.ClassifyStatus] and
// decided by [dialect.Dialect.Decide]. What each dialect does:
//
//	outcome                       rfc9309              google                         coccoc               koster1994
//	----------------------------  -------------------  -----------------------------  -------------------  -------------------
//	200                           parse                parse                          parse                parse
//	other 2xx (204, 206, ...)     parse                parse                          no restrictions      parse
//	more than 5 redirects         no restrictions      no restrictions (as a 404)     no restrictions      no restrictions
//	4xx but 429                   no restrictions      no restrictions                no restrictions      no restrictions
//	429                           no restrictions      as 5xx                         no restrictions      complete disallow*
//	5xx                           last good copy if    complete disallow* for 12 h,   no restrictions      complete disallow*
//	                              ≤ 30 days old, else  then last good copy if ≤ 30
//	                              complete disallow*   days old, else no restrictions*
//	no answer (DNS, refused,      as 5xx               as 5xx                         host excluded,       as 5xx
//	timeout, broken body)                                                             retry after 1 h
//	other (1xx, 3xx without a     as 5xx               as 5xx                         no restrictions      as 5xx
//	usable Location, unknown)
//	cache lifetime                24 h                 24 h                           24 h                 24 h
//
//	* robots.txt is fetched again after 10 minutes while the failure lasts.
//
// "Complete disallow" lets nothing of the authority be fetched but
// /robots.txt itself; "host excluded" lets nothing be fetched at all.
// [Policy.Reason] and [Verdict.String] name the outcome, the action and the
// retry time: "robots.txt: 503 Service Unavailable, complete disallow until
// 2026-11-23T14:05:00Z".
//
// # Caching
//
// A clean answer (one the dialect parses or reads as no restrictions) is
// used for the cache lifetime: the dialect's 24 h ([WithTTL]), or the
// response's Cache-Control max-age bounded by [WithMaxAgeBounds] (by
// default 10 minutes to the TTL, so max-age can shorten the lifetime but
// not lengthen it). After a failure robots.txt is fetched again at the
// dialect's retry time. The policies of at most [WithCapacity] authorities
// (10,000 by default), holding at most [WithCacheBytes] (256 MiB by
// default, by estimate), are kept in memory, the least recently used evicted;
// an entry takes about 0.46 KB for an authority without robots.txt,
// 1.45 KB for a two-line file and 3.75 KB for a typical 600-byte file of 16
// rules, body included (TestBytesPerEntry: heap after GC over 5,000
// entries). Behind the memory cache an optional [Store] (in memory:
// [MemoryStore]; Redis later) shares serialised policies between processes;
// each of its calls is bounded by [WithStoreTimeout], and a Store that
// fails or times out is a miss.
//
// # Choices where the sources are silent
//
//   - A failure run is the unbroken sequence of fetches that the dialect
//     reads as neither parse nor no restrictions; different failing outcomes
//     (a 503, then a timeout) continue one run. The dialect's "how long the
//     outcome has lasted" is measured from the first fetch of the run.
//   - The last good copy is the latest body fetched with an outcome the
//     dialect parses. A later clean no-restrictions answer (a 404, too many
//     redirects) drops it: the site has said there is no robots.txt any
//     more. So rfc9309 after 404 then 503 disallows completely, and google
//     allows all after its 12 hours.
//   - rfc9309 after 30 days of failure keeps disallowing (the RFC's "MAY
//     assume unavailable" is not taken).
//   - Only 301, 302, 303, 307 and 308 with a Location that resolves to an
//     http(s) URL are followed; any other 3xx is "other status". The sixth
//     consecutive redirect is "more than 5 redirects". The redirect target's
//     own authority is not cached from this fetch.
//   - A body cut short by the network is "no answer" even when part of it
//     arrived (Google names interrupted connections and chunking errors); a
//     gzip body that does not decode is "no answer" too. Bodies of non-2xx
//     answers are not read.
//   - Cache-Control: only max-age is read; no-cache and no-store count as
//     max-age 0 (so as the lower bound). It applies to clean answers only.
//     Expires and validators are not used: fetches are non-conditional.
//   - An expired policy is fetched again before it is used (callers wait
//     for the one fetch); no stale copy is served while revalidating, except
//     as the dialects' last good copy rules say.
//   - A trailing dot in a host name is kept (example.com. is another
//     authority); leading zeros of a port are dropped.
//   - The User-Agent header is not part of the cache or Store key: one
//     resolver is one crawler.
//   - A Store keeps a policy with a last good copy for 30 days past its
//     expiry, so that a restarted crawler still has the copy.
package robots
