package fleetfrontier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/link"
	"github.com/redis/go-redis/v9"
)

// Defaults of the frontier's options.
const (
	DefaultName          = "default"
	DefaultOutageLimit   = time.Minute
	DefaultTTL           = 7 * 24 * time.Hour
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
	frontierDoneLinger   = 5 * time.Millisecond // Config.Batching: longest a done report waits for the next pop's pipeline
)

// Stats counts what one process's frontier did.
type Stats struct {
	Added     int64 // requests this process queued
	Seen      int64 // refused as queued before (by any process)
	Pending   int   // queued, not yet written to Redis (kept while Redis was away, or by Config.Batching)
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
	NotJournaled int64 // requests queued while the journal was full (Config.JournalCap)
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
// has a Limiter ([redisfleet.Fleet.Limiter]), the same script grants the host's permit for the
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
// ([redisfleet.Config.Lease]); when a process dies its leases end and the next GetRequest
// anywhere puts those requests back at the head of their host's queue.
// Delivery is therefore at least once: a request that a dying process had
// sent, or one whose renewal was late, can be fetched again.
//
// Partitions: the queue of a host lives in the host's partition of the
// fleet ([redisfleet.Config.Partitions]); GetRequest pops partition by partition (one
// round trip each) and QueueSize asks them all in one pipeline.
//
// Failure: while Redis is away AddRequest keeps the requests in memory and
// writes them when it answers again (no URL is lost; QueueSize counts
// them), Done is retried the same way, GetRequest returns an error after
// MaxWait (Colly's loop then asks QueueSize), and QueueSize retries with
// backoff for the outage limit ([Config.OutageLimit]) and then returns an
// error wrapping [redisfleet.ErrUnavailable], which ends queue.Run. If Redis comes
// back empty (restarted without persistence), every process notices (a
// partition's generation changed; one lost partition makes it check all)
// and queues again the requests of its
// journal ([Config.NoJournal]) and registers its leases again: nothing is lost
// (but requests beyond the journal's cap), and a page another process had
// fetched is fetched again only if it was done after this process last
// pruned its journal (every third of the lease, against a fleet-wide set
// of the requests done).
//
// A key of a partition that vanishes alone (evicted under redisfleet.Config.Eviction,
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
// [Config.TTL] after the crawl's last activity, and [Frontier.Drop]
// deletes them at once.
//
// A Frontier is safe for concurrent use; one queue should run on it per
// process. Init starts one goroutine (lease renewal), which Close stops.
type Frontier struct {
	fl    link.Fleet    // the Fleet: connection, keys, wake-ups, the limiter's permits
	set   link.Settings // the Fleet's settings
	rdb   redis.UniversalClient
	cfg   frontierConfig
	log   *slog.Logger
	parts []frPart

	startOnce sync.Once
	stop      chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
	recMu     sync.Mutex // one recovery at a time
	wakeStop  func()     // ends the wake-up subscriptions

	mu         sync.Mutex
	st         frState // the client state (state.go, state_parts.go)
	downSince  time.Time
	touched    time.Time     // the TTL was last refreshed (renewLoop)
	next       int           // the partition GetRequest looks at first (rotates)
	woken      chan struct{} // closed and replaced on every wake-up
	lost       map[int]bool  // partitions whose data Redis lost, to recover
	lossLogged time.Time     // the latest recovery's log line
	lossQuiet  int           // recoveries not logged since it
	batchTimer *time.Timer   // Config.Batching: writes the kept requests
	doneTimer  *time.Timer   // Config.Batching: writes the kept done reports (frontierDoneLinger)
	askSize    bool          // Config.Batching: the next QueueSize asks Redis
}

// frPart is one partition of a Frontier: its keys, all in one hash slot.
// What this process knows of it is in frState (partState).
type frPart struct {
	keys []string // the KEYS of every frontier script
	pub  string   // ARGV 3 of the scripts: the publish command, a space, the wake channel
}

// New returns the queue frontier of fleet configured by c. Pass it to
// Colly's queue.New and call robots.AttachFrontier on the collector the
// queue runs. Every process of the fleet makes one of the same
// [Config.Name] on its own Fleet.
func New(fleet *redisfleet.Fleet, c Config) *Frontier { return newFrontier(link.Of(fleet), c) }

func newFrontier(fl link.Fleet, c Config) *Frontier {
	cfg := c.resolve()
	fl.SetOutageLimit(cfg.outageLimit)
	set := fl.Settings()
	q := &Frontier{
		fl:      fl,
		set:     set,
		rdb:     fl.Client(),
		cfg:     cfg,
		log:     fl.Logger(),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
		st:      newFrState(cfg.journal, cfg.journalCap, set.Partitions),
		woken:   make(chan struct{}),
		lost:    map[int]bool{},
	}
	for p := range set.Partitions {
		k := func(kind string) string { return fl.Tag(p) + "fr:" + cfg.name + ":" + kind }
		q.parts = append(q.parts, frPart{
			keys: []string{k("hosts"), k("count"), k("seen"), k("lease"), k("leaseend"), k("held"), k("done"), k("abandoned"), k("qitems"), k("qends"), k("waiters"), k("seen0")},
			pub:  set.PubCmd + " " + fl.WakeChannel(p),
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
		q.fl.Listen(context.Background(), all...) // all at once, then each wakeups below costs nothing
		var stops []func()
		for p := range q.parts {
			w, cancel := q.fl.Subscribe(context.Background(), p, q.parts[p].keys[0])
			stop := make(chan struct{})
			go func() {
				for {
					select {
					case hint := <-w:
						// hint: the µs until the partition is worth a look
						// (0: now), or -1: the partition emptied (wakeAll,
						// internal/lua/include/frontier_head.lua).
						q.mu.Lock()
						q.st.woken(p, hint, time.Now(), q.cfg.maxWait)
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
func (q *Frontier) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.st.snapshot()
}

// argv returns the ARGV every script of partition p starts with.
func (q *Frontier) argv(p int, args ...any) []any {
	return append([]any{q.fl.Token(), q.fl.Tag(p), q.parts[p].pub, q.cfg.ttl.Milliseconds()}, args...)
}

// run runs one script on partition p, bounded by the call timeout, and
// checks the data generation it returns.
func (q *Frontier) run(ctx context.Context, p int, s *redis.Script, args ...any) ([]any, error) {
	cctx, cancel := context.WithTimeout(ctx, q.set.CallTimeout)
	defer cancel()
	v, err := s.Run(cctx, q.rdb, q.parts[p].keys, q.argv(p, args...)...).Slice()
	return q.reply(ctx, p, v, err)
}

// reply checks a script's reply on partition p: an error is counted as an
// outage when Redis could not be reached; a new data generation makes this
// process queue again what it knows.
func (q *Frontier) reply(ctx context.Context, p int, v []any, err error) ([]any, error) {
	if err != nil {
		err = q.fl.CallError("frontier", err)
		if errors.Is(err, redisfleet.ErrUnavailable) {
			q.fl.Outage("frontier", err)
			q.mu.Lock()
			if q.downSince.IsZero() {
				q.downSince = time.Now()
			}
			q.mu.Unlock()
		}
		return nil, err
	}
	q.fl.Recovered()
	if len(v) == 0 {
		return nil, errors.New("redisfleet: frontier: empty script reply")
	}
	gen, _ := v[0].(string)
	q.mu.Lock()
	q.downSince = time.Time{}
	lost := q.st.sawGen(p, gen)
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
	cctx, cancel := context.WithTimeout(ctx, q.set.CallTimeout)
	defer cancel()
	exec := func() ([]*redis.Cmd, bool) {
		pipe := q.rdb.Pipeline()
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
		if err := s.Load(cctx, q.rdb).Err(); err != nil {
			return nil, q.fl.CallError("frontier: SCRIPT LOAD", err)
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
	cctx, cancel := context.WithTimeout(ctx, q.set.CallTimeout)
	defer cancel()
	pipe := q.rdb.Pipeline()
	cmds := make([]*redis.SliceCmd, len(q.parts))
	for p := range q.parts {
		cmds[p] = pipe.HMGet(cctx, q.parts[p].keys[1], "q", "l", "gen")
	}
	if _, err := pipe.Exec(cctx); err != nil {
		err = q.fl.CallError("frontier: count", err)
		if errors.Is(err, redisfleet.ErrUnavailable) {
			q.fl.Outage("frontier", err)
		}
		return 0, false, err
	}
	q.fl.Recovered()
	n, lost := 0, false
	q.mu.Lock()
	defer q.mu.Unlock()
	q.downSince = time.Time{}
	for p, c := range cmds {
		v := c.Val()
		n += int(frNum(frAt(v, 0)) + frNum(frAt(v, 1)))
		gen, _ := frAt(v, 2).(string)
		if q.st.countedGen(p, gen) {
			// Gone (nil) or recreated by another process: lost.
			q.lost[p] = true
			lost = true
		}
	}
	return n, lost, nil
}

// QueueSize implements queue.Storage: the requests queued plus those out
// (handed out, not done) in the whole fleet, plus those this process keeps
// until Redis answers. It reads every partition's counters at once (one
// round trip per Redis node, no script). While Redis is away it retries with backoff (50 ms
// doubling to 2 s) for the outage limit, then returns an error wrapping
// [redisfleet.ErrUnavailable].
func (q *Frontier) QueueSize() (int, error) {
	q.Init()
	if q.cfg.batch > 0 {
		q.mu.Lock()
		n, ask := len(q.st.own)+len(q.st.pendingAdd), q.askSize
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
			if err := q.fl.OOMError(q.cfg.outageLimit, "frontier", q.kept); err != nil {
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
			n += len(q.st.pendingAdd)
			q.mu.Unlock()
			return n, nil
		}
		if !errors.Is(err, redisfleet.ErrUnavailable) {
			return 0, err
		}
		if time.Since(start) >= q.cfg.outageLimit {
			q.mu.Lock()
			kept := q.st.kept()
			q.mu.Unlock()
			return 0, fmt.Errorf("redisfleet: frontier: Redis unreachable for %s (%d requests known to this process not crawled): %w",
				time.Since(start).Round(time.Second), kept, err)
		}
		time.Sleep(backoff)
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
