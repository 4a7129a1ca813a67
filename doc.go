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
// This package is the Colly plugin only. The parts it drives stand on their
// own, without Colly: package [github.com/politecrawl/robots/dialect] reads
// robots.txt, package [github.com/politecrawl/robots/policy] fetches and
// caches it and says what it means for a URL now (its documentation has the
// fetch-outcome table), and package
// [github.com/politecrawl/robots/hostlimit] spaces requests per host.
//
// # The plugin
//
// Attached to a collector, the plugin turns Colly's own robots.txt check off
// and, for every request:
//
//   - in OnRequest, resolves the policy of the request's authority (one
//     robots.txt fetch per authority, cached; [policy.Resolver]); a request
//     the rules disallow is aborted and reported ([WithOnBlocked], the log,
//     [Plugin.Stats]) with the rule and its line, or with the fetch outcome.
//     Colly's Abort is silent and leaves the URL marked visited, so a
//     request held back only because robots.txt is temporarily unreachable
//     is not dropped: it waits for the retry time up to [WithDeferWait]
//     (30 s by default), then is handed back, reported as [Deferred] and
//     kept for [Plugin.RetryDeferred];
//   - still in OnRequest, where no LimitRule slot is held, waits for the
//     host's turn ([Limiter.Wait]);
//   - at the transport, checks the URL again (so redirect hops into
//     disallowed paths are not followed, and a clone the plugin was not
//     attached to is still guarded) and passes the per-host gate
//     ([Limiter.Acquire]), which spaces requests by max([WithMinDelay], the
//     Crawl-delay for our tokens): by default from the end of one response
//     to the next send, one request in flight per host ([EndToStart]); 429
//     and 503 pause the host until Retry-After, or with exponential backoff.
//     robots.txt fetches pass the same gate.
//
// A Crawl-delay above [WithMaxCrawlDelay] (30 s by default) is capped, or the
// host skipped, or obeyed, as chosen. c.Clone() shares the transport (and so
// the gate and the transport check) but not the callbacks: call
// [Plugin.Attach] on the clone too. Everything the plugin waits on ends with
// the collector's Context.
//
// # Options
//
// The plugin's own options set the spacing, the reports, the deferral and
// the statistics. Options of its resolver are passed through [WithPolicy];
// [WithDialect], [WithAgents] and the other resolver options named here are
// shorthands for it. [WithLimiter] replaces the in-memory per-host limiter
// with another implementation of [Limiter], such as a fleet limiter shared
// by several crawler processes.
//
// # Sitemaps
//
// [WithSitemaps] feeds the page URLs of each authority's sitemaps (those its
// robots.txt announces, and any given with [SitemapURLs]) back into the
// collector, through Colly's own Request, so that AllowedDomains, URL
// filters, MaxDepth and the visited set apply. Sitemaps are fetched through
// the plugin's transport (robots.txt check, per-host gate) and read as a
// stream by package [github.com/politecrawl/robots/sitemap], with its
// limits. c.Wait() covers the walk in sync and Async mode; an Async
// collector is fed through a bounded window ([SitemapWindow]). Each
// document's report ([github.com/politecrawl/robots/sitemap.Report]) goes
// to [WithOnSitemap], [Plugin.Sitemaps] and [Plugin.SitemapTotals].
//
// Statistics are kept per authority for the [WithStatsCapacity] most
// recently active authorities, the others counted in [Plugin.Totals]; the
// default limiter drops idle hosts' state. The README gives the plugin's
// cost per request and per host.
package robots
