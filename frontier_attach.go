package robots

import (
	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/frontier"
)

// AttachFrontier wires a queue frontier to the collector its Colly queue
// runs: it registers an OnError and an OnScraped callback that report each
// request the frontier handed out done (f.Done with the lease id that
// GetRequest put in the request's context, under [frontier.LeaseKey]).
// Every request Colly sends ends in exactly one of them, the plugin's
// stops included. Call it once per collector; f is a *[frontier.Frontier]
// (one process) or the fleet's frontier on Redis.
//
// When f hands a request it handed out before to the same process again
// ([frontier.Requeuer]: the fleet's frontier, after a lease ended or Redis
// lost its data), AttachFrontier also sets c.AllowURLRevisit: the frontier
// already queues each request once, and Colly's own visited check would
// drop such a request silently, holding its host until the frontier's
// hold ends.
//
// When f is a [frontier.Postponer] (the fleet's frontier) and the collector
// has a plugin (attach it first), a request whose host's robots.txt was
// fetched less than the host's delay before (typically: for this very
// request, the first of its host) is handed back to f to come back at the
// host's turn, instead of holding its queue thread for the delay while
// other hosts are ready: with a few threads and many new hosts, the start
// of a crawl would otherwise have every thread waiting out a Crawl-delay
// after a robots.txt fetch. Such a request is counted under
// [HostStats.Postponed], runs the OnRequest callbacks again when it comes
// back, and counts again toward Colly's MaxRequests.
//
// When the collector has a plugin with [WithSitemaps] (attach the plugin
// first: WithRobots in NewCollector, or Attach), the sitemap pages the
// plugin finds for c go into f (its AddRequest: f is a Colly
// queue.Storage) instead of straight to c, so that they wait their host's
// turn in the frontier like any queued request and a page queued twice is
// refused by the frontier ("already queued" in the sitemap's report). The
// request's Context is then serialised with it: CtxLastMod holds the
// lastmod as an RFC 3339 string.
func AttachFrontier(c *colly.Collector, f frontier.Completer) {
	var fs *frontiers
	if p := pluginOf(c); p != nil {
		fs = &p.frontier
	}
	fs.adopt(c, f)
}
