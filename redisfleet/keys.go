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
// The hosts are split into S partitions (WithPartitions, default 16): a
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
//	                                (frontier_script.go): twelve, whatever
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
// [hostReadyLua] is that test as a Lua function for other scripts (the
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

// hostReadyLua defines, for a Lua script run on the fleet's Redis, the
// function
//
//	robots_host_ready_at(hkey, zkey, pkey, now) -> at, held
//
// where hkey and zkey are a host's keys ([Fleet.hostKeys]), pkey its
// partition's pace record and now is the server's time in µs (from
// TIME). It returns the earliest time (µs) at
// which the host's limiter grants a permit by what is known now, and
// held = 1 when a live permit blocks the host (then at is at least the end
// of the earliest lease, and the real time depends on a release). A lease
// that has ended counts as a release at its end. A host
// with no state returns its pace record's time (0 without one), 0. It
// only reads. Include it at the top of the
// script.
const hostReadyLua = `
local function robots_host_ready_at(hkey, zkey, pkey, now)
  local s = redis.call('HMGET', hkey, 'd', 'm', 'next', 'pause', 'le', 'ls', 'hd', 'ho')
  local d = tonumber(s[1]) or 0
  local at = math.max(tonumber(s[3]) or 0, tonumber(s[4]) or 0)
  if not s[3] then at = tonumber(redis.call('ZSCORE', pkey, hkey)) or 0 end
  local n = string.format('%d', now)
  local first = redis.call('ZRANGEBYSCORE', zkey, '(' .. n, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  local gone = redis.call('ZRANGEBYSCORE', zkey, '-inf', n, 'WITHSCORES')
  local ho = tonumber(s[8]) or 0
  if ho > 0 and #first == 0 and #gone == 0 then
    -- the hold zset vanished while a permit was out: as the limiter does
    if ho > now then first = {'~lost', s[8]} else gone = {'~lost', s[8]} end
  end
  local hd = tonumber(s[7]) or 0
  if #first > 0 or #gone > 0 then d = math.max(d, hd) end
  if d <= 0 then return at, 0 end
  if (tonumber(s[2]) or 0) == 1 then
    at = math.max(at, (tonumber(s[6]) or 0) + d)
  else
    at = math.max(at, (tonumber(s[5]) or 0) + d)
  end
  for i = 2, #gone, 2 do at = math.max(at, tonumber(gone[i]) + d) end
  if #first > 0 then
    return math.max(at, tonumber(first[2])), 1
  end
  return at, 0
end
`

// hostDueLua defines, for a Lua script run on the fleet's Redis (after
// hostReadyLua), the function
//
//	robots_host_due(prefix, host, now, near) -> at, held, bar
//
// which tells, as robots_host_ready_at does, when host's limiter grants a
// permit (at, µs) and whether a live permit blocks it (held = 1), reading
// as little as it can: the host's entry in its partition's pace record
// (bar, µs, 0 without one), which is the earliest grant the stored state
// allows (hostScript's bar) while it is in the future; only when that is
// more than near µs ahead and a permit is out (the hash's ho, the latest
// lease end, is in the future) does it ask robots_host_ready_at, whose
// answer then differs (a host of delay 0 is ready while a permit is out;
// within near µs, bar is the answer, held = 0). prefix is
// the partition's key prefix T(n). A pace record that lost the host's
// entry makes the host look ready too soon: the answer is a hint for the
// frontier's order, never a permit (robots_host_grant checks the stored
// state again). It only reads.
const hostDueLua = `
local function robots_host_due(prefix, host, now, near)
  local hkey = prefix .. 'host:' .. host
  local bar = tonumber(redis.call('ZSCORE', prefix .. 'pace', hkey)) or 0
  if bar <= now + near then return bar, 0, bar end
  if (tonumber(redis.call('HGET', hkey, 'ho')) or 0) > now then
    local at, held = robots_host_ready_at(hkey, prefix .. 'hold:' .. host, prefix .. 'pace', now)
    return at, held, bar
  end
  return bar, 0, bar
end
`

// hostGrantLua defines, for a Lua script run on the fleet's Redis, the
// function
//
//	robots_host_grant(prefix, host, tok, now, lease, idle, bar) -> granted, d, fail, mode
//
// which grants a permit of host's limiter under the token tok (the grant
// of hostScript's acq: a member of hold:<host> whose score is the lease
// end, hd set to the delay, ho to the lease end, claim cleared, g counted,
// the host's entry in the partition's pace record raised to the lease end
// plus the delay; bar is that entry's score as the caller read it, 0 if
// none) for a caller that found the host ready (robots_host_due); prefix
// is the partition's key prefix T(n), lease and idle are the lease and
// the idle TTL in µs. It grants only when the grant cannot be told from
// one hostScript would make at now under the host's stored delay d: the
// host has limiter state (its hash exists: a host without state is held
// after a data loss, which only hostScript judges), its stored state
// allows a grant now (next, pause, the latest release or send plus the
// delay, a lease whose hold zset vanished: as hostScript reads them), no
// permit is in hold:<host> (none live, none whose lease ended and is not
// yet counted), and no Acquire caller queues in wait:<host> (they come
// first). It returns granted = 1, the stored delay d (µs: the grant is
// valid for a request whose delay is at most d), the host's 429/503 run
// and the stored spacing mode; else 0, 0, 0, 0, writing nothing.
const hostGrantLua = `
local function robots_host_grant(prefix, host, tok, now, lease, idle, bar)
  local hkey, zkey = prefix .. 'host:' .. host, prefix .. 'hold:' .. host
  local s = redis.call('HMGET', hkey, 'next', 'd', 'fail', 'm', 'pause', 'le', 'ls', 'ho', 'hd', 'g')
  if not s[1] then return 0, 0, 0, 0 end
  local d = tonumber(s[2]) or 0
  -- Ready by the stored state (the caller's view came from the pace
  -- record, which may have lost the host's entry).
  local at, ho, dd = math.max(tonumber(s[1]) or 0, tonumber(s[5]) or 0), tonumber(s[8]) or 0, d
  if ho > now then return 0, 0, 0, 0 end
  if ho > 0 then
    dd = math.max(d, tonumber(s[9]) or 0)
    at = math.max(at, ho + dd)
  end
  if dd > 0 then
    if (tonumber(s[4]) or 0) == 1 then at = math.max(at, (tonumber(s[7]) or 0) + dd) else at = math.max(at, (tonumber(s[6]) or 0) + dd) end
  end
  if at > now then return 0, 0, 0, 0 end
  if redis.call('EXISTS', zkey, prefix .. 'wait:' .. host) > 0 then return 0, 0, 0, 0 end
  redis.call('ZADD', zkey, string.format('%d', now + lease), tok)
  redis.call('PEXPIRE', zkey, string.format('%d', math.ceil((lease + idle) / 1000)))
  redis.call('HSET', hkey, 'hd', string.format('%d', d), 'claim', '0', 'ho', string.format('%d', now + lease),
    'g', string.format('%d', (tonumber(s[10]) or 0) + 1))
  -- The pace record, as hostScript keeps it: no grant before this
  -- permit's lease ends and its delay passes, should the state vanish.
  -- (No ZADD GT: Redis 5 has none.)
  local bar1 = now + lease + d
  if bar1 > bar then
    redis.call('ZADD', prefix .. 'pace', string.format('%d', bar1), hkey)
  end
  return 1, d, tonumber(s[3]) or 0, tonumber(s[4]) or 0
end
`
