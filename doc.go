// Package robots makes Colly crawlers polite in one line. A [Plugin]
// attached to a collector stops every request robots.txt disallows for the
// crawler (read the way a chosen [dialect] reads it) and spaces the requests
// to each host by its Crawl-delay, one plugin per collector, shared by its
// clones.
//
//	c := colly.NewCollector(
//		colly.UserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"),
//		robots.WithRobots(robots.WithDialect(dialect.Google)),
//	)
//
// or, for a collector that exists, p, err := robots.Attach(c) (p gives
// statistics, err a configuration error).
//
// This package is the Colly plugin only. The parts it drives stand on their
// own, without Colly: package [github.com/politecrawl/robots/dialect] reads
// robots.txt, package [github.com/politecrawl/robots/policy] fetches and
// caches it and says what it means for a URL now (its documentation has the
// fetch-outcome table), package [github.com/politecrawl/robots/hostlimit]
// spaces requests per host, package [github.com/politecrawl/robots/sitemap]
// reads sitemaps and package [github.com/politecrawl/robots/frontier] is a
// host-aware queue for Colly's queue package.
//
// # What happens to a request
//
// Attached to a collector, the plugin turns Colly's own robots.txt check off
// and, for every request:
//
//   - in OnRequest, resolves the policy of the request's authority (one
//     robots.txt fetch per authority, cached; [policy.Resolver]). A request
//     held back only because robots.txt is temporarily unreachable is not
//     dropped: it waits for the retry time up to [WithDeferWait] (30 s by
//     default), then is handed back, reported as [Deferred] and kept for
//     [Plugin.RetryDeferred];
//   - still in OnRequest, goes down the one decision path: the rules (a
//     request they disallow is stopped and reported once, to
//     [WithOnBlocked], the log, [Plugin.Stats], and OnError with a
//     [*BlockedError] wrapping [ErrBlocked], with the rule and its line, or
//     with the fetch outcome), the usage the crawler declared
//     ([WithUsage]), and the host's delay ([WithMaxCrawlDelay] may skip
//     the host);
//   - still in OnRequest, where no LimitRule slot is held, waits for the
//     host's turn ([Limiter].WaitMax);
//   - at the transport, passes the per-host gate ([Limiter].AcquireMax),
//     which spaces requests by the delay in force: the Crawl-delay for the
//     crawler's tokens, else [WithDefaultDelay] (1 s), never less than
//     [WithMinDelay], capped by [WithMaxCrawlDelay]; by default from the end
//     of one response to the next send, one request in flight per host. 429
//     and 5xx answers (but 501 and 505) pause the host until Retry-After, or
//     with exponential backoff, and the request is sent again once the pause
//     is over ([WithRetries]). robots.txt fetches pass the same gate. What no
//     OnRequest hook saw goes down the same decision path at the transport
//     first: redirect hops (a redirect into a disallowed path is not
//     followed) and the requests of a clone the plugin was not attached to.
//
// Each feature (robots.txt rules and spacing, nofollow, usage, sitemaps,
// the frontier of [AttachFrontier], signing) holds its own state and
// registers its own callbacks on each collector the plugin is attached to.
//
// Everything the plugin waits on ends with the collector's Context.
//
// The plugin logs one warning when the first request it sends carries a
// User-Agent without a product token with a version ("ExampleBot/0.1") or
// without a contact URL ("+https://..."), which the crawler best practices
// (draft-illyes-webbotauth-cbcp) ask of a crawler, as in the example above.
//
// # Options
//
// An option given a value it cannot use makes [New] and [Attach] return an
// error; [WithRobots], which cannot return one, fails closed (every request
// stopped, the error logged). The resolver's options are passed with
// [WithPolicy] (cache lifetimes, a shared [policy.Store], timeouts, a
// clock); the default limiter's with [WithLimiter](hostlimit.New(...)).
//
// # Usage
//
// A crawler that uses what it fetches for a purpose declares it, and a URL
// whose site reserves that use (robots.txt, tdmrep.json, an RSL licence)
// is not fetched, while [UsageOf] gives a fetched response's verdict and
// evidence (package [github.com/politecrawl/robots/usage]):
//
//	p, err := robots.Attach(c, robots.WithUsage(usage.Config{Purposes: []string{"train-ai"}}))
//	c.OnResponse(func(r *colly.Response) {
//		if u, _ := robots.UsageOf(r); u.Refused == "" {
//			store(r)
//		}
//	})
//
// # Sitemaps
//
// [WithSitemaps] feeds the page URLs of each authority's sitemaps back into
// the collector through Colly's own Request, so that AllowedDomains, URL
// filters, MaxDepth and the visited set apply. The walk runs in the
// OnRequest hook of the request that loaded the authority's policy, in sync
// and Async mode alike. This is the one mechanism, chosen because that hook
// runs on Colly's own goroutine, counted by the collector's wait group
// (c.Wait() covers the walk with no access to Colly's internals) and
// holding no LimitRule slot; in Async mode a window of 64 in-flight
// requests bounds memory, each place freed at the request's OnScraped or
// OnError, or taken back after a hold time for a request a callback
// aborted, as a frontier takes back an expired lease.
//
// Statistics are kept per authority for the [WithStatsCapacity] most
// recently active authorities, the others counted in [Plugin.Totals]; the
// default limiter drops idle hosts' state.
//
// # Colly's internals
//
// The plugin uses Colly's public API, with one exception: Colly has no
// getter for a collector's HTTP client nor for its visited store, so one
// small file reads them (read-only): the client, to adopt a transport the
// user set on the collector after the plugin (a proxy) and to find a
// collector's plugin; the store, to put it behind one of the plugin's own
// (set with SetStorage) that forgets the visited mark of a link stopped
// as nofollow. A test fails if Colly's layout changes; if it ever does at
// run time, the plugin says so at Attach and asks for [WithTransport].
package robots
