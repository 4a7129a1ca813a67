package fleetfrontier

import "time"

// Postpone takes back the request this process holds under the lease id,
// not sent, to be handed out again (to any process of the fleet) once its
// host may be asked, not before until: its lease ends, the request goes
// back at the head of its host's queue and the host is not looked at
// before until (passed to Redis as a wait from the call, so that the
// processes' clocks need not agree). It implements frontier.Postponer: the robots
// plugin calls it (robots.AttachFrontier) when the host's robots.txt was
// fetched for the request, so that the queue thread takes a ready host's
// request instead of waiting out the host's delay. The request is neither
// done nor lost: its journal entry stays, and Redis losing its data queues
// it again as any request not done.
//
// The lease ends with this process's next pop of the host's partition,
// which the next GetRequest makes at once (the pop script's abandoned
// ids: the permit the pop granted with the request is given back without
// a release, its request was never sent). A release of the host's limiter
// kept for the request's done report (the robots.txt fetch's permit) is
// written first, since the pop would otherwise remove that permit
// unreleased. Postpone reports false, and the request stays
// leased, for an id this process does not hold, or when that release
// cannot be written now (it is then retried as any release). It makes at
// most one round trip, bounded by the call timeout. Safe for concurrent
// use.
func (q *Frontier) Postpone(id string, until time.Time) bool {
	q.mu.Lock()
	l := q.st.own[id]
	full := l != nil && q.st.abandonFull(q.fl.Part(l.host))
	q.mu.Unlock()
	if l == nil || full {
		return false
	}
	if !q.fl.Permits().FlushHost(l.host) {
		return false
	}
	q.mu.Lock()
	if !q.st.postponed(id, l) {
		q.mu.Unlock()
		return false // reported done meanwhile
	}
	q.st.postpone(q.fl.Part(l.host), id, until)
	close(q.woken) // a GetRequest waiting pops the partition now
	q.woken = make(chan struct{})
	q.mu.Unlock()
	// A permit granted with the request and not taken: the pop that ends
	// the lease gives it back.
	q.fl.Permits().Postponed(l.host, id)
	return true
}
