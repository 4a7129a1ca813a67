package redisfleet

import (
	"log/slog"
	"time"
)

// incidentLevel records a trouble event of this process at now and
// returns the level to log it at: Warn for the first event of an
// incident, Info for the later ones (the incident's warning is logged
// already). Events more than max(lease, 5 s) apart are two incidents.
func (f *Fleet) incidentLevel(now time.Time) slog.Level {
	f.incMu.Lock()
	defer f.incMu.Unlock()
	if f.incident.Add(now, f.oomGap()) {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// incidentGoesOn records that the current incident is still on at now
// (an outage's failed call, Redis answering again) without logging.
func (f *Fleet) incidentGoesOn(now time.Time) {
	f.incMu.Lock()
	f.incident.Add(now, f.oomGap())
	f.incMu.Unlock()
}
