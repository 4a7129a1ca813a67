package hostlimit

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

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
