package redisfleet

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/robots/redisfleet/internal/eventrun"
	"github.com/redis/go-redis/v9"
)

// formatVersion is the version of the keys and values this package writes.
// It is part of every key ("robots:v1:...") and of every stored value.
const formatVersion = 2

// Defaults of the Config fields.
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

// Config configures a [Fleet]. The zero Config is the default: every
// field's zero value means its default. New refuses a negative duration,
// a Partitions outside 0 to 16384 and an unknown OnRedisDown.
type Config struct {
	// Prefix starts every key (default "robots:"). Processes that share a
	// fleet use the same prefix; fleets that must not share state (two
	// crawls, two tests) use different ones on one Redis.
	Prefix string

	// Partitions is into how many partitions the fleet's hosts are split
	// (0 means 16): a host's limiter state, its queue of the frontier and
	// its wake-ups live in partition hash(host) mod n, whose keys share
	// one Redis Cluster hash slot. On a Cluster, the partitions are what
	// spreads the fleet over the masters: use several per master (16
	// suits 3 to 5 masters; 64 or more for larger Clusters), and each
	// partition a process waits on costs it one Pub/Sub connection (on
	// one server, all share one). Every process of a fleet uses the same
	// n: New refuses a different one (an error naming both) as long as
	// the fleet's keys are in Redis.
	Partitions int

	// Eviction lets New accept a Redis whose maxmemory-policy evicts keys
	// (allkeys-* or volatile-*), which it refuses otherwise. An evicted
	// key of the fleet never shortens a host's gap below its delay, but
	// costs pace and work: a host whose state is gone is held up to a
	// lease, as after a restart; a frontier partition that lost a key is
	// emptied and queued again from the processes' journals (pages may be
	// fetched twice; a request no live process journaled is lost, with a
	// warning). See "Failure behaviour" in the package doc. Use it only
	// for a Redis whose maxmemory is rarely reached.
	Eviction bool

	// CallTimeout bounds every Redis call (0 means 2 s). A call that
	// times out counts as Redis being unavailable.
	CallTimeout time.Duration

	// Lease is the lease of a limiter permit, of a robots.txt fetch lock
	// and of a frontier request (0 means 10 s; under 100 ms counts as
	// 100 ms). A live holder renews it every third of the lease, so the
	// lease bounds only how long a dead process holds a host or a fetch.
	// New raises a lease shorter than three call timeouts to three call
	// timeouts, with a warning: a renewal that takes a whole call timeout
	// must still land before the lease ends.
	Lease time.Duration

	// IdleTTL is how long the state of a host nobody uses is kept in
	// Redis, counted from when its last pause or spacing ends (0 means
	// 10 minutes; at least twice the lease).
	IdleTTL time.Duration

	// OnRedisDown is what the limiter does while Redis cannot be reached
	// (the zero value is [WaitForRedis]).
	OnRedisDown OnRedisDown

	// Logger is where warnings go (Redis lost and back, fallback to the
	// local gate); nil means slog.Default(). An incident (Redis
	// unreachable, restarted empty, refusing writes, keys evicted) gives
	// one warning per process; what the process notices later in the
	// same incident is logged at Info (docs/fleet.md, "Logs").
	//
	// go-redis has one logger per process, which prints a line to stderr
	// on every failed dial: during an outage, dozens beside the fleet's
	// one warning. New routes it, at Debug level, to the logger of the
	// most recent New. A program that wants go-redis's lines elsewhere
	// calls [redis.SetLogger] after New.
	Logger *slog.Logger
}

// resolve returns the settings c gives, defaults filled in, or an error
// naming the field New refuses.
func (c Config) resolve() (config, error) {
	cfg := config{
		prefix:      cmp.Or(c.Prefix, DefaultPrefix),
		callTimeout: cmp.Or(c.CallTimeout, DefaultCallTimeout),
		lease:       cmp.Or(c.Lease, DefaultLease),
		idleTTL:     cmp.Or(c.IdleTTL, DefaultIdleTTL),
		partitions:  cmp.Or(c.Partitions, DefaultPartitions),
		onDown:      c.OnRedisDown,
		logger:      c.Logger,
		eviction:    c.Eviction,
	}
	switch {
	case c.CallTimeout < 0:
		return cfg, fmt.Errorf("redisfleet: New: Config.CallTimeout %v: want 0 (2 s) or more", c.CallTimeout)
	case c.Lease < 0:
		return cfg, fmt.Errorf("redisfleet: New: Config.Lease %v: want 0 (10 s) or more", c.Lease)
	case c.IdleTTL < 0:
		return cfg, fmt.Errorf("redisfleet: New: Config.IdleTTL %v: want 0 (10 minutes) or more", c.IdleTTL)
	case c.Partitions < 0 || c.Partitions > maxPartitions:
		return cfg, fmt.Errorf("redisfleet: New: Config.Partitions %d: want 1 to %d (0: %d)", c.Partitions, maxPartitions, DefaultPartitions)
	case c.OnRedisDown != WaitForRedis && c.OnRedisDown != FallBackLocal:
		return cfg, fmt.Errorf("redisfleet: New: Config.OnRedisDown %d: want WaitForRedis or FallBackLocal", c.OnRedisDown)
	}
	cfg.lease = max(cfg.lease, 100*time.Millisecond)
	return cfg, nil
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
	incident eventrun.Run // trouble events: one warning per incident (incident.go)
	oom      oomRun       // Redis refusing writes with OOM
	outLim   atomic.Int64 // the largest fleetfrontier.Config.OutageLimit of the Fleet's frontiers (ns); 0: none made
	closeMu  sync.Once
	lost     atomic.Int64 // releases, send marks, unlocks that never reached Redis
	heard    atomic.Int64 // wake-up messages received

	desk permitDesk  // the limiter's permits and releases riding the frontier's calls (limiter_desk.go)
	pols policyReads // policies read by the frontier's pops for the Store (store.go)
}

// shard is the subscription to one partition's wake-up channel.
type shard struct {
	ps     *redis.PubSub
	ready  chan struct{} // closed when Redis confirmed the subscription
	once   sync.Once
	waited atomic.Bool // a caller waited for ready already (only the first does)
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
// [Config.Partitions]); it writes nothing else: a fresh Redis is told from
// one that lost its data by the fleet's own keys (see the package doc).
func New(ctx context.Context, client redis.UniversalClient, c Config) (*Fleet, error) {
	if client == nil {
		return nil, errors.New("redisfleet: New: nil client")
	}
	cfg, err := c.resolve()
	if err != nil {
		return nil, err
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
	f.desk.fresh, f.desk.lease, f.desk.send, f.desk.closed = readyFresh, cfg.lease, f.sendHostOps, f.closed.Load
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
			return fmt.Errorf("redisfleet: New: Redis at %s has maxmemory-policy %s, which may evict the fleet's keys (a host's pace, its queue): set maxmemory-policy noeviction, or set Config.Eviction to accept it",
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
		return fmt.Errorf("redisfleet: New: Redis has maxmemory-policy %s, which may evict the fleet's keys (a host's pace, its queue): set maxmemory-policy noeviction, or set Config.Eviction to accept it", p)
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
		return fmt.Errorf("redisfleet: New: the fleet under prefix %q runs with %s in Redis (key %s), this process with %s: every process of a fleet must use the same Config.Partitions",
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
		f.desk.flush()
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

// ownWake returns this process's own wake-up channel of partition p (in
// the partition's slot): a frontier script that wakes one waiting process
// publishes there, so that the others do not hear it.
func (f *Fleet) ownWake(p int) string { return f.pkey(p, kindWake) + ":" + f.procID }

// token returns a token unique across the fleet: the Fleet's random id and
// a counter.
func (f *Fleet) token() string {
	return f.procID + "-" + fmt.Sprint(f.seq.Add(1))
}
