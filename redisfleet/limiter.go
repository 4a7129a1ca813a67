package redisfleet

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/robots/hostlimit"
)

// LimiterConfig configures a [Limiter]. The zero value is usable:
// end-to-start spacing and the defaults of hostlimit.Config. Every process
// of a fleet must use the same Spacing.
type LimiterConfig struct {
	// Spacing is hostlimit.EndToStart (the default) or
	// hostlimit.StartToStart; any other value means EndToStart.
	Spacing hostlimit.Spacing
	// MaxRetryAfter caps the pause taken from a Retry-After header.
	// 0 means 10 minutes; a negative value means no cap.
	MaxRetryAfter time.Duration
	// BackoffBase and BackoffMax shape the pause after a 429 or 503
	// without a usable Retry-After: BackoffBase × 2^(n-1) for the n-th such
	// response in a row (counted fleet-wide), at most BackoffMax. 0 means
	// 1 second and 10 minutes.
	BackoffBase, BackoffMax time.Duration
	// WaitClaim bounds how long a caller let through by Wait keeps the
	// other Wait callers of its host, in every process, waiting while it
	// makes its way to Acquire. 0 means 1 second.
	WaitClaim time.Duration
}

// maxSleep bounds one sleep of a waiting caller between two looks at the
// host's state, in case a wake-up is lost (the Pub/Sub connection dropped).
const maxSleep = time.Second

// Backoff of calls while Redis is unreachable.
const (
	downBackoffMin = 50 * time.Millisecond
	downBackoffMax = 2 * time.Second
	// downSkip is how long a limiter falling back to the local gate goes
	// without trying Redis after a failed call.
	downSkip = time.Second
)

// A Limiter spaces the requests of every process of a fleet to each host,
// with the guarantee of a hostlimit.Limiter extended to the fleet, for a
// host whose delay d is above zero: in end-to-start mode (the default) a
// permit is granted only while no other permit for the host is outstanding
// anywhere in the fleet, and at least d after the latest release; in
// start-to-start mode only while no other permit is granted and not yet
// marked sent, and at least d after the latest send mark. Here d is the
// larger of the delay in force at that release (send mark) and the delay
// at the grant, as in hostlimit. The instants are read from the Redis
// server's clock when the release (send mark) and the grant reach it, so
// the gaps hold between events at least as far apart as the requests'
// actual end and start: the response was read before its release was
// sent, the next request is sent after its grant came back.
//
// A permit has a lease ([Config.Lease]); the holder renews it every third of
// the lease while the request runs, and a lease that ended (its process
// died) counts as a release at its end. 429 and 503 responses pause the
// host for the whole fleet (Retry-After, else exponential backoff counted
// fleet-wide).
//
// Callers of one host are served first come, first served across the
// fleet, with no polling herd: in one process they queue locally and only
// the head asks Redis; the heads of the processes queue in Redis (Acquire
// callers first, then Wait callers, as hostlimit serves its gate before its
// early waiters). A caller that is not at the head of the fleet's queue
// sleeps until a release names it in a wake-up (Pub/Sub), or a second at
// most, after which it calls again to stay in the queue (a caller not seen
// for a second plus two call timeouts plus a second counts as dead and is
// dropped). The head sleeps until the time the script gave it (the host's
// next slot; the lease end of the permit that holds it) or until the
// holder's release wakes it with the time still to wait. An uncontended
// request costs three round trips: Wait, Acquire, and Release
// (end-to-start) or Sent (start-to-start); a contended one about four,
// however many processes contend (measured from 1 to 8). A request handed
// out by the Fleet's frontier (package fleetfrontier) costs none of its own: the pop answered
// Wait and granted the permit Acquire takes (when the pop's grant covers
// the delay Acquire passes; else Acquire gives it back and asks Redis, in
// one round trip), and the release goes with the request's done report
// (see the package doc, Round trips per request).
//
// While Redis cannot be reached the limiter does what [Config.OnRedisDown]
// says. It implements robots.Limiter, with WaitMax and Stats. Make one
// with [Fleet.Limiter]. All methods are safe for concurrent use.
type Limiter struct {
	f             *Fleet
	mode          int // 0 end-to-start, 1 start-to-start
	spacing       hostlimit.Spacing
	maxRetryAfter time.Duration // < 0: no cap
	backoffBase   time.Duration
	backoffMax    time.Duration
	claim         time.Duration

	local     *hostlimit.Limiter // FallBackLocal's gate
	skipUntil atomic.Int64       // unix ns: FallBackLocal goes local without trying Redis until then

	mu        sync.Mutex
	hosts     map[string]*lhost
	nextSweep time.Time
}

// lhost is one host's local state: the turns of the local queues and this
// process's statistics.
type lhost struct {
	host        string
	p           int           // the host's partition
	hash        string        // keys[0]
	keys        []string      // the KEYS of lua.Limiter (Fleet.hostScriptKeys)
	gate, early chan struct{} // capacity 1: held by the local head
	refs        int           // guarded by Limiter.mu
	used        time.Time     // guarded by Limiter.mu

	mu          sync.Mutex
	delay       time.Duration
	grants      int64
	waits       int64
	waitTime    time.Duration
	pauses      int64
	lastPause   time.Duration
	pausedUntil time.Time
	inFlight    int
	queued      int
	gateQ       int           // callers in Acquire (queued at the local gate or at its head)
	gateFree    chan struct{} // closed when gateQ drops to 0
}

// enterGate and leaveGate count the callers of Acquire; an early waiter
// does not ask Redis while there are any (hostlimit's rule: Wait lets a
// caller through only when no caller is queued at the gate).
func (h *lhost) enterGate() {
	h.mu.Lock()
	if h.gateQ == 0 {
		h.gateFree = make(chan struct{})
	}
	h.gateQ++
	h.mu.Unlock()
}

func (h *lhost) leaveGate() {
	h.mu.Lock()
	h.gateQ--
	if h.gateQ == 0 {
		close(h.gateFree)
	}
	h.mu.Unlock()
}

// gateBusy returns a channel closed once no caller is in Acquire, or nil
// if none is.
func (h *lhost) gateBusy() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gateQ == 0 {
		return nil
	}
	return h.gateFree
}

// Limiter returns a per-host limiter of the fleet configured by cfg.
func (f *Fleet) Limiter(cfg LimiterConfig) *Limiter {
	l := &Limiter{
		f:             f,
		spacing:       hostlimit.EndToStart,
		maxRetryAfter: orDefault(cfg.MaxRetryAfter, 10*time.Minute),
		backoffBase:   orDefault(cfg.BackoffBase, time.Second),
		backoffMax:    orDefault(cfg.BackoffMax, 10*time.Minute),
		claim:         orDefault(cfg.WaitClaim, time.Second),
		hosts:         make(map[string]*lhost),
	}
	if cfg.MaxRetryAfter < 0 {
		l.maxRetryAfter = -1
	}
	if cfg.Spacing == hostlimit.StartToStart {
		l.spacing, l.mode = hostlimit.StartToStart, 1
	}
	f.desk.limiters.Add(1)
	if f.cfg.onDown == FallBackLocal {
		l.local = hostlimit.New(hostlimit.Config{
			Spacing: l.spacing, MaxRetryAfter: cfg.MaxRetryAfter,
			BackoffBase: cfg.BackoffBase, BackoffMax: cfg.BackoffMax, WaitClaim: cfg.WaitClaim,
		})
	}
	return l
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// ref returns host's local state, counting a user until unref.
func (l *Limiter) ref(host string) *lhost {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.After(l.nextSweep) {
		l.nextSweep = now.Add(l.f.cfg.idleTTL)
		for k, h := range l.hosts {
			if h.refs == 0 && now.Sub(h.used) > l.f.cfg.idleTTL {
				h.mu.Lock()
				idle := h.inFlight == 0
				h.mu.Unlock()
				if idle {
					delete(l.hosts, k)
				}
			}
		}
	}
	h := l.hosts[host]
	if h == nil {
		keys := l.f.hostScriptKeys(host)
		h = &lhost{host: host, p: l.f.part(host), hash: keys[0], keys: keys,
			gate: make(chan struct{}, 1), early: make(chan struct{}, 1)}
		l.hosts[host] = h
	}
	h.refs++
	h.used = now
	return h
}

func (l *Limiter) unref(h *lhost) {
	l.mu.Lock()
	h.refs--
	l.mu.Unlock()
}

// run runs one operation of the host script, bounded by the call timeout.
func (l *Limiter) run(ctx context.Context, h *lhost, op, tok string, delay time.Duration, extra ...any) (limiterReply, error) {
	d := int64(-1)
	if delay >= 0 {
		d = delay.Microseconds()
	}
	return l.f.runHost(ctx, h.p, h.keys, l.mode, op, tok, d, extra...)
}

// skipRedis reports whether a FallBackLocal limiter goes to its local gate
// without trying Redis (a call failed less than a second ago).
func (l *Limiter) skipRedis() bool {
	return l.local != nil && time.Now().UnixNano() < l.skipUntil.Load()
}

// unavailable handles a failed call: it reports the outage, and tells
// whether the caller falls back to the local gate (else it backs off).
func (l *Limiter) unavailable(op string, err error) bool {
	l.f.outage(op, err)
	if l.local != nil {
		l.skipUntil.Store(time.Now().Add(downSkip).UnixNano())
		return true
	}
	return false
}

// sleep waits d, or a wake-up and then its hint, or ctx; it reports false
// when ctx is done.
func sleep(ctx context.Context, t **time.Timer, d time.Duration, wake chan int64) bool {
	if *t == nil {
		*t = time.NewTimer(d)
	} else {
		(*t).Reset(d)
	}
	select {
	case <-(*t).C:
		return true
	case hint := <-wake:
		if hint <= 0 {
			return true
		}
		(*t).Reset(min(time.Duration(hint)*time.Microsecond, maxSleep))
		select {
		case <-(*t).C:
			return true
		case <-ctx.Done():
			return false
		}
	case <-ctx.Done():
		return false
	}
}

func nextBackoff(b time.Duration) time.Duration {
	if b == 0 {
		return downBackoffMin
	}
	return min(2*b, downBackoffMax)
}

// take takes the local turn of q (the local queue of the gate or of the
// early wait); it reports whether it had to wait.
func take(ctx context.Context, q chan struct{}) (bool, error) {
	select {
	case q <- struct{}{}:
		return false, nil
	default:
	}
	select {
	case q <- struct{}{}:
		return true, nil
	case <-ctx.Done():
		return true, ctx.Err()
	}
}

func (h *lhost) setDelay(d time.Duration) {
	if d >= 0 {
		h.mu.Lock()
		h.delay = d
		h.mu.Unlock()
	}
}

func (h *lhost) queue(n int) {
	h.mu.Lock()
	h.queued += n
	h.mu.Unlock()
}

func (h *lhost) waited(start time.Time) {
	h.mu.Lock()
	h.waits++
	h.waitTime += time.Since(start)
	h.mu.Unlock()
}

// Wait implements robots.Limiter: [Limiter.WaitMax] with no pause limit.
func (l *Limiter) Wait(ctx context.Context, host string, delay time.Duration) error {
	_, err := l.WaitMax(ctx, host, delay, -1)
	return err
}

// WaitMax is the early, non-reserving wait: it blocks until the host is
// likely to admit a request at once (not paused, its delay passed since
// the latest release or send, nothing blocking it, no earlier Wait caller
// of any process still heading for the gate within WaitClaim) and returns
// how long it blocked. Right after the fleet's frontier (fleetfrontier) of this process
// handed out a request of the host as ready (within a second), one call
// returns at once without asking Redis: the pop read the same state. It does not wait out a pause ending more than
// maxPause from now (429, 503): it then returns a *hostlimit.PausedError at
// once, also when the pause starts while it waits; a negative maxPause
// waits out any pause. The host's delay is set to
// delay first (a negative delay keeps it). While Redis cannot be reached it
// returns nil at once (Acquire still enforces the spacing), or, with
// FallBackLocal, waits on the local gate.
func (l *Limiter) WaitMax(ctx context.Context, host string, delay, maxPause time.Duration) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	start := time.Now()
	if l.skipRedis() {
		return l.local.WaitMax(ctx, host, delay, maxPause)
	}
	h := l.ref(host)
	defer l.unref(h)
	h.setDelay(delay)
	if l.f.desk.takeReady(host) {
		// The fleet's frontier handed out this process's request of the
		// host a moment ago because the same state said it was ready:
		// not paused, its delay passed, no permit holding it. The look
		// would say so again; Acquire still enforces the spacing.
		return 0, nil
	}
	h.queue(1)
	defer h.queue(-1)
	blocked, err := take(ctx, h.early)
	if err != nil {
		h.waited(start)
		return time.Since(start), err
	}
	defer func() { <-h.early }()
	tok := l.f.token()
	wake, cancel := l.f.subscribe(ctx, h.p, h.hash, tok)
	defer cancel()
	mp := int64(-1)
	if maxPause >= 0 {
		mp = maxPause.Microseconds()
	}
	var t *time.Timer
	queued := false
	defer func() {
		if t != nil {
			t.Stop()
		}
		if queued {
			l.leave(ctx, h, tok, false)
		}
	}()
	for {
		if free := h.gateBusy(); free != nil {
			blocked = true
			select {
			case <-free:
			case <-ctx.Done():
				h.waited(start)
				return time.Since(start), ctx.Err()
			}
		}
		// Every look judges the pause: one that starts while this caller
		// waits (a 429 of another request) ends the wait too.
		v, err := l.run(ctx, h, opWait, tok, delay, l.stale(), mp, l.claim.Microseconds())
		if err != nil {
			if ctx.Err() != nil {
				h.waited(start)
				return time.Since(start), err
			}
			if errors.Is(err, ErrUnavailable) {
				// The call may still run when Redis resumes (a hang): leave
				// undoes it, now or in the background.
				l.leave(ctx, h, tok, true)
				queued = false
				if l.unavailable("wait", err) {
					return l.local.WaitMax(ctx, host, delay, maxPause)
				}
				return time.Since(start), nil // Acquire enforces the spacing
			}
			return time.Since(start), err
		}
		l.f.recovered()
		// Queued by this look, or by an earlier one the script has not
		// dequeued (a pause found later): the deferred leave dequeues it.
		queued = v.Status == 0 || v.Status == -1 && queued
		switch v.Status {
		case 1:
			if blocked {
				h.waited(start)
			}
			return time.Since(start), nil
		case -1:
			until := time.Now().Add(v.Wait)
			h.mu.Lock()
			h.pausedUntil = until
			h.mu.Unlock()
			return time.Since(start), &hostlimit.PausedError{Host: host, Until: until}
		}
		blocked = true
		if !sleep(ctx, &t, min(v.Wait, maxSleep), wake) {
			h.waited(start)
			return time.Since(start), ctx.Err()
		}
	}
}

// leave takes tok out of host's queues and gives back a permit granted
// under it that its caller never learned of; the token is marked so that
// a call under it that runs later (it timed out on the client while Redis
// hung) takes nothing. If Redis cannot be reached it is retried in the
// background, with backoff, for a lease at most.
// With down set (the caller's latest call did not reach Redis) it goes
// to the background at once, so that the caller does not wait another call
// timeout.
func (l *Limiter) leave(ctx context.Context, h *lhost, tok string, down bool) {
	ctx = context.WithoutCancel(ctx)
	if !down {
		if _, err := l.run(ctx, h, opLeave, tok, -1); err == nil || !errors.Is(err, ErrUnavailable) {
			return
		}
	}
	go func() {
		end := time.Now().Add(l.f.cfg.lease)
		var b time.Duration
		for first := down; time.Now().Before(end); first = false {
			if !first {
				b = nextBackoff(b)
				time.Sleep(b)
			}
			if _, err := l.run(ctx, h, opLeave, tok, -1); err == nil || !errors.Is(err, ErrUnavailable) {
				return
			}
		}
	}()
}

// stale is how long (µs) a queued caller may go without a call before the
// script drops it as dead: its longest sleep, two call timeouts and a
// second.
func (l *Limiter) stale() int64 {
	return (maxSleep + 2*l.f.cfg.callTimeout + time.Second).Microseconds()
}

// Acquire implements robots.Limiter: it blocks until the host admits the
// request fleet-wide and returns the permit the request runs under, which
// must be released. The host's delay is set to delay first (a negative
// delay keeps it). If ctx is done first it returns an error wrapping
// ctx.Err() and takes nothing. While Redis cannot be reached it retries
// with backoff (WaitForRedis) or acquires from the local gate
// (FallBackLocal).
//
// With FallBackLocal every request of this process holds a permit of the
// local gate too, taken first, whether Redis grants it or not: the local
// gate knows every request of the process in flight, so across a switch
// from the local gate back to Redis (or the other way) two requests of
// this process to one host never overlap, and the local spacing holds
// between them.
func (l *Limiter) Acquire(ctx context.Context, host string, delay time.Duration) (hostlimit.Permit, error) {
	return l.AcquireMax(ctx, host, delay, -1)
}

// AcquireMax is [Limiter.Acquire] that does not wait out a pause (429,
// 503) ending more than maxPause from now: it then returns a
// *hostlimit.PausedError and takes nothing, at once, or, for a pause that
// starts while it waits, as soon as it sees the pause (its next look at
// the host: when the host frees, or within a second). A negative maxPause
// waits out any pause.
func (l *Limiter) AcquireMax(ctx context.Context, host string, delay, maxPause time.Duration) (hostlimit.Permit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if l.local == nil {
		return l.acquire(ctx, host, delay, maxPause, nil)
	}
	lp, err := l.local.AcquireMax(ctx, host, delay, maxPause)
	if err != nil {
		return nil, err
	}
	if l.skipRedis() {
		return lp, nil
	}
	p, err := l.acquire(ctx, host, delay, maxPause, lp)
	if err != nil {
		lp.Release()
		return nil, err
	}
	return p, nil
}

// acquire takes a grant in Redis; lp, when not nil, is the local gate's
// permit (FallBackLocal) returned alone if Redis cannot be reached, else
// with the grant.
func (l *Limiter) acquire(ctx context.Context, host string, delay, maxPause time.Duration, lp hostlimit.Permit) (hostlimit.Permit, error) {
	start := time.Now()
	h := l.ref(host)
	defer l.unref(h)
	h.setDelay(delay)
	h.queue(1)
	defer h.queue(-1)
	h.enterGate()
	defer h.leaveGate()
	blocked, err := take(ctx, h.gate)
	if err != nil {
		h.waited(start)
		return nil, err
	}
	defer func() { <-h.gate }()
	// A release of the host this process keeps for the frontier's next
	// pipeline goes first, in the pipeline of the first call: this grant
	// would wait for it.
	before := l.f.desk.takeDeferred(host)
	if g := l.f.desk.takeGrant(host, ""); g != nil {
		// The frontier's pop granted a permit for the host with the
		// request it handed out: it holds if the grant's delay covers this
		// one; else it is given back and the grant asked anew.
		if delay.Microseconds() <= g.d {
			l.f.sendHostOps(before) // the pregrant shows nothing is out
			if blocked {
				h.waited(start)
			}
			p := l.grant(h, g.id, g.fail, g.d, time.Since(g.at))
			if lp != nil {
				return &bothPermit{p, lp}, nil
			}
			return p, nil
		}
		before = append(before, g.leaveOp())
	}
	tok := l.f.token()
	wake, cancel := l.f.subscribe(ctx, h.p, h.hash, tok)
	defer cancel()
	var t *time.Timer
	queued := false // tok may be in the host's fleet-wide queue
	down := false   // the latest call did not reach Redis
	defer func() {
		if t != nil {
			t.Stop()
		}
		if queued {
			// Gave up: leave the queue so the next caller is not held until
			// this one counts as dead, and give back a grant made by a call
			// whose reply was lost.
			l.leave(ctx, h, tok, down)
		}
	}()
	var backoff time.Duration
	mp := int64(-1)
	if maxPause >= 0 {
		mp = maxPause.Microseconds()
	}
	for {
		d := int64(-1)
		if delay >= 0 {
			d = delay.Microseconds()
		}
		v, err := l.f.runHostAfter(ctx, before, h.p, h.keys, l.mode, opAcquire, tok, d, l.stale(), mp)
		before = nil
		if err != nil {
			if ctx.Err() != nil {
				queued = true // the call may have run: the deferred leave undoes it
				h.waited(start)
				return nil, err
			}
			if !errors.Is(err, ErrUnavailable) {
				return nil, err
			}
			// The call may still run when Redis resumes (a hang): a retry
			// under the same token takes the grant it made; giving up
			// leaves (the deferred leave).
			queued, down = true, true
			if l.unavailable("acquire", err) {
				return lp, nil // the local gate's permit alone
			}
			if err := l.f.oomError(l.f.outageLimit(), "limiter: acquire", nil); err != nil {
				return nil, err // Redis answers, refusing writes for good
			}
			blocked = true
			backoff = nextBackoff(backoff)
			if !sleep(ctx, &t, backoff, nil) {
				h.waited(start)
				return nil, ctx.Err()
			}
			continue
		}
		backoff, down = 0, false
		l.f.recovered()
		if v.Status == 1 {
			queued = false
			if blocked {
				h.waited(start)
			}
			p := l.grant(h, tok, v.Fail, v.Delay, 0)
			if lp != nil {
				return &bothPermit{p, lp}, nil
			}
			return p, nil
		}
		if v.Status == -1 {
			// Paused past maxPause; queued by an earlier look, the
			// deferred leave dequeues it.
			until := time.Now().Add(v.Wait)
			h.mu.Lock()
			h.pausedUntil = until
			h.mu.Unlock()
			return nil, &hostlimit.PausedError{Host: host, Until: until}
		}
		queued = true
		blocked = true
		if !sleep(ctx, &t, min(v.Wait, maxSleep), wake) {
			h.waited(start)
			return nil, ctx.Err()
		}
	}
}

// grant returns the permit granted under tok, whose lease started age ago.
func (l *Limiter) grant(h *lhost, tok string, fail, delay int64, age time.Duration) *permit {
	h.mu.Lock()
	h.grants++
	h.inFlight++
	h.mu.Unlock()
	p := &permit{l: l, h: h, tok: tok, fail: fail, delay: delay}
	p.renew = time.AfterFunc(max(l.f.cfg.lease/3-age, 0), p.renewLease)
	return p
}

// callOrRetry runs a release or a send mark now, and if Redis cannot be
// reached, again in the background with backoff, for one lease at most.
// One that Redis refuses, or that never reaches it, is logged and counted
// ([Fleet.LostReleases]).
func (l *Limiter) callOrRetry(h *lhost, op, tok string, extra ...any) {
	_, err := l.run(context.Background(), h, op, tok, -1, extra...)
	if err == nil {
		return
	}
	if !errors.Is(err, ErrUnavailable) {
		l.f.lostRelease("limiter "+op, err)
		return
	}
	l.f.outage(op, err)
	go func() {
		end := time.Now().Add(l.f.cfg.lease + time.Second)
		var b time.Duration
		for time.Now().Before(end) {
			b = nextBackoff(b)
			time.Sleep(b)
			_, err = l.run(context.Background(), h, op, tok, -1, extra...)
			if err == nil {
				return
			}
			if !errors.Is(err, ErrUnavailable) {
				break
			}
		}
		l.f.lostRelease("limiter "+op, err)
	}()
}

// Stats returns this process's view of host: the delay last passed, its
// grants, waits, pauses and the latest pause it saw, its permits in flight
// and its callers queued; false if this process has no state for host.
// It costs no Redis call.
func (l *Limiter) Stats(host string) (hostlimit.Stats, bool) {
	l.mu.Lock()
	h := l.hosts[host]
	l.mu.Unlock()
	if h == nil {
		if l.local != nil {
			return l.local.Stats(host)
		}
		return hostlimit.Stats{}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	st := hostlimit.Stats{
		Delay: h.delay, Grants: h.grants, Waits: h.waits, WaitTime: h.waitTime,
		Pauses: h.pauses, LastPause: h.lastPause, InFlight: h.inFlight, Queued: h.queued,
	}
	if h.pausedUntil.After(time.Now()) {
		st.PausedUntil = h.pausedUntil
	}
	return st, true
}

// Pause holds back every later grant for host, in every process, until d
// from now (or longer if a longer pause is pending). d ≤ 0 does nothing.
func (l *Limiter) Pause(ctx context.Context, host string, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	h := l.ref(host)
	defer l.unref(h)
	_, err := l.run(ctx, h, opPause, "", -1, d.Microseconds())
	return err
}
