package fleetfrontier

import (
	"fmt"
	"time"

	"github.com/politecrawl/robots/redisfleet/internal/eventrun"
)

// frState is a Frontier's client state in one process: the requests it
// has out (its leases), its journal of the requests it queued, what it
// keeps to write (requests to queue, done reports), its counters, and the
// run of data losses. It is plain: no lock, no I/O, no clock. The Frontier
// holds it under its mutex, passes the time, and makes the Redis calls.
type frState struct {
	journalOn  bool
	journalCap int

	own         map[string]*ownLease   // lease id -> a request handed out to this process, not done
	journal     map[string]journalItem // request key -> a request this process queued, not done fleet-wide
	pendingAdd  []journalItem          // requests to queue, in order
	pendingDone []doneItem             // done reports to send, in order
	stats       Stats
	full        bool         // the journal is full (warned once until it has room)
	losses      eventrun.Run // recoveries, each within a lease of the previous (lossError)
	parts       []partState  // by partition (state_parts.go)
}

// ownLease is a request handed out to this process: its partition, host,
// key, payload and URL, and when it was handed out.
type ownLease struct {
	p                       int
	host, key, payload, url string
	at                      time.Time
}

// doneItem is a done report kept until Redis answers: the partition, the
// lease id and the request key.
type doneItem struct {
	p       int
	id, key string
}

// journalItem is a request this process queued: its key, host and
// payload; again: queued again from the journal after a loss; unsure: an
// earlier write of it failed on the client (Redis unreachable, or a reply
// that never came) and may have queued it, so that it is journaled even
// if Redis then says it was seen.
type journalItem struct {
	key, host, payload string
	again, unsure      bool
}

func newFrState(journal bool, journalCap, partitions int) frState {
	s := frState{journalOn: journal, journalCap: journalCap, own: map[string]*ownLease{}, journal: map[string]journalItem{},
		parts: make([]partState, partitions)}
	for p := range s.parts {
		s.parts[p].abandoned = map[string]time.Time{}
	}
	return s
}

// snapshot returns the counters with the sizes of now.
func (s *frState) snapshot() Stats {
	st := s.stats
	st.Pending, st.Leased, st.Journal = len(s.pendingAdd), len(s.own), len(s.journal)
	return st
}

// kept returns how many requests this process knows not crawled: those it
// keeps to write and those in its journal.
func (s *frState) kept() int { return len(s.pendingAdd) + len(s.journal) }

// remember puts it in the journal, if the journal is on and has room; it
// reports whether the journal just filled (to be warned of once).
func (s *frState) remember(it journalItem) (filled bool) {
	if !s.journalOn {
		return false
	}
	if len(s.journal) >= s.journalCap {
		s.stats.NotJournaled++
		filled, s.full = !s.full, true
		return filled
	}
	s.journal[it.key] = it
	return false
}

// forget drops key from the journal.
func (s *frState) forget(key string) {
	delete(s.journal, key)
	if s.full && len(s.journal) < s.journalCap {
		s.full = false
	}
}

// written records Redis's answer to the write of it: queued (new to the
// fleet) or seen before. A request seen whose earlier write failed on the
// client is journaled anyway: the failed write may be what queued it. It
// reports whether the journal just filled.
func (s *frState) written(it journalItem, queued bool) (filled bool) {
	if queued {
		s.stats.Added++
		return s.remember(it)
	}
	s.stats.Seen++
	if it.unsure {
		it.unsure = false
		return s.remember(it)
	}
	return false
}

// handed records the lease id of a request handed out to this process.
func (s *frState) handed(id string, l *ownLease, early bool) {
	s.own[id] = l
	s.stats.Handed++
	if early {
		s.stats.Early++
	}
}

// done ends lease id, keeping its done report to send, and returns the
// request; nil if id is not a lease of this process.
func (s *frState) done(id string) *ownLease {
	l := s.own[id]
	if l == nil {
		return nil
	}
	delete(s.own, id)
	s.forget(l.key)
	s.stats.Done++
	s.pendingDone = append(s.pendingDone, doneItem{l.p, id, l.key})
	return l
}

// postponed ends lease id, handed back unsent, if it is still l.
func (s *frState) postponed(id string, l *ownLease) bool {
	if s.own[id] != l {
		return false
	}
	delete(s.own, id)
	s.stats.Postponed++
	return true
}

// overdue returns, at now, the leases out for hold or longer (to count
// done: Colly dropped them) and the ids of the others by partition (to
// renew).
func (s *frState) overdue(now time.Time, hold time.Duration) (expired map[string]*ownLease, renew map[int][]any) {
	renew = map[int][]any{}
	for id, l := range s.own {
		if now.Sub(l.at) >= hold {
			if expired == nil {
				expired = map[string]*ownLease{}
			}
			expired[id] = l
			continue
		}
		renew[l.p] = append(renew[l.p], id)
	}
	s.stats.Expired += int64(len(expired))
	return expired, renew
}

// takePending removes and returns what is kept to write.
func (s *frState) takePending() ([]journalItem, []doneItem) {
	adds, dones := s.pendingAdd, s.pendingDone
	s.pendingAdd, s.pendingDone = nil, nil
	return adds, dones
}

// restore puts back, first, what a write failed to send.
func (s *frState) restore(adds []journalItem, dones []doneItem) {
	if len(adds) > 0 {
		s.pendingAdd = append(adds, s.pendingAdd...)
	}
	if len(dones) > 0 {
		s.pendingDone = append(dones, s.pendingDone...)
	}
}

// lost records, at now, that Redis lost partition p's data and returns
// what this process knows of it: its leases there (id, host, key and
// payload each, to register again) and the requests of its journal there
// that are not among them, marked to be queued again; it keeps them to
// write. part gives a host's partition.
func (s *frState) lost(now time.Time, lease time.Duration, p int, part func(string) int) (leases []any, items []journalItem) {
	s.losses.Add(now, lease)
	out := map[string]bool{}
	for id, l := range s.own {
		if l.p == p {
			leases = append(leases, id, l.host, l.key, l.payload)
			out[l.key] = true
		}
	}
	for k, it := range s.journal {
		if !out[k] && part(it.host) == p {
			it.again = true
			items = append(items, it)
		}
	}
	s.pendingAdd = append(s.pendingAdd, items...)
	s.stats.Recovered += int64(len(items))
	return leases, items
}

// lossError returns an error when, at now, Redis has kept losing the
// frontier's data (recoveries, each within lease of the previous) for
// longer than limit.
func (s *frState) lossError(now time.Time, lease, limit time.Duration) error {
	d, on := s.losses.Lasting(now, lease)
	if !on || d < limit {
		return nil
	}
	return fmt.Errorf("redisfleet: frontier: Redis lost the frontier's keys %d times in %s (evicted? its maxmemory cannot hold the queue); %d requests known to this process not crawled",
		s.losses.N, d.Round(time.Second), s.kept())
}

// prunable returns up to max keys of the journal, by the partition of
// their host (part), to ask the fleet which are done.
func (s *frState) prunable(max int, part func(string) int) map[int][]string {
	by := map[int][]string{}
	n := 0
	for k, it := range s.journal {
		if n == max {
			break
		}
		by[part(it.host)] = append(by[part(it.host)], k)
		n++
	}
	return by
}

// pruned drops from the journal the keys the fleet reported done.
func (s *frState) pruned(keys []string, done []bool) {
	for i, k := range keys {
		if i < len(done) && done[i] {
			if _, ok := s.journal[k]; ok {
				s.forget(k)
				s.stats.Pruned++
			}
		}
	}
}

// reset empties the journal, what is kept to write and the leases, and
// forgets the partitions' generations (Drop: the keys are gone), and
// returns the leases that were out.
func (s *frState) reset() map[string]*ownLease {
	own := s.own
	s.journal, s.own = map[string]journalItem{}, map[string]*ownLease{}
	s.pendingAdd, s.pendingDone, s.full = nil, nil, false
	for p := range s.parts {
		s.parts[p].gen = ""
	}
	return own
}
