package redisfleet

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/politecrawl/robots/hostlimit"
)

// bothPermit is a Redis grant and the local gate's permit (FallBackLocal):
// every event goes to both.
type bothPermit struct {
	r     *permit
	local hostlimit.Permit
}

func (b *bothPermit) Sent() { b.r.Sent(); b.local.Sent() }

func (b *bothPermit) Observe(status int, header http.Header) time.Duration {
	return max(b.r.Observe(status, header), b.local.Observe(status, header))
}

func (b *bothPermit) Release() { b.r.Release(); b.local.Release() }

// permit is a Limiter's hostlimit.Permit.
type permit struct {
	l     *Limiter
	h     *lhost
	tok   string
	delay int64 // µs, the delay in force at the grant
	renew *time.Timer

	mu   sync.Mutex
	sent bool
	done bool
	fail int64 // the host's 429/503 run at the grant: a 2xx then resets it
}

// renewLease extends the permit's lease (registering it again if Redis lost
// it) every third of the lease until the permit is released.
func (p *permit) renewLease() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	// The error is not fatal: the next tick tries again, and a lease that
	// ends counts as a release.
	_, _ = p.l.run(context.Background(), p.h, opRenew, p.tok, -1)
	p.renew.Reset(p.l.f.cfg.lease / 3)
}

// Sent records the send: in start-to-start mode the host's next grant is
// no earlier than the delay after it (one round trip); in end-to-start
// mode it costs nothing.
func (p *permit) Sent() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sent || p.done {
		return
	}
	p.sent = true
	if p.l.mode == 1 {
		p.l.callOrRetry(p.h, opSent, p.tok, p.delay)
	}
}

// Observe applies a response to the host for the whole fleet: a status
// that asks to back off (hostlimit.BackoffStatus: 429, every 5xx but 501
// and 505) pauses it (Retry-After, capped by MaxRetryAfter, else the
// backoff) and returns the pause; a 2xx or 3xx ends a run of them. Other
// statuses, and a 2xx/3xx when no run was going on at the grant, cost no
// round trip.
func (p *permit) Observe(status int, header http.Header) time.Duration {
	tooMany := hostlimit.BackoffStatus(status)
	ok := status >= 200 && status < 400
	p.mu.Lock()
	if !tooMany && (!ok || p.fail == 0) {
		p.mu.Unlock()
		return 0
	}
	p.fail = 0
	p.mu.Unlock()
	kind, ra := 2, int64(-1)
	if tooMany {
		kind = 1
		if d, ok := hostlimit.ParseRetryAfter(header.Get("Retry-After"), time.Now()); ok {
			ra = d.Microseconds()
		}
	}
	capRA := int64(-1)
	if p.l.maxRetryAfter >= 0 {
		capRA = p.l.maxRetryAfter.Microseconds()
	}
	v, err := p.l.run(context.Background(), p.h, opObserve, p.tok, -1, kind, ra,
		p.l.backoffBase.Microseconds(), p.l.backoffMax.Microseconds(), capRA)
	if err != nil {
		p.l.f.outage("observe", err)
		return 0
	}
	d := v.Pause
	if d > 0 {
		p.h.mu.Lock()
		p.h.pauses++
		p.h.lastPause = d
		p.h.pausedUntil = time.Now().Add(d)
		p.h.mu.Unlock()
	}
	return d
}

// Release records the end of the request and gives the permit back: one
// round trip, bounded by the call timeout (none in start-to-start mode once
// Sent was called). While the Fleet's frontier (fleetfrontier) of this process has a
// request of the host out, the release waits for that request's done
// report and goes in its pipeline, 100 ms later at the latest, and before
// the next Acquire of the host in this process. A release that cannot reach Redis is retried in the
// background, with backoff, for one lease and a second at most; the host's
// lease, no longer renewed, counts as the release meanwhile.
func (p *permit) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	p.renew.Stop()
	p.h.mu.Lock()
	p.h.inFlight--
	p.h.mu.Unlock()
	if p.l.mode == 0 || !p.sent {
		sent := "0"
		if p.sent {
			sent = "1"
		}
		// While this process's frontier has a request of the host out, the
		// release goes with its done report (grant.go).
		if !p.l.f.desk.deferRelease(hostOp{host: p.h.host, p: p.h.p, mode: p.l.mode, op: opRelease, tok: p.tok, extra: []any{sent, p.delay}}, false) {
			p.l.callOrRetry(p.h, opRelease, p.tok, sent, p.delay)
		}
	}
}
