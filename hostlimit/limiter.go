package hostlimit

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/robots/internal/authority"
	"github.com/politecrawl/robots/internal/gatewait"
	"github.com/politecrawl/robots/internal/retryafter"
)

// Spacing selects the two instants between which a [Limiter] measures the
// delay of a host.
type Spacing int

const (
	// EndToStart, the default, measures the delay from the end of one
	// request to the start of the next: while a host's delay is above zero
	// at most one request to it is in flight, and the next one is let
	// through no earlier than the delay after the previous one ended (its
	// [Permit] released: the response body read to the end or closed, or the
	// round trip failed). The host therefore never sees two requests closer
	// than the delay. This is how Nutch and Heritrix read Crawl-delay.
	EndToStart Spacing = iota

	// StartToStart measures the delay between the starts (sends) of two
	// requests: several requests to one host may be in flight, but no send
	// starts earlier than the delay after the previous send. A send counts as
	// done when [Permit.Sent] is called (the transport from
	// [Limiter.Transport] calls it once net/http has written the request) or,
	// failing that, at [Permit.Release]. At most one permit per host is
	// granted and not yet sent at any time.
	StartToStart
)

// String returns "end-to-start" or "start-to-start".
func (s Spacing) String() string {
	switch s {
	case EndToStart:
		return "end-to-start"
	case StartToStart:
		return "start-to-start"
	}
	return "Spacing(" + strconv.Itoa(int(s)) + ")"
}

// Defaults of [Config].
const (
	defaultMaxRetryAfter = 10 * time.Minute
	defaultBackoffBase   = time.Second
	defaultBackoffMax    = 10 * time.Minute
	defaultIdleTTL       = 10 * time.Minute
	defaultWaitClaim     = time.Second
)

// Config configures a [Limiter]. The zero value is usable: end-to-start
// spacing, no delay, the defaults above.
type Config struct {
	// Spacing is EndToStart (the default) or StartToStart; any other value
	// means EndToStart.
	Spacing Spacing

	// Delay, when not nil, gives the delay of a host whose state is being
	// created: on first use and again after its idle state was evicted. It
	// is called without any lock held and may be called more than once for
	// one host. A nil Delay means 0. A negative result counts as 0. Give a
	// Delay function rather than relying on SetDelay alone when hosts may
	// sit idle longer than IdleTTL: a value set with SetDelay is forgotten
	// when the host's state is evicted.
	Delay func(host string) time.Duration

	// MaxRetryAfter caps the pause taken from a Retry-After header.
	// 0 means 10 minutes; a negative value means no cap.
	MaxRetryAfter time.Duration

	// BackoffBase and BackoffMax shape the pause after a response whose
	// status asks to back off ([BackoffStatus]: 429, every 5xx but 501 and
	// 505) without a usable Retry-After: BackoffBase × 2^(n-1) for the n-th
	// such response in a row, at most BackoffMax. 0 means 1 second and 10 minutes.
	BackoffBase, BackoffMax time.Duration

	// IdleTTL is how long an unused host's state is kept. State that is idle
	// (nothing queued, nothing in flight, no pause or spacing still pending)
	// and unused for longer than IdleTTL is dropped by a lazy sweep run, at
	// most once per IdleTTL and per shard, by later calls. 0 means
	// 10 minutes.
	IdleTTL time.Duration

	// WaitClaim bounds how long a caller released by [Limiter.Wait] keeps
	// the other Wait callers of the same host waiting while it makes its
	// way to the gate ([Limiter.Acquire] or the transport). 0 means
	// 1 second. It affects efficiency, never the spacing.
	WaitClaim time.Duration

	// DelayFactor, when above 0, makes a host's delay at least DelayFactor
	// times its recent response time: the time from the send (Permit.Sent,
	// else the grant) to the release of its requests, averaged with a
	// weight of 0.3 for the latest (Heritrix's delay factor, Scrapy's
	// AutoThrottle), so that a server that slows down is asked less
	// often. It applies to the delay in force at each grant, release and
	// send mark, as a delay set by SetDelay does.
	DelayFactor float64

	// OnEvict, when not nil, is called with the final statistics of each
	// host whose state the sweep drops. It is called without any lock held,
	// from the goroutine that triggered the sweep.
	OnEvict func(host string, stats Stats)

	// Clock, when not nil, is the time source of every instant the
	// Limiter records or compares (grants, sends, releases, pauses,
	// Retry-After dates, idle times) and of the timers its waiting
	// callers sleep on; nil means the system clock (monotonic). Tests give
	// a controllable clock to check the spacing without sleeping.
	Clock Clock
}

// Clock is the time source of a [Limiter] (see Config.Clock). Its methods
// must be safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives the time once d has passed
	// (at once if d ≤ 0), and a stop function the Limiter calls, once,
	// when it no longer waits on the channel, so that the timer can be
	// dropped.
	After(d time.Duration) (c <-chan time.Time, stop func())
}

// A Limiter spaces the requests made to each host by a per-host delay, and
// pauses a host after 429 and 5xx responses ([BackoffStatus]). Hosts are
// keys compared as given: the [Limiter.Transport] keys a request by the
// authority of its URL ("https://example.com:8443": scheme and host
// lower-cased, punycode, the default port dropped; the form of
// policy.Authority), so give the other methods the same form
// ("https://example.com", not "https://Example.com:443") for hosts the
// Transport also serves; any other string is a host of its own.
//
// The guarantee, for a host whose delay d is above zero, with zero
// tolerance and however many goroutines use the host: in EndToStart mode a
// permit is granted only while no other permit for the host is outstanding,
// and at least d after the latest release; in StartToStart mode only while
// no other permit is granted and not yet marked sent, and at least d after
// the latest send mark. Here d is the larger of the delay in force at that
// release (send mark) and the delay in force at the grant: raising a delay
// applies at once, also to callers already waiting (unlike rate.Limiter's
// SetLimit); lowering it never shortens the gap owed to a request that
// ended (was sent) under the higher delay. Every instant is read from the
// monotonic clock under the host's lock when the event happens, so the
// gaps hold between the actual events, not between scheduled times.
//
// A delay of 0 means no spacing and no serialisation: only a pause, or a gap
// still owed under an earlier higher delay, holds requests back. Negative
// delays count as 0. Delays are time.Duration values; sub-millisecond ones
// work but cost a timer wake-up when a caller has to wait.
//
// There are two stages. [Limiter.Wait] is an early, non-reserving wait, for
// a place where waiting must not hold anything (Colly's OnRequest, before
// the LimitRule slot is taken). [Limiter.Acquire], or the RoundTripper from
// [Limiter.Transport], is the binding gate right before the send. Granted
// permits must be released.
//
// Waiters on one host are served in arrival order. A Limiter starts no
// goroutines. All methods are safe for concurrent use. Create one with
// [New].
type Limiter struct {
	spacing       Spacing
	delayFn       func(string) time.Duration
	factor        float64
	maxRetryAfter int64 // ns; < 0: no cap
	backoffBase   int64
	backoffMax    int64
	idleTTL       int64
	claim         int64
	onEvict       func(string, Stats)
	clock         Clock // nil: the system clock

	epoch  time.Time // monotonic origin of all int64 times
	seed   maphash.Seed
	shards [limiterShards]limiterShard
}

const limiterShards = 32

// limNever is the "no such event yet" time: far in the past, yet with room to
// add any clamped duration without overflow.
const limNever = -(1 << 62)

// limMaxDur clamps durations (about 73 years) so that time sums cannot overflow.
const limMaxDur = 1 << 61

type limiterShard struct {
	mu        sync.Mutex
	hosts     map[string]*limHost
	peak      int          // largest len(hosts) since the map was last rebuilt
	nextSweep atomic.Int64 // earliest time of the next lazy sweep
	seen      atomic.Int64 // the latest time read under mu (for maybeSweep: no clock read)
	_         [24]byte     // 64 bytes: shards on separate cache lines
}

// limHost is the per-host state. All fields are guarded by the shard's mu.
// Times are nanoseconds since Limiter.epoch (monotonic).
type limHost struct {
	delay      int64 // current delay, ≥ 0
	rtt        int64 // recent response time (EWMA of send-to-release), for DelayFactor
	lastEnd    int64 // latest Release
	lastSent   int64 // latest send mark
	nextOK     int64 // earliest grant allowed by delays in force at earlier ends/sends
	pauseUntil int64 // the pause of a backoff status or Pause
	claimUntil int64 // a Wait caller was let through and is heading for the gate
	lastUsed   int64
	held       int64 // largest delay a permit still blocking the host was granted under (see serialDelay)
	inFlight   int32 // granted, not released
	unsent     int32 // granted, not marked sent
	failures   int32 // consecutive responses with a backoff status

	gate, early limWaitQueue

	grants, waits, pauses int64
	waitNanos, lastPause  int64
}

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

// New returns a Limiter configured by cfg.
func New(cfg Config) *Limiter {
	l := &Limiter{
		spacing:       cfg.Spacing,
		delayFn:       cfg.Delay,
		factor:        max(cfg.DelayFactor, 0),
		maxRetryAfter: limOrDefault(cfg.MaxRetryAfter, defaultMaxRetryAfter),
		backoffBase:   limOrDefault(cfg.BackoffBase, defaultBackoffBase),
		backoffMax:    limOrDefault(cfg.BackoffMax, defaultBackoffMax),
		idleTTL:       limOrDefault(cfg.IdleTTL, defaultIdleTTL),
		claim:         limOrDefault(cfg.WaitClaim, defaultWaitClaim),
		onEvict:       cfg.OnEvict,
		clock:         cfg.Clock,
		seed:          maphash.MakeSeed(),
	}
	if l.clock != nil {
		l.epoch = l.clock.Now()
	} else {
		l.epoch = time.Now()
	}
	if cfg.MaxRetryAfter < 0 {
		l.maxRetryAfter = -1
	}
	if l.spacing != StartToStart {
		l.spacing = EndToStart
	}
	for _, p := range []*int64{&l.backoffBase, &l.backoffMax, &l.idleTTL, &l.claim} {
		*p = limClampDur(time.Duration(*p))
	}
	for i := range l.shards {
		l.shards[i].hosts = make(map[string]*limHost)
		l.shards[i].nextSweep.Store(l.idleTTL)
	}
	return l
}

func limOrDefault(d, def time.Duration) int64 {
	if d <= 0 {
		return int64(def)
	}
	return int64(d)
}

// limClampDur maps d into [0, limMaxDur].
func limClampDur(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	if d > limMaxDur {
		return limMaxDur
	}
	return int64(d)
}

func (l *Limiter) now() int64 {
	if l.clock != nil {
		return int64(l.clock.Now().Sub(l.epoch))
	}
	return int64(time.Since(l.epoch))
}

// delayOf returns h's delay in force: its delay, raised to DelayFactor
// times its recent response time.
func (l *Limiter) delayOf(h *limHost) int64 {
	if l.factor == 0 || h.rtt == 0 {
		return h.delay
	}
	return max(h.delay, limClampDur(time.Duration(l.factor*float64(h.rtt))))
}

// serialDelay is the delay that serialises h: its delay, raised, while a
// permit blocks the host (in flight in EndToStart, unsent in
// StartToStart), to the largest delay such a permit was granted under. A
// caller passing a lower delay (a robots.txt fetch before the policy is
// known, a policy refetched with a lower Crawl-delay) thus does not end
// the serialisation of permits already out; the fleet's limiter (package
// redisfleet) has the same rule.
func (l *Limiter) serialDelay(h *limHost) int64 {
	d := l.delayOf(h)
	if l.blocking(h) > 0 {
		d = max(d, h.held)
	}
	return d
}

// blocking counts h's permits that block the next grant while the delay
// is above zero.
func (l *Limiter) blocking(h *limHost) int32 {
	if l.spacing == EndToStart {
		return h.inFlight
	}
	return h.unsent
}

// settleHeld forgets h.held once no permit blocks the host.
func (l *Limiter) settleHeld(h *limHost) {
	if l.blocking(h) == 0 {
		h.held = 0
	}
}

func (l *Limiter) shard(host string) *limiterShard {
	return &l.shards[maphash.String(l.seed, host)%limiterShards]
}

func newLimHost(delay int64) *limHost {
	return &limHost{
		delay:      delay,
		lastEnd:    limNever,
		lastSent:   limNever,
		nextOK:     limNever,
		pauseUntil: limNever,
		claimUntil: limNever,
	}
}

// lockHost returns host's shard, locked, and its state, created if need be,
// marked as used now.
func (l *Limiter) lockHost(host string) (*limiterShard, *limHost, int64) {
	s := l.shard(host)
	l.maybeSweep(s)
	s.mu.Lock()
	h := s.hosts[host]
	if h == nil {
		var d time.Duration
		if l.delayFn != nil {
			s.mu.Unlock()
			d = l.delayFn(host)
			s.mu.Lock()
			h = s.hosts[host]
		}
		if h == nil {
			h = newLimHost(limClampDur(d))
			s.hosts[host] = h
			if len(s.hosts) > s.peak {
				s.peak = len(s.hosts)
			}
		}
	}
	now := l.now()
	h.lastUsed = now
	s.seen.Store(now)
	return s, h, now
}

// readyAt returns the earliest time at which host h admits the head of its
// gate queue (early false) or of its Wait queue (early true), and whether
// that also needs an event (a release, a send mark, the gate queue
// emptying) before it can be reached.
func (l *Limiter) readyAt(h *limHost, early bool) (at int64, event bool) {
	at = max(h.pauseUntil, h.nextOK)
	if d := l.serialDelay(h); d > 0 {
		if l.spacing == EndToStart {
			event = h.inFlight > 0
			at = max(at, h.lastEnd+d)
		} else {
			event = h.unsent > 0
			at = max(at, h.lastSent+d)
		}
		if early {
			at = max(at, h.claimUntil)
		}
	}
	if early && h.gate.head != nil {
		event = true
	}
	return at, event
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

// SetDelay sets host's delay, creating its state if need be. A negative d
// counts as 0. A raised delay applies at once, also to callers already
// waiting; a lowered one never shortens the gap after a request that ended
// (EndToStart) or was sent (StartToStart) under the higher delay, nor ends
// the serialisation of a permit still out that was granted under it. The value
// lasts as long as the host's state (see Config.Delay).
func (l *Limiter) SetDelay(host string, d time.Duration) {
	s, h, _ := l.lockHost(host)
	l.setDelay(h, d)
	s.mu.Unlock()
}

// setDelay sets h's delay to d; h's shard must be locked.
func (l *Limiter) setDelay(h *limHost, d time.Duration) {
	if v := limClampDur(d); v != h.delay {
		h.delay = v
		h.notify()
	}
}

// Ready tells when host may next be asked, by what is known now: at is
// the earliest instant at which a new caller would pass [Limiter.Wait] and
// be granted a permit (its delay since the last release or send, a pause, a
// gap owed under an earlier higher delay); busy reports that this also
// needs an event first: a permit in flight (EndToStart) or not yet sent
// (StartToStart) while the delay is above zero, or callers already queued
// in Wait or Acquire, who come first. A host with no state (never used, or
// evicted) is ready: Ready returns the zero Time and false. An at that is
// not after time.Now() means now. Ready creates no state and reserves
// nothing: it is a hint for a scheduler choosing among hosts (a queue
// frontier), and the gate still decides. Safe for concurrent use.
func (l *Limiter) Ready(host string) (at time.Time, busy bool) {
	s := l.shard(host)
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hosts[host]
	if h == nil {
		return time.Time{}, false
	}
	t, event := l.readyAt(h, true)
	return l.epoch.Add(time.Duration(max(t, 0))), event || h.early.head != nil
}

// Delay returns host's current delay: the value in its state, or the one
// Config.Delay would give a new state. It creates no state.
func (l *Limiter) Delay(host string) time.Duration {
	s := l.shard(host)
	s.mu.Lock()
	h := s.hosts[host]
	var d int64
	if h != nil {
		d = h.delay
	}
	s.mu.Unlock()
	if h == nil && l.delayFn != nil {
		d = limClampDur(l.delayFn(host))
	}
	return time.Duration(d)
}

// Pause holds back every later permit for host and every Wait on it until
// d from now (or longer if a longer pause is already pending). Requests
// already granted are not affected. d ≤ 0 does nothing.
func (l *Limiter) Pause(host string, d time.Duration) {
	if d <= 0 {
		return
	}
	s, h, now := l.lockHost(host)
	l.pause(h, now, limClampDur(d))
	s.mu.Unlock()
}

func (l *Limiter) pause(h *limHost, now, d int64) {
	h.lastPause = d
	if d <= 0 {
		return
	}
	h.pauses++
	h.pauseUntil = max(h.pauseUntil, now+d)
	h.notify()
}

// Observe applies a response from host and returns the pause it started
// (0 if none). A status [BackoffStatus] reports (429, and every 5xx but 501
// and 505) pauses the host until its Retry-After (delay-seconds or an HTTP
// date, capped by MaxRetryAfter; a date in the past or "0" means no pause)
// or, without a usable Retry-After, for BackoffBase × 2^(n-1), at most
// BackoffMax, n being the number of such responses in a row, whatever
// their statuses. A 2xx or 3xx status resets n to 0 but leaves a pending
// pause in place. Other statuses (501 and 505, 1xx, 4xx but 429) change
// nothing. A pause only extends a pending one, never shortens it.
//
// The RoundTripper from [Limiter.Transport] calls Observe for every response
// it returns; call it yourself only for responses that did not go through
// that transport.
func (l *Limiter) Observe(host string, status int, header http.Header) time.Duration {
	if !limAffectsPause(status) {
		return 0
	}
	s, h, now := l.lockHost(host)
	defer s.mu.Unlock()
	return time.Duration(l.observe(h, now, status, header))
}

// BackoffStatus reports whether a response status asks the client to back
// off: 429 (Too Many Requests, RFC 6585) and every 5xx (RFC 9110 §15.6,
// server errors; the non-standard 52x of CDNs included) except 501 (Not
// Implemented) and 505 (HTTP Version Not Supported). Those two describe the
// request (its method, its HTTP version), not the server's state: the same
// request gets the same answer however long the client waits, so neither
// pausing the host nor sending it again helps. The [Limiter] pauses a host
// on these statuses, the robots plugin sends a request answered with one
// again after the pause, and the fleet's limiter (package redisfleet)
// pauses the host for the whole fleet.
func BackoffStatus(status int) bool {
	if status == http.StatusTooManyRequests {
		return true
	}
	return status >= 500 && status <= 599 &&
		status != http.StatusNotImplemented && status != http.StatusHTTPVersionNotSupported
}

func limAffectsPause(status int) bool {
	return BackoffStatus(status) || (status >= 200 && status < 400)
}

func (l *Limiter) observe(h *limHost, now int64, status int, header http.Header) int64 {
	if !BackoffStatus(status) {
		if status >= 200 && status < 400 {
			h.failures = 0
		}
		return 0
	}
	if h.failures < 1<<30 {
		h.failures++
	}
	var d int64
	if ra, ok := ParseRetryAfter(header.Get("Retry-After"), l.epoch.Add(time.Duration(now))); ok {
		d = limClampDur(ra)
		if l.maxRetryAfter >= 0 {
			d = min(d, l.maxRetryAfter)
		}
	} else {
		d = l.backoffBase
		for i := int32(1); i < h.failures && d < l.backoffMax; i++ {
			d *= 2
		}
		d = min(d, l.backoffMax)
	}
	l.pause(h, now, d)
	return d
}

// ParseRetryAfter reads a Retry-After header value (RFC 9110 §10.2.3):
// delay-seconds, or an HTTP date taken relative to now (a past date gives
// 0). Surrounding spaces are ignored; a value that is neither gives 0 and
// false. Seconds are clamped to about 73 years, so that adding the result
// to a time cannot overflow. The Limiter's Observe and the fleet's limiter
// (package redisfleet) read Retry-After with it.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	d, ok := retryafter.Parse(v, now)
	if s := strings.TrimSpace(v); s != "" && s[0] >= '0' && s[0] <= '9' {
		d = min(d, limMaxDur/time.Second*time.Second) // delay-seconds, in whole seconds
	}
	return d, ok
}

// Stats is a snapshot of one host's limiter state and counters.
type Stats struct {
	Delay       time.Duration // current delay (raised by DelayFactor when set)
	Grants      int64         // permits granted
	Waits       int64         // Wait and Acquire calls that had to block (cancelled ones included)
	WaitTime    time.Duration // total time those calls blocked (early Wait + gate)
	Pauses      int64         // pauses started (429/5xx responses, Pause calls)
	LastPause   time.Duration // the latest pause computed, 0 if none
	PausedUntil time.Time     // end of the pending pause; zero if none
	InFlight    int           // permits granted and not released
	Queued      int           // callers blocked in Wait or Acquire
}

func (l *Limiter) statsOf(h *limHost, now int64) Stats {
	st := Stats{
		Delay:     time.Duration(l.delayOf(h)),
		Grants:    h.grants,
		Waits:     h.waits,
		WaitTime:  time.Duration(h.waitNanos),
		Pauses:    h.pauses,
		LastPause: time.Duration(h.lastPause),
		InFlight:  int(h.inFlight),
		Queued:    h.gate.len() + h.early.len(),
	}
	if h.pauseUntil > now {
		st.PausedUntil = l.epoch.Add(time.Duration(h.pauseUntil))
	}
	return st
}

// Stats returns host's statistics, and false if the limiter holds no state
// for it (never used, or evicted).
func (l *Limiter) Stats(host string) (Stats, bool) {
	s := l.shard(host)
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hosts[host]
	if h == nil {
		return Stats{}, false
	}
	return l.statsOf(h, l.now()), true
}

// snapshot returns the statistics of every host the limiter holds state for.
// Each shard is read under its own lock, so the snapshot is consistent per
// host, not across hosts.
func (l *Limiter) snapshot() map[string]Stats {
	out := make(map[string]Stats)
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		now := l.now()
		for k, h := range s.hosts {
			out[k] = l.statsOf(h, now)
		}
		s.mu.Unlock()
	}
	return out
}

// hosts returns the number of hosts the limiter holds state for.
func (l *Limiter) hosts() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.hosts)
		s.mu.Unlock()
	}
	return n
}

// sweepAll drops the state of every idle host now, as the lazy sweep does,
// and returns how many were dropped. A host is idle when nothing is queued
// or in flight, no pause or spacing is pending, and it has not been used for
// IdleTTL: its state can go without changing any later decision other than
// its delay (see Config.Delay) and its backoff count.
func (l *Limiter) sweepAll() int {
	n := 0
	for i := range l.shards {
		n += l.sweep(&l.shards[i])
	}
	return n
}

func (l *Limiter) maybeSweep(s *limiterShard) {
	// The shard's latest time is recent enough to decide, and saves a
	// clock read on every request (about 45 ns on a VM).
	next := s.nextSweep.Load()
	now := s.seen.Load()
	if now < next || !s.nextSweep.CompareAndSwap(next, now+l.idleTTL) {
		return
	}
	l.sweep(s)
}

type limEvicted struct {
	host  string
	stats Stats
}

func (l *Limiter) sweep(s *limiterShard) int {
	var out []limEvicted
	n := 0
	s.mu.Lock()
	now := l.now()
	for k, h := range s.hosts {
		if l.idle(h, now) {
			delete(s.hosts, k)
			n++
			if l.onEvict != nil {
				out = append(out, limEvicted{k, l.statsOf(h, now)})
			}
		}
	}
	// Go maps never shrink: rebuild one that has emptied out.
	if s.peak >= 64 && len(s.hosts) <= s.peak/4 {
		m := make(map[string]*limHost, len(s.hosts))
		for k, h := range s.hosts {
			m[k] = h
		}
		s.hosts, s.peak = m, len(m)
	}
	s.mu.Unlock()
	for _, e := range out {
		l.onEvict(e.host, e.stats)
	}
	return n
}

func (l *Limiter) idle(h *limHost, now int64) bool {
	return h.inFlight == 0 && h.gate.head == nil && h.early.head == nil &&
		now-h.lastUsed >= l.idleTTL &&
		now >= h.pauseUntil && now >= h.nextOK && now >= h.claimUntil &&
		now >= h.lastEnd+l.delayOf(h) && now >= h.lastSent+l.delayOf(h)
}

// Transport returns an http.RoundTripper that passes each request to next
// (http.DefaultTransport if nil) through the gate of its host, keyed by the
// authority of the request URL (see [Limiter]), with the host's delay as
// it is (SetDelay, Config.Delay); requests without an authority (not http
// or https) pass ungated. Every round trip is gated, so redirect hops and
// robots.txt fetches made through it are spaced too; the timeout of a
// robots.txt fetch of package policy does not run while it waits here.
//
// RoundTrip acquires a permit with the request's context (on failure it
// closes the request body and returns an error wrapping the context's
// error), then sends the request as [RoundTrip] does. The caller must close
// response bodies, as net/http requires: that releases the permit.
func (l *Limiter) Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &limitedTransport{l: l, next: next}
}

type limitedTransport struct {
	l    *Limiter
	next http.RoundTripper
}

func (t *limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var buf [128]byte
	key, err := authority.Append(buf[:0], req.URL)
	if err != nil {
		return t.next.RoundTrip(req)
	}
	p := new(permit)
	hook := gatewait.From(req.Context())
	if hook != nil {
		hook.Pause()
	}
	err = t.l.acquire(req.Context(), string(key), p, KeepDelay, -1)
	if hook != nil {
		hook.Resume()
	}
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("hostlimit: gave up waiting for %s's turn: %w", key, err)
	}
	return RoundTrip(t.next, req, p)
}

// RoundTrip sends req through next under the permit p, which it owns from
// then on. In StartToStart mode (for a permit of another limiter: always)
// it marks the send through an httptrace.ClientTrace WroteRequest hook
// (net/http's Transport calls it once the request is written; with a next
// that never calls it, Release counts as the send). It passes the
// response's status and header to p.Observe, and releases p when the round
// trip fails, when the response has no body (or is a 101 Switching
// Protocols), or when the body is done (releaseOnClose). It is the second
// half of [Limiter.Transport], for a gate that acquires its permits itself.
// Caveat: a request that net/http retries by itself on a fresh connection
// is one round trip here.
func RoundTrip(next http.RoundTripper, req *http.Request, p Permit) (*http.Response, error) {
	track := true
	if lp, ok := p.(*permit); ok {
		track = lp.track
	}
	if track {
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { p.Sent() }}
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	}
	resp, err := next.RoundTrip(req)
	if err != nil || resp == nil {
		p.Release()
		return resp, err
	}
	p.Observe(resp.StatusCode, resp.Header)
	if resp.Body == nil || resp.Body == http.NoBody || resp.StatusCode == http.StatusSwitchingProtocols {
		p.Release()
		return resp, nil
	}
	resp.Body = releaseOnClose(p, resp.Body)
	return resp, nil
}

// releaseOnClose returns body wrapped so that p is released once body
// returns an error or io.EOF from Read, or is closed. For a permit of a
// Limiter it allocates nothing: the permit is the wrapper.
func releaseOnClose(p Permit, body io.ReadCloser) io.ReadCloser {
	if lp, ok := p.(*permit); ok {
		lp.rc = body
		return (*permitBody)(lp)
	}
	return &releasingBody{p: p, rc: body}
}

// permitBody is a Limiter's permit as the body it releases.
type permitBody permit

func (b *permitBody) Read(buf []byte) (int, error) {
	n, err := b.rc.Read(buf)
	if err != nil {
		(*permit)(b).Release()
	}
	return n, err
}

func (b *permitBody) Close() error {
	err := b.rc.Close()
	(*permit)(b).Release()
	return err
}

// releasingBody releases a permit of another limiter.
type releasingBody struct {
	p  Permit
	rc io.ReadCloser
}

func (b *releasingBody) Read(buf []byte) (int, error) {
	n, err := b.rc.Read(buf)
	if err != nil {
		b.p.Release()
	}
	return n, err
}

func (b *releasingBody) Close() error {
	err := b.rc.Close()
	b.p.Release()
	return err
}
