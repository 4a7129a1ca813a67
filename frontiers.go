package robots

import (
	"log/slog"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/frontier"
)

// frontiers is the frontier feature (AttachFrontier): the frontier
// attached to each collector of the plugin, as the plugin uses it.
type frontiers struct {
	queues     sync.Map // *colly.Collector → queueStorage: the sitemap walk queues its pages there
	postponers sync.Map // *colly.Collector → frontier.Postponer: postpone hands requests back to it
}

// adopt registers the frontier feature's callbacks on c, which f hands
// requests to, and keeps f for c's plugin, fs (nil when c has none): see
// AttachFrontier.
func (fs *frontiers) adopt(c *colly.Collector, f frontier.Completer) {
	requeues := false
	if rq, ok := f.(frontier.Requeuer); ok && rq.Requeues() {
		c.AllowURLRevisit = true
		requeues = true
	}
	if fs != nil {
		if q, ok := f.(queueStorage); ok {
			fs.queues.Store(c, q)
		}
		if pp, ok := f.(frontier.Postponer); ok && requeues {
			fs.postponers.Store(c, pp)
		}
	}
	done := func(r *colly.Response) {
		if r == nil {
			return
		}
		if id := frontierLease(r.Ctx); id != "" {
			f.Done(id)
		}
	}
	c.OnError(func(r *colly.Response, _ error) { done(r) })
	c.OnScraped(done)
}

// queue returns the frontier c's sitemap pages go to, nil if none.
func (fs *frontiers) queue(c *colly.Collector) queueStorage {
	q, _ := fs.queues.Load(c)
	s, _ := q.(queueStorage)
	return s
}

// frontierLease returns the lease id a frontier put in a request's context
// under frontier.LeaseKey ("" if none): what AttachFrontier reports done.
func frontierLease(ctx *colly.Context) string {
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
	if !ok || !c.AllowURLRevisit || f.windowed || c.CacheDir != "" {
		return goOn
	}
	lease := frontierLease(r.Ctx)
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
