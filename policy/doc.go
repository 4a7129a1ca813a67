// Package policy says what an authority's robots.txt means for a crawler
// now. A [Resolver] fetches robots.txt, applies the dialect's rules for the
// fetch's outcome and caches the result as one immutable [Policy] per
// authority, whose [Policy.Check] answers for any URL whether the crawler
// may fetch it and why.
//
// It does no crawling and knows nothing of Colly.
//
// A [Resolver] holds the policies of many authorities. [Resolver.Policy]
// returns the [Policy] of a URL's authority: from memory when it is there
// and current, else from a shared [Store], else by fetching robots.txt,
// once however many goroutines ask at the same time. A fetch never fails:
// a 503 or a refused connection is an outcome, and the dialect
// ([dialect.Dialect.Decide]) says what it means (parse the body, no
// restrictions, complete disallow until a retry time, use the last good
// copy, exclude the host). A Policy is immutable: its [Policy.Check] answers
// with a [Verdict] naming the rule and line, or the fetch outcome, that
// decided. A cached lookup and a check allocate nothing.
//
//	r, err := policy.NewResolver(policy.WithDialect(dialect.Google),
//		policy.WithUserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0)"))
//	if err != nil { ... }      // an option value out of range
//	p, err := r.Policy(ctx, u) // u is a *url.URL
//	if err != nil { ... }      // not an http(s) URL, or ctx ended
//	v := p.Check(u)            // v.Allowed; v.String() says why
//
// The reading of robots.txt itself (line syntax, group selection,
// matching) is package [github.com/politecrawl/robots/dialect]. The Colly
// plugin, package [github.com/politecrawl/robots], drives a Resolver.
//
// # Usage terms
//
// [Policy.Usage] answers what robots.txt states about the use of a URL's
// content. The other documents a site names for that (tdmrep.json, RSL
// licences) are fetched with [Resolver.Document], as robots.txt is: once
// however many ask, through the resolver's client, within a size limit,
// kept for their lifetime in memory and in the [Store]. Package
// [github.com/politecrawl/robots/usage] reads them and answers per purpose.
//
// # Authorities
//
// A robots.txt applies to one authority: scheme, host and port ([Authority]).
// The host is lower-cased and an internationalised name is converted to
// punycode; the default port of the scheme is dropped, so
// https://example.com:443/ and https://example.com/ share a policy while
// https://example.com:8181/ has its own; IPv6 literals keep their brackets.
// Only http and https URLs have one. Package hostlimit keys hosts the same
// way.
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
// ([WithTimeout]) that counts its time on the network, not the time it
// waits at a per-host gate (of package hostlimit, or the plugin's) behind
// the host's own Crawl-delay or Retry-After pause.
//
// # Fetch rules
//
// The outcome of the fetch is classified by [dialect.ClassifyStatus] and
// decided by [dialect.Dialect.Decide]. What each dialect does (generated
// from the dialects' tables by go generate; a test fails when it differs):
//
// fetch-table:begin
//
//	robots.txt answers        rfc9309               google                coccoc                koster1994
//	------------------------  --------------------  --------------------  --------------------  --------------------
//	200                       parse                 parse                 parse                 parse
//	other 2xx                 parse                 parse                 no restrictions       parse
//	more than 5 redirects     no restrictions       no restrictions       no restrictions       no restrictions
//	4xx except 429            no restrictions       no restrictions       no restrictions       no restrictions
//	429                       no restrictions       as 5xx                no restrictions       as 5xx
//	5xx                       last good copy ≤ 30   complete disallow     no restrictions       complete disallow,
//	                          days old, else        for 12 h, then last                         retry in 10 min
//	                          complete disallow,    good copy ≤ 30 days
//	                          retry in 10 min       old, else no
//	                                                restrictions, retry
//	                                                in 10 min
//	no answer (DNS, refused,  as 5xx                as 5xx                host excluded, retry  as 5xx
//	  timeout, broken body)                                               in 1 h
//	other (1xx, 3xx without   as 5xx                as 5xx                no restrictions       as 5xx
//	  a usable Location,
//	  unknown)
//	cache lifetime            24 h                  24 h                  24 h                  24 h
//
// fetch-table:end
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
// default, by the estimate of [dialect.Robots.Footprint] and
// [dialect.Ruleset.Footprint]), are kept in memory, the least recently used
// evicted. Behind the memory cache an optional [Store] ([MemoryStore] in
// memory) shares serialised policies between processes; each of its calls
// is bounded by [WithStoreTimeout], and a Store that fails or times out is
// a miss.
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
//     http(s) URL are followed; any other 3xx, and one whose Location
//     cannot be parsed at all, is "other status" ("3xx without a usable
//     Location"). The sixth consecutive redirect is "more than 5
//     redirects". The redirect target's own authority is not cached from
//     this fetch.
//   - A body cut short by the network is "no answer" even when part of it
//     arrived (Google names interrupted connections and chunking errors); a
//     gzip or deflate body that does not decode is "no answer" too. Of the
//     body of an answer the fetch does not use (a redirect, a 4xx, a 5xx)
//     at most 4 KiB is read, for at most 100 ms, so that a slow or endless
//     one costs no time.
//   - Content codings: gzip (the one asked for) and deflate (zlib or raw)
//     are decoded, and a gzip stream found inside the decoded body is
//     decoded too, two layers at most; the 500 KiB limit applies to the
//     decoded bytes. A UTF-16 body with a byte-order mark is converted to
//     UTF-8. What is not decoded (another coding such as br, a third layer)
//     is parsed as it came and named in [Policy.Warnings], which the
//     resolver also logs.
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
package policy

//go:generate go run -C ../tools ./fetchtable ../README.md ../docs/dialects.md ../policy/doc.go
