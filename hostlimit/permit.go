package hostlimit

import (
	"io"
	"net/http"
	"time"
)

// A Permit is the right to send one request to one host, granted by
// [Limiter.Acquire] (or by another limiter with the same contract, such as
// a fleet limiter). Its holder must call Release once the request is over
// (the response body read to the end or closed, or the request failed); in
// StartToStart mode it should call Sent right after the request has been
// written; it should pass the response's status and header to Observe as
// soon as they arrive, so that a 429 or 5xx pauses the host before the
// next grant. All three methods are safe for concurrent use; Sent and
// Release are idempotent, and Sent after Release does nothing.
type Permit interface {
	// Sent records that the request has been sent (written), now.
	Sent()
	// Observe applies the response to the host, as [Limiter.Observe]
	// does, and returns the pause it started (0 if none).
	Observe(status int, header http.Header) time.Duration
	// Release records the end of the request, now, and gives the permit
	// back.
	Release()
}

// permit is the Permit of a Limiter. It is also the response body wrapper
// of releaseOnClose (as *permitBody), so that a gated round trip costs
// one allocation.
type permit struct {
	l      *Limiter
	s      *limiterShard
	h      *limHost
	sent   bool // guarded by s.mu
	done   bool // guarded by s.mu
	track  bool // StartToStart with a delay at grant: Sent matters
	sentAt int64
	gd     int64 // the delay in force at the grant
	rc     io.ReadCloser
}

// Sent records that the request has been sent (written), now. In
// StartToStart mode the host's next permit is granted no earlier than the
// delay after the latest such mark. Without it, Release counts as the send.
func (p *permit) Sent() {
	if p == nil || p.s == nil {
		return
	}
	p.s.mu.Lock()
	if !p.sent && !p.done {
		p.sentAt = p.l.now()
		p.markSent(p.sentAt)
	}
	p.s.mu.Unlock()
}

func (p *permit) markSent(now int64) {
	h := p.h
	p.sent = true
	h.unsent--
	h.lastSent = max(h.lastSent, now)
	if p.l.spacing == StartToStart {
		h.nextOK = max(h.nextOK, now+max(p.l.delayOf(h), p.gd))
	}
	p.l.settleHeld(h)
	h.notify()
}

// Observe applies a response to the permit's host, as [Limiter.Observe]
// does, without looking the host up again.
func (p *permit) Observe(status int, header http.Header) time.Duration {
	if p == nil || p.s == nil || !limAffectsPause(status) {
		return 0
	}
	p.s.mu.Lock()
	d := p.l.observe(p.h, p.l.now(), status, header)
	p.s.mu.Unlock()
	return time.Duration(d)
}

// Release records the end of the request, now, and gives the permit back.
// In EndToStart mode the host's next permit is granted no earlier than the
// delay after the latest release.
func (p *permit) Release() {
	if p == nil || p.s == nil {
		return
	}
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	if p.done {
		return
	}
	now := p.l.now()
	if !p.sent {
		p.markSent(now)
	}
	p.done = true
	h := p.h
	h.inFlight--
	h.lastEnd = max(h.lastEnd, now)
	h.lastUsed = now
	if p.l.factor > 0 {
		if rt := now - p.sentAt; h.rtt == 0 {
			h.rtt = rt
		} else {
			h.rtt = (7*h.rtt + 3*rt) / 10
		}
	}
	if p.l.spacing == EndToStart {
		h.nextOK = max(h.nextOK, now+max(p.l.delayOf(h), p.gd))
	}
	p.l.settleHeld(h)
	h.notify()
}
