// Package redisfleet makes a fleet of crawler processes polite together
// through one Redis: each robots.txt is fetched once for the fleet, each
// host is asked no faster than its Crawl-delay by all processes together,
// and a 429/503 seen by one process pauses the host for all of them. Each
// process holds a [Fleet] (made by [New] over a go-redis client) and takes
// from it the three shared parts it gives the Colly plugin and Colly's
// queue: the policy [Fleet.Store], the per-host [Fleet.Limiter] and the
// URL queue of package fleetfrontier
// ([github.com/politecrawl/robots/redisfleet/fleetfrontier], made on the
// Fleet).
//
//	rdbOpts, err := redisfleet.ParseURL(os.Getenv("REDIS_URL"))
//	if err != nil { ... }
//	fleet, err := redisfleet.New(ctx, redis.NewClient(rdbOpts), redisfleet.Config{}) // PING: errors.Is(err, redisfleet.ErrUnavailable)
//	if err != nil { ... }
//	defer fleet.Close()
//	c := colly.NewCollector(robots.WithRobots(
//		robots.WithPolicy(policy.WithStore(fleet.Store())),         // one robots.txt fetch per host for the fleet
//		robots.WithLimiter(fleet.Limiter(redisfleet.LimiterConfig{})), // one per-host pace for the fleet
//	))
//	front := fleetfrontier.New(fleet, fleetfrontier.Config{Name: "mycrawl"}) // one queue for the fleet
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
//   - fleetfrontier.New, a queue.Storage for Colly's queue, shared by the
//     fleet: one queue per host, one seen set (each request queued once
//     for the fleet), a request handed out only when its host may be asked
//     (it reads the fleet limiter's state in the same script), leases so
//     that the requests of a process that dies go to the others, and a
//     journal so that what Redis loses is queued again. Each process's
//     queue.Run ends when the fleet's queue is empty and no process works.
//
// The package's examples (Example, and fleetfrontier's) are this program,
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
// A GCRA limiter such as github.com/go-redis/redis_rate books scheduled
// send times (start-to-start): it never learns when a response ended, so
// it cannot give end-to-start spacing, a caller that sends late still
// leaves the next one on schedule, and waiting callers poll Allow until a
// slot comes. This package's script decides on the events themselves
// (release, send mark, grant) as they reach Redis, on Redis's clock: a
// grant is one round trip, and waiting callers are woken by the release
// instead of polling. docs/fleet.md gives the measurements.
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
// pipeline under fleetfrontier.Config.Batching. A page whose host is known then costs
// two script calls, its pop and its done report, and two round trips, or
// one under Batching: there the done report waits (at most 5 ms)
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
// host's turn, fleetfrontier.Frontier.Postpone: the permit's release alone and one
// more pop). A partition that empties tells the processes waiting on it
// so in its wake-up, instead of having each look. docs/fleet.md gives the
// round trips per page measured (BenchmarkFleetScaling).
//
// # Partitions, Redis Cluster and Pub/Sub
//
// The hosts are split into partitions ([Config.Partitions], default 16): a
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
// Every key starts with the prefix ([Config.Prefix], default "robots:") and
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
//   - Redis slow: every call has a timeout ([Config.CallTimeout], default 2 s).
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
//     made is undone by the process's next call (see fleetfrontier.Frontier and
//     the limiter's leave), so hosts are free again within about a call
//     timeout of the resume, not a lease.
//   - A key evicted (under [Config.Eviction]) or deleted: a host whose limiter
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
//     cannot hold the queue) ends the crawl: after fleetfrontier.Config.OutageLimit of
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
//     fleetfrontier.Config.OutageLimit of the Fleet's frontiers; 1 minute without one)
//     ends the crawl: the frontier's QueueSize returns an error wrapping
//     [ErrUnavailable] that names the OOM reply and maxmemory and counts
//     the requests known to this process not crawled, which ends
//     queue.Run, and a limiter's Acquire that waits through the run
//     returns such an error (its request is not sent). New on such a
//     Redis returns an error naming the same cause.
//   - A process killed while it holds a host: its permit has a lease
//     ([Config.Lease], default 10 s), renewed every third of it while the
//     request runs; once it is not renewed the lease ends, and the host is
//     granted again no earlier than the delay after the lease's end.
//
// Redis 5.0 or later is needed (the scripts read TIME before writing, which
// needs the effects replication that is the default since 5.0; tested with
// 7.0), Redis 7.0 or later on a Cluster (sharded Pub/Sub). New refuses a
// Redis whose maxmemory-policy evicts keys (allkeys-*, volatile-*: the
// fleet's keys carry TTLs) unless [Config.Eviction] is set.
package redisfleet
