package redisfleet

import (
	"log/slog"
	"time"
)

// eventRun is a run of events each within a gap of the previous one: an
// incident (Redis unreachable, refusing writes, losing data), of which a
// process logs one warning, or a run of data losses, which ends the crawl
// once it lasts longer than the outage limit. It is plain: no lock, no
// clock; the caller holds its lock and passes the time.
type eventRun struct {
	first, last time.Time // the run's first and latest events (zero: none yet)
	n           int64     // events in the run
}

// add records an event at now and reports whether it starts a new run
// (none before, or the latest more than gap before now).
func (r *eventRun) add(now time.Time, gap time.Duration) bool {
	fresh := r.last.IsZero() || now.Sub(r.last) > gap
	if fresh {
		r.first, r.n = now, 0
	}
	r.last = now
	r.n++
	return fresh
}

// lasting returns how long the run has lasted (from its first event to its
// latest) if it is still on at now (its latest event at most gap before
// now); false if there is none.
func (r *eventRun) lasting(now time.Time, gap time.Duration) (time.Duration, bool) {
	if r.last.IsZero() || now.Sub(r.last) > gap {
		return 0, false
	}
	return r.last.Sub(r.first), true
}

// incidentLevel records a trouble event of this process at now and
// returns the level to log it at: Warn for the first event of an
// incident, Info for the later ones (the incident's warning is logged
// already). Events more than max(lease, 5 s) apart are two incidents.
func (f *Fleet) incidentLevel(now time.Time) slog.Level {
	f.incMu.Lock()
	defer f.incMu.Unlock()
	if f.incident.add(now, f.oomGap()) {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// incidentGoesOn records that the current incident is still on at now
// (an outage's failed call, Redis answering again) without logging.
func (f *Fleet) incidentGoesOn(now time.Time) {
	f.incMu.Lock()
	f.incident.add(now, f.oomGap())
	f.incMu.Unlock()
}
