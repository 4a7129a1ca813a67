package fleetfrontier

import "time"

// partState is what a process knows of one partition of the frontier:
// the data generation it saw, the leases the partition's next pop must
// end, and when a pop there is worth its round trip. It is part of
// frState: plain, the time passed in.
type partState struct {
	gen string // the partition's data generation (a change: Redis lost it)
	// abandoned are the lease ids of pops that failed on the client, and of
	// requests postponed (Postpone) with the time their host may be asked
	// (zero for the others): the partition's next pop ends them
	// (lua.FrontierPop).
	abandoned map[string]time.Time
	look      time.Time // when it is worth a pop (zero: now)
	wakes     uint64    // wake-ups heard: a pop's reply does not undo a later one
	empty     bool      // nothing queued at the latest look
	leased    int64     // requests out fleet-wide at the latest look
}

// sawGen records the generation gen a script's reply gave for partition
// p and reports whether it differs from the one seen before (Redis lost
// the partition's data).
func (s *frState) sawGen(p int, gen string) (lost bool) {
	pt := &s.parts[p]
	lost = pt.gen != "" && gen != pt.gen
	pt.gen = gen
	return lost
}

// countedGen records the generation a count read for partition p ("":
// none) and reports whether the data was lost: gone, or recreated, since
// a generation was seen. A partition never seen keeps none.
func (s *frState) countedGen(p int, gen string) (lost bool) {
	pt := &s.parts[p]
	if pt.gen == "" || gen == pt.gen {
		return false
	}
	pt.gen = gen
	return true
}

// woken records a wake-up of partition p heard at now: hint is the µs
// until the partition is worth a look (0: now), or below zero when the
// partition emptied (nothing queued or out), as a pop would say; the
// next request queued there wakes a process, so it is looked at again
// after maxWait only.
func (s *frState) woken(p int, hint int64, now time.Time, maxWait time.Duration) {
	pt := &s.parts[p]
	pt.wakes++
	if hint < 0 {
		pt.look, pt.empty, pt.leased = now.Add(maxWait), true, 0
		return
	}
	if at := now.Add(time.Duration(hint) * time.Microsecond); pt.look.After(at) {
		pt.look = at
	}
	pt.empty = false
}

// due reports whether partition p is worth a pop at now.
func (s *frState) due(p int, now time.Time) bool { return !s.parts[p].look.After(now) }

// anyDue reports whether some partition is worth a pop at now.
func (s *frState) anyDue(now time.Time) bool {
	for p := range s.parts {
		if s.due(p, now) {
			return true
		}
	}
	return false
}

// outlook is what the latest looks said of every partition together.
type outlook struct {
	allEmpty bool      // nothing queued anywhere
	leased   int64     // requests out fleet-wide
	force    int       // the partition whose soonest host is due first (-1: none queued)
	next     time.Time // the earliest look due
}

// outlook sums up the partitions' latest looks.
func (s *frState) outlook() outlook {
	o := outlook{allEmpty: true, force: -1}
	var soonest time.Time
	for p := range s.parts {
		pt := &s.parts[p]
		o.leased += pt.leased
		if p == 0 || pt.look.Before(o.next) {
			o.next = pt.look
		}
		if !pt.empty {
			o.allEmpty = false
			if o.force < 0 || pt.look.Before(soonest) {
				o.force, soonest = p, pt.look
			}
		}
	}
	return o
}

// popping returns, for a pop of partition p sent at now, the leases it
// must end (at most max) with the wait before each one's host may be
// asked, and the wake-ups heard so far.
func (s *frState) popping(p int, now time.Time, max int) (ids []string, waits []time.Duration, wakes uint64) {
	pt := &s.parts[p]
	for a, until := range pt.abandoned {
		if len(ids) == max {
			break
		}
		ids = append(ids, a)
		waits = append(waits, max0(until.Sub(now)))
	}
	return ids, waits, pt.wakes
}

// popped records the end of a pop of partition p under lease id that
// carried ids: ran, the script handled them; else, if Redis could not be
// reached (the pop may still run when it resumes), the next pop ends the
// lease id, while fewer than frontierAbandonMax are kept.
func (s *frState) popped(p int, id string, ids []string, ran, unreachable bool) {
	pt := &s.parts[p]
	switch {
	case ran:
		for _, a := range ids {
			delete(pt.abandoned, a)
		}
	case unreachable && len(pt.abandoned) < frontierAbandonMax:
		pt.abandoned[id] = time.Time{}
	}
}

// handedFrom records that a pop of partition p, sent after wakes
// wake-ups, handed a request out and registered this process to look
// again at look; a wake-up heard meanwhile makes it look at once.
func (s *frState) handedFrom(p int, look time.Time, wakes uint64) {
	pt := &s.parts[p]
	pt.empty = false
	if pt.wakes != wakes {
		look = time.Time{}
	}
	pt.look = look
}

// lookSeen is what a pop that handed nothing out said, and when.
type lookSeen struct {
	soonest, now, leased int64     // the reply's: server µs (soonest < 0: nothing queued), requests out
	sent, got, by        time.Time // the call, the reply, the deadline of the GetRequest (zero: none)
	wakes                uint64    // wake-ups heard when the pop was sent
}

// looked records what a pop of partition p that handed nothing out said:
// the partition is looked at again when its soonest host is due, after
// maxWait when nothing is queued there, and sooner while requests are out
// there (a lease whose process died is put back only by a pop).
func (s *frState) looked(p int, v lookSeen, maxWait time.Duration) {
	pt := &s.parts[p]
	pt.leased, pt.empty = v.leased, v.soonest < 0
	switch {
	case v.soonest < 0 && v.leased == 0:
		pt.look = v.sent.Add(maxWait) // a request queued there wakes this process
	case v.soonest < 0:
		pt.look = v.sent.Add(min(maxWait, frontierReapPoll))
	default:
		pt.look = lookAt(v.soonest-v.now, v.sent, v.got, maxWait)
	}
	if !v.by.IsZero() && pt.look.After(v.by) && (v.soonest < 0 || v.soonest-v.now >= maxWait.Microseconds()) {
		// A look maxWait away is the one the GetRequest that made this pop
		// owes at its deadline (by): counted from this pop's call, later
		// than the GetRequest's start, it would come just after the
		// deadline, and the GetRequest would return ErrNotReady without
		// looking again.
		pt.look = v.by
	}
	if pt.wakes != v.wakes {
		// Woken while the pop ran: what it saw may be older than the
		// event that woke this process.
		pt.look, pt.empty = time.Time{}, false
	}
}

// lookAt returns when a time a pop's script names, us µs after the
// script's now, comes: counted from the reply (got), not from the call
// (sent), since the script ran between the two and a look before the host
// is due on Redis's clock finds nothing; but at most maxWait from the
// call, as the GetRequest it bounds.
func lookAt(us int64, sent, got time.Time, maxWait time.Duration) time.Time {
	if d := max0(time.Duration(us) * time.Microsecond); d < maxWait {
		return got.Add(d)
	}
	return sent.Add(maxWait)
}

// postpone records that lease id of partition p was handed back, its host
// not to be asked before until: the partition's next pop ends it, now.
func (s *frState) postpone(p int, id string, until time.Time) {
	pt := &s.parts[p]
	pt.abandoned[id] = until
	pt.look, pt.empty = time.Time{}, false
}

// abandonFull reports whether partition p keeps as many leases to end as
// it may.
func (s *frState) abandonFull(p int) bool { return len(s.parts[p].abandoned) >= frontierAbandonMax }

func max0(d time.Duration) time.Duration { return max(d, 0) }
