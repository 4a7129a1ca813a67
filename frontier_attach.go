package robots

import (
	"log/slog"
	"sync"
	"time"

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
	requeues := false
	if rq, ok := f.(frontier.Requeuer); ok && rq.Requeues() {
		c.AllowURLRevisit = true
		requeues = true
	}
	if p := pluginOf(c); p != nil {
		if q, ok := f.(queueStorage); ok {
			p.frontier.queues.Store(c, q)
		}
		if pp, ok := f.(frontier.Postponer); ok && requeues {
			p.frontier.postponers.Store(c, pp)
		}
	}
	done := func(r *colly.Response) {
		if r == nil {
			return
		}
		if id := FrontierLease(r.Ctx); id != "" {
			f.Done(id)
		}
	}
	c.OnError(func(r *colly.Response, _ error) { done(r) })
	c.OnScraped(done)
}

// frontiers is AttachFrontier's part of a collector's plugin: the
// frontier attached to each collector, as the plugin uses it.
type frontiers struct {
	queues     sync.Map // *colly.Collector → queueStorage: the sitemap walk queues its pages there
	postponers sync.Map // *colly.Collector → frontier.Postponer: postpone hands requests back to it
}

// queue returns the frontier c's sitemap pages go to, nil if none.
func (fs *frontiers) queue(c *colly.Collector) queueStorage {
	q, _ := fs.queues.Load(c)
	s, _ := q.(queueStorage)
	return s
}

// FrontierLease returns the lease id a frontier put in a request's context
// ("" if none): what [AttachFrontier] reports done.
func FrontierLease(ctx *colly.Context) string {
	if ctx == nil {
		return ""
	}
	s, _ := ctx.GetAny(frontier.LeaseKey).(string)
	return s
}

// postponeMin is the shortest wait for the host's turn that the plugin
// hands back to a frontier rather than wait out on the queue thread.
const postponeMin = 50 * time.Millisecond

// postpone hands the request back to the frontier of its collector that
// handed it out (see [AttachFrontier]) when its host's robots.txt was
// fetched less than the host's delay ago, so that the host's turn is
// still at least postponeMin away: the frontier handed the request out as
// ready, not knowing of the fetch its first request brings. A request
// handed back is aborted and counted under Postponed. Not with
// colly.CacheDir (no early wait).
func (fs *frontiers) postpone(f *flow) outcome {
	p, c, r := f.p, f.c, f.r
	v, ok := fs.postponers.Load(c)
	if !ok || !c.AllowURLRevisit || slotOf(r) != nil || c.CacheDir != "" {
		return goOn
	}
	lease := FrontierLease(r.Ctx)
	fetched := f.pol.Fetch().Time
	wait := fetched.Add(f.delay).Sub(p.res.Load().Now())
	if lease == "" || fetched.IsZero() || wait < postponeMin {
		return goOn
	}
	if !v.(frontier.Postponer).Postpone(lease, time.Now().Add(wait)) {
		return goOn
	}
	r.Abort()
	p.stats.record(f.pol.Authority(), HostStats{Postponed: 1})
	p.log.Debug("robots: request handed back to the frontier until its host's turn",
		slog.String("url", r.URL.String()), slog.Time("robots_fetched", fetched), slog.Duration("delay", f.delay))
	return handedBack
}
