// Package frontier is a per-host queue frontier for Colly's queue package.
// A [Frontier] is a queue.Storage that keeps one FIFO queue per host and
// hands a worker the oldest request whose host may be asked now, so that no
// queue thread waits on one host while another host's request is ready.
//
// With Colly's InMemoryQueueStorage the requests come out in the order
// they went in: with 4 threads and the pages of 4 hosts queued host after
// host, all 4 threads take host A's pages and wait on A's Crawl-delay,
// one after the other, while hosts B, C and D sit idle. A [Frontier] keeps
// one FIFO queue per host and gives out the oldest request among the hosts
// that are ready: not holding a request of this frontier that is not yet
// done ([Config.PerHost]), and, by [Config.Ready] (the plugin's per-host
// limiter: [hostlimit.Limiter.Ready]), neither busy nor still within their
// delay. Each request (method, URL and body) is queued at most once.
//
// # Completion
//
// Colly's queue never tells its storage that a request is over. The
// frontier learns it from the collector: robots.AttachFrontier registers
// OnError and OnScraped callbacks that mark the request done (GetRequest
// puts a lease id in the request's context, under [LeaseKey], which those
// callbacks read). Call it once on the collector the queue runs. A request
// that Colly drops without calling either (its own filters: AllowedDomains,
// URL filters, MaxDepth, MaxRequests; an Abort in OnRequest) counts as done
// after [Config.Hold], with a warning naming it; until then its host is
// handed out only when nothing else is ready.
//
// # When no host is ready
//
// GetRequest waits for a host to become ready (a delay passing, a request
// done, a new request), at most [Config.MaxWait] (default 1 s). It never
// blocks longer: while it blocks, Colly's loop cannot take the wake-up
// that Queue.AddRequest sends from a queue thread, and that thread waits.
// If no host is ready by then:
//
//   - while requests of the frontier are out, it returns the request whose
//     host is ready soonest (the limiter's gate still spaces it: the thread
//     that takes it waits there). Returning nothing could leave Colly's
//     loop cycling between QueueSize and GetRequest for ever, never taking
//     the wake-up of a thread that holds the only host queued requests
//     wait for;
//   - otherwise it returns [ErrNotReady]: readiness then depends on time
//     alone, Colly's loop asks again, and no thread is tied to a wait.
//
// Returning at once with nothing would make Colly's loop spin.
package frontier

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// Defaults of [Config].
const (
	DefaultMaxWait = time.Second
	DefaultHold    = 2 * time.Minute
)

// busyPoll is how often a host that the limiter reports busy (a request of
// someone else in flight) is looked at again.
const busyPoll = 20 * time.Millisecond

// Errors of the frontier.
var (
	// ErrEmpty is returned by GetRequest when nothing is queued (Colly's
	// queue does not call it then).
	ErrEmpty = errors.New("frontier: nothing is queued")
	// ErrNotReady is returned by GetRequest when, after MaxWait, no queued
	// request's host may be asked yet and nothing of the frontier is out
	// (Colly's loop then asks again: a loop per MaxWait, no spin).
	ErrNotReady = errors.New("frontier: no queued request's host may be asked yet")
	// ErrSeen is returned by AddRequest for a request (method, URL, body)
	// that was queued before: each is handed out once.
	ErrSeen = errors.New("frontier: the request was queued before")
	// ErrFull is returned by AddRequest when Config.MaxSize requests are
	// queued (Colly's queue passes it back from AddURL and AddRequest).
	ErrFull = errors.New("frontier: the queue is full")
)

// Readiness tells when a host may next be asked: *hostlimit.Limiter's
// Ready (the plugin's default limiter, robots.Plugin.Limiter()). at not
// after now means now; busy means an event (a request in flight) must
// come first. Hosts are authorities ("https://example.com"), as the plugin
// keys its limiter.
type Readiness interface {
	Ready(host string) (at time.Time, busy bool)
}

// Config configures a [Frontier]. The zero value is usable.
type Config struct {
	// Ready, when not nil, says whether a host's delay has passed and
	// whether it is busy. Give the plugin's limiter:
	// p.Limiter().(frontier.Readiness) is the default *hostlimit.Limiter.
	// Nil: only PerHost holds a host back.
	Ready Readiness

	// PerHost is how many requests of one host may be handed out and not
	// yet done at a time; 0 means 1 (the right value under end-to-start
	// spacing, where the gate lets one request per host through anyway).
	PerHost int

	// MaxWait bounds how long GetRequest waits for a ready host before it
	// hands out the request whose host is ready soonest; 0 means 1 s.
	MaxWait time.Duration

	// Hold is how long a handed-out request may stay not done before the
	// frontier counts it done, with a warning; 0 means 2 minutes. It only
	// matters for requests Colly drops without OnError or OnScraped.
	Hold time.Duration

	// MaxSize caps the requests queued (not yet handed out); AddRequest
	// returns ErrFull beyond it. 0 means no cap.
	MaxSize int

	// Logger receives the warnings (requests counted done after Hold);
	// nil means slog.Default().
	Logger *slog.Logger
}

// Stats counts what a frontier did.
type Stats struct {
	Queued   int   // requests queued now
	Leased   int   // handed out, not yet done
	Hosts    int   // hosts with requests queued
	Added    int64 // requests accepted by AddRequest
	Seen     int64 // requests refused as queued before
	Handed   int64 // requests handed out by GetRequest
	Early    int64 // of which before their host was ready (MaxWait passed)
	Done     int64 // reported done (OnError, OnScraped)
	Expired  int64 // counted done after Hold
	Rejected int64 // refused as not Colly's serialised request
}

// A Frontier is an in-memory per-host queue implementing Colly's
// queue.Storage. It is safe for concurrent use; one colly queue.Queue
// should run on it at a time. Create it with [New].
type Frontier struct {
	cfg Config
	log *slog.Logger
	id  string // unique to this frontier: the prefix of its lease ids

	mu      sync.Mutex
	hosts   map[string]*hostQueue
	order   []*hostQueue // hosts with requests queued
	queued  int
	seq     uint64
	seen    map[string]struct{}
	leases  map[string]*lease
	changed chan struct{} // closed and replaced when something changes
	stats   Stats
}

type hostQueue struct {
	host  string
	items []item // FIFO; items[0] is next
	out   int    // handed out, not done
	pos   int    // index in Frontier.order, -1 when not there
}

type item struct {
	seq     uint64
	payload []byte
	url     string
}

type lease struct {
	host string
	url  string
	at   time.Time
}

// New returns an empty frontier configured by cfg.
func New(cfg Config) *Frontier {
	if cfg.PerHost <= 0 {
		cfg.PerHost = 1
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = DefaultMaxWait
	}
	if cfg.Hold <= 0 {
		cfg.Hold = DefaultHold
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	var id [6]byte
	rand.Read(id[:])
	return &Frontier{
		cfg:     cfg,
		log:     log,
		id:      hex.EncodeToString(id[:]),
		hosts:   map[string]*hostQueue{},
		seen:    map[string]struct{}{},
		leases:  map[string]*lease{},
		changed: make(chan struct{}),
	}
}

// Init implements queue.Storage; it does nothing (New prepared the frontier).
func (f *Frontier) Init() error { return nil }

// AddRequest implements queue.Storage: it queues a request serialised by
// Colly (colly.Request.Marshal) at the end of its host's queue. It returns
// ErrSeen for a request queued before, ErrFull beyond Config.MaxSize, and
// an error wrapping [ErrBadRequest] for bytes that are not such a request
// (Colly's loop would drop them silently).
func (f *Frontier) AddRequest(b []byte) error {
	r, err := Decode(b)
	if err != nil {
		f.mu.Lock()
		f.stats.Rejected++
		f.mu.Unlock()
		return err
	}
	payload := append([]byte(nil), b...)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.seen[r.Key]; ok {
		f.stats.Seen++
		return ErrSeen
	}
	if f.cfg.MaxSize > 0 && f.queued >= f.cfg.MaxSize {
		return ErrFull
	}
	f.seen[r.Key] = struct{}{}
	h := f.hosts[r.Host]
	if h == nil {
		h = &hostQueue{host: r.Host, pos: -1}
		f.hosts[r.Host] = h
	}
	f.seq++
	h.items = append(h.items, item{seq: f.seq, payload: payload, url: r.URL})
	if h.pos < 0 {
		h.pos = len(f.order)
		f.order = append(f.order, h)
	}
	f.queued++
	f.stats.Added++
	f.signalLocked()
	return nil
}

// QueueSize implements queue.Storage: the number of requests queued and
// not yet handed out. (Colly's queue counts the ones its threads work on
// itself.)
func (f *Frontier) QueueSize() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queued, nil
}

// GetRequest implements queue.Storage: it hands out the oldest queued
// request among the hosts that may be asked now, with a lease id in its
// context (under [LeaseKey]). When no host is ready it waits, at most
// Config.MaxWait, then returns the request whose host is ready soonest, or
// ErrNotReady when nothing of the frontier is out (see the package doc).
// It returns ErrEmpty when nothing is queued.
func (f *Frontier) GetRequest() ([]byte, error) {
	deadline := time.Now().Add(f.cfg.MaxWait)
	for {
		now := time.Now()
		f.mu.Lock()
		nextExpiry := f.expireLocked(now)
		if f.queued == 0 {
			f.mu.Unlock()
			return nil, ErrEmpty
		}
		h, soonest := f.pickLocked(now)
		if h == nil && !now.Before(deadline) {
			if len(f.leases) == 0 {
				f.mu.Unlock()
				return nil, ErrNotReady
			}
			h = f.fallbackLocked(now)
			f.stats.Early++
		}
		if h != nil {
			b, err := f.handLocked(h, now)
			f.mu.Unlock()
			return b, err
		}
		ch := f.changed
		f.mu.Unlock()
		wait := deadline.Sub(now)
		if !nextExpiry.IsZero() {
			wait = min(wait, max(nextExpiry.Sub(now), 0))
		}
		if !soonest.IsZero() {
			wait = min(wait, max(soonest.Sub(now), 0))
		}
		t := time.NewTimer(wait)
		select {
		case <-ch:
		case <-t.C:
		}
		t.Stop()
	}
}

// pickLocked returns the ready host whose next request is the oldest, or
// nil and the soonest time at which one may be ready (zero if only a done
// request can make one ready).
func (f *Frontier) pickLocked(now time.Time) (*hostQueue, time.Time) {
	var best *hostQueue
	var soonest time.Time
	for _, h := range f.order {
		if h.out >= f.cfg.PerHost {
			continue
		}
		if best != nil && h.items[0].seq > best.items[0].seq {
			continue
		}
		at := now
		if f.cfg.Ready != nil {
			var busy bool
			at, busy = f.cfg.Ready.Ready(h.host)
			if busy {
				at = now.Add(busyPoll)
			}
		}
		if at.After(now) {
			if soonest.IsZero() || at.Before(soonest) {
				soonest = at
			}
			continue
		}
		best = h
	}
	return best, soonest
}

// fallbackLocked returns the host to hand out from when none is ready:
// the one ready soonest, preferring hosts under PerHost, then the oldest.
func (f *Frontier) fallbackLocked(now time.Time) *hostQueue {
	var best *hostQueue
	var bestAt time.Time
	for _, h := range f.order {
		at := now
		if f.cfg.Ready != nil {
			var busy bool
			if at, busy = f.cfg.Ready.Ready(h.host); busy {
				at = now.Add(time.Hour)
			}
		}
		if h.out >= f.cfg.PerHost {
			at = at.Add(24 * time.Hour)
		}
		if best == nil || at.Before(bestAt) || at.Equal(bestAt) && h.items[0].seq < best.items[0].seq {
			best, bestAt = h, at
		}
	}
	return best
}

// handLocked pops h's next request and leases it.
func (f *Frontier) handLocked(h *hostQueue, now time.Time) ([]byte, error) {
	it := h.items[0]
	h.items[0] = item{}
	h.items = h.items[1:]
	f.queued--
	f.seq++
	id := f.id + "-" + strconv.FormatUint(f.seq, 36)
	b, err := SetLease(it.payload, id)
	if err != nil { // cannot happen: AddRequest decoded it
		return nil, err
	}
	// Count the lease before the host may leave the queue: a host with a
	// request out keeps its state (and its PerHost bound) when its last
	// queued request is handed out.
	h.out++
	if len(h.items) == 0 {
		h.items = nil
		f.removeLocked(h)
	}
	f.leases[id] = &lease{host: h.host, url: it.url, at: now}
	f.stats.Handed++
	return b, nil
}

// removeLocked takes h out of the hosts with requests queued; its state
// is dropped once nothing of it is out either.
func (f *Frontier) removeLocked(h *hostQueue) {
	if h.pos >= 0 {
		last := f.order[len(f.order)-1]
		f.order[h.pos] = last
		last.pos = h.pos
		f.order[len(f.order)-1] = nil
		f.order = f.order[:len(f.order)-1]
		h.pos = -1
	}
	if h.out == 0 && len(h.items) == 0 {
		delete(f.hosts, h.host)
	}
}

// Done marks the request leased as id done: its host may be handed out
// again (once its limiter says so). Unknown ids (done before, expired,
// another frontier's) are ignored. robots.AttachFrontier calls it; call it
// yourself only for requests the collector does not run.
func (f *Frontier) Done(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.finishLocked(id) {
		f.stats.Done++
	}
}

func (f *Frontier) finishLocked(id string) bool {
	l := f.leases[id]
	if l == nil {
		return false
	}
	delete(f.leases, id)
	if h := f.hosts[l.host]; h != nil {
		h.out--
		if h.out == 0 && len(h.items) == 0 {
			delete(f.hosts, h.host)
		}
	}
	f.signalLocked()
	return true
}

// expireLocked counts done the leases older than Hold, and returns when
// the next one will be (zero if none is out).
func (f *Frontier) expireLocked(now time.Time) (next time.Time) {
	for id, l := range f.leases {
		if end := l.at.Add(f.cfg.Hold); end.After(now) {
			if next.IsZero() || end.Before(next) {
				next = end
			}
			continue
		}
		f.finishLocked(id)
		f.stats.Expired++
		f.log.Warn("frontier: a request handed out was never reported done; counted done (dropped by Colly before OnRequest? see robots.AttachFrontier)",
			slog.String("url", l.url), slog.Duration("after", now.Sub(l.at)))
	}
	return next
}

func (f *Frontier) signalLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// Stats returns the frontier's counters.
func (f *Frontier) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.stats
	s.Queued, s.Leased, s.Hosts = f.queued, len(f.leases), len(f.order)
	return s
}
