package redisfleet

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/robots/redisfleet/internal/link"
)

// readyFresh is how long a frontier pop's finding that a host is ready
// stands in for the limiter's early wait of the request it handed out (a
// request may wait that long in Colly's loop for a free thread). The early
// wait only keeps a request from waiting inside Colly's slots; Acquire
// still decides.
const readyFresh = time.Second

// permitDesk is the limiter's side of one process's round-trip sharing
// with its frontier (grant.go describes the scheme): the permits the
// frontier's pops granted and no AcquireMax took yet (pregrants), the
// releases waiting for the frontier's next pipeline, the requests of each
// host the frontier has out, and the hosts a pop found ready. It sends
// nothing itself but through send.
type permitDesk struct {
	limiters atomic.Int64  // Limiters made: the frontier's pops grant permits
	fresh    time.Duration // readyFresh (tests set more)
	lease    time.Duration
	send     func([]hostOp) bool // sends host operations now (Fleet.sendHostOps)
	closed   func() bool         // the Fleet is closed: nothing waits for a pipeline

	mu       sync.Mutex
	grants   map[string]*pregrant // host -> the permit a pop granted, not yet taken
	out      map[string]int       // host -> requests this process's frontier has out
	deferred []hostOp             // releases waiting for the frontier's next pipeline
	relTimer *time.Timer          // sends them after releaseDefer
	ready    map[string]time.Time // host -> when this process's frontier found it ready
}

// markReady records that this process's frontier just handed out a
// request of host because the host was ready by its limiter state (read
// in the pop's script).
func (d *permitDesk) markReady(host string) {
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ready == nil {
		d.ready = map[string]time.Time{}
	}
	if len(d.ready) >= 1024 {
		for h, t := range d.ready {
			if now.Sub(t) >= d.fresh {
				delete(d.ready, h)
			}
		}
	}
	d.ready[host] = now
}

// takeReady reports whether the frontier found host ready less than
// readyFresh ago, and forgets it (it answers one early wait).
func (d *permitDesk) takeReady(host string) bool {
	d.mu.Lock()
	t, ok := d.ready[host]
	delete(d.ready, host)
	d.mu.Unlock()
	return ok && time.Since(t) < d.fresh
}

// grantFresh is how long a pregrant waits for an AcquireMax: the early
// wait's window (readyFresh), at most a third of the lease (the permit's
// renewal starts when it is taken).
func (d *permitDesk) grantFresh() time.Duration { return min(d.fresh, d.lease/3) }

// addGrant keeps g, the permit a pop granted for g.host under the lease
// id g.id. A pregrant of the host still kept (its AcquireMax never came)
// is given back.
func (d *permitDesk) addGrant(g *pregrant) {
	host, id := g.host, g.id
	g.at = time.Now()
	d.mu.Lock()
	old := d.grants[host]
	if d.grants == nil {
		d.grants = map[string]*pregrant{}
	}
	d.grants[host] = g
	g.timer = time.AfterFunc(d.grantFresh(), func() {
		if g := d.takeGrant(host, id); g != nil {
			d.giveBack(g)
		}
	})
	d.mu.Unlock()
	if old != nil {
		old.timer.Stop()
		d.giveBack(old)
	}
}

// takeGrant removes and returns the pregrant kept for host (only if it
// was granted under id, when id is not empty), or nil.
func (d *permitDesk) takeGrant(host, id string) *pregrant {
	d.mu.Lock()
	defer d.mu.Unlock()
	g := d.grants[host]
	if g == nil || id != "" && g.id != id {
		return nil
	}
	delete(d.grants, host)
	g.timer.Stop()
	return g
}

// giveBack gives an unused pregrant back now (the limiter's leave), in
// the background if Redis cannot be reached.
func (d *permitDesk) giveBack(g *pregrant) {
	d.send([]hostOp{g.leaveOp()})
}

// leasing counts the requests of host this process's frontier has out
// (n = 1 when one is handed out, -1 when it is done): while any is out,
// releases of host wait for the done report's pipeline.
func (d *permitDesk) leasing(host string, n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.out == nil {
		d.out = map[string]int{}
	}
	if d.out[host] += n; d.out[host] <= 0 {
		delete(d.out, host)
	}
}

// deferRelease keeps op (a release, a give-back) for the frontier's next
// pipeline if always is set or this process's frontier has a request of
// its host out, and reports whether it did. It is sent alone after
// releaseDefer at the latest.
func (d *permitDesk) deferRelease(op hostOp, always bool) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !always && d.out[op.host] == 0 || d.closed() {
		return false
	}
	d.deferred = append(d.deferred, op)
	if d.relTimer == nil {
		d.relTimer = time.AfterFunc(releaseDefer, func() { d.send(d.takeDeferred("")) })
	}
	return true
}

// takeDeferred removes and returns the deferred releases of host (of
// every host if host is empty).
func (d *permitDesk) takeDeferred(host string) []hostOp {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.deferred) == 0 {
		return nil
	}
	var out, keep []hostOp
	for _, op := range d.deferred {
		if host == "" || op.host == host {
			out = append(out, op)
		} else {
			keep = append(keep, op)
		}
	}
	d.deferred = keep
	if len(keep) == 0 && d.relTimer != nil {
		d.relTimer.Stop()
		d.relTimer = nil
	}
	return out
}

// flush sends the deferred releases and gives back the pregrants nobody
// took (the Fleet's Close).
func (d *permitDesk) flush() {
	d.mu.Lock()
	var ops []hostOp
	for h, g := range d.grants {
		g.timer.Stop()
		ops = append(ops, g.leaveOp())
		delete(d.grants, h)
	}
	d.mu.Unlock()
	d.send(append(ops, d.takeDeferred("")...))
}

// The desk's side of the frontier (link.Permits).

// Granting implements link.Permits: the Fleet has a Limiter.
func (d *permitDesk) Granting() bool { return d.limiters.Load() > 0 }

// Handed implements link.Permits.
func (d *permitDesk) Handed(host string, ready bool, g *link.Grant) {
	d.leasing(host, 1)
	if ready {
		d.markReady(host)
	}
	if g != nil {
		d.addGrant(newPregrant(*g))
	}
}

// GiveBack implements link.Permits.
func (d *permitDesk) GiveBack(g link.Grant) { d.giveBack(newPregrant(g)) }

// Done implements link.Permits: a permit granted with the request and never
// taken (the request stopped before the send) is given back in the
// frontier's next pipeline.
func (d *permitDesk) Done(host, id string) {
	d.leasing(host, -1)
	if g := d.takeGrant(host, id); g != nil {
		d.deferRelease(g.leaveOp(), true)
	}
}

// Postponed implements link.Permits.
func (d *permitDesk) Postponed(host, id string) {
	d.leasing(host, -1)
	d.takeGrant(host, id)
}

// Dropped implements link.Permits.
func (d *permitDesk) Dropped(host string) { d.leasing(host, -1) }

// FlushHost implements link.Permits.
func (d *permitDesk) FlushHost(host string) bool { return d.send(d.takeDeferred(host)) }

func newPregrant(g link.Grant) *pregrant {
	return &pregrant{host: g.Host, p: g.Part, id: g.ID, d: g.Delay, fail: g.Fail, mode: g.Mode}
}
