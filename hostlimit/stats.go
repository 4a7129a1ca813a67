package hostlimit

import (
	"time"
)

// Stats is a snapshot of one host's limiter state and counters.
type Stats struct {
	Delay       time.Duration // current delay (raised by DelayFactor when set)
	Grants      int64         // permits granted
	Waits       int64         // Wait and Acquire calls that had to block (cancelled ones included)
	WaitTime    time.Duration // total time those calls blocked (early Wait + gate)
	Pauses      int64         // pauses started (429/5xx responses, Pause calls)
	LastPause   time.Duration // the latest pause computed, 0 if none
	PausedUntil time.Time     // end of the pending pause; zero if none
	InFlight    int           // permits granted and not released
	Queued      int           // callers blocked in Wait or Acquire
}

func (l *Limiter) statsOf(h *limHost, now int64) Stats {
	st := Stats{
		Delay:     time.Duration(l.delayOf(h)),
		Grants:    h.grants,
		Waits:     h.waits,
		WaitTime:  time.Duration(h.waitNanos),
		Pauses:    h.pauses,
		LastPause: time.Duration(h.lastPause),
		InFlight:  int(h.inFlight),
		Queued:    h.gate.len() + h.early.len(),
	}
	if h.pauseUntil > now {
		st.PausedUntil = l.epoch.Add(time.Duration(h.pauseUntil))
	}
	return st
}

// Stats returns host's statistics, and false if the limiter holds no state
// for it (never used, or evicted).
func (l *Limiter) Stats(host string) (Stats, bool) {
	s := l.shard(host)
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hosts[host]
	if h == nil {
		return Stats{}, false
	}
	return l.statsOf(h, l.now()), true
}

// snapshot returns the statistics of every host the limiter holds state for.
// Each shard is read under its own lock, so the snapshot is consistent per
// host, not across hosts.
func (l *Limiter) snapshot() map[string]Stats {
	out := make(map[string]Stats)
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		now := l.now()
		for k, h := range s.hosts {
			out[k] = l.statsOf(h, now)
		}
		s.mu.Unlock()
	}
	return out
}

// hosts returns the number of hosts the limiter holds state for.
func (l *Limiter) hosts() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.hosts)
		s.mu.Unlock()
	}
	return n
}
