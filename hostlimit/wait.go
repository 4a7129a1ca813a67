package hostlimit

import (
	"context"
	"errors"
	"time"
)

type limWaiter struct {
	prev, next *limWaiter
	ch         chan struct{} // capacity 1: "re-evaluate"
}

type limWaitQueue struct{ head, tail *limWaiter }

func (q *limWaitQueue) push(w *limWaiter) {
	w.prev = q.tail
	if q.tail != nil {
		q.tail.next = w
	} else {
		q.head = w
	}
	q.tail = w
}

func (q *limWaitQueue) remove(w *limWaiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else if q.head == w {
		q.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else if q.tail == w {
		q.tail = w.prev
	}
	w.prev, w.next = nil, nil
}

func (q *limWaitQueue) len() int {
	n := 0
	for w := q.head; w != nil; w = w.next {
		n++
	}
	return n
}

// notify asks the head of each queue to re-evaluate.
func (h *limHost) notify() {
	for _, w := range [2]*limWaiter{h.gate.head, h.early.head} {
		if w != nil {
			select {
			case w.ch <- struct{}{}:
			default:
			}
		}
	}
}

// await queues w on q and blocks until w is at the head of q and the host is
// ready for it, or ctx is done. It is called and returns with s.mu held; on
// success w has been removed from q and now is the time, read under the
// lock, at which the host was found ready.
//
// With maxPause ≥ 0, a pause of the host that ends more than maxPause
// after now (one that starts while w waits included) ends the wait at once
// with errPausedLong once w is at the head of q; the next waiter, woken,
// judges the same way.
func (l *Limiter) await(ctx context.Context, s *limiterShard, h *limHost, q *limWaitQueue, early bool, now, maxPause int64) (int64, error) {
	w := &limWaiter{ch: make(chan struct{}, 1)}
	q.push(w)
	start := now
	var timer *time.Timer // system clock
	var stop func()       // Config.Clock's timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		if stop != nil {
			stop()
		}
	}()
	for {
		var tc <-chan time.Time
		if stop != nil {
			stop()
			stop = nil
		}
		if q.head == w {
			if maxPause >= 0 && h.pauseUntil-now > maxPause {
				q.remove(w)
				h.notify()
				h.waits++
				h.waitNanos += now - start
				return now, errPausedLong
			}
			at, event := l.readyAt(h, early)
			if !event && at <= now {
				q.remove(w)
				h.waits++
				h.waitNanos += now - start
				return now, nil
			}
			if !event {
				d := time.Duration(at - now)
				if l.clock != nil {
					tc, stop = l.clock.After(d)
				} else if timer == nil {
					timer = time.NewTimer(d)
					tc = timer.C
				} else {
					timer.Reset(d)
					tc = timer.C
				}
			}
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			s.mu.Lock()
			q.remove(w)
			h.notify()
			now = l.now()
			h.waits++
			h.waitNanos += now - start
			return now, ctx.Err()
		case <-w.ch:
		case <-tc:
		}
		s.mu.Lock()
		now = l.now()
	}
}

// Wait blocks until host is likely to admit a request at once, or ctx is
// done (it then returns ctx.Err()). The host's delay is set to delay first,
// as [Limiter.SetDelay] does (in the same critical section); a negative
// delay ([KeepDelay]) leaves it as it is. It is the early, non-reserving stage:
// it holds nothing when it returns, and a caller released by it is not
// guaranteed the gate; [Limiter.Acquire] or the transport still enforces
// the spacing.
//
// Wait returns when the host is not paused, no caller is queued at its
// gate, its delay has passed since the last release (EndToStart) or send
// (StartToStart) with nothing in flight or unsent as that mode requires,
// and no earlier Wait caller of the host is still heading for the gate:
// while the delay is above zero, Wait lets its callers through one at a
// time, each releasing the next once it has been granted a permit or after
// WaitClaim at most. With a delay of 0 only a pause or pending spacing makes
// Wait block. Callers are released in arrival order.
func (l *Limiter) Wait(ctx context.Context, host string, delay time.Duration) error {
	_, err := l.waitTime(ctx, host, delay)
	return err
}

// waitTime is [Limiter.Wait] that also returns how long it blocked.
func (l *Limiter) waitTime(ctx context.Context, host string, delay time.Duration) (time.Duration, error) {
	return l.WaitMax(ctx, host, delay, -1)
}

// PausedError is the error of [Limiter.WaitMax] for a host paused for
// longer than the caller would wait.
type PausedError struct {
	Host  string
	Until time.Time // when the pause ends
}

func (e *PausedError) Error() string {
	return "hostlimit: " + e.Host + " is paused (429 or 5xx answers, or Pause) until " + e.Until.UTC().Format(time.RFC3339)
}

// WaitMax is [Limiter.Wait], returning how long it blocked, that does not
// wait out a pause (429, 5xx, [Limiter.Pause]) ending more than maxPause
// from now: it then returns a *[PausedError], at once, or, for a pause
// that starts while it waits, as soon as the pause starts. A negative
// maxPause waits out any pause.
func (l *Limiter) WaitMax(ctx context.Context, host string, delay, maxPause time.Duration) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s, h, now := l.lockHost(host)
	defer s.mu.Unlock()
	if delay >= 0 {
		l.setDelay(h, delay)
	}
	if maxPause >= 0 && h.pauseUntil-now > int64(maxPause) {
		return 0, &PausedError{Host: host, Until: l.epoch.Add(time.Duration(h.pauseUntil))}
	}
	if h.early.head == nil {
		if at, event := l.readyAt(h, true); !event && at <= now {
			l.passEarly(h, now)
			return 0, nil
		}
	}
	end, err := l.await(ctx, s, h, &h.early, true, now, max(int64(maxPause), -1))
	if err == errPausedLong {
		return time.Duration(end - now), &PausedError{Host: host, Until: l.epoch.Add(time.Duration(h.pauseUntil))}
	}
	if err != nil {
		return time.Duration(l.now() - now), err
	}
	l.passEarly(h, end)
	return time.Duration(end - now), nil
}

func (l *Limiter) passEarly(h *limHost, now int64) {
	if l.delayOf(h) > 0 {
		h.claimUntil = now + l.claim
	}
	h.notify()
}

// errPausedLong ends a WaitMax or AcquireMax whose host is paused past its
// maxPause.
var errPausedLong = errors.New("hostlimit: paused past the wait's bound")

// KeepDelay, given as the delay of [Limiter.Wait] or [Limiter.Acquire],
// leaves the host's delay as it is (as [Limiter.SetDelay] or
// Config.Delay set it). Any negative delay does the same.
const KeepDelay time.Duration = -1

// Acquire blocks until the host's gate admits one more request, then
// returns a Permit, which must be released. It is the binding stage: call
// it right before the actual send. The host's delay is set to delay first,
// as [Limiter.SetDelay] does (in the same critical section); a negative
// delay ([KeepDelay]) leaves it as it is. If ctx is done first, Acquire
// returns ctx.Err() and takes nothing. If ctx is already done, Acquire
// fails even if the gate is free. See [Limiter] for the exact spacing
// guarantee.
func (l *Limiter) Acquire(ctx context.Context, host string, delay time.Duration) (Permit, error) {
	return l.AcquireMax(ctx, host, delay, -1)
}

// AcquireMax is [Limiter.Acquire] that does not wait out a pause (429,
// 5xx, [Limiter.Pause]) ending more than maxPause from now: it then
// returns a *[PausedError] and takes nothing, at once, or, for a pause
// that starts while it waits, as soon as the pause starts. A negative
// maxPause waits out any pause, as Acquire does.
func (l *Limiter) AcquireMax(ctx context.Context, host string, delay, maxPause time.Duration) (Permit, error) {
	p := new(permit)
	if err := l.acquire(ctx, host, p, delay, maxPause); err != nil {
		return nil, err
	}
	return p, nil
}

// acquire is AcquireMax into p.
func (l *Limiter) acquire(ctx context.Context, host string, p *permit, delay, maxPause time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s, h, now := l.lockHost(host)
	defer s.mu.Unlock()
	if delay >= 0 {
		l.setDelay(h, delay)
	}
	if maxPause >= 0 && h.pauseUntil-now > int64(maxPause) {
		return &PausedError{Host: host, Until: l.epoch.Add(time.Duration(h.pauseUntil))}
	}
	if h.gate.head == nil {
		if at, event := l.readyAt(h, false); !event && at <= now {
			l.grant(s, h, p)
			return nil
		}
	}
	if _, err := l.await(ctx, s, h, &h.gate, false, now, max(int64(maxPause), -1)); err != nil {
		if err == errPausedLong {
			return &PausedError{Host: host, Until: l.epoch.Add(time.Duration(h.pauseUntil))}
		}
		return err
	}
	l.grant(s, h, p)
	return nil
}

func (l *Limiter) grant(s *limiterShard, h *limHost, p *permit) {
	d := l.delayOf(h)
	*p = permit{l: l, s: s, h: h, track: l.spacing == StartToStart && d > 0, sentAt: l.now(), gd: d}
	h.held = max(h.held, d)
	h.inFlight++
	h.unsent++
	h.grants++
	h.claimUntil = limNever
	h.notify()
}
