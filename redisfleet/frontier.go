package redisfleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/frontier"
)

// Defaults of the frontier's options.
const (
	DefaultFrontierName  = "default"
	DefaultOutageLimit   = time.Minute
	DefaultFrontierTTL   = 7 * 24 * time.Hour
	DefaultJournalCap    = 100_000
	frontierPruneMax     = 8192 // journal entries checked against the done set per renewal tick
	frontierTouchMax     = time.Minute
	frontierScan         = 32                     // hosts a pop looks at
	frontierBusyPoll     = 50 * time.Millisecond  // a host busy at its limiter is looked at again after
	frontierCapWait      = time.Hour              // a host at PerHost waits for a done request (or a reaped lease)
	frontierPollCap      = 250 * time.Millisecond // longest sleep without looking (wake-ups may be lost)
	frontierBatch        = 256                    // requests per script call when queuing again
	frontierRetryInitial = 50 * time.Millisecond
	frontierRetryMax     = 2 * time.Second
	frontierReapPoll     = time.Second          // a partition with requests out and none queued is looked at again after
	frontierAbandonMax   = 4096                 // failed pops remembered (beyond, a late pop holds its host for the lease)
	frontierDoneLinger   = 5 * time.Millisecond // WithBatching: longest a done report waits for the next pop's pipeline
)

// FrontierOption configures a [Frontier].
type FrontierOption func(*frontierConfig)

type frontierConfig struct {
	name        string
	perHost     int
	maxWait     time.Duration
	hold        time.Duration
	outageLimit time.Duration
	journal     bool
	journalCap  int
	ttl         time.Duration
	batch       time.Duration // WithBatching: 0 off
	linger      time.Duration // WithBatching: how long a done report waits for a pop (min(batch, frontierDoneLinger); tests change it)
}

// WithFrontierName names the frontier (default "default"): processes that
// crawl together use the same name; a new crawl on the same Redis uses a
// new one (the frontier's seen set lasts, so that a URL is fetched once
// across restarts too).
func WithFrontierName(name string) FrontierOption {
	return func(c *frontierConfig) {
		if name != "" {
			c.name = name
		}
	}
}

// WithPerHost sets how many requests of one host may be out (handed out,
// not done) fleet-wide at a time (default 1; n ≤ 0 keeps it).
func WithPerHost(n int) FrontierOption {
	return func(c *frontierConfig) {
		if n > 0 {
			c.perHost = n
		}
	}
}

// WithMaxWait bounds how long GetRequest waits for a ready host
// (default 1 s; d ≤ 0 keeps it); see [Frontier.GetRequest].
func WithMaxWait(d time.Duration) FrontierOption {
	return func(c *frontierConfig) {
		if d > 0 {
			c.maxWait = d
		}
	}
}

// WithHold sets how long a request this process handed out may stay not
// done before it counts as done, with a warning (default 2 minutes; d ≤ 0
// keeps it). It only matters for requests Colly drops without OnError or
// OnScraped (see package frontier).
func WithHold(d time.Duration) FrontierOption {
	return func(c *frontierConfig) {
		if d > 0 {
			c.hold = d
		}
	}
}

// WithOutageLimit sets how long QueueSize keeps retrying while Redis
// cannot be reached before it returns the error, which ends Colly's
// queue.Run with it (default 1 minute; d ≤ 0 keeps it). It also bounds
// how long Redis may keep losing the frontier's keys (each recovery
// within a lease of the previous one: an evicting Redis whose maxmemory
// cannot hold the queue, see [WithEviction]) before QueueSize returns an
// error saying so, with the requests this process knows not crawled.
func WithOutageLimit(d time.Duration) FrontierOption {
	return func(c *frontierConfig) {
		if d > 0 {
			c.outageLimit = d
		}
	}
}

// WithJournal turns the journal on or off (default on): the process keeps
// in memory the requests it queued until they are done in the fleet
// (bounded by [WithJournalCap]), so that it can queue them again if Redis
// loses its data. Off, a Redis restarted empty loses the queue. A request
// whose write failed on the client (Redis unreachable, or its reply lost)
// and that Redis then finds seen is journaled too: the failed write may
// have queued it.
func WithJournal(on bool) FrontierOption {
	return func(c *frontierConfig) { c.journal = on }
}

// WithJournalCap bounds the journal (default 100,000 requests; n ≤ 0
// keeps it). The journal keeps a request until it is done anywhere in
// the fleet: the process drops its own requests when it reports them done,
// and, every third of the lease, up to 8,192 of those other processes
// reported done (a fleet-wide done set in Redis). A request queued while
// the journal is full is not journaled: it is counted
// (FrontierStats.NotJournaled) and a warning is logged when the journal
// fills; a Redis restarted empty loses such a request.
func WithJournalCap(n int) FrontierOption {
	return func(c *frontierConfig) {
		if n > 0 {
			c.journalCap = n
		}
	}
}

// WithFrontierTTL sets how long the frontier's keys in Redis (queues,
// seen and done sets, leases, counters) outlive the crawl's last activity
// (default 7 days; d ≤ 0 keeps it; at least a minute). Every process
// refreshes the TTL while it runs (when it queues requests, and at most
// once a minute from its lease renewal), so the keys of a crawl expire
// that long after its last process stopped; a URL queued again within
// that time is still refused as seen. [Frontier.Drop] deletes them at
// once.
func WithFrontierTTL(d time.Duration) FrontierOption {
	return func(c *frontierConfig) {
		if d > 0 {
			c.ttl = max(d, time.Minute)
		}
	}
}

// WithBatching turns batching on (d > 0; default off): the frontier
// trades the exactness of two answers for fewer Redis round trips, for a
// crawl where each page queues several links.
//
//   - AddRequest keeps the request in memory and returns nil (never
//     frontier.ErrSeen: a request seen before is dropped when written, and
//     counted in FrontierStats.Seen). The kept requests are written
//     together, in one pipeline with the next done report (so a page's
//     links go out with its done report, links first, then the limiter's
//     releases kept for it) or the next pop, at the latest d after the
//     first of them was kept, when 256 are kept, by a GetRequest while
//     this process has no request out, and by Close.
//   - Done sends nothing at once: the done report waits for this
//     process's next pop (a GetRequest's look at a partition) and goes
//     first in its pipeline, so that both cost one round trip and the
//     host the report frees may be handed out by that very pop. It waits
//     at most min(d, 5 ms), then goes alone; QueueSize writes it before it
//     asks Redis, and so does Close. The host's next grant may come that
//     much later (the permit's release kept for the report goes with it:
//     a later release only lengthens the gap).
//   - QueueSize answers from what this process knows, without asking
//     Redis, while that is more than zero (requests it has out or keeps):
//     Colly's queue only needs to know whether the frontier is empty. It
//     asks Redis (and writes what is kept) when this process knows of
//     nothing, or after a GetRequest that handed out nothing.
//
// A process that dies with links kept loses nothing: the page they were
// found on was not reported done (its done report goes out after them), so
// its lease ends, another process fetches the page again and finds them
// again.
func WithBatching(d time.Duration) FrontierOption {
	return func(c *frontierConfig) {
		if d > 0 {
			c.batch = d
		}
	}
}

// FrontierStats counts what one process's frontier did.
type FrontierStats struct {
	Added     int64 // requests this process queued
	Seen      int64 // refused as queued before (by any process)
	Pending   int   // queued, not yet written to Redis (kept while Redis was away, or by WithBatching)
	Handed    int64 // requests handed out to this process
	Early     int64 // of which before their host was ready (MaxWait passed)
	Done      int64 // reported done by this process
	Expired   int64 // counted done after the hold
	Reaped    int64 // leases of dead processes this process put back
	Recovered int64 // requests queued again after Redis lost its data
	Postponed int64 // handed back unsent by this process (Postpone), to be handed out again
	Leased    int   // handed out to this process, not yet done

	Journal      int   // requests in the journal now
	Pruned       int64 // journal entries dropped because another process finished them
	NotJournaled int64 // requests queued while the journal was full (WithJournalCap)
}

// A Frontier is the fleet's per-host queue frontier on Redis, implementing
// Colly's queue.Storage: every process of the fleet runs a colly
// queue.Queue on a Frontier of the same name and shares one queue per
// host, one seen set and the hosts' readiness.
//
// GetRequest hands out a request whose host may be asked now: fewer than
// PerHost requests of the host out fleet-wide, and the fleet limiter's
// state of the host (read in the same Lua script that pops, one round
// trip) says its delay has passed and no permit holds it. While the Fleet
// has a [Limiter], the same script grants the host's permit for the
// request, which the Limiter's next Acquire of the host in this process
// takes without a round trip, and Done's script releases the permit (see
// the package doc, Round trips per request). When no host is
// ready it waits (until the soonest host's time, unless another process
// looks then; woken on its own Pub/Sub channel, with the time a host turns
// ready, when a new host is queued or a host with requests is done and no
// process would look by then) at most MaxWait, then hands out
// the request of the host ready soonest, as package frontier does. Within
// a host requests come out in FIFO order; among ready hosts, the one whose
// ready time is oldest comes first.
//
// Each request (method, URL, body) is queued once for the fleet (a seen
// set in Redis): AddRequest returns frontier.ErrSeen for the others.
//
// QueueSize counts the requests queued and those handed out and not yet
// done anywhere in the fleet, so that every process's queue.Run ends only
// when the shared frontier is empty and no process is working (a request
// being worked on may queue new ones). A process whose queue is empty
// while others work waits in GetRequest (at most MaxWait at a time) and
// returns frontier.ErrEmpty, on which Colly's loop asks QueueSize again.
//
// Completion: robots.AttachFrontier (OnError, OnScraped) reports each request
// done, as in package frontier. A handed-out request is leased: the
// process renews its leases every third of the fleet's lease
// ([WithLease]); when a process dies its leases end and the next GetRequest
// anywhere puts those requests back at the head of their host's queue.
// Delivery is therefore at least once: a request that a dying process had
// sent, or one whose renewal was late, can be fetched again.
//
// Partitions: the queue of a host lives in the host's partition of the
// fleet ([WithPartitions]); GetRequest pops partition by partition (one
// round trip each) and QueueSize asks them all in one pipeline.
//
// Failure: while Redis is away AddRequest keeps the requests in memory and
// writes them when it answers again (no URL is lost; QueueSize counts
// them), Done is retried the same way, GetRequest returns an error after
// MaxWait (Colly's loop then asks QueueSize), and QueueSize retries with
// backoff for the outage limit ([WithOutageLimit]) and then returns an
// error wrapping [ErrUnavailable], which ends queue.Run. If Redis comes
// back empty (restarted without persistence), every process notices (a
// partition's generation changed; one lost partition makes it check all)
// and queues again the requests of its
// journal ([WithJournal]) and registers its leases again: nothing is lost
// (but requests beyond the journal's cap), and a page another process had
// fetched is fetched again only if it was done after this process last
// pruned its journal (every third of the lease, against a fleet-wide set
// of the requests done).
//
// A key of a partition that vanishes alone (evicted under WithEviction,
// deleted) is found by the next script there, which checks that the keys
// its counters require exist: the partition is then emptied as if Redis
// had lost it, keeping the request keys it saw and those done, and every
// process recovers it as above (queuing again from its journal only what
// is not done); each logs the loss once per recovery, partitions summed,
// with the requests the emptied partitions held (dropped=N; docs/fleet.md
// explains every field). So no host is stranded and no URL is lost but those no
// live process journaled, which that warning reports.
//
// A pop that timed out on the client while Redis hung may still run when
// it resumes: the process's next pop on that partition puts back the
// request it leased, or, if it has not run yet, makes it lease nothing
// (an abandoned-ids zset), so no host is held for a lease and no URL is
// lost.
//
// Redis memory: the seen and done sets grow with the crawl (one request
// key each per request); every key of the frontier expires
// [WithFrontierTTL] after the crawl's last activity, and [Frontier.Drop]
// deletes them at once.
//
// A Frontier is safe for concurrent use; one queue should run on it per
// process. Init starts one goroutine (lease renewal), which Close stops.
type Frontier struct {
	fl    *Fleet
	cfg   frontierConfig
	log   *slog.Logger
	parts []frPart

	startOnce sync.Once
	stop      chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
	recMu     sync.Mutex // one recovery at a time
	wakeStop  func()     // ends the wake-up subscriptions

	mu          sync.Mutex
	own         map[string]*ownLease
	journal     map[string]journalItem
	pendingAdd  []journalItem
	pendingDone []doneItem
	stats       FrontierStats
	downSince   time.Time
	full        bool          // the journal is full (warned once until it has room)
	touched     time.Time     // the TTL was last refreshed (renewLoop)
	next        int           // the partition GetRequest looks at first (rotates)
	woken       chan struct{} // closed and replaced on every wake-up
	lost        map[int]bool  // partitions whose data Redis lost, to recover
	losses      eventRun      // recoveries, each within a lease of the previous (lossError)
	lossLogged  time.Time     // the latest recovery's log line
	lossQuiet   int           // recoveries not logged since it
	batchTimer  *time.Timer   // WithBatching: writes the kept requests
	doneTimer   *time.Timer   // WithBatching: writes the kept done reports (frontierDoneLinger)
	askSize     bool          // WithBatching: the next QueueSize asks Redis
}

// frPart is one partition of a Frontier: its keys (all in one hash slot)
// and what this process knows of it (under Frontier.mu).
type frPart struct {
	keys []string // the KEYS of every frontier script
	pub  string   // ARGV 3 of the scripts: the publish command, a space, the wake channel

	gen string
	// abandoned are the lease ids of pops that failed on the client, and of
	// requests postponed (Postpone) with the time their host may be asked
	// (zero for the others): the partition's next pop ends them
	// (frPopScript).
	abandoned map[string]time.Time
	look      time.Time // when it is worth a pop (zero: now)
	wakes     uint64    // wake-ups heard: a pop's reply does not undo a later one
	empty     bool      // nothing queued at the latest look
	leased    int64     // requests out fleet-wide at the latest look
}

// doneItem is a done report kept until Redis answers: the partition, the
// lease id and the request key.
type doneItem struct {
	p       int
	id, key string
}

type ownLease struct {
	host, key, payload, url string
	at                      time.Time
}

// journalItem is a request this process queued: its key, host and
// payload; again: queued again from the journal after a loss; unsure: an
// earlier write of it failed on the client (Redis unreachable, or a reply
// that never came) and may have queued it, so that it is journaled even
// if Redis then says it was seen.
type journalItem struct {
	key, host, payload string
	again, unsure      bool
}

// Frontier returns the fleet's queue frontier configured by opts. Pass it
// to colly's queue.New and call robots.AttachFrontier on the collector the
// queue runs.
func (f *Fleet) Frontier(opts ...FrontierOption) *Frontier {
	cfg := frontierConfig{
		name:        DefaultFrontierName,
		perHost:     1,
		maxWait:     frontier.DefaultMaxWait,
		hold:        frontier.DefaultHold,
		outageLimit: DefaultOutageLimit,
		journal:     true,
		journalCap:  DefaultJournalCap,
		ttl:         DefaultFrontierTTL,
	}
	for _, o := range opts {
		o(&cfg)
	}
	cfg.linger = min(cfg.batch, frontierDoneLinger)
	f.setOutageLimit(cfg.outageLimit)
	q := &Frontier{
		fl:      f,
		cfg:     cfg,
		log:     f.log,
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
		own:     map[string]*ownLease{},
		journal: map[string]journalItem{},
		woken:   make(chan struct{}),
		lost:    map[int]bool{},
	}
	for p := range f.cfg.partitions {
		k := func(kind string) string { return f.tag(p) + "fr:" + cfg.name + ":" + kind }
		q.parts = append(q.parts, frPart{
			keys:      []string{k("hosts"), k("count"), k("seen"), k("lease"), k("leaseend"), k("held"), k("done"), k("abandoned"), k("qitems"), k("qends"), k("waiters"), k("seen0")},
			pub:       f.pubCmd + " " + f.pkey(p, kindWake),
			abandoned: map[string]time.Time{},
		})
	}
	return q
}

// Init implements queue.Storage: it starts the lease renewal and the
// wake-up subscriptions (once).
func (q *Frontier) Init() error {
	q.startOnce.Do(func() {
		all := make([]int, len(q.parts))
		for p := range all {
			all[p] = p
		}
		q.fl.listen(context.Background(), all...) // all at once, then each wakeups below costs nothing
		var stops []func()
		for p := range q.parts {
			w, cancel := q.fl.subscribe(context.Background(), p, q.parts[p].keys[0], "")
			stop := make(chan struct{})
			go func() {
				for {
					select {
					case hint := <-w:
						// hint: the µs until the partition is worth a look
						// (0: now), or -1: the partition emptied, nothing
						// queued or out (wakeAll, lua/include/frontier_head.lua), as a
						// pop would say; the next request queued there
						// wakes one process.
						at := time.Now().Add(time.Duration(hint) * time.Microsecond)
						q.mu.Lock()
						if hint < 0 {
							pt := &q.parts[p]
							pt.look, pt.empty, pt.leased = time.Now().Add(q.cfg.maxWait), true, 0
							q.parts[p].wakes++
							close(q.woken)
							q.woken = make(chan struct{})
							q.mu.Unlock()
							continue
						}
						if pt := &q.parts[p]; pt.look.After(at) {
							pt.look = at
						}
						q.parts[p].empty = false
						q.parts[p].wakes++
						close(q.woken)
						q.woken = make(chan struct{})
						q.mu.Unlock()
					case <-stop:
						return
					}
				}
			}()
			stops = append(stops, func() { cancel(); close(stop) })
		}
		q.wakeStop = func() {
			for _, s := range stops {
				s()
			}
		}
		go q.renewLoop()
	})
	return nil
}

// Close stops the lease renewal. Requests still out are not reported done:
// their leases end and other processes take them over. It does not close
// the Fleet.
func (q *Frontier) Close() error {
	q.Init()
	q.closeOnce.Do(func() {
		close(q.stop) // a done report from now on is written at once (Done)
		q.flush(context.Background())
		q.wakeStop()
	})
	<-q.stopped
	return nil
}

// Requeues reports true: the fleet's frontier may hand a request out again
// to the process that had it (after its lease ended, or after Redis lost
// its data), so robots.AttachFrontier turns Colly's own visited check off
// (AllowURLRevisit): it would drop such a request silently, holding its
// host and the fleet's end until the hold. The frontier queues each
// request once for the fleet already.
func (q *Frontier) Requeues() bool { return true }

// Stats returns this process's counters.
func (q *Frontier) Stats() FrontierStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.stats
	s.Pending = len(q.pendingAdd)
	s.Leased = len(q.own)
	s.Journal = len(q.journal)
	return s
}

// argv returns the ARGV every script of partition p starts with.
func (q *Frontier) argv(p int, args ...any) []any {
	return append([]any{q.fl.token(), q.fl.tag(p), q.parts[p].pub, q.cfg.ttl.Milliseconds()}, args...)
}

// run runs one script on partition p, bounded by the call timeout, and
// checks the data generation it returns.
func (q *Frontier) run(ctx context.Context, p int, s *redis.Script, args ...any) ([]any, error) {
	cctx, cancel := context.WithTimeout(ctx, q.fl.cfg.callTimeout)
	defer cancel()
	v, err := s.Run(cctx, q.fl.rdb, q.parts[p].keys, q.argv(p, args...)...).Slice()
	return q.reply(ctx, p, v, err)
}

// reply checks a script's reply on partition p: an error is counted as an
// outage when Redis could not be reached; a new data generation makes this
// process queue again what it knows.
func (q *Frontier) reply(ctx context.Context, p int, v []any, err error) ([]any, error) {
	if err != nil {
		err = q.fl.callError("frontier", err)
		if errors.Is(err, ErrUnavailable) {
			q.fl.outage("frontier", err)
			q.mu.Lock()
			if q.downSince.IsZero() {
				q.downSince = time.Now()
			}
			q.mu.Unlock()
		}
		return nil, err
	}
	q.fl.recovered()
	if len(v) == 0 {
		return nil, errors.New("redisfleet: frontier: empty script reply")
	}
	gen, _ := v[0].(string)
	q.mu.Lock()
	q.downSince = time.Time{}
	lost := q.parts[p].gen != "" && gen != q.parts[p].gen
	q.parts[p].gen = gen
	q.mu.Unlock()
	if lost {
		q.mu.Lock()
		q.lost[p] = true
		q.mu.Unlock()
		q.recover(ctx)
	}
	return v, nil
}

// runAll runs s on every partition at once (a pipeline: one round trip
// per Redis node) with the same script arguments, and returns the replies
// by partition; the first error, if any.
func (q *Frontier) runAll(ctx context.Context, s *redis.Script, args ...any) ([][]any, error) {
	cctx, cancel := context.WithTimeout(ctx, q.fl.cfg.callTimeout)
	defer cancel()
	exec := func() ([]*redis.Cmd, bool) {
		pipe := q.fl.rdb.Pipeline()
		cmds := make([]*redis.Cmd, len(q.parts))
		for p := range q.parts {
			cmds[p] = s.EvalSha(cctx, pipe, q.parts[p].keys, q.argv(p, args...)...)
		}
		pipe.Exec(cctx) // each command carries its own error
		for _, c := range cmds {
			if redis.HasErrorPrefix(c.Err(), "NOSCRIPT") {
				return cmds, true
			}
		}
		return cmds, false
	}
	cmds, noScript := exec()
	if noScript {
		// A node that has not seen the script yet (a Cluster node, a
		// restarted server): load it everywhere, and once more.
		if err := s.Load(cctx, q.fl.rdb).Err(); err != nil {
			return nil, q.fl.callError("frontier: SCRIPT LOAD", err)
		}
		cmds, _ = exec()
	}
	out := make([][]any, len(q.parts))
	var first error
	for p, c := range cmds {
		v, e := c.Slice()
		out[p], e = q.reply(ctx, p, v, e)
		if e != nil && first == nil {
			first = e
		}
	}
	return out, first
}

// count returns the requests queued and out in every partition, read in
// one pipeline of HMGETs (no script: one round trip per Redis node, a
// few µs of Redis's time per partition); lost reports a partition whose
// generation changed or vanished since this process last saw it (Redis
// lost its data), which it marks for recovery.
func (q *Frontier) count(ctx context.Context) (int, bool, error) {
	cctx, cancel := context.WithTimeout(ctx, q.fl.cfg.callTimeout)
	defer cancel()
	pipe := q.fl.rdb.Pipeline()
	cmds := make([]*redis.SliceCmd, len(q.parts))
	for p := range q.parts {
		cmds[p] = pipe.HMGet(cctx, q.parts[p].keys[1], "q", "l", "gen")
	}
	if _, err := pipe.Exec(cctx); err != nil {
		err = q.fl.callError("frontier: count", err)
		if errors.Is(err, ErrUnavailable) {
			q.fl.outage("frontier", err)
		}
		return 0, false, err
	}
	q.fl.recovered()
	n, lost := 0, false
	q.mu.Lock()
	defer q.mu.Unlock()
	q.downSince = time.Time{}
	for p, c := range cmds {
		v := c.Val()
		n += int(frNum(frAt(v, 0)) + frNum(frAt(v, 1)))
		gen, _ := frAt(v, 2).(string)
		if known := q.parts[p].gen; known != "" && gen != known {
			// Gone (nil) or recreated by another process: lost.
			q.lost[p] = true
			q.parts[p].gen = gen
			lost = true
		}
	}
	return n, lost, nil
}

// AddRequest implements queue.Storage: it queues a request serialised by
// Colly at the end of its host's queue, once for the fleet: a request
// queued before (by any process) gets frontier.ErrSeen. Bytes that are not
// such a request get an error wrapping frontier.ErrBadRequest. While Redis
// is away the request is kept in memory and written once it answers; the
// error is then nil.
func (q *Frontier) AddRequest(b []byte) error {
	r, err := frontier.Decode(b)
	if err != nil {
		return err
	}
	q.Init()
	it := journalItem{key: r.Key, host: r.Host, payload: string(b)}
	ctx := context.Background()
	if q.cfg.batch > 0 {
		q.mu.Lock()
		q.pendingAdd = append(q.pendingAdd, it)
		n := len(q.pendingAdd)
		if q.batchTimer == nil {
			q.batchTimer = time.AfterFunc(q.cfg.batch, func() { q.flush(context.Background()) })
		}
		q.mu.Unlock()
		if n >= frontierBatch {
			q.flush(ctx)
		}
		return nil
	}
	q.flush(ctx)
	v, err := q.run(ctx, q.fl.part(it.host), frAddScript, q.cfg.ttl.Milliseconds(), 0, it.key, it.host, it.payload)
	if err != nil {
		if !errors.Is(err, ErrUnavailable) {
			return err
		}
		it.unsure = true // the call may have run (a reply that never came)
		q.mu.Lock()
		q.pendingAdd = append(q.pendingAdd, it)
		q.mu.Unlock()
		return nil
	}
	if queued := decodeFlags(v); len(queued) != 1 || !queued[0] {
		q.mu.Lock()
		q.stats.Seen++
		q.mu.Unlock()
		return frontier.ErrSeen
	}
	q.mu.Lock()
	q.stats.Added++
	q.remember(it)
	q.mu.Unlock()
	return nil
}

// remember puts it in the journal, if there is room. q.mu is held.
func (q *Frontier) remember(it journalItem) {
	if !q.cfg.journal {
		return
	}
	if len(q.journal) >= q.cfg.journalCap {
		q.stats.NotJournaled++
		if !q.full {
			q.full = true
			q.log.Warn("redisfleet: frontier: the journal is full; requests queued from now on are lost if Redis loses its data (see WithJournalCap)",
				slog.Int("cap", q.cfg.journalCap))
		}
		return
	}
	q.journal[it.key] = it
}

// forget drops key from the journal. q.mu is held.
func (q *Frontier) forget(key string) {
	delete(q.journal, key)
	if q.full && len(q.journal) < q.cfg.journalCap {
		q.full = false
	}
}

// flush writes what is kept (queued requests and done reports, kept while
// Redis was away or by WithBatching) in one pipeline: the requests first,
// by partition, then the done reports. What fails stays kept.
func (q *Frontier) flush(ctx context.Context) { q.flushWith(ctx, nil) }

// frCall is a script call of the frontier on one partition, with the
// partition's KEYS and ARGV q.argv(p, args...).
type frCall struct {
	p    int
	s    *redis.Script
	args []any
}

// flushWith is flush, with then (if not nil) last in the same pipeline,
// after the done reports (so that a host a done report frees can be handed
// out by a pop sent as then); it returns then's reply, checked as run
// does. With nothing kept, then goes alone (run).
func (q *Frontier) flushWith(ctx context.Context, then *frCall) ([]any, error) {
	q.mu.Lock()
	adds, dones := q.pendingAdd, q.pendingDone
	q.pendingAdd, q.pendingDone = nil, nil
	if q.batchTimer != nil {
		q.batchTimer.Stop()
		q.batchTimer = nil
	}
	if q.doneTimer != nil {
		q.doneTimer.Stop()
		q.doneTimer = nil
	}
	q.mu.Unlock()
	if len(adds) == 0 && len(dones) == 0 {
		if then == nil {
			return nil, nil
		}
		return q.run(ctx, then.p, then.s, then.args...)
	}
	// The limiter's releases kept for this pipeline (grant.go) go after
	// the requests and before the done reports, whose wake-ups then see
	// the hosts released: in the done report's script of their partition
	// when there is one, else alone.
	ops := q.fl.takeDeferred("")
	type call struct {
		p     int
		s     *redis.Script
		keys  []string // nil: the partition's
		args  []any
		adds  []journalItem
		dones []doneItem
		host  int   // 1 + the index in ops of a hostScript call; 0: a frontier script
		ops   []int // the indexes in ops of the limiter operations a done report carries
	}
	var calls []call
	// By partition, and apart those queued again from the journal.
	type batch struct {
		p     int
		again bool
	}
	byPart := map[batch][]journalItem{}
	var order []batch
	for _, it := range adds {
		b := batch{q.fl.part(it.host), it.again}
		if _, ok := byPart[b]; !ok {
			order = append(order, b)
		}
		byPart[b] = append(byPart[b], it)
	}
	for _, b := range order {
		items := byPart[b]
		again := 0
		if b.again {
			again = 1
		}
		for len(items) > 0 {
			n := min(len(items), frontierBatch)
			args := make([]any, 0, 2+3*n)
			args = append(args, q.cfg.ttl.Milliseconds(), again)
			for _, it := range items[:n] {
				args = append(args, it.key, it.host, it.payload)
			}
			calls = append(calls, call{p: b.p, s: frAddScript, args: args, adds: items[:n]})
			items = items[n:]
		}
	}
	donesByPart := map[int][]doneItem{}
	var doneOrder []int
	for _, d := range dones {
		if _, ok := donesByPart[d.p]; !ok {
			doneOrder = append(doneOrder, d.p)
		}
		donesByPart[d.p] = append(donesByPart[d.p], d)
	}
	opsByPart := map[int][]int{}
	for i, op := range ops {
		if _, ok := donesByPart[op.p]; ok {
			opsByPart[op.p] = append(opsByPart[op.p], i)
		} else {
			calls = append(calls, call{p: op.p, s: hostScript, host: i + 1})
		}
	}
	for _, p := range doneOrder {
		ds, carried := donesByPart[p], opsByPart[p]
		keys := q.parts[p].keys
		args := make([]any, 0, 2+2*len(ds))
		args = append(args, frontierBusyPoll.Microseconds(), len(carried))
		if len(carried) > 0 {
			keys = slices.Clip(keys)
			for _, i := range carried {
				op := ops[i]
				keys = append(keys, q.fl.hostScriptKeys(op.host)...)
				ha := q.fl.hostArgs(op.p, op.mode, op.op, op.tok, -1, op.extra...)
				args = append(append(args, len(ha)), ha...)
			}
		}
		for _, d := range ds {
			args = append(args, d.id, d.key)
		}
		calls = append(calls, call{p: p, s: frDoneScript, keys: keys, args: args, dones: ds, ops: carried})
	}
	last := -1 // the index of then in calls
	if then != nil {
		last = len(calls)
		calls = append(calls, call{p: then.p, s: then.s, args: then.args})
	}
	cctx, cancel := context.WithTimeout(ctx, q.fl.cfg.callTimeout)
	defer cancel()
	cmds := make([]*redis.Cmd, len(calls))
	exec := func(only func(i int) bool) bool {
		pipe := q.fl.rdb.Pipeline()
		for i, c := range calls {
			switch {
			case !only(i):
			case c.host > 0:
				op := ops[c.host-1]
				cmds[i] = hostScript.EvalSha(cctx, pipe, q.fl.hostScriptKeys(op.host), q.fl.hostArgs(op.p, op.mode, op.op, op.tok, -1, op.extra...)...)
			default:
				keys := c.keys
				if keys == nil {
					keys = q.parts[c.p].keys
				}
				cmds[i] = c.s.EvalSha(cctx, pipe, keys, q.argv(c.p, c.args...)...)
			}
		}
		pipe.Exec(cctx) // each command carries its own error
		missing := false
		for _, c := range cmds {
			missing = missing || redis.HasErrorPrefix(c.Err(), "NOSCRIPT")
		}
		return missing
	}
	if exec(func(int) bool { return true }) {
		// A node that has not seen a script yet: load them everywhere and
		// send again only the calls it refused (the others ran).
		loaded := map[*redis.Script]bool{}
		var lerr error
		for i, c := range calls {
			if redis.HasErrorPrefix(cmds[i].Err(), "NOSCRIPT") && !loaded[c.s] {
				loaded[c.s] = true
				if err := c.s.Load(cctx, q.fl.rdb).Err(); err != nil && lerr == nil {
					lerr = err
				}
			}
		}
		if lerr == nil {
			again := make([]bool, len(calls))
			for i := range calls {
				again[i] = redis.HasErrorPrefix(cmds[i].Err(), "NOSCRIPT")
			}
			exec(func(i int) bool { return again[i] })
		}
	}
	var failedAdds []journalItem
	var failedDones []doneItem
	opCmds := make([]*redis.Cmd, len(ops))
	for i, c := range calls {
		if c.host > 0 {
			opCmds[c.host-1] = cmds[i]
			continue
		}
		if i == last {
			continue
		}
		v, err := cmds[i].Slice()
		done := decodeDone(v, len(c.ops))
		for j, k := range c.ops {
			// The reply of a limiter operation the done report carried,
			// as hostScript's own: {1, generation}.
			oc := redis.NewCmd(cctx)
			if e := done.OpGens[j]; err == nil && e != 0 {
				oc.SetVal([]any{int64(1), e})
			} else if err != nil {
				oc.SetErr(err)
			} else {
				oc.SetErr(fmt.Errorf("redisfleet: limiter %s in the done report: no reply", ops[k].op))
			}
			opCmds[k] = oc
		}
		v, err = q.reply(ctx, c.p, v, err)
		if err != nil {
			for _, it := range c.adds {
				it.unsure = it.unsure || errors.Is(err, ErrUnavailable)
				failedAdds = append(failedAdds, it)
			}
			failedDones = append(failedDones, c.dones...)
			continue
		}
		if c.s != frAddScript {
			continue
		}
		queued := decodeFlags(v)
		q.mu.Lock()
		for j, it := range c.adds {
			if j < len(queued) && queued[j] {
				q.stats.Added++
				q.remember(it)
			} else {
				q.stats.Seen++
				if it.unsure {
					// Seen, maybe because the write that failed here ran:
					// then no other process journals it.
					it.unsure = false
					q.remember(it)
				}
			}
		}
		q.mu.Unlock()
	}
	q.fl.hostOpsDone(ops, opCmds)
	if len(failedAdds) > 0 || len(failedDones) > 0 {
		q.mu.Lock()
		q.pendingAdd = append(failedAdds, q.pendingAdd...)
		q.pendingDone = append(failedDones, q.pendingDone...)
		q.mu.Unlock()
	}
	if then == nil {
		return nil, nil
	}
	v, err := cmds[last].Slice()
	return q.reply(ctx, then.p, v, err)
}

// QueueSize implements queue.Storage: the requests queued plus those out
// (handed out, not done) in the whole fleet, plus those this process keeps
// until Redis answers. It reads every partition's counters at once (one
// round trip per Redis node, no script). While Redis is away it retries with backoff (50 ms
// doubling to 2 s) for the outage limit, then returns an error wrapping
// [ErrUnavailable].
func (q *Frontier) QueueSize() (int, error) {
	q.Init()
	if q.cfg.batch > 0 {
		q.mu.Lock()
		n, ask := len(q.own)+len(q.pendingAdd), q.askSize
		q.askSize = false
		q.mu.Unlock()
		if n > 0 && !ask {
			return n, nil
		}
	}
	ctx := context.Background()
	start := time.Now()
	for backoff := frontierRetryInitial; ; backoff = min(2*backoff, frontierRetryMax) {
		q.flush(ctx)
		n, lost, err := q.count(ctx)
		if err == nil {
			if err := q.lossError(); err != nil {
				return 0, err
			}
			if err := q.fl.oomError(q.cfg.outageLimit, "frontier", q.kept); err != nil {
				return 0, err
			}
			if lost {
				// Redis lost the data of a partition: its count is of the
				// emptied Redis, before this process queued its journal
				// again: count again.
				q.recover(ctx)
				continue
			}
			q.mu.Lock()
			n += len(q.pendingAdd)
			q.mu.Unlock()
			return n, nil
		}
		if !errors.Is(err, ErrUnavailable) {
			return 0, err
		}
		if time.Since(start) >= q.cfg.outageLimit {
			q.mu.Lock()
			kept := len(q.pendingAdd) + len(q.journal)
			q.mu.Unlock()
			return 0, fmt.Errorf("redisfleet: frontier: Redis unreachable for %s (%d requests known to this process not crawled): %w",
				time.Since(start).Round(time.Second), kept, err)
		}
		time.Sleep(backoff)
	}
}

// GetRequest implements queue.Storage: it hands out the next request of a
// host that may be asked now, with a lease id in its context (under
// frontier.LeaseKey). When none is ready it waits at most MaxWait, then
// hands out the request of the host ready soonest if this process has
// requests out, else returns frontier.ErrNotReady (as package frontier
// does, for the same reasons). When nothing is queued
// it waits at most MaxWait for a request to be queued, and returns
// frontier.ErrEmpty (at once if nothing is out in the fleet either). When
// Redis is away it retries until MaxWait and returns the error.
//
// It pops from the partitions worth a look (one round trip each), in
// turn: those not looked at yet, woken since (a request queued or done
// there), or whose soonest host is due by what the latest look said; a
// partition is looked at again after MaxWait at the latest.
func (q *Frontier) GetRequest() ([]byte, error) {
	b, err := q.getRequest()
	if b == nil && q.cfg.batch > 0 {
		q.mu.Lock()
		q.askSize = true
		q.mu.Unlock()
	}
	return b, err
}

func (q *Frontier) getRequest() ([]byte, error) {
	q.Init()
	ctx := context.Background()
	deadline := time.Now().Add(q.cfg.maxWait)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	backoff := frontierRetryInitial
	for {
		now := time.Now()
		past := !now.Before(deadline)
		q.mu.Lock()
		// What is kept goes in the pipeline of this loop's first pop
		// (pop); with no partition worth a look now, the links kept go
		// at once when nothing is out here (another process may be
		// waiting for them), and a done report kept for a pop waits for
		// one until its timer (Done).
		flush := q.cfg.batch == 0 || len(q.own) == 0
		for p := range q.parts {
			if !q.parts[p].look.After(now) {
				flush = false
				break
			}
		}
		q.mu.Unlock()
		if flush {
			q.flush(ctx)
		}
		var lastErr error
		q.mu.Lock()
		start := q.next
		q.next = (q.next + 1) % len(q.parts)
		q.mu.Unlock()
		for i := range q.parts {
			p := (start + i) % len(q.parts)
			q.mu.Lock()
			due := !q.parts[p].look.After(now)
			q.mu.Unlock()
			if !due {
				continue
			}
			b, err := q.pop(ctx, p, false, deadline)
			if b != nil || err != nil && !errors.Is(err, ErrUnavailable) {
				return b, err
			}
			if err != nil {
				// Redis (or this partition's node) cannot be reached: one
				// call timeout per GetRequest loop, not one per partition;
				// the next loop starts at the next partition.
				lastErr = err
				break
			}
		}
		q.mu.Lock()
		allEmpty, leased, force := true, int64(0), -1
		var soonest, nextLook time.Time
		for p := range q.parts {
			pt := &q.parts[p]
			leased += pt.leased
			if p == 0 || pt.look.Before(nextLook) {
				nextLook = pt.look
			}
			if !pt.empty {
				allEmpty = false
				if force < 0 || pt.look.Before(soonest) {
					force, soonest = p, pt.look
				}
			}
		}
		own := len(q.own)
		woken := q.woken
		q.mu.Unlock()
		var wait time.Duration
		switch {
		case lastErr != nil:
			if past {
				return nil, lastErr
			}
			wait, backoff = backoff, min(2*backoff, frontierRetryMax)
		case allEmpty && (past || leased == 0):
			return nil, frontier.ErrEmpty
		case past && own > 0 && force >= 0:
			b, err := q.pop(ctx, force, true, time.Time{})
			if b != nil || err != nil {
				return b, err
			}
			return nil, frontier.ErrNotReady
		case past:
			return nil, frontier.ErrNotReady
		default:
			wait = min(time.Until(deadline), time.Until(nextLook))
		}
		wait = max(min(wait, time.Until(deadline), frontierPollCap), 0)
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-woken:
			if !timer.Stop() {
				<-timer.C
			}
		case <-timer.C:
		}
	}
}

// pop runs the pop script on partition p (force: take from the host ready
// soonest if none is ready) and records what it says of the partition,
// for a GetRequest whose deadline is by (zero: none). It returns the
// request handed out, or nil.
func (q *Frontier) pop(ctx context.Context, p int, force bool, by time.Time) ([]byte, error) {
	id := q.fl.token()
	args := []any{q.fl.tag(p), id, q.fl.cfg.lease.Microseconds(), q.cfg.perHost,
		map[bool]int{true: 1}[force], frontierScan, frontierBusyPoll.Microseconds(), frontierCapWait.Microseconds(),
		q.cfg.maxWait.Microseconds(), frontierReapPoll.Microseconds(), q.fl.procID,
		map[bool]int{true: 1}[q.fl.limiters.Load() > 0], q.fl.cfg.idleTTL.Microseconds()}
	// The policy of the host handed out, read for the Store's Get (store.go).
	pre, asked := q.fl.policyPrefix()
	args = append(args, map[bool]int{true: policyReadMax}[asked], pre)
	q.mu.Lock()
	pt := &q.parts[p]
	var abandoned []string
	t0 := time.Now()
	for a, until := range pt.abandoned {
		if len(abandoned) == frontierBatch {
			break
		}
		abandoned = append(abandoned, a)
		args = append(args, a, max(until.Sub(t0), 0).Microseconds())
	}
	wakes := pt.wakes
	q.mu.Unlock()
	sent := time.Now()
	// What this process keeps to write (done reports, links, the
	// limiter's releases kept for them) goes first in the pop's pipeline:
	// one round trip, and a host a done report frees may be handed out by
	// this very pop.
	v, err := q.flushWith(ctx, &frCall{p: p, s: frPopScript, args: args})
	// A time the script names (a host due, in µs from its now) is counted
	// from the reply, not from the call: the script ran between the two,
	// and a look before the host is due on Redis's clock finds nothing.
	// MaxWait is counted from the call, as the GetRequest it bounds.
	got := time.Now()
	after := func(us int64) time.Time {
		if d := time.Duration(max(us, 0)) * time.Microsecond; d < q.cfg.maxWait {
			return got.Add(d)
		}
		return sent.Add(q.cfg.maxWait)
	}
	q.mu.Lock()
	if err == nil {
		for _, a := range abandoned { // the script handled them
			delete(pt.abandoned, a)
		}
	} else if errors.Is(err, ErrUnavailable) && len(pt.abandoned) < frontierAbandonMax {
		// The pop may still run when Redis resumes (it timed out here,
		// not there): the next pop of the partition abandons its lease.
		pt.abandoned[id] = time.Time{}
	}
	q.mu.Unlock()
	if err != nil {
		return nil, err
	}
	r := decodePop(v)
	if n := r.Reaped; n > 0 {
		q.mu.Lock()
		q.stats.Reaped += n
		q.mu.Unlock()
		q.log.Warn("redisfleet: frontier: requests of a process that stopped renewing its leases were queued again", slog.Int64("requests", n))
	}
	if r.Handed {
		// The partition is looked at again when the pop registered this
		// process for (an earlier event wakes it), unless woken meanwhile.
		look := after(r.Look - r.Now)
		q.mu.Lock()
		pt.empty = false
		if pt.wakes != wakes {
			look = time.Time{}
		}
		pt.look = look
		q.mu.Unlock()
		b, host, err := q.hand(p, id, r.Payload, r.Early)
		if asked && err == nil && r.PolicyRead {
			// The stored policy of the host, read by the pop ("": none).
			q.fl.keepPolicy(pre+host, r.Policy)
		}
		if r.Granted {
			// The pop granted a permit of the host's limiter with it.
			g := &pregrant{host: host, p: p, id: id, d: r.Delay, fail: r.Fail, mode: r.Mode}
			if err != nil {
				q.fl.giveBack(g)
			} else {
				q.fl.addGrant(g)
			}
		}
		return b, err
	}
	soonest, now := r.Soonest, r.Now
	q.mu.Lock()
	pt.leased = r.Leased
	pt.empty = soonest < 0
	switch {
	case soonest < 0 && pt.leased == 0:
		pt.look = sent.Add(q.cfg.maxWait) // a request queued there wakes this process
	case soonest < 0:
		// Requests out: a done report wakes this process, but a lease
		// that ends (its process died) is put back only by a pop.
		pt.look = sent.Add(min(q.cfg.maxWait, frontierReapPoll))
	default:
		pt.look = after(soonest - now)
	}
	if !by.IsZero() && pt.look.After(by) && (soonest < 0 || soonest-now >= q.cfg.maxWait.Microseconds()) {
		// A look MaxWait away is the one the GetRequest that made this pop
		// owes at its deadline (by): counted from this pop's call, later
		// than the GetRequest's start, it would come just after the
		// deadline, and the GetRequest would return ErrNotReady without
		// looking again.
		pt.look = by
	}
	if pt.wakes != wakes {
		// Woken while the pop ran: what it saw may be older than the
		// event that woke this process.
		pt.look, pt.empty = time.Time{}, false
	}
	q.mu.Unlock()
	return nil, nil
}

// hand records a lease of this process on partition p and returns its
// request with the lease id in its context, and its host.
func (q *Frontier) hand(p int, id string, pl string, early bool) ([]byte, string, error) {
	r, err := frontier.Decode([]byte(pl))
	var b []byte
	if err == nil {
		b, err = frontier.SetLease([]byte(pl), id)
	}
	q.mu.Lock()
	q.own[id] = &ownLease{host: r.Host, key: r.Key, payload: pl, url: r.URL, at: time.Now()}
	q.stats.Handed++
	if early {
		q.stats.Early++
	}
	q.mu.Unlock()
	if err == nil {
		q.fl.leasing(r.Host, 1)
		if !early {
			q.fl.markReady(r.Host)
		}
	}
	if err != nil {
		// Cannot happen (AddRequest decoded it): end the lease so that the
		// host is not held, and say so.
		q.log.Error("redisfleet: frontier: a queued request cannot be read; dropped", slog.Any("error", err))
		q.mu.Lock()
		delete(q.own, id)
		q.mu.Unlock()
		q.run(context.Background(), p, frDoneScript, frontierBusyPoll.Microseconds(), 0, id, "")
		return nil, r.Host, err
	}
	return b, r.Host, nil
}

// Done reports the request leased as id done: its lease ends and its host
// may be handed out again (once the fleet limiter says so). Unknown ids
// are ignored. While Redis is away the report is kept and sent later.
// Under [WithBatching] the report waits (at most 5 ms) for this process's
// next pop and goes in its pipeline; otherwise it is sent at once.
func (q *Frontier) Done(id string) {
	q.mu.Lock()
	l := q.own[id]
	if l == nil {
		q.mu.Unlock()
		return
	}
	delete(q.own, id)
	q.forget(l.key)
	q.stats.Done++
	q.pendingDone = append(q.pendingDone, doneItem{q.fl.part(l.host), id, l.key})
	linger := q.cfg.batch > 0 && !q.closing()
	if linger && q.doneTimer == nil {
		q.doneTimer = time.AfterFunc(q.cfg.linger, func() { q.flush(context.Background()) })
	}
	q.mu.Unlock()
	q.fl.leasing(l.host, -1)
	if g := q.fl.takeGrant(l.host, id); g != nil {
		// The permit the pop granted with the request was never taken (the
		// request stopped before the send): given back in the pipeline.
		q.fl.deferRelease(g.leaveOp(), true)
	}
	if !linger {
		q.flush(context.Background())
	}
}

// closing reports whether Close has begun.
func (q *Frontier) closing() bool {
	select {
	case <-q.stop:
		return true
	default:
		return false
	}
}

// renewLoop renews this process's leases every third of the lease, counts
// done the requests out for longer than the hold, writes what was kept
// while Redis was away, prunes the journal and refreshes the keys' TTL.
func (q *Frontier) renewLoop() {
	defer close(q.stopped)
	t := time.NewTicker(q.fl.cfg.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-q.stop:
			return
		case <-t.C:
		}
		ctx := context.Background()
		now := time.Now()
		ids := map[int][]any{}
		var expired []string
		q.mu.Lock()
		for id, l := range q.own {
			if now.Sub(l.at) >= q.cfg.hold {
				expired = append(expired, id)
				q.log.Warn("redisfleet: frontier: a request handed out was never reported done; counted done (dropped by Colly before OnRequest? see robots.AttachFrontier)",
					slog.String("url", l.url), slog.Duration("after", now.Sub(l.at)))
				continue
			}
			p := q.fl.part(l.host)
			ids[p] = append(ids[p], id)
		}
		q.stats.Expired += int64(len(expired))
		q.mu.Unlock()
		for _, id := range expired {
			q.Done(id)
		}
		q.flush(ctx)
		for p, v := range ids {
			q.run(ctx, p, frRenewScript, append([]any{q.fl.cfg.lease.Microseconds()}, v...)...)
		}
		q.prune(ctx)
		if time.Since(q.touched) >= min(q.cfg.ttl/4, frontierTouchMax) {
			if _, err := q.runAll(ctx, frTouchScript, q.cfg.ttl.Milliseconds()); err == nil {
				q.touched = time.Now()
			}
		}
	}
}

// prune drops from the journal up to frontierPruneMax requests that the
// fleet reported done (another process fetched them), in batches of
// frontierBatch per partition.
func (q *Frontier) prune(ctx context.Context) {
	q.mu.Lock()
	byPart := map[int][]string{}
	n := 0
	for k, it := range q.journal {
		if n == frontierPruneMax {
			break
		}
		p := q.fl.part(it.host)
		byPart[p] = append(byPart[p], k)
		n++
	}
	q.mu.Unlock()
	for p, keys := range byPart {
		for len(keys) > 0 {
			n := min(len(keys), frontierBatch)
			args := make([]any, n)
			for i, k := range keys[:n] {
				args[i] = k
			}
			v, err := q.run(ctx, p, frPruneScript, args...)
			if err != nil {
				return
			}
			done := decodeFlags(v)
			q.mu.Lock()
			for i, k := range keys[:n] {
				if i < len(done) && done[i] {
					if _, ok := q.journal[k]; ok {
						q.forget(k)
						q.stats.Pruned++
					}
				}
			}
			q.mu.Unlock()
			keys = keys[n:]
		}
	}
}

// Drop deletes the frontier's keys from Redis (queues, seen and done
// sets, leases, counters) and empties this process's journal and kept
// requests: call it once the crawl is over in every process (queue.Run
// returned everywhere), to free Redis before the keys' TTL
// ([WithFrontierTTL]) does. A process still running on the frontier
// would see the data as lost and queue its journal again. It is bounded
// by the call timeout.
func (q *Frontier) Drop(ctx context.Context) error {
	if _, err := q.runAll(ctx, frDropScript); err != nil {
		return err
	}
	q.mu.Lock()
	q.journal = map[string]journalItem{}
	q.pendingAdd, q.pendingDone = nil, nil
	for _, l := range q.own {
		q.fl.leasing(l.host, -1)
	}
	q.own = map[string]*ownLease{}
	q.full = false
	for p := range q.parts {
		q.parts[p].gen = ""
	}
	q.mu.Unlock()
	return nil
}

// kept returns how many requests this process knows not crawled: those
// it keeps to write and those in its journal.
func (q *Frontier) kept() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pendingAdd) + len(q.journal)
}

// lossError returns an error when Redis has kept losing the frontier's
// keys (recoveries, each within a lease of the previous) for longer than
// the outage limit: an evicting Redis whose maxmemory cannot hold the
// queue (WithEviction), where every recovery is evicted again.
func (q *Frontier) lossError() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	d, on := q.losses.lasting(time.Now(), q.fl.cfg.lease)
	if !on || d < q.cfg.outageLimit {
		return nil
	}
	return fmt.Errorf("redisfleet: frontier: Redis lost the frontier's keys %d times in %s (evicted? its maxmemory cannot hold the queue); %d requests known to this process not crawled",
		q.losses.n, d.Round(time.Second), len(q.pendingAdd)+len(q.journal))
}

// recover queues again, after Redis lost the data of the partitions in
// q.lost, what this process knows of them: its leases (registered again)
// and its journal. It first asks every partition for its generation (one
// pipeline), so that the other partitions Redis lost are found too. A
// recovery already running takes over the partitions found meanwhile.
func (q *Frontier) recover(ctx context.Context) {
	var sum lossSum
	defer func() { q.logLoss(sum) }()
	for {
		if !q.recMu.TryLock() {
			return // the running recovery sees q.lost
		}
		q.count(ctx) // marks the other partitions lost
		for {
			if q.lossError() != nil {
				// Redis keeps losing what is queued again: stop (QueueSize
				// returns the error, which ends the crawl).
				break
			}
			q.mu.Lock()
			p := -1
			for x := range q.lost {
				p = x
				break
			}
			delete(q.lost, p)
			q.mu.Unlock()
			if p < 0 {
				break
			}
			sum.add(q.recoverPart(ctx, p))
		}
		q.recMu.Unlock()
		q.mu.Lock()
		more := len(q.lost) > 0
		q.mu.Unlock()
		if !more || q.lossError() != nil {
			return
		}
	}
}

// lossSum is what one recovery found and did, summed over the partitions
// it recovered: the fields of its log line (docs/fleet.md explains them).
type lossSum struct {
	partitions int   // partitions whose data Redis lost
	emptied    int   // of which emptied because a key of theirs vanished
	dropped    int64 // requests the emptied partitions held (queued or out)
	requeued   int   // requests of this process's journal queued again
	leases     int   // requests this process holds, registered again
}

func (s *lossSum) add(o lossSum) {
	s.partitions += o.partitions
	s.emptied += o.emptied
	s.dropped += o.dropped
	s.requeued += o.requeued
	s.leases += o.leases
}

// logLoss logs one line for a recovery: a warning when the loss starts an
// incident (a restart this process did not see as an outage, a key
// evicted), else Info (the incident's warning is logged already). In a
// storm of losses (see lossError) at most one line a second goes out; the
// next one counts the recoveries not logged.
func (q *Frontier) logLoss(s lossSum) {
	if s.partitions == 0 {
		return
	}
	now := time.Now()
	level := q.fl.incidentLevel(now)
	q.mu.Lock()
	if level == slog.LevelInfo && now.Sub(q.lossLogged) < time.Second {
		q.lossQuiet++
		q.mu.Unlock()
		return
	}
	quiet := q.lossQuiet
	q.lossLogged, q.lossQuiet = now, 0
	q.mu.Unlock()
	q.log.Log(context.Background(), level, "redisfleet: frontier: Redis lost the frontier's data; queuing again what this process knows (pages fetched by other processes may be fetched again; requests no process journaled are lost)",
		slog.Int("partitions", s.partitions), slog.Int("emptied", s.emptied), slog.Int64("dropped", s.dropped),
		slog.Int("requeued", s.requeued), slog.Int("leases", s.leases), slog.Int("recoveries_not_logged", quiet))
}

// recoverPart queues again what this process knows of partition p and
// returns what it found and did.
func (q *Frontier) recoverPart(ctx context.Context, p int) lossSum {
	q.mu.Lock()
	q.losses.add(time.Now(), q.fl.cfg.lease)
	var leases []any
	out := map[string]bool{}
	for id, l := range q.own {
		if q.fl.part(l.host) == p {
			leases = append(leases, id, l.host, l.key, l.payload)
			out[l.key] = true
		}
	}
	var items []journalItem
	for k, it := range q.journal {
		if !out[k] && q.fl.part(it.host) == p {
			it.again = true
			items = append(items, it)
		}
	}
	q.mu.Unlock()
	sum := lossSum{partitions: 1, requeued: len(items), leases: len(leases) / 4}
	// A partition emptied because one of its keys vanished (evicted,
	// deleted: lua/include/frontier_head.lua) says how many requests it
	// held then; one Redis lost whole has no such count.
	cctx, cancel := context.WithTimeout(ctx, q.fl.cfg.callTimeout)
	dropped, err := q.fl.rdb.HGet(cctx, q.parts[p].keys[1], "lost").Int64()
	cancel()
	if err == nil {
		sum.emptied, sum.dropped = 1, dropped
	}
	if len(leases) > 0 {
		q.run(ctx, p, frReattachScript, append([]any{q.fl.cfg.lease.Microseconds()}, leases...)...)
	}
	q.mu.Lock()
	q.pendingAdd = append(q.pendingAdd, items...)
	q.stats.Recovered += int64(len(items))
	q.mu.Unlock()
	q.flush(ctx)
	return sum
}
