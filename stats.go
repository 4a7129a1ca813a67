package robots

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/robots/hostlimit"
)

// HostStats are the plugin's statistics for one authority.
type HostStats struct {
	Allowed    int64 // requests let through in OnRequest and not stopped at the transport after (such a stop counts under its kind)
	Disallowed int64 // stopped by robots.txt (rules or fetch outcome), redirect hops included
	Deferred   int64 // hand-backs (robots.txt unreachable, or the host paused past WithDeferWait): a request handed back in n rounds counts n
	Skipped    int64 // stopped because the Crawl-delay is above the largest honoured
	Canceled   int64 // stopped because the request's context ended while the plugin held it
	Retried    int64 // sent again after a 429 or 5xx answer and the host's pause (WithRetries)
	// Postponed counts requests handed back to the frontier that handed
	// them out ([AttachFrontier], a [frontier.Postponer]), to come back at
	// their host's turn: each is counted again when it comes back.
	Postponed int64
	// UsageDisallowed counts requests stopped because robots.txt refuses a
	// purpose declared with WithUsage; UsageMarked counts responses
	// whose usage preference (robots.txt and the response's headers)
	// refuses one (see UsageOf).
	UsageDisallowed int64
	UsageMarked     int64
	// Nofollow counts requests stopped because the page they were made
	// from says nofollow (X-Robots-Tag or meta robots).
	Nofollow int64
	// Waited is the time allowed requests were held in OnRequest: waiting
	// for the retry of an unreachable robots.txt and for the host's turn
	// (not the robots.txt fetch itself, nor the final gate at send time).
	// It is summed over requests, so the waits of concurrent requests add
	// up: an Async crawl's Waited can exceed its wall time. Waited/Allowed
	// is the mean wait of a request.
	Waited time.Duration
	// Limiter holds the host's gate statistics while the limiter keeps its
	// state (the default limiter drops idle hosts; a limiter given with
	// [WithLimiter] may keep none); zero otherwise.
	Limiter hostlimit.Stats
}

// stats are the plugin's per-authority counters, bounded to about capacity
// authorities: the least recently updated are folded into the totals.
type stats struct {
	capacity int
	m        sync.Map     // authority → *hostCounters
	n        atomic.Int64 // entries in m
	tick     atomic.Int64 // logical clock of updates
	folded   hostCounters // counts of the authorities dropped from m
	foldMu   sync.Mutex   // one fold at a time
}

// counts are pointers to s's counts, each an int64 (Waited in
// nanoseconds): the order of hostCounters.n.
func (s *HostStats) counts() [11]*int64 {
	return [...]*int64{&s.Allowed, &s.Disallowed, &s.Deferred, &s.Skipped, &s.Canceled, &s.Retried, &s.Postponed,
		&s.UsageDisallowed, &s.UsageMarked, &s.Nofollow, (*int64)(&s.Waited)}
}

// hostCounters are one authority's statistics. Updates hold mu, so that
// an update racing with the authority's fold goes to the totals instead.
type hostCounters struct {
	n       [11]atomic.Int64 // HostStats.counts, in its order
	touched atomic.Int64     // stats.tick at the latest update
	mu      sync.Mutex
	gone    bool // folded into the totals; guarded by mu
}

func (c *hostCounters) snapshot() HostStats {
	var s HostStats
	for i, p := range s.counts() {
		*p = c.n[i].Load()
	}
	return s
}

// add adds s's counts to c.
func (c *hostCounters) add(s HostStats) {
	for i, p := range s.counts() {
		if *p != 0 {
			c.n[i].Add(*p)
		}
	}
}

// stopCount is one stop of kind k as HostStats counts it.
func stopCount(k BlockKind) HostStats {
	var s HostStats
	n := [...]*int64{Disallowed: &s.Disallowed, Deferred: &s.Deferred, Skipped: &s.Skipped, Canceled: &s.Canceled,
		UsageDisallowed: &s.UsageDisallowed, Nofollow: &s.Nofollow}
	if int(k) < len(n) {
		*n[k] = 1
	}
	return s
}

// record adds d to authority's statistics.
func (s *stats) record(authority string, d HostStats) {
	c := s.counters(authority)
	c.mu.Lock()
	if c.gone {
		s.folded.add(d)
	} else {
		c.add(d)
	}
	c.mu.Unlock()
}

// counters returns authority's counters, marked as updated now.
func (s *stats) counters(authority string) *hostCounters {
	v, ok := s.m.Load(authority)
	if !ok {
		c := &hostCounters{}
		c.touched.Store(s.tick.Add(1))
		var loaded bool
		v, loaded = s.m.LoadOrStore(authority, c)
		if !loaded {
			if s.n.Add(1) > int64(s.capacity) {
				s.fold()
			}
			return c
		}
	}
	c := v.(*hostCounters)
	c.touched.Store(s.tick.Add(1))
	return c
}

// fold moves the least recently updated authorities out of m into the
// totals, down to nine tenths of the capacity; no count is lost (see
// hostCounters). One goroutine folds at a time; the others go on.
func (s *stats) fold() {
	if !s.foldMu.TryLock() {
		return
	}
	defer s.foldMu.Unlock()
	keep := s.capacity * 9 / 10
	for s.n.Load() > int64(s.capacity) {
		s.foldTo(keep)
	}
}

func (s *stats) foldTo(keep int) {
	var ticks []int64
	s.m.Range(func(_, v any) bool {
		ticks = append(ticks, v.(*hostCounters).touched.Load())
		return true
	})
	if len(ticks) <= keep {
		return
	}
	slices.Sort(ticks)
	limit := ticks[len(ticks)-keep-1]
	var gone []*hostCounters
	s.m.Range(func(k, v any) bool {
		c := v.(*hostCounters)
		if c.touched.Load() <= limit {
			if _, ok := s.m.LoadAndDelete(k); ok {
				s.n.Add(-1)
				gone = append(gone, c)
			}
		}
		return true
	})
	for _, c := range gone {
		c.mu.Lock()
		c.gone = true
		s.folded.add(c.snapshot())
		c.mu.Unlock()
	}
}

// perHost returns a copy of the statistics per authority, with each one's
// gate statistics from lim.
func (s *stats) perHost(lim Limiter) map[string]HostStats {
	out := map[string]HostStats{}
	s.m.Range(func(k, v any) bool {
		hs := v.(*hostCounters).snapshot()
		hs.Limiter, _ = lim.Stats(k.(string))
		out[k.(string)] = hs
		return true
	})
	return out
}

// total returns the statistics summed over every authority.
func (s *stats) total() HostStats {
	t := s.folded.snapshot()
	s.m.Range(func(_, v any) bool {
		c := v.(*hostCounters)
		for i, n := range t.counts() {
			*n += c.n[i].Load()
		}
		return true
	})
	return t
}
