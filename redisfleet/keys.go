package redisfleet

import (
	"strconv"
	"strings"
)

// The key schema, in one place. P is the fleet's prefix with the format
// version (Fleet.prefix, default "robots:v2:"). Times stored in Redis
// are microseconds of the Redis server's clock (TIME), as integers;
// durations are microseconds unless the name says otherwise.
//
// The hosts are split into S partitions (Config.Partitions, default 16): a
// host h is in partition n = fnv1a32(h) mod S. T(n) is the partition's
// key prefix, P "{" <user prefix> n "}:" (default "robots:v2:{robots:3}:"
// for partition 3): every key of a partition shares one hash slot, so
// that each script runs on one node of a Redis Cluster. A script's keys
// are in its KEYS, but for those the frontier's pop and done scripts pick
// themselves inside the partition (the limiter keys of the hosts they look
// at, and, for the pop's grant, of the host it hands out: robots_host_grant
// writes its hash and hold zset; the stored policy of that host, which the
// pop reads): they share the slot of its KEYS, which Redis 7 checks.
//
//	P config                string  "partitions=S": New writes it (NX) and
//	                                refuses a process with another S.
//	T(n) epoch              hash    gen: the Redis-clock time (µs) at which
//	                                the partition's state was first written
//	                                (a generation); ep: 0, or the time from
//	                                which hosts without state are held for
//	                                one lease because the data was lost.
//	                                Written by the limiter's script: missing,
//	                                it is created with ep 0 by a caller that
//	                                knew no generation of the partition (a
//	                                fresh fleet), with ep = now by one that
//	                                knew one (the data was lost under it);
//	                                a caller that knew another generation
//	                                sets ep to the new generation's time.
//	                                No expiry.
//	T(n) pace               zset    the partition's pace record: member =
//	                                a host hash key (T(n) host:<host>),
//	                                score = the earliest grant its state
//	                                allows (µs; a lease out counts as
//	                                released at its end), kept while in the
//	                                future: a host whose hash vanished
//	                                (evicted, deleted) is not asked sooner.
//	                                Member "~" (score +inf) from the
//	                                epoch's creation on: without it the
//	                                record was lost, and the partition's
//	                                hosts without state are held for one
//	                                lease as after a data loss (ep = now).
//	                                Written by the limiter's script; no
//	                                expiry.
//	T(n) wake               channel the partition's wake-ups (PUBLISH, or
//	                                SPUBLISH on a Cluster); the payload is
//	                                the key whose state changed (a host
//	                                hash key, a fetch lock key, a frontier's
//	                                hosts key).
//	T(n) wake:<process>     channel one process's own wake-ups (its
//	                                random id): the frontier wakes one
//	                                waiting process there; same payload.
//	T(a) policy:<store key> string  a serialised policy (policy.Store):
//	                                "robots-policy/v2\n" then the bytes the
//	                                resolver gave; PX = its TTL. a: the
//	                                partition of the authority the store
//	                                key ends with (the policy package's
//	                                keys are "<dialect> <authority>"), so
//	                                that the frontier's pop that hands out
//	                                a request of the authority reads it in
//	                                its script (polKey).
//	T(k) fetch:<store key>  string  the robots.txt fetch lock (k: the
//	                                partition of the store key): the
//	                                holder's token; PX = the lease, renewed
//	                                by the holder every third of it.
//	T(n) host:<host>        hash    the limiter state of one host (below);
//	                                PX = idle TTL past its last pending time.
//	T(n) hold:<host>        zset    the permits that block the host:
//	                                member = token, score = lease end (µs).
//	                                End-to-start: granted, not released;
//	                                start-to-start: granted, not sent.
//	T(n) wait:<host>        zset    the fleet-wide queue of the host's
//	                                Acquire callers while its delay is above
//	                                0: member = token, score = first arrival
//	                                (µs); only the head may be granted.
//	T(n) early:<host>       zset    the same queue for the host's Wait
//	                                callers; its head passes only while
//	                                wait:<host> is empty.
//	T(n) seen:<host>        zset    member = token of a queue, score =
//	                                its latest call (µs): a waiter not seen
//	                                for the stale time (a second plus two
//	                                call timeouts plus a second) is dropped.
//	T(n) fr:<name>:<kind>   the frontier <name>'s keys in partition n
//	                                (internal/lua/include/frontier_head.lua): twelve, whatever
//	                                the number of hosts (the hosts' FIFOs
//	                                are fields of two hashes).
//
// <host> is the authority as the plugin gives it ("https://example.com",
// policy.Authority).
//
// Fields of T(n) host:<host> (all integers; a missing field is 0):
//
//	d      delay in force, µs (the latest one passed by Wait or Acquire)
//	m      spacing mode of the latest writer: 0 end-to-start, 1 start-to-start
//	next   earliest grant allowed by earlier events: release (or send) + the
//	       delay in force then, an expired lease's end + delay, the end of
//	       the recovery window after a data loss
//	le     latest release (end), µs
//	ls     latest send mark, µs
//	pause  429/503 pause until, µs
//	fail   429/503 responses in a row
//	claim  an early waiter was let through and heads for the gate, until µs
//	wake   some waiter was told to come back no later than this, µs: an
//	       event before it publishes a wake-up for the host hash key
//	hd     the largest delay a permit still in hold:<host> was granted
//	       under (0 when none is): while a permit is out, the host is
//	       serialised by max(d, hd), so a caller passing a lower delay does
//	       not end the serialisation of permits granted under a higher one
//	ab     the token of the latest caller that gave up (leave): a call
//	       under it that runs later (it timed out on the client while
//	       Redis hung) takes nothing
//	ho     the end of the latest lease in hold:<host> (µs; 0: none): a
//	       hold zset found missing while ho is set vanished, and a phantom
//	       member "~lost" scored ho stands for the permit (removed by a
//	       release or a send mark of the host, or at ho)
//	g, pc  grants and pauses started (counters)
//	lp     the latest pause computed, µs
//
// A host may be asked now (the next Acquire is granted at once) when, with
// now = TIME in µs and dd = max(d, hd) while hold:<host> has a live
// member (score > now), else d:
//
//	now >= max(next, pause) and,
//	if dd > 0: no member of hold:<host> has a score > now, and
//	           now >= le + dd (m = 0) or now >= ls + dd (m = 1).
//
// internal/lua/include/host_ready.lua is that test as a Lua function for other scripts (the
// queue frontier's).

// Key kinds.
const (
	kindConfig = "config"
	kindEpoch  = "epoch"
	kindPace   = "pace"
	kindWake   = "wake"
	kindPol    = "policy"
	kindFetch  = "fetch"
	kindHost   = "host"
	kindHold   = "hold"
	kindWait   = "wait"
	kindSeen   = "seen"
	kindEarly  = "early"
)

// part returns the partition of s (a host, a store key): fnv1a32(s) mod S.
func (f *Fleet) part(s string) int {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return int(h % uint32(f.cfg.partitions))
}

// tag returns T(p), the prefix of partition p's keys (see above).
func (f *Fleet) tag(p int) string {
	return f.prefix + "{" + f.cfg.prefix + strconv.Itoa(p) + "}:"
}

// pkey returns partition p's key of the given kind (epoch, wake).
func (f *Fleet) pkey(p int, kind string) string { return f.tag(p) + kind }

// key returns the key of the given kind for id: P+kind when id is empty;
// T(part(id))+kind+":"+id for the per-host kinds and the fetch lock;
// P+kind+":"+id otherwise.
func (f *Fleet) key(kind, id string) string {
	switch {
	case id == "":
		return f.prefix + kind
	case kind == kindHost || kind == kindHold || kind == kindWait || kind == kindSeen || kind == kindEarly || kind == kindFetch:
		return f.tag(f.part(id)) + kind + ":" + id
	}
	return f.prefix + kind + ":" + id
}

// polKey returns the key of the policy stored under store key k: in the
// partition of the authority k ends with (storeAuthority).
func (f *Fleet) polKey(k string) string {
	return f.tag(f.part(storeAuthority(k))) + kindPol + ":" + k
}

// storeAuthority returns the authority a store key of the policy package
// ends with ("<dialect> <authority>"): what follows its last space, or
// the whole key.
func storeAuthority(k string) string {
	return k[strings.LastIndexByte(k, ' ')+1:]
}

// hostKeys returns the two keys of host's limiter state: the hash and the
// zset of blocking permits (see keys.go).
func (f *Fleet) hostKeys(host string) (hash, hold string) {
	return f.key(kindHost, host), f.key(kindHold, host)
}
