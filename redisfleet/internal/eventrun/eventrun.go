// Package eventrun is a run of events each within a gap of the previous
// one, shared by package redisfleet (incidents) and package fleetfrontier
// (data losses).
package eventrun

import "time"

// Run is a run of events each within a gap of the previous one: an
// incident (Redis unreachable, refusing writes, losing data), of which a
// process logs one warning, or a run of data losses, which ends the crawl
// once it lasts longer than the outage limit. It is plain: no lock, no
// clock; the caller holds its lock and passes the time.
type Run struct {
	First, Last time.Time // the run's first and latest events (zero: none yet)
	N           int64     // events in the run
}

// Add records an event at now and reports whether it starts a new run
// (none before, or the latest more than gap before now).
func (r *Run) Add(now time.Time, gap time.Duration) bool {
	fresh := r.Last.IsZero() || now.Sub(r.Last) > gap
	if fresh {
		r.First, r.N = now, 0
	}
	r.Last = now
	r.N++
	return fresh
}

// Lasting returns how long the run has lasted (from its first event to its
// latest) if it is still on at now (its latest event at most gap before
// now); false if there is none.
func (r *Run) Lasting(now time.Time, gap time.Duration) (time.Duration, bool) {
	if r.Last.IsZero() || now.Sub(r.Last) > gap {
		return 0, false
	}
	return r.Last.Sub(r.First), true
}
