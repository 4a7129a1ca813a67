package hostlimit

// sweepAll drops the state of every idle host now, as the lazy sweep does,
// and returns how many were dropped. A host is idle when nothing is queued
// or in flight, no pause or spacing is pending, and it has not been used for
// IdleTTL: its state can go without changing any later decision other than
// its delay (see Config.Delay) and its backoff count.
func (l *Limiter) sweepAll() int {
	n := 0
	for i := range l.shards {
		n += l.sweep(&l.shards[i])
	}
	return n
}

func (l *Limiter) maybeSweep(s *limiterShard) {
	// The shard's latest time is recent enough to decide, and saves a
	// clock read on every request (about 45 ns on a VM).
	next := s.nextSweep.Load()
	now := s.seen.Load()
	if now < next || !s.nextSweep.CompareAndSwap(next, now+l.idleTTL) {
		return
	}
	l.sweep(s)
}

type limEvicted struct {
	host  string
	stats Stats
}

func (l *Limiter) sweep(s *limiterShard) int {
	var out []limEvicted
	n := 0
	s.mu.Lock()
	now := l.now()
	for k, h := range s.hosts {
		if l.idle(h, now) {
			delete(s.hosts, k)
			n++
			if l.onEvict != nil {
				out = append(out, limEvicted{k, l.statsOf(h, now)})
			}
		}
	}
	// Go maps never shrink: rebuild one that has emptied out.
	if s.peak >= 64 && len(s.hosts) <= s.peak/4 {
		m := make(map[string]*limHost, len(s.hosts))
		for k, h := range s.hosts {
			m[k] = h
		}
		s.hosts, s.peak = m, len(m)
	}
	s.mu.Unlock()
	for _, e := range out {
		l.onEvict(e.host, e.stats)
	}
	return n
}

func (l *Limiter) idle(h *limHost, now int64) bool {
	return h.inFlight == 0 && h.gate.head == nil && h.early.head == nil &&
		now-h.lastUsed >= l.idleTTL &&
		now >= h.pauseUntil && now >= h.nextOK && now >= h.claimUntil &&
		now >= h.lastEnd+l.delayOf(h) && now >= h.lastSent+l.delayOf(h)
}
