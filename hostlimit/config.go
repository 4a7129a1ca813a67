package hostlimit

import (
	"hash/maphash"
	"strconv"
	"time"
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
