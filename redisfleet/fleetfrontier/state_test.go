package fleetfrontier

import (
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
	s := newFrState(true, 2)
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
	off := newFrState(false, 2)
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
			s := newFrState(true, 10)
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
	s := newFrState(true, 10)
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
	s := newFrState(true, 10)
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
	s := newFrState(true, 10)
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
	s := newFrState(true, 10)
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
