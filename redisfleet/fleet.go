// Package redisfleet makes a fleet of crawler processes polite together
// through one Redis: each robots.txt is fetched once for the fleet, each
// host is asked no faster than its Crawl-delay by all processes together,
// and a 429/503 seen by one process pauses the host for all of them. Each
// process holds a [Fleet] (made by [New] over a go-redis client) and takes
// from it the three shared parts it gives the Colly plugin and Colly's
// queue: the policy [Fleet.Store], the per-host [Fleet.Limiter] and the
// URL queue [Fleet.Frontier].
//
//	rdbOpts, err := redisfleet.ParseURL(os.Getenv("REDIS_URL"))
//	if err != nil { ... }
//	fleet, err := redisfleet.New(ctx, redis.NewClient(rdbOpts)) // PING: errors.Is(err, redisfleet.ErrUnavailable)
//	if err != nil { ... }
//	defer fleet.Close()
//	c := colly.NewCollector(robots.WithRobots(
//		robots.WithPolicy(policy.WithStore(fleet.Store())),         // one robots.txt fetch per host for the fleet
//		robots.WithLimiter(fleet.Limiter(redisfleet.LimiterConfig{})), // one per-host pace for the fleet
//	))
//	front := fleet.Frontier(redisfleet.WithFrontierName("mycrawl")) // one queue for the fleet
//	defer front.Close()
//	robots.AttachFrontier(c, front)
//	q, _ := queue.New(4, front)
//	q.AddURL("https://example.com/") // every process may add the start URLs: the first wins
//	err = q.Run(c)                   // returns when the fleet's queue is empty and no process works
//
// The three parts:
//
//   - [Fleet.Store], a policy.Store on Redis (with the fetch lock of
//     policy.FetchLocker): a policy fetched by one process serves all of
//     them until it expires, and only one process fetches a given
//     robots.txt at a time while the others wait for its result;
//   - [Fleet.Limiter], a per-host limiter behind the plugin's
//     robots.Limiter seam, with the guarantee of package hostlimit extended
//     to the fleet: end-to-start by default (at most one request in flight
//     per host fleet-wide while its delay is above zero, the next sent no
//     earlier than the delay after the previous one ended), start-to-start
//     as an option, 429/503 pauses shared by every process;
//   - [Fleet.Frontier], a queue.Storage for Colly's queue, shared by the
//     fleet: one queue per host, one seen set (each request queued once
//     for the fleet), a request handed out only when its host may be asked
//     (it reads the fleet limiter's state in the same script), leases so
//     that the requests of a process that dies go to the others, and a
//     journal so that what Redis loses is queued again. Each process's
//     queue.Run ends when the fleet's queue is empty and no process works.
//
// The package's examples (Example, and Fleet.Frontier's) are this program,
// compiled (they need a Redis to run); the command in examples/distributed
// of this module is the whole crawler, and the package's tests run it as
// several processes against a real redis-server.
//
// # Time
//
// Every spacing decision is taken inside one Lua script on the Redis
// server, reading the server's clock (TIME): processes never compare their
// own clocks, so clock skew between machines does not matter, and a grant
// costs one round trip. The server's clock is its wall clock: a step of it
// (a manual change; NTP slews, it does not step) shortens or lengthens the
// gaps by the size of the step.
//
// # Why a Lua script and not redis_rate
//
// github.com/go-redis/redis_rate (GCRA) was measured here across 4
// processes × 4 goroutines on a local Redis: mean gap 100.8 ms for a
// 100 ms limit but a minimum of 96.9 ms, and about 15 Redis calls per
// granted request, from callers polling Allow until a slot comes. GCRA
// books scheduled send times (start-to-start): it never learns when a
// response ended, so it cannot give end-to-start spacing, and a caller
// that sends late still leaves the next one on schedule. This package's
// script decides on the events themselves (release, send mark, grant) as
// they reach Redis, on Redis's clock: the server-observed gaps are never
// shorter than the delay (shortest measured: 101.5 ms for 100 ms across 3
// limiters × 3 goroutines), a grant is one round trip, and waiting callers
// are woken by the release instead of polling (about 4 calls per granted
// request from 1 to 8 contending processes). The repository's
// docs/performance.md gives the figures and the commands.
//
// # Round trips per request
//
// The limiter and the frontier of one Fleet share their round trips. A
// frontier pop that hands out the request of a ready host also grants,
// in the same script, the host's limiter permit under the request's lease
// id (while the Fleet has a Limiter): the plugin's early wait and
// AcquireMax of that request then cost no round trip (AcquireMax asks
// Redis anew only if it passes a larger delay than the one the grant was
// made under, or comes later than a second, or a third of the lease,
// after the pop). A permit released while the process's frontier has a
// request of its host out is released by that request's done report, in
// the same script (at most 100 ms later, which only lengthens the gap
// before the host's next grant), and the page's links go in the same
// pipeline under [WithBatching]. A page whose host is known then costs
// two script calls, its pop and its done report, and two round trips, or
// one under [WithBatching]: there the done report waits (at most 5 ms)
// for the process's next pop and goes first in its pipeline. (A pipeline
// is counted as one round trip; on a Cluster, go-redis sends its calls to
// their nodes at once, one request each.) The pop that hands out a request
// also reads the stored robots.txt policy of its host if it is under 8
// KiB (the policy's key is in the host's partition, keys.go), which
// answers the [Store]'s next Get of it in this process: a host's policy
// costs a process no round trip once the Store has seen a key. Add the pops that find nothing ready,
// and per host the robots.txt fetch (the fetch lock, the policy written,
// the robots.txt request's own permit; when the host's delay is 50 ms or
// more, the request that brought the fetch is handed back until the
// host's turn, [Frontier.Postpone]: the permit's release alone and one
// more pop). A partition that empties tells the processes waiting on it
// so in its wake-up, instead of having each look. Measured on 8 processes
// (BenchmarkFleetScaling, docs/performance.md): 3.3 round trips and 3.6-3.7
// script calls per page at 8 pages per host, 2.1 and 2.5 at 32.
//
// # Partitions, Redis Cluster and Pub/Sub
//
// The hosts are split into partitions ([WithPartitions], default 16): a
// host's limiter state, its frontier queue and its wake-ups live in
// partition fnv1a(host) mod n, whose keys share one hash tag. Every
// script works inside one partition, so the fleet runs on one Redis
// server (with replicas or Sentinel) and on a Redis Cluster alike: pass
// New a *redis.ClusterClient ([ParseClusterURL]); the partitions spread
// over the Cluster's masters.
//
// Each partition has its own wake-up channel (sharded Pub/Sub, SSUBSCRIBE
// and SPUBLISH, on a Cluster, a connection per partition; plain Pub/Sub
// on one server, one connection for all), and a process subscribes to a
// partition when it first waits on it: a process hears only the
// partitions it waits on, and
// deliveries are the publications of a partition times the processes
// waiting on it. Messages are published by a limiter release or send mark
// that has a waiter to wake (one per such event, naming the waiter), a
// 429/503 pause, a robots.txt fetch unlock, and by the frontier on each
// AddRequest that queues something and on each done report; each payload
// is under 200 bytes. A frontier's process waits on every partition.
//
// # Keys and versions
//
// Every key starts with the prefix ([WithPrefix], default "robots:") and
// the format version ("v2:"): two releases of this package that store
// different formats use different keys and never read each other's state
// (a fleet of format 1 and one of format 2 on one Redis are two fleets).
// Values carry the version too; one of another version reads as a miss.
// The key schema is documented in keys.go and by key.
//
// # Failure behaviour
//
//   - Redis unreachable at start: [New] returns an error wrapping
//     [ErrUnavailable] (it sends PING).
//   - Redis slow: every call has a timeout ([WithCallTimeout], default 2 s).
//     For the timeout to cut a call that is stuck on the network, the
//     client must have ContextTimeoutEnabled (as [ParseURL] sets);
//     otherwise the client's ReadTimeout and WriteTimeout bound it.
//   - Redis lost mid-crawl: by default ([WaitForRedis]) the limiter retries
//     with backoff (50 ms doubling to 2 s) until Redis answers or the
//     caller's context ends, logging one warning per outage: no request
//     goes out unspaced. With [FallBackLocal] it spaces requests with an
//     in-process hostlimit.Limiter while Redis is away (logging a warning):
//     each process keeps its own pace then, so the fleet may ask a host
//     up to once per delay per process. Every request of such a process
//     holds a permit of its local gate too, so two requests of one process
//     to one host never overlap, even across the switch back to Redis. A permit's release that cannot
//     reach Redis is retried in the background until its lease ends; one
//     that never lands, or that Redis refuses, is logged and counted
//     ([Fleet.LostReleases]), as is a fetch unlock that fails.
//     The Store reads a failed Get as a miss and the resolver fetches.
//   - Redis restarted empty: the state of the hosts is gone. Each
//     partition's epoch records a generation; a live process passes the
//     generation it saw on every limiter call, and one that finds the
//     epoch missing, or of another generation, knows the data was lost
//     and holds every host of the partition whose state is missing for
//     one lease from the loss, the time within which requests granted
//     before it end or are re-registered by their holders' lease renewal.
//     A process that never saw the partition (a new process, or every
//     process of a fresh fleet) finds nothing to hold: a fresh start is
//     not delayed, whoever else is connected to Redis. A new process that
//     reaches an emptied Redis before any live process has called it
//     again (at the latest, a third of the lease and a call timeout after
//     the restart) may be granted a host whose permit is out in a live
//     process. Store values and fetch locks are simply gone: robots.txt
//     is fetched again.
//   - Redis hangs (SIGSTOP, a long fork) and resumes: calls that timed
//     out on the client run when Redis resumes. A pop or a grant they
//     made is undone by the process's next call (see [Fleet.Frontier] and
//     the limiter's leave), so hosts are free again within about a call
//     timeout of the resume, not a lease.
//   - A key evicted (under [WithEviction]) or deleted: a host whose limiter
//     hash vanished is paced by its partition's pace record (the earliest
//     grant its state allowed, kept while in the future); one whose hold
//     zset vanished while a permit was out is held by a phantom permit
//     until a release or the lease's end; a partition whose pace record or
//     epoch vanished holds its hosts without state one lease, as after a
//     restart: no gap under the delay, a host held at most a lease. A
//     frontier partition whose keys no longer agree (a queue, a lease
//     record, the counters gone) is emptied as after a data loss, keeping
//     what it saw and what was done: the journals queue again what is not
//     done and the leases are registered again; each process logs the
//     requests the partition dropped. A page may be fetched twice (the
//     seen set vanished); a request no live process journaled is lost,
//     with that warning. A Redis that keeps losing them (its maxmemory
//     cannot hold the queue) ends the crawl: after WithOutageLimit of
//     recoveries, QueueSize returns an error counting the requests not
//     crawled. A stored policy or a fetch lock that vanishes costs a
//     robots.txt fetch more: a process that needs the policy again
//     fetches it, and one that waited on a vanished lock takes it and
//     fetches too, each fetch under a limiter permit like any request (a
//     process's first fetch of a host, before it knows the Crawl-delay,
//     is spaced by the plugin's minimum delay alone). The repository's
//     docs/fleet.md gives the table of keys and the tests.
//   - Redis refuses writes with OOM (its memory above maxmemory, under
//     noeviction or with nothing left to evict) while it answers reads:
//     the fleet waits as for an unreachable Redis (a request waits for
//     its grant; the frontier keeps what it adds and its done reports in
//     memory), and each process logs one warning that names the OOM
//     reply and each server's maxmemory and used_memory (the setting to
//     raise). A run of OOM replies (each within a lease, and at least
//     5 s, of the previous) longer than the outage limit (the largest
//     [WithOutageLimit] of the Fleet's frontiers; 1 minute without one)
//     ends the crawl: the frontier's QueueSize returns an error wrapping
//     [ErrUnavailable] that names the OOM reply and maxmemory and counts
//     the requests known to this process not crawled, which ends
//     queue.Run, and a limiter's Acquire that waits through the run
//     returns such an error (its request is not sent). New on such a
//     Redis returns an error naming the same cause.
//   - A process killed while it holds a host: its permit has a lease
//     ([WithLease], default 10 s), renewed every third of it while the
//     request runs; once it is not renewed the lease ends, and the host is
//     granted again no earlier than the delay after the lease's end.
//
// Redis 5.0 or later is needed (the scripts read TIME before writing, which
// needs the effects replication that is the default since 5.0; tested with
// 7.0), Redis 7.0 or later on a Cluster (sharded Pub/Sub). New refuses a
// Redis whose maxmemory-policy evicts keys (allkeys-*, volatile-*: the
// fleet's keys carry TTLs) unless [WithEviction] is given.
package redisfleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// formatVersion is the version of the keys and values this package writes.
// It is part of every key ("robots:v1:...") and of every stored value.
const formatVersion = 2

// Defaults of the options.
const (
	DefaultPrefix      = "robots:"
	DefaultCallTimeout = 2 * time.Second
	DefaultLease       = 10 * time.Second
	DefaultIdleTTL     = 10 * time.Minute
	DefaultPartitions  = 16
	maxPartitions      = 16384 // a Cluster's slots
	leaseCalls         = 3     // the lease is at least this many call timeouts
)

// ErrUnavailable is wrapped by the errors of calls that could not reach
// Redis (refused, reset, timed out), as opposed to errors Redis answered.
var ErrUnavailable = errors.New("redisfleet: Redis is unavailable")

// OnRedisDown says what the limiter does while Redis cannot be reached.
type OnRedisDown int

const (
	// WaitForRedis, the default, holds every request that needs a grant
	// until Redis answers again (or the caller's context ends), retrying
	// with backoff: no request goes out unspaced, and none goes out at all
	// while Redis is away. A Redis that refuses writes with OOM for longer
	// than the outage limit ends the wait with an error (see "Failure
	// behaviour" in the package doc).
	WaitForRedis OnRedisDown = iota
	// FallBackLocal spaces requests with an in-process hostlimit.Limiter
	// while Redis is away, with a warning: requests go on, each process
	// keeping its own pace.
	FallBackLocal
)

// String returns "wait" or "local".
func (o OnRedisDown) String() string {
	if o == FallBackLocal {
		return "local"
	}
	return "wait"
}

type config struct {
	prefix      string
	callTimeout time.Duration
	lease       time.Duration
	idleTTL     time.Duration
	onDown      OnRedisDown
	logger      *slog.Logger
	partitions  int
	eviction    bool
}

// Option configures a [Fleet].
type Option func(*config)

// WithPrefix sets the prefix of every key (default "robots:"). Processes
// that share a fleet must use the same prefix; fleets that must not share
// state (two crawls, two tests) use different ones on one Redis.
func WithPrefix(p string) Option {
	return func(c *config) { c.prefix = p }
}

// WithPartitions sets into how many partitions the fleet's hosts are
// split (default 16): a host's limiter state, its queue of the frontier
// and its wake-ups live in partition hash(host) mod n, whose keys share
// one Redis Cluster hash slot. On a Cluster, the partitions are what
// spreads the fleet over the masters: use several per master (16 suits
// 3 to 5 masters; 64 or more for larger Clusters). On a Cluster, each
// partition a process waits on costs it one Pub/Sub connection (on one
// server, all share one). Every process of a
// fleet must use the same n: New refuses a different one (an error
// naming both) as long as the fleet's keys are in Redis. n must be
// 1 to 16384; New refuses other values.
func WithPartitions(n int) Option {
	return func(c *config) { c.partitions = n }
}

// WithEviction lets New accept a Redis whose maxmemory-policy evicts
// keys (allkeys-* or volatile-*), which it refuses by default. An evicted
// key of the fleet never shortens a host's gap below its delay, but costs
// pace and work: a host whose state is gone is held up to a lease, as
// after a restart; a frontier partition that lost a key is emptied and
// queued again from the processes' journals (pages may be fetched twice;
// a request no live process journaled is lost, with a warning). See
// "Failure behaviour" in the package doc. Use it only for a Redis whose
// maxmemory is rarely reached.
func WithEviction() Option {
	return func(c *config) { c.eviction = true }
}

// WithCallTimeout bounds every Redis call (default 2 s; d ≤ 0 keeps it).
// A call that times out counts as Redis being unavailable.
func WithCallTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.callTimeout = d
		}
	}
}

// WithLease sets the lease of a limiter permit, of a robots.txt fetch
// lock and of a frontier request (default 10 s; d ≤ 0 keeps it, values
// under 100 ms count as 100 ms). A live holder renews it every third of
// the lease, so the lease bounds only how long a dead process holds a host
// or a fetch. New raises a lease shorter than three call timeouts
// ([WithCallTimeout]) to three call timeouts, with a warning: a renewal
// that takes a whole call timeout must still land before the lease ends.
func WithLease(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.lease = max(d, 100*time.Millisecond)
		}
	}
}

// WithIdleTTL sets how long the state of a host nobody uses is kept in
// Redis, counted from when its last pause or spacing ends (default
// 10 minutes; d ≤ 0 keeps it; at least twice the lease).
func WithIdleTTL(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.idleTTL = d
		}
	}
}

// WithOnRedisDown sets what the limiter does while Redis cannot be reached
// (default [WaitForRedis]).
func WithOnRedisDown(o OnRedisDown) Option {
	return func(c *config) { c.onDown = o }
}

// WithLogger sets where warnings go (Redis lost and back, fallback to the
// local gate); default: slog.Default(). An incident (Redis unreachable,
// restarted empty, refusing writes, keys evicted) gives one warning per
// process; what the process notices later in the same incident is logged
// at Info (docs/fleet.md, "Logs").
//
// go-redis has one logger per process, which prints a line to stderr on
// every failed dial: during an outage, dozens beside the fleet's one
// warning. New routes it, at Debug level, to the logger of the most recent
// New. A program that wants go-redis's lines elsewhere calls
// [redis.SetLogger] after New.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// A Fleet is one process's handle on a fleet's shared state in Redis. It
// holds one Pub/Sub connection, on which the processes wake each other when
// a host or a robots.txt fetch frees. It is safe for concurrent use. Close
// it when done.
type Fleet struct {
	rdb     redis.UniversalClient
	cluster bool   // rdb is a *redis.ClusterClient: sharded Pub/Sub
	pubCmd  string // PUBLISH, or SPUBLISH on a Cluster
	cfg     config
	log     *slog.Logger
	prefix  string // cfg.prefix + "v2:"
	procID  string // random, unique to this Fleet: prefix of its tokens
	seq     atomic.Uint64
	gens    []atomic.Int64 // per partition: the epoch's generation this process saw last (0: none)

	shMu     sync.Mutex
	shards   map[int]*shard    // per partition: its wake-up subscription, made when first waited on
	byChan   map[string]*shard // the same, by channel
	single   *redis.PubSub     // one server: every partition's channel on one connection
	shWG     sync.WaitGroup
	closed   atomic.Bool
	subMu    sync.Mutex
	subs     map[string]map[*waiter]struct{}
	down     atomic.Bool // an outage is being reported (one warning per outage)
	incMu    sync.Mutex
	incident eventRun     // trouble events: one warning per incident (incident.go)
	oom      oomRun       // Redis refusing writes with OOM
	outLim   atomic.Int64 // the largest WithOutageLimit of the Fleet's frontiers (ns); 0: none made
	closeMu  sync.Once
	lost     atomic.Int64 // releases, send marks, unlocks that never reached Redis
	heard    atomic.Int64 // wake-up messages received

	readyMu sync.Mutex
	ready   map[string]time.Time // host -> when this process's frontier found it ready (markReady)
	fresh   time.Duration        // readyFresh (tests set more)

	// Folding the limiter into the frontier's round trips (grant.go).
	limiters atomic.Int64 // Limiters made: the frontier's pops grant permits
	grantMu  sync.Mutex
	grants   map[string]*pregrant // host -> the permit a pop granted, not yet taken
	out      map[string]int       // host -> requests this process's frontier has out
	deferred []hostOp             // releases waiting for the frontier's next pipeline
	relTimer *time.Timer          // sends them after releaseDefer

	// Policies read by the frontier's pops for the Store (store.go).
	polPre atomic.Pointer[string] // the store keys' part before the authority, as the Store last saw it
	polMu  sync.Mutex
	pols   map[string]polRead // store key -> the value a pop read, for the next Get
}

// shard is the subscription to one partition's wake-up channel.
type shard struct {
	ps     *redis.PubSub
	ready  chan struct{} // closed when Redis confirmed the subscription
	once   sync.Once
	waited atomic.Bool // a caller waited for ready already (only the first does)
}

// readyFresh is how long a frontier pop's finding that a host is ready
// stands in for the limiter's early wait of the request it handed out (a
// request may wait that long in Colly's loop for a free thread). The early
// wait only keeps a request from waiting inside Colly's slots; Acquire
// still decides.
const readyFresh = time.Second

// markReady records that this process's frontier just handed out a
// request of host because the host was ready by its limiter state (read
// in the pop's script).
func (f *Fleet) markReady(host string) {
	now := time.Now()
	f.readyMu.Lock()
	if f.ready == nil {
		f.ready = map[string]time.Time{}
	}
	if len(f.ready) >= 1024 {
		for h, t := range f.ready {
			if now.Sub(t) >= f.fresh {
				delete(f.ready, h)
			}
		}
	}
	f.ready[host] = now
	f.readyMu.Unlock()
}

// takeReady reports whether the frontier found host ready less than
// readyFresh ago, and forgets it (it answers one early wait).
func (f *Fleet) takeReady(host string) bool {
	f.readyMu.Lock()
	t, ok := f.ready[host]
	delete(f.ready, host)
	f.readyMu.Unlock()
	return ok && time.Since(t) < f.fresh
}

// WakeupsHeard returns the wake-up messages this process received on the
// partitions' Pub/Sub channels (every message on a channel it listens to,
// whether a local waiter wanted it or not): the fleet's fan-out cost.
func (f *Fleet) WakeupsHeard() int64 { return f.heard.Load() }

// LostReleases returns how many permit releases, start-to-start send
// marks and robots.txt fetch unlocks of this process did not take effect in
// Redis: refused by it (a reply error), or not reaching it before the
// lease ended (then the lease ended the permit or the lock, later than the
// release would have). Each is also logged as a warning (a refusal each
// time; an unreachable Redis once per outage).
func (f *Fleet) LostReleases() int64 { return f.lost.Load() }

// lostRelease counts a release (op) that did not take effect and logs it:
// each reply error, and a failure to reach Redis once per outage.
func (f *Fleet) lostRelease(op string, err error) {
	f.lost.Add(1)
	if errors.Is(err, ErrUnavailable) {
		f.outage(op, err)
		return
	}
	f.log.Warn("redisfleet: a release did not take effect; the lease ends it", slog.String("op", op), slog.Any("error", err))
}

// New returns a Fleet on client, after checking with PING (bounded by the
// call timeout and ctx) that Redis answers: an unreachable Redis is an
// error wrapping [ErrUnavailable]. client is a *redis.Client (or a
// failover client) talking to one server, or a *redis.ClusterClient on a
// Redis Cluster (Redis 7 or later: sharded Pub/Sub); a *redis.Client
// pointed at a node of a Cluster is refused with an error saying so. See
// [ParseURL] and [ParseClusterURL] for their options. New reads the
// fleet's partition count from Redis, or writes it (see
// [WithPartitions]); it writes nothing else: a fresh Redis is told from
// one that lost its data by the fleet's own keys (see the package doc).
func New(ctx context.Context, client redis.UniversalClient, opts ...Option) (*Fleet, error) {
	if client == nil {
		return nil, errors.New("redisfleet: New: nil client")
	}
	cfg := config{
		prefix:      DefaultPrefix,
		callTimeout: DefaultCallTimeout,
		lease:       DefaultLease,
		idleTTL:     DefaultIdleTTL,
		partitions:  DefaultPartitions,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.partitions < 1 || cfg.partitions > maxPartitions {
		return nil, fmt.Errorf("redisfleet: New: WithPartitions(%d): want 1 to %d", cfg.partitions, maxPartitions)
	}
	log := cfg.logger
	if log == nil {
		log = slog.Default()
	}
	if minLease := leaseCalls * cfg.callTimeout; cfg.lease < minLease {
		// A renewal every third of the lease may take a call timeout: a
		// shorter lease could lapse while its request runs.
		log.Warn("redisfleet: the lease is shorter than 3 call timeouts; using 3 call timeouts",
			slog.Duration("lease", cfg.lease), slog.Duration("call_timeout", cfg.callTimeout), slog.Duration("using", minLease))
		cfg.lease = minLease
	}
	cfg.idleTTL = max(cfg.idleTTL, 2*cfg.lease)
	redisLog.Store(log)
	redisLogOnce.Do(func() { redis.SetLogger(redisLogger{}) })
	var id [8]byte
	rand.Read(id[:])
	_, cluster := client.(*redis.ClusterClient)
	f := &Fleet{
		rdb:     client,
		cluster: cluster,
		pubCmd:  "PUBLISH",
		fresh:   readyFresh,
		cfg:     cfg,
		log:     log,
		prefix:  cfg.prefix + fmt.Sprintf("v%d:", formatVersion),
		procID:  hex.EncodeToString(id[:]),
		gens:    make([]atomic.Int64, cfg.partitions),
		subs:    make(map[string]map[*waiter]struct{}),
		shards:  make(map[int]*shard),
		byChan:  make(map[string]*shard),
	}
	if cluster {
		f.pubCmd = "SPUBLISH"
	}
	cctx, cancel := context.WithTimeout(ctx, cfg.callTimeout)
	defer cancel()
	if err := client.Ping(cctx).Err(); err != nil {
		return nil, f.callError("New: PING", err)
	}
	if !cluster {
		info, err := client.Info(cctx, "cluster").Result()
		if err != nil {
			return nil, f.callError("New: INFO cluster", err)
		}
		if strings.Contains(info, "cluster_enabled:1") {
			return nil, errors.New("redisfleet: New: the server is a node of a Redis Cluster: use a *redis.ClusterClient (redis.NewClusterClient; redisfleet.ParseClusterURL)")
		}
	}
	if err := f.checkPartitions(cctx); err != nil {
		return nil, err
	}
	if !cfg.eviction {
		if err := f.checkEviction(cctx); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// checkEviction refuses a Redis (on a Cluster: any master) whose
// maxmemory-policy evicts keys. A server that does not answer CONFIG GET
// (a managed Redis may disable it) is logged, not refused.
func (f *Fleet) checkEviction(ctx context.Context) error {
	check := func(ctx context.Context, c *redis.Client) error {
		v, err := c.ConfigGet(ctx, "maxmemory-policy").Result()
		if err != nil {
			if isReplyError(err) {
				f.log.Warn("redisfleet: cannot read maxmemory-policy; the fleet's keys must not be evicted: use maxmemory-policy noeviction",
					slog.String("addr", c.Options().Addr), slog.Any("error", err))
				return nil
			}
			return f.callError("New: CONFIG GET maxmemory-policy", err)
		}
		if p := v["maxmemory-policy"]; p != "" && p != "noeviction" {
			return fmt.Errorf("redisfleet: New: Redis at %s has maxmemory-policy %s, which may evict the fleet's keys (a host's pace, its queue): set maxmemory-policy noeviction, or pass WithEviction to accept it",
				c.Options().Addr, p)
		}
		return nil
	}
	if cc, ok := f.rdb.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, check)
	}
	if c, ok := f.rdb.(*redis.Client); ok {
		return check(ctx, c)
	}
	// Another UniversalClient (a failover client): ask through it.
	v, err := f.rdb.ConfigGet(ctx, "maxmemory-policy").Result()
	if err != nil {
		if isReplyError(err) {
			f.log.Warn("redisfleet: cannot read maxmemory-policy; the fleet's keys must not be evicted: use maxmemory-policy noeviction", slog.Any("error", err))
			return nil
		}
		return f.callError("New: CONFIG GET maxmemory-policy", err)
	}
	if p := v["maxmemory-policy"]; p != "" && p != "noeviction" {
		return fmt.Errorf("redisfleet: New: Redis has maxmemory-policy %s, which may evict the fleet's keys (a host's pace, its queue): set maxmemory-policy noeviction, or pass WithEviction to accept it", p)
	}
	return nil
}

// checkPartitions writes the fleet's partition count if it is missing
// and refuses to go on if Redis holds another one.
func (f *Fleet) checkPartitions(ctx context.Context) error {
	key, want := f.key(kindConfig, ""), "partitions="+strconv.Itoa(f.cfg.partitions)
	// SETNX then GET, not SET NX GET: that needs Redis 7.
	if err := f.rdb.SetNX(ctx, key, want, 0).Err(); err != nil {
		return f.callError("New: fleet config", err)
	}
	got, err := f.rdb.Get(ctx, key).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return f.callError("New: fleet config", err)
	}
	if err == nil && got != want {
		return fmt.Errorf("redisfleet: New: the fleet under prefix %q runs with %s in Redis (key %s), this process with %s: every process of a fleet must use the same WithPartitions",
			f.cfg.prefix, got, key, want)
	}
	return nil
}

// ParseURL parses a redis:// or rediss:// URL (redis.ParseURL) into client
// options with ContextTimeoutEnabled set, so that the fleet's call timeout
// cuts a call stuck on the network.
func ParseURL(url string) (*redis.Options, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redisfleet: %w", err)
	}
	o.ContextTimeoutEnabled = true
	return o, nil
}

// ParseClusterURL parses go-redis's cluster URL form,
// redis://host:port?addr=host2:port2&addr=host3:port3
// (redis.ParseClusterURL), into cluster client options with
// ContextTimeoutEnabled set, for redis.NewClusterClient.
func ParseClusterURL(url string) (*redis.ClusterOptions, error) {
	o, err := redis.ParseClusterURL(url)
	if err != nil {
		return nil, fmt.Errorf("redisfleet: %w", err)
	}
	o.ContextTimeoutEnabled = true
	return o, nil
}

// Close sends the permit releases this process keeps for its frontier's
// next pipeline, gives back the permits its frontier's pops granted and
// no request took, and stops the fleet's Pub/Sub subscriptions. It does
// not close the client. Limiters and Stores of a closed Fleet still work, without wake-ups
// (their waits then end on their timers).
func (f *Fleet) Close() error {
	var err error
	f.closeMu.Do(func() {
		f.flushGrants()
		f.shMu.Lock()
		f.closed.Store(true)
		for _, sh := range f.shards {
			if sh.ps == nil {
				continue
			}
			if e := sh.ps.Close(); e != nil && err == nil {
				err = e
			}
		}
		if f.single != nil {
			if e := f.single.Close(); e != nil && err == nil {
				err = e
			}
		}
		f.shMu.Unlock()
		f.shWG.Wait()
	})
	return err
}

// listen makes sure this process hears the wake-ups of partitions ps:
// the first call for a partition subscribes (on a Cluster, SSUBSCRIBE on a
// connection per partition; on one server, SUBSCRIBE on the process's one
// Pub/Sub connection) and waits for Redis to
// confirm it, at most a call timeout or ctx for all of them together;
// later calls cost nothing. A subscription that fails is retried by
// go-redis in the background; meanwhile waits end on their timers.
func (f *Fleet) listen(ctx context.Context, ps ...int) {
	var wait []*shard
	f.shMu.Lock()
	if f.closed.Load() {
		f.shMu.Unlock()
		return
	}
	for _, p := range ps {
		sh := f.shards[p]
		if sh == nil {
			sh = &shard{ready: make(chan struct{})}
			ch, own := f.pkey(p, kindWake), f.ownWake(p)
			f.shards[p], f.byChan[ch], f.byChan[own] = sh, sh, sh
			if cc, ok := f.rdb.(*redis.ClusterClient); ok {
				// SSUBSCRIBE takes channels of one slot: a connection per
				// partition, on the partition's master.
				sh.ps = cc.SSubscribe(context.WithoutCancel(ctx), ch, own)
				f.shWG.Add(1)
				go f.dispatch(sh.ps.ChannelWithSubscriptions())
			} else {
				if f.single == nil {
					f.single = f.rdb.Subscribe(context.WithoutCancel(ctx))
					f.shWG.Add(1)
					go f.dispatch(f.single.ChannelWithSubscriptions())
				}
				f.single.Subscribe(context.WithoutCancel(ctx), ch, own)
			}
		}
		if !sh.waited.Load() {
			wait = append(wait, sh)
		}
	}
	f.shMu.Unlock()
	if len(wait) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, f.cfg.callTimeout)
	defer cancel()
	for _, sh := range wait {
		select {
		case <-sh.ready:
		case <-cctx.Done():
		}
		sh.waited.Store(true)
	}
}

// ownWake returns this process's own wake-up channel of partition p (in
// the partition's slot): a frontier script that wakes one waiting process
// publishes there, so that the others do not hear it.
func (f *Fleet) ownWake(p int) string { return f.pkey(p, kindWake) + ":" + f.procID }

// token returns a token unique across the fleet: the Fleet's random id and
// a counter.
func (f *Fleet) token() string {
	return f.procID + "-" + fmt.Sprint(f.seq.Add(1))
}

// dispatch routes the wake-up messages of one partition's subscription to
// the local waiters subscribed to their key. A payload is a key,
// optionally followed by "\n" and a hint (the µs from the publication
// until the state is worth looking at again) and by "\n" and a target (the
// token of the one waiter the message is for: the head of the host's
// fleet-wide queue).
func (f *Fleet) dispatch(ch <-chan any) {
	defer f.shWG.Done()
	for x := range ch {
		switch m := x.(type) {
		case *redis.Subscription:
			f.shMu.Lock()
			sh := f.byChan[m.Channel]
			f.shMu.Unlock()
			if sh != nil && (m.Kind == "subscribe" || m.Kind == "ssubscribe") {
				sh.once.Do(func() { close(sh.ready) })
			}
		case *redis.Message:
			f.heard.Add(1)
			key, rest, _ := strings.Cut(m.Payload, "\n")
			h, target, _ := strings.Cut(rest, "\n")
			hint, _ := strconv.ParseInt(h, 10, 64)
			f.wake(key, hint, target)
		}
	}
}

// waiter is a local subscriber: a coalescing channel of hints, and the
// token it answers to (empty: every message of its key).
type waiter struct {
	c    chan int64
	self string
}

// wake signals the local waiters of key that the message is for, without
// blocking; a waiter that has a signal pending keeps the later hint.
func (f *Fleet) wake(key string, hint int64, target string) {
	f.subMu.Lock()
	for w := range f.subs[key] {
		if target != "" && w.self != "" && w.self != target {
			continue
		}
		select {
		case w.c <- hint:
		default:
			select {
			case <-w.c:
			default:
			}
			select {
			case w.c <- hint:
			default:
			}
		}
	}
	f.subMu.Unlock()
}

// subscribe registers a local waiter for the wake-ups of key, published
// on partition p's channel, that are for self (or for anyone); cancel
// removes it. The partition's subscription is made first (see listen).
func (f *Fleet) subscribe(ctx context.Context, p int, key, self string) (chan int64, func()) {
	w := &waiter{c: make(chan int64, 1), self: self}
	f.subMu.Lock()
	m := f.subs[key]
	if m == nil {
		m = make(map[*waiter]struct{})
		f.subs[key] = m
	}
	m[w] = struct{}{}
	f.subMu.Unlock()
	f.listen(ctx, p)
	return w.c, func() {
		f.subMu.Lock()
		delete(m, w)
		if len(m) == 0 && len(f.subs[key]) == 0 {
			delete(f.subs, key)
		}
		f.subMu.Unlock()
	}
}

// notify publishes a wake-up for key on partition p's channel: every
// process's waiters subscribed to key re-check their state. A lost
// notification costs only latency (every wait is also bounded by a
// timer).
func (f *Fleet) notify(ctx context.Context, p int, key string) error {
	cctx, cancel := context.WithTimeout(ctx, f.cfg.callTimeout)
	defer cancel()
	var err error
	if f.cluster {
		err = f.rdb.SPublish(cctx, f.pkey(p, kindWake), key).Err()
	} else {
		err = f.rdb.Publish(cctx, f.pkey(p, kindWake), key).Err()
	}
	if err != nil {
		return f.callError(f.pubCmd, err)
	}
	return nil
}

// wakeups returns a channel that receives a value (coalesced, never
// blocking the sender) after each wake-up for key on partition p from any
// process of the fleet, and a func that ends the subscription (call it:
// it also ends the goroutine that feeds the channel).
func (f *Fleet) wakeups(ctx context.Context, p int, key string) (<-chan struct{}, func()) {
	w, cancel := f.subscribe(ctx, p, key, "")
	out := make(chan struct{}, 1)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-w:
				select {
				case out <- struct{}{}:
				default:
				}
			case <-stop:
				return
			}
		}
	}()
	var once sync.Once
	return out, func() { once.Do(func() { cancel(); close(stop) }) }
}

// callError wraps an error of a Redis call: a reply error (redis.Error) as
// it is, anything else (network, timeout) as [ErrUnavailable]. An OOM
// reply is [ErrUnavailable] too, and its message names the cause and the
// setting to raise (see oomRun).
func (f *Fleet) callError(op string, err error) error {
	if isReplyError(err) {
		return fmt.Errorf("redisfleet: %s: %w", op, err)
	}
	if isOOM(err) {
		return fmt.Errorf("redisfleet: %s: %w: Redis refuses writes, out of memory (%s): raise its maxmemory, or free memory: %w",
			op, ErrUnavailable, f.noteOOM(err), err)
	}
	return fmt.Errorf("redisfleet: %s: %w: %w", op, ErrUnavailable, err)
}

// isOOM reports whether err is Redis's OOM reply: a write refused because
// its memory is above maxmemory (under noeviction, or with nothing left to
// evict). Redis still answers reads then.
func isOOM(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), "OOM")
}

// oomRun is a run of OOM replies, each within oomGap of the previous: a
// Redis that refuses writes (its maxmemory reached) while it answers
// reads. The fleet waits through it as through an outage; a frontier ends
// the crawl once it lasts longer than its outage limit (oomError).
type oomRun struct {
	mu          sync.Mutex
	first, last time.Time
	logged      bool   // the run's warning is logged
	mem         string // maxmemory and used_memory, read at the run's start
	reply       string // the latest OOM reply
}

// oomGap ends a run of OOM replies: none for this long (the retries of a
// waiting fleet come every 2 s at most) means Redis took writes again.
func (f *Fleet) oomGap() time.Duration { return max(f.cfg.lease, 5*time.Second) }

// noteOOM records an OOM reply and returns what Redis's maxmemory and
// used_memory are (read once per run, bounded by the call timeout).
func (f *Fleet) noteOOM(err error) string {
	now := time.Now()
	o := &f.oom
	o.mu.Lock()
	if o.last.IsZero() || now.Sub(o.last) > f.oomGap() {
		o.first, o.logged, o.mem = now, false, ""
	}
	o.last, o.reply = now, err.Error()
	mem := o.mem
	o.mu.Unlock()
	if mem == "" {
		mem = f.maxmemory()
		o.mu.Lock()
		o.mem = mem
		o.mu.Unlock()
	}
	return mem
}

// maxmemory describes the maxmemory and used_memory of the Redis server (on
// a Cluster, of every master whose maxmemory is set), for an OOM error:
// "maxmemory 1048576 at 127.0.0.1:6379, used_memory 2031616".
func (f *Fleet) maxmemory() string {
	ctx, cancel := context.WithTimeout(context.Background(), f.cfg.callTimeout)
	defer cancel()
	var (
		mu  sync.Mutex
		out []string
	)
	one := func(ctx context.Context, c redis.Cmdable, addr string) error {
		v, err := c.ConfigGet(ctx, "maxmemory").Result()
		if err != nil {
			mu.Lock()
			out = append(out, fmt.Sprintf("maxmemory unknown at %s: CONFIG GET: %v", addr, err))
			mu.Unlock()
			return nil
		}
		if v["maxmemory"] == "0" {
			return nil // no limit on this node: not the one refusing
		}
		d := "maxmemory " + v["maxmemory"]
		if addr != "" {
			d += " at " + addr
		}
		if info, err := c.Info(ctx, "memory").Result(); err == nil {
			for _, line := range strings.Split(info, "\r\n") {
				if u, ok := strings.CutPrefix(line, "used_memory:"); ok {
					d += ", used_memory " + u
				}
			}
		}
		mu.Lock()
		out = append(out, d)
		mu.Unlock()
		return nil
	}
	switch c := f.rdb.(type) {
	case *redis.ClusterClient:
		c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return one(ctx, n, n.Options().Addr) })
	case *redis.Client:
		one(ctx, c, c.Options().Addr)
	default:
		one(ctx, f.rdb, "")
	}
	if len(out) == 0 {
		return "maxmemory unknown"
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// setOutageLimit records the outage limit of a frontier of the Fleet: the
// limiter's Acquire gives up waiting through OOM replies after the largest
// of them (see outageLimit).
func (f *Fleet) setOutageLimit(d time.Duration) {
	for {
		old := f.outLim.Load()
		if int64(d) <= old || f.outLim.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

// outageLimit is how long the limiter's Acquire waits through a run of
// OOM replies before it returns the error: the largest outage limit of the
// Fleet's frontiers, which end the crawl then, else DefaultOutageLimit.
func (f *Fleet) outageLimit() time.Duration {
	if d := f.outLim.Load(); d > 0 {
		return time.Duration(d)
	}
	return DefaultOutageLimit
}

// oomError returns an error when Redis has refused writes with OOM
// (replies each within oomGap of the previous, the latest one recent)
// for longer than limit, else nil; its message starts "redisfleet: " and
// what, then, when kept is not nil, the requests known to this process
// not crawled (kept()). It wraps [ErrUnavailable].
func (f *Fleet) oomError(limit time.Duration, what string, kept func() int) error {
	o := &f.oom
	o.mu.Lock()
	if o.first.IsZero() || time.Since(o.last) > f.oomGap() || o.last.Sub(o.first) < limit {
		o.mu.Unlock()
		return nil
	}
	d, mem, reply := o.last.Sub(o.first).Round(time.Second), o.mem, o.reply
	o.mu.Unlock()
	if kept != nil {
		what += fmt.Sprintf(": %d requests known to this process not crawled", kept())
	}
	return fmt.Errorf("redisfleet: %s: Redis has refused writes for %s, out of memory (%s; %q): raise its maxmemory, or free memory: %w",
		what, d, mem, reply, ErrUnavailable)
}

// isReplyError reports whether err is an answer of Redis (a script error,
// WRONGTYPE...), not a failure to reach it. LOADING, READONLY, MASTERDOWN
// and the like mean the server cannot serve now: they count as
// unavailable; so does OOM (an evicting Redis at its maxmemory refuses a
// write it cannot evict room for: later, it may).
func isReplyError(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) || errors.Is(err, redis.Nil) {
		return false
	}
	msg := re.Error()
	for _, p := range []string{"LOADING", "READONLY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "BUSY", "MAXCLIENTS", "OOM"} {
		if strings.HasPrefix(msg, p) {
			return false
		}
	}
	return true
}

var (
	redisLog     atomic.Pointer[slog.Logger] // the logger of the most recent New
	redisLogOnce sync.Once
)

// redisLogger hands go-redis's log lines to redisLog at Debug level: the
// fleet reports an outage once itself (see [WithLogger]).
type redisLogger struct{}

func (redisLogger) Printf(ctx context.Context, format string, v ...any) {
	if l := redisLog.Load(); l != nil && l.Enabled(ctx, slog.LevelDebug) {
		l.DebugContext(ctx, "go-redis: "+fmt.Sprintf(format, v...))
	}
}

// outage logs the start of an outage once; recovered logs its end. A run
// of OOM replies (Redis answers reads, refuses writes) is logged once, as
// such, naming maxmemory: reads that succeed meanwhile do not end it.
// The line is a warning if it starts an incident (incidentLevel), else
// Info.
func (f *Fleet) outage(op string, err error) {
	if isOOM(err) {
		o := &f.oom
		o.mu.Lock()
		log := !o.logged
		o.logged = true
		mem := o.mem
		o.mu.Unlock()
		if log {
			f.log.Log(context.Background(), f.incidentLevel(time.Now()), "redisfleet: Redis refuses writes: out of memory (OOM); raise its maxmemory, or free memory", slog.String("op", op),
				slog.String("memory", mem), slog.Any("error", err), slog.String("on_redis_down", f.cfg.onDown.String()))
		} else {
			f.incidentGoesOn(time.Now())
		}
		return
	}
	if f.down.CompareAndSwap(false, true) {
		f.log.Log(context.Background(), f.incidentLevel(time.Now()), "redisfleet: Redis is unavailable", slog.String("op", op), slog.Any("error", err),
			slog.String("on_redis_down", f.cfg.onDown.String()))
		return
	}
	f.incidentGoesOn(time.Now())
}

// recovered ends an outage: Redis answered a call. The incident goes on
// until then, so that a data loss found next is part of it.
func (f *Fleet) recovered() {
	if f.down.Load() && f.down.CompareAndSwap(true, false) {
		f.incidentGoesOn(time.Now())
		f.log.Info("redisfleet: Redis answers again")
	}
}
