package fleetfrontier

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// The frontier's client state (frState) has no lock, no I/O and no clock:
// these tests drive it with the times they choose.

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func item(key, host string) journalItem {
	return journalItem{key: key, host: host, payload: "p:" + key}
}

// TestFrStateJournalCap: the journal takes requests up to its cap; the
// first one refused reports that it filled (one warning), later ones count
// only; a forget makes room, and the next fill reports again. Off, it
// keeps nothing.
func TestFrStateJournalCap(t *testing.T) {
	s := newFrState(true, 2, 1)
	steps := []struct {
		do         func() bool
		filled     bool
		journal    int
		notJournal int64
	}{
		{func() bool { return s.remember(item("a", "h")) }, false, 1, 0},
		{func() bool { return s.remember(item("b", "h")) }, false, 2, 0},
		{func() bool { return s.remember(item("c", "h")) }, true, 2, 1},
		{func() bool { return s.remember(item("d", "h")) }, false, 2, 2},
		{func() bool { s.forget("a"); return false }, false, 1, 2},
		{func() bool { return s.remember(item("e", "h")) }, false, 2, 2},
		{func() bool { return s.remember(item("f", "h")) }, true, 2, 3},
	}
	for i, st := range steps {
		if got := st.do(); got != st.filled {
			t.Errorf("step %d: filled %v, want %v", i, got, st.filled)
		}
		if len(s.journal) != st.journal || s.stats.NotJournaled != st.notJournal {
			t.Errorf("step %d: journal %d, not journaled %d; want %d, %d", i, len(s.journal), s.stats.NotJournaled, st.journal, st.notJournal)
		}
	}
	off := newFrState(false, 2, 1)
	if off.remember(item("a", "h")) || len(off.journal) != 0 {
		t.Error("a journal turned off kept a request")
	}
}

// TestFrStateWritten: Redis's answer to a write decides the counters and
// the journal: a request queued is journaled; one seen before is not,
// unless an earlier write of it failed on the client (it may be what
// queued it).
func TestFrStateWritten(t *testing.T) {
	for _, c := range []struct {
		name        string
		queued      bool
		unsure      bool
		journaled   bool
		added, seen int64
	}{
		{"queued", true, false, true, 1, 0},
		{"seen", false, false, false, 0, 1},
		{"seen after a failed write", false, true, true, 0, 1},
		{"queued after a failed write", true, true, true, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newFrState(true, 10, 4)
			it := item("k", "h")
			it.unsure = c.unsure
			s.written(it, c.queued)
			_, ok := s.journal["k"]
			if ok != c.journaled || s.stats.Added != c.added || s.stats.Seen != c.seen {
				t.Errorf("journaled %v, added %d, seen %d; want %v, %d, %d", ok, s.stats.Added, s.stats.Seen, c.journaled, c.added, c.seen)
			}
			if c.unsure && !c.queued && s.journal["k"].unsure {
				t.Error("journaled because seen after a failed write, still marked unsure")
			}
		})
	}
}

// TestFrStateLeases: a request handed out is this process's lease until
// done, which keeps its done report (its partition, id and key) and drops
// it from the journal; an unknown id does nothing; a lease out for the
// hold counts done (overdue), the others are renewed by partition; a
// postponed lease ends only if it is still the one handed out.
func TestFrStateLeases(t *testing.T) {
	s := newFrState(true, 10, 4)
	s.remember(item("k1", "h1"))
	s.handed("id1", &ownLease{p: 3, host: "h1", key: "k1", at: t0}, false)
	s.handed("id2", &ownLease{p: 5, host: "h2", key: "k2", at: t0.Add(time.Minute)}, true)
	s.handed("id3", &ownLease{p: 5, host: "h3", key: "k3", at: t0.Add(2 * time.Minute)}, false)
	if s.stats.Handed != 3 || s.stats.Early != 1 {
		t.Fatalf("handed %d, early %d; want 3, 1", s.stats.Handed, s.stats.Early)
	}
	if l := s.done("nope"); l != nil || len(s.pendingDone) != 0 {
		t.Fatal("done of an unknown id did something")
	}
	if l := s.done("id1"); l == nil || l.host != "h1" {
		t.Fatalf("done(id1) = %+v", l)
	}
	if !slices.Equal(s.pendingDone, []doneItem{{3, "id1", "k1"}}) || len(s.journal) != 0 || s.stats.Done != 1 {
		t.Fatalf("after done: reports %v, journal %d, done %d", s.pendingDone, len(s.journal), s.stats.Done)
	}
	expired, renew := s.overdue(t0.Add(2*time.Minute), time.Minute)
	if len(expired) != 1 || expired["id2"] == nil || len(renew) != 1 || !slices.Equal(renew[5], []any{"id3"}) || s.stats.Expired != 1 {
		t.Fatalf("overdue: expired %v, renew %v, counted %d; want id2, {5: id3}, 1", expired, renew, s.stats.Expired)
	}
	other := &ownLease{p: 5}
	if s.postponed("id3", other) || s.own["id3"] == nil {
		t.Fatal("postponed a lease that is not the one handed out")
	}
	if !s.postponed("id3", s.own["id3"]) || s.own["id3"] != nil || s.stats.Postponed != 1 {
		t.Fatal("postponed did not end the lease")
	}
}

// TestFrStatePending: what a write takes and fails to send goes back
// first, ahead of what was kept meanwhile.
func TestFrStatePending(t *testing.T) {
	s := newFrState(true, 10, 4)
	s.pendingAdd = []journalItem{item("a", "h"), item("b", "h")}
	s.pendingDone = []doneItem{{1, "x", "kx"}}
	adds, dones := s.takePending()
	if len(adds) != 2 || len(dones) != 1 || s.pendingAdd != nil || s.pendingDone != nil {
		t.Fatalf("takePending: %v %v, left %v %v", adds, dones, s.pendingAdd, s.pendingDone)
	}
	s.pendingAdd = []journalItem{item("c", "h")}
	s.restore(adds[1:], dones)
	if keys := func() (k []string) {
		for _, it := range s.pendingAdd {
			k = append(k, it.key)
		}
		return
	}(); !slices.Equal(keys, []string{"b", "c"}) || len(s.pendingDone) != 1 || s.kept() != 2 {
		t.Fatalf("after restore: adds %v, dones %v, kept %d", keys, s.pendingDone, s.kept())
	}
}

// TestFrStateLost: after a loss of partition p the process registers
// again its leases there and queues again the requests of its journal
// there that are not leased; recoveries each within a lease of the
// previous make one run, which is an error once longer than the limit.
func TestFrStateLost(t *testing.T) {
	part := func(host string) int { return int(host[1] - '0') } // "h1" -> 1
	s := newFrState(true, 10, 4)
	for _, it := range []journalItem{item("a", "h1"), item("b", "h1"), item("c", "h2")} {
		s.remember(it)
	}
	s.handed("id", &ownLease{p: 1, host: "h1", key: "b", payload: "p:b", at: t0}, false)
	leases, items := s.lost(t0, 10*time.Second, 1, part)
	if !slices.Equal(leases, []any{"id", "h1", "b", "p:b"}) || len(items) != 1 || items[0].key != "a" || !items[0].again {
		t.Fatalf("lost(1): leases %v, items %+v; want the lease of b and a queued again", leases, items)
	}
	if len(s.pendingAdd) != 1 || s.stats.Recovered != 1 {
		t.Fatalf("pending %d, recovered %d; want 1, 1", len(s.pendingAdd), s.stats.Recovered)
	}
	const lease, limit = 10 * time.Second, 30 * time.Second
	for _, c := range []struct {
		at   time.Duration // a loss at t0+at (0: none more)
		now  time.Duration
		fail bool
	}{
		{0, 5 * time.Second, false},
		{9 * time.Second, 9 * time.Second, false},
		{18 * time.Second, 18 * time.Second, false},
		{27 * time.Second, 27 * time.Second, false},
		{36 * time.Second, 36 * time.Second, true},  // 36 s of losses, each within a lease
		{0, 46 * time.Second, true},                 // a lease after the latest: still on
		{0, 46*time.Second + 1, false},              // more than a lease without one: over
		{57 * time.Second, 57 * time.Second, false}, // a new run
	} {
		if c.at > 0 {
			s.lost(t0.Add(c.at), lease, 2, part)
		}
		err := s.lossError(t0.Add(c.now), lease, limit)
		if (err != nil) != c.fail {
			t.Errorf("at %v: lossError %v, want an error: %v", c.now, err, c.fail)
		}
		if err != nil && !strings.Contains(err.Error(), "5 times in 36s") {
			t.Errorf("at %v: %v; want the count and the length of the run", c.now, err)
		}
	}
}

// TestFrStatePrune: the journal's keys go out by partition, at most max;
// those the fleet reports done leave the journal and are counted.
func TestFrStatePrune(t *testing.T) {
	part := func(host string) int { return int(host[1] - '0') }
	s := newFrState(true, 10, 4)
	for _, it := range []journalItem{item("a", "h1"), item("b", "h1"), item("c", "h2")} {
		s.remember(it)
	}
	by := s.prunable(10, part)
	if len(by[1]) != 2 || len(by[2]) != 1 {
		t.Fatalf("prunable: %v", by)
	}
	if two := s.prunable(2, part); len(two[1])+len(two[2]) != 2 {
		t.Fatalf("prunable(2) gave %v", two)
	}
	s.pruned([]string{"a", "b", "zz"}, []bool{true, false, true})
	if _, ok := s.journal["a"]; ok || len(s.journal) != 2 || s.stats.Pruned != 1 {
		t.Fatalf("after pruned: journal %v, pruned %d", s.journal, s.stats.Pruned)
	}
	own := s.reset()
	if len(own) != 0 || len(s.journal) != 0 || s.kept() != 0 {
		t.Fatal("reset kept something")
	}
}

// TestFrStateGenerations: the first generation a reply gives is not a
// loss; another one is. A count that reads a partition never seen keeps
// nothing; one that finds the generation gone, or another, is a loss.
func TestFrStateGenerations(t *testing.T) {
	s := newFrState(true, 10, 2)
	steps := []struct {
		count bool
		gen   string
		lost  bool
	}{
		{true, "", false},    // never seen, nothing there
		{true, "5", false},   // never seen: kept unknown
		{false, "5", false},  // first reply
		{false, "5", false},  // the same
		{true, "5", false},   // counted the same
		{true, "", true},     // gone
		{false, "9", false},  // the recreated one, seen by a reply once the loss was counted
		{false, "12", true},  // a reply with another
		{true, "13", true},   // a count with another
		{false, "13", false}, // and the reply after it
	}
	for i, c := range steps {
		var lost bool
		if c.count {
			lost = s.countedGen(0, c.gen)
		} else {
			lost = s.sawGen(0, c.gen)
		}
		if lost != c.lost {
			t.Fatalf("step %d (%+v): lost %v", i, c, lost)
		}
	}
	if s.parts[1].gen != "" {
		t.Fatal("another partition's generation changed")
	}
	s.reset()
	if s.sawGen(0, "14") {
		t.Fatal("after reset (Drop) a new generation is a loss")
	}
}

// TestFrStateLooks: when a partition is worth a pop, by what its pops and
// wake-ups said.
func TestFrStateLooks(t *testing.T) {
	const maxWait = time.Second
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	for _, c := range []struct {
		name     string
		seen     lookSeen
		wokenMid bool
		look     time.Time
		empty    bool
		leased   int64
	}{
		{"nothing queued or out: a request queued wakes it", lookSeen{soonest: -1, sent: ms(0), got: ms(10)}, false, ms(1000), true, 0},
		{"nothing queued, some out: a dead lease is put back by a pop", lookSeen{soonest: -1, leased: 2, sent: ms(0), got: ms(10)}, false, ms(0).Add(min(maxWait, frontierReapPoll)), true, 2},
		{"a host due in 200 ms, counted from the reply", lookSeen{soonest: 5_200_000, now: 5_000_000, sent: ms(0), got: ms(10)}, false, ms(210), false, 0},
		{"a host due past MaxWait: MaxWait from the call", lookSeen{soonest: 9_000_000, now: 5_000_000, sent: ms(0), got: ms(10)}, false, ms(1000), false, 0},
		{"a host overdue: at the reply", lookSeen{soonest: 4_000_000, now: 5_000_000, sent: ms(0), got: ms(10)}, false, ms(10), false, 0},
		{"the look a GetRequest owes at its deadline", lookSeen{soonest: -1, sent: ms(300), got: ms(310), by: ms(1000)}, false, ms(1000), true, 0},
		{"a near host is not put off to the deadline", lookSeen{soonest: 5_100_000, now: 5_000_000, sent: ms(300), got: ms(310), by: ms(350)}, false, ms(410), false, 0},
		{"woken while the pop ran: look now", lookSeen{soonest: -1, sent: ms(0), got: ms(10)}, true, time.Time{}, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newFrState(true, 10, 1)
			_, _, c.seen.wakes = s.popping(0, c.seen.sent, 8)
			if c.wokenMid {
				s.woken(0, 0, ms(5), maxWait)
			}
			s.looked(0, c.seen, maxWait)
			pt := s.parts[0]
			if !pt.look.Equal(c.look) || pt.empty != c.empty || pt.leased != c.leased {
				t.Fatalf("look %v empty %v leased %d; want %v %v %d", pt.look, pt.empty, pt.leased, c.look, c.empty, c.leased)
			}
		})
	}
	t.Run("wake-ups", func(t *testing.T) {
		s := newFrState(true, 10, 3)
		s.looked(1, lookSeen{soonest: -1, sent: ms(0)}, maxWait) // empty, look at 1 s
		if s.due(1, ms(500)) || !s.due(0, ms(0)) || !s.anyDue(ms(500)) {
			t.Fatal("due: an empty partition before its look, or a new one not")
		}
		s.woken(1, 300_000, ms(100), maxWait) // a host ready in 300 ms
		if pt := s.parts[1]; !pt.look.Equal(ms(400)) || pt.empty {
			t.Fatalf("after a wake-up for 300 ms: %+v", pt)
		}
		s.woken(1, 900_000, ms(100), maxWait) // a later one does not put it off
		if !s.parts[1].look.Equal(ms(400)) {
			t.Fatalf("a later wake-up moved the look to %v", s.parts[1].look)
		}
		s.parts[1].leased = 3
		s.woken(1, -1, ms(200), maxWait) // emptied
		if pt := s.parts[1]; !pt.look.Equal(ms(1200)) || !pt.empty || pt.leased != 0 {
			t.Fatalf("after an emptied wake-up: %+v", pt)
		}
		// A pop that handed out: its look stands unless woken meanwhile.
		_, _, w := s.popping(2, ms(0), 8)
		s.handedFrom(2, ms(700), w)
		if !s.parts[2].look.Equal(ms(700)) {
			t.Fatalf("handed: look %v", s.parts[2].look)
		}
		_, _, w = s.popping(2, ms(0), 8)
		s.woken(2, 0, ms(1), maxWait)
		s.handedFrom(2, ms(700), w)
		if !s.parts[2].look.IsZero() {
			t.Fatalf("handed, woken meanwhile: look %v, want now", s.parts[2].look)
		}
	})
	t.Run("outlook", func(t *testing.T) {
		s := newFrState(true, 10, 3)
		s.looked(0, lookSeen{soonest: -1, leased: 1, sent: ms(0)}, maxWait)                       // empty, 1 out
		s.looked(1, lookSeen{soonest: 5_600_000, now: 5_000_000, leased: 2, got: ms(0)}, maxWait) // due at 600 ms
		s.looked(2, lookSeen{soonest: 5_300_000, now: 5_000_000, leased: 0, got: ms(0)}, maxWait) // due at 300 ms
		o := s.outlook()
		if o.allEmpty || o.leased != 3 || o.force != 2 || !o.next.Equal(ms(300)) {
			t.Fatalf("outlook %+v: want requests queued, 3 out, partition 2 first", o)
		}
		e := newFrState(true, 10, 2)
		e.looked(0, lookSeen{soonest: -1, sent: ms(0)}, maxWait)
		e.looked(1, lookSeen{soonest: -1, sent: ms(0)}, maxWait)
		if o := e.outlook(); !o.allEmpty || o.force != -1 || o.leased != 0 {
			t.Fatalf("all empty: %+v", o)
		}
	})
}

// TestFrStateAbandoned: the leases a partition's next pop ends: those of
// pops that failed to reach Redis (capped) and those postponed, with the
// wait before their host; a pop that ran ends only those it carried.
func TestFrStateAbandoned(t *testing.T) {
	s := newFrState(true, 10, 2)
	s.popped(0, "a", nil, false, true)  // timed out: may still run
	s.popped(0, "x", nil, false, false) // refused by Redis: ran nowhere
	s.postpone(0, "b", t0.Add(3*time.Second))
	if !s.due(0, t0) {
		t.Fatal("a postponed lease does not make its partition due")
	}
	ids, waits, _ := s.popping(0, t0.Add(time.Second), 8)
	got := map[string]time.Duration{}
	for i, id := range ids {
		got[id] = waits[i]
	}
	if len(got) != 2 || got["a"] != 0 || got["b"] != 2*time.Second {
		t.Fatalf("popping: %v, want a (no wait) and b (2 s)", got)
	}
	s.postpone(0, "c", time.Time{}) // after the pop was sent
	s.popped(0, "p2", ids, true, false)
	if ids, _, _ := s.popping(0, t0, 8); len(ids) != 1 || ids[0] != "c" {
		t.Fatalf("after the pop ran: %v, want only c", ids)
	}
	if ids, _, _ := s.popping(0, t0, 0); len(ids) != 0 {
		t.Fatalf("capped at 0: %v", ids)
	}
	for i := range frontierAbandonMax {
		s.popped(1, fmt.Sprint(i), nil, false, true)
	}
	if !s.abandonFull(1) || s.abandonFull(0) {
		t.Fatal("abandonFull")
	}
	s.popped(1, "over", nil, false, true)
	if _, ok := s.parts[1].abandoned["over"]; ok {
		t.Fatal("a failed pop beyond the cap was kept")
	}
}
