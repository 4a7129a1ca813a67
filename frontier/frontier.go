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
	"container/heap"
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
//
// The frontier asks a host again only once the time it was given has come
// (a busy host: 20 ms later), or when a request of the host it handed out
// is done: a host must not become ready earlier than Ready said but by
// such an event. *hostlimit.Limiter keeps to this (a delay or pause only
// moves a host's time later); a host that became ready earlier is handed
// out late, never early.
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
//
// Its cost does not grow with the number of hosts queued: hosts believed
// ready sit in a heap ordered by their oldest request, hosts waiting for
// their delay in a heap ordered by the time [Readiness] gave, and a host
// is asked again only once that time has come (or one of its requests is
// done), so a GetRequest costs O(log n) for n hosts plus one Ready call per
// host that came due.
type Frontier struct {
	cfg Config
	log *slog.Logger
	id  string // unique to this frontier: the prefix of its lease ids

	mu      sync.Mutex
	hosts   map[string]*hostQueue
	ready   hostHeap            // hosts with requests queued, under PerHost, believed ready
	waiting waitHeap            // the same, waiting for their Ready time
	blocked map[*hostQueue]bool // hosts with requests queued, at PerHost
	queued  int                 // requests queued
	nq      int                 // hosts with requests queued
	seq     uint64
	seen    map[string]struct{}
	leases  map[string]*lease
	fifo    []*lease      // leases in the order handed out (so by time), done ones included until they reach the front
	changed chan struct{} // closed and replaced when something changes
	stats   Stats
}

// Where a host with requests queued is kept.
const (
	inNone    = iota // nothing queued
	inReady          // Frontier.ready
	inWaiting        // Frontier.waiting
	inBlocked        // Frontier.blocked
)

type hostQueue struct {
	host  string
	items []item    // FIFO; items[0] is next
	out   int       // handed out, not done
	where uint8     // inNone, inReady, inWaiting, inBlocked
	idx   int       // index in its heap
	head  uint64    // items[0].seq: the heaps' key, kept here to spare a load
	at    time.Time // inWaiting: when to ask Ready again
	busy  bool      // Ready last said busy
}

type item struct {
	seq     uint64
	payload []byte
	url     string
}

type lease struct {
	id   string
	host string
	url  string
	at   time.Time
	done bool
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
		blocked: map[*hostQueue]bool{},
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
		h = &hostQueue{host: r.Host}
		f.hosts[r.Host] = h
	}
	f.seq++
	h.items = append(h.items, item{seq: f.seq, payload: payload, url: r.URL})
	if len(h.items) == 1 {
		h.head = f.seq
		f.nq++
		f.placeLocked(h)
	}
	f.queued++
	f.stats.Added++
	f.signalLocked()
	return nil
}

// placeLocked puts h, which has requests queued and is in no structure,
// where it belongs: blocked at PerHost, else among the ready (Ready is
// asked when it comes up).
func (f *Frontier) placeLocked(h *hostQueue) {
	if h.out >= f.cfg.PerHost {
		h.where = inBlocked
		f.blocked[h] = true
		return
	}
	h.where = inReady
	heap.Push(&f.ready, h)
}

// unplaceLocked takes h out of the structure it is in.
func (f *Frontier) unplaceLocked(h *hostQueue) {
	switch h.where {
	case inReady:
		heap.Remove(&f.ready, h.idx)
	case inWaiting:
		heap.Remove(&f.waiting, h.idx)
	case inBlocked:
		delete(f.blocked, h)
	}
	h.where = inNone
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

// pickLocked returns the ready host whose next request is the oldest, taken
// out of the ready heap, or nil and the soonest time at which one may be
// ready (zero if only a done request can make one ready). Hosts whose
// Ready time has come move to the ready heap first; each host it asks
// Ready of and finds not ready moves to the waiting heap, keyed by the
// time given (a busy host: busyPoll from now).
func (f *Frontier) pickLocked(now time.Time) (*hostQueue, time.Time) {
	for f.waiting.Len() > 0 && !f.waiting.hostHeap[0].at.After(now) {
		h := heap.Pop(&f.waiting).(*hostQueue)
		h.where = inReady
		heap.Push(&f.ready, h)
	}
	for len(f.ready) > 0 {
		h := heap.Pop(&f.ready).(*hostQueue)
		h.where = inNone
		at := f.readyAt(h, now)
		if !at.After(now) {
			return h, time.Time{}
		}
		h.at, h.where = at, inWaiting
		heap.Push(&f.waiting, h)
	}
	if f.waiting.Len() > 0 {
		return nil, f.waiting.hostHeap[0].at
	}
	return nil, time.Time{}
}

// readyAt asks Config.Ready when h may be asked; a busy host is looked at
// again busyPoll from now.
func (f *Frontier) readyAt(h *hostQueue, now time.Time) time.Time {
	if f.cfg.Ready == nil {
		return now
	}
	at, busy := f.cfg.Ready.Ready(h.host)
	if h.busy = busy; busy {
		return now.Add(busyPoll)
	}
	return at
}

// fallbackLocked returns the host to hand out from when none is ready,
// taken out of its structure: the one ready soonest (by the time Ready
// last gave, the oldest request on a tie; a busy host only if none of the
// next few is free), else, when every host is at PerHost, the one whose
// next request is the oldest.
func (f *Frontier) fallbackLocked(now time.Time) *hostQueue {
	if f.waiting.Len() > 0 {
		var skipped []*hostQueue
		h := heap.Pop(&f.waiting).(*hostQueue)
		for h.busy && f.waiting.Len() > 0 && len(skipped) < 8 {
			skipped = append(skipped, h)
			h = heap.Pop(&f.waiting).(*hostQueue)
		}
		if h.busy && len(skipped) > 0 {
			skipped = append(skipped, h)
			h = skipped[0]
			skipped = skipped[1:]
		}
		for _, s := range skipped {
			heap.Push(&f.waiting, s)
		}
		h.where = inNone
		return h
	}
	var best *hostQueue
	for h := range f.blocked { // at most one host per lease out
		if best == nil || h.head < best.head {
			best = h
		}
	}
	if best != nil {
		f.unplaceLocked(best)
	}
	return best
}

// handLocked pops the next request of h (taken out of every structure)
// and leases it.
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
	// Count the lease before the host is placed again: a host with a
	// request out keeps its state (and its PerHost bound) when its last
	// queued request is handed out.
	h.out++
	if len(h.items) == 0 {
		h.items = nil
		f.nq--
	} else {
		h.head = h.items[0].seq
		f.placeLocked(h)
	}
	l := &lease{id: id, host: h.host, url: it.url, at: now}
	f.leases[id] = l
	f.fifo = append(f.fifo, l)
	f.stats.Handed++
	return b, nil
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
	l.done = true
	if h := f.hosts[l.host]; h != nil {
		h.out--
		switch {
		case h.out == 0 && len(h.items) == 0:
			delete(f.hosts, h.host)
		case h.where == inBlocked && h.out < f.cfg.PerHost:
			f.unplaceLocked(h)
			f.placeLocked(h)
		case h.where == inWaiting:
			// A done request may make the host ready before the time
			// Ready gave (a busy host): look again now.
			f.unplaceLocked(h)
			f.placeLocked(h)
		}
	}
	f.signalLocked()
	return true
}

// expireLocked counts done the leases older than Hold, and returns when
// the next one will be (zero if none is out). Leases are handed out in
// time order, so only the front of the list is looked at.
func (f *Frontier) expireLocked(now time.Time) (next time.Time) {
	for len(f.fifo) > 0 {
		l := f.fifo[0]
		if l.done {
			f.fifo[0] = nil
			f.fifo = f.fifo[1:]
			continue
		}
		if end := l.at.Add(f.cfg.Hold); end.After(now) {
			return end
		}
		f.fifo[0] = nil
		f.fifo = f.fifo[1:]
		f.finishLocked(l.id)
		f.stats.Expired++
		f.log.Warn("frontier: a request handed out was never reported done; counted done (dropped by Colly before OnRequest, or its collector does not report Done from OnError and OnScraped)",
			slog.String("url", l.url), slog.Duration("after", now.Sub(l.at)))
	}
	return time.Time{}
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
	s.Queued, s.Leased, s.Hosts = f.queued, len(f.leases), f.nq
	return s
}

// hostHeap orders hosts by their oldest queued request (the ready hosts);
// container/heap keeps each host's index in idx.
type hostHeap []*hostQueue

func (q hostHeap) Len() int           { return len(q) }
func (q hostHeap) Less(i, j int) bool { return q[i].head < q[j].head }
func (q hostHeap) Swap(i, j int)      { q[i], q[j] = q[j], q[i]; q[i].idx = i; q[j].idx = j }
func (q *hostHeap) Push(x any)        { h := x.(*hostQueue); h.idx = len(*q); *q = append(*q, h) }
func (q *hostHeap) Pop() any {
	old := *q
	h := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return h
}

// waitHeap orders hosts by the time Ready gave, then by their oldest
// queued request.
type waitHeap struct{ hostHeap }

func (q waitHeap) Less(i, j int) bool {
	a, b := q.hostHeap[i], q.hostHeap[j]
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.head < b.head
}
