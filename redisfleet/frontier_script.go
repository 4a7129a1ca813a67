package redisfleet

import "github.com/redis/go-redis/v9"

// The frontier's scripts. Every one takes the same KEYS and first ARGV:
//
//	KEYS: 1 hosts (zset host -> earliest µs worth looking at it again),
//	      2 counters (hash: q queued, l leased, gen data generation),
//	      3 seen (set of request keys), 4 leases (hash id -> host "\n"
//	      payload), 5 lease ends (zset id -> µs), 6 held (hash host -> leases
//	      out), 7 done (set of request keys reported done by any process),
//	      8 abandoned (zset lease id -> µs until which a pop under that id
//	      leases nothing: its caller gave up on it), 9 queued requests
//	      (hash host "\n" n -> payload: the n-th request of the host's
//	      FIFO), 10 the hosts' FIFO ends (hash "h:" host -> n of its head,
//	      "t:" host -> n of its tail; absent: empty), 11 waiters (zset
//	      process id -> µs at which it looks at the partition again: a
//	      process whose pop found nothing; frWakeLua), 12 the seen set of
//	      the partition's earlier generations (set of request keys: what
//	      the seen set held when the partition was emptied because a key
//	      vanished; a link found again is not queued again)
//	ARGV: 1 generation to set if the counters are missing (the data is new
//	      or was lost), 2 the partition's key prefix (its limiter keys:
//	      prefix .. "host:" .. host), 3 the command publishing a wake-up (PUBLISH, or SPUBLISH on
//	      a Cluster), a space, and the partition's wake-up channel, 4 the
//	      TTL (ms) of the frontier's keys
//
// Every key is in one partition of the fleet (keys.go) and declared in
// KEYS, but for the limiter's keys of the hosts the pop looks at and the
// stored policy of the host it hands out, which it picks itself: they
// share the hash slot of its KEYS.
//
// and returns the generation first, so that a process notices when Redis
// lost the data (the generation changes) and queues again what it knows.
// Each per-host list is a FIFO of serialised requests. Times are µs of the
// Redis server's clock, written as integer strings (I).
const frontierLuaHead = `
local function I(x) return string.format('%d', x) end
local PUB, WAKE = string.match(ARGV[3], '^(%S+) (.*)$')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local c = redis.call('HMGET', KEYS[2], 'gen', 'q', 'l', 'dk', 'ab')
local gen = c[1]
-- A key of the partition that vanished alone (evicted, deleted) leaves
-- the others inconsistent: requests queued that no host entry leads to,
-- leases that never end, counters that never reach 0. Told by the keys
-- the counters say must exist; then the partition is emptied as if Redis
-- had lost it, with a new generation: every process queues again its
-- journal and registers its leases again (frontier.go); the counters'
-- field 'lost' keeps how many requests were queued or out then (by the
-- counters, or by what was left of the queue), for the processes' logs.
local broken = false
if not gen then
  broken = redis.call('EXISTS', KEYS[1], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[9], KEYS[10]) > 0
else
  local q, l = tonumber(c[2]) or 0, tonumber(c[3]) or 0
  local need = {}
  if q > 0 then need = {KEYS[1], KEYS[9], KEYS[10]} end
  if l > 0 then
    for _, k in ipairs({KEYS[4], KEYS[5], KEYS[6]}) do need[#need + 1] = k end
  end
  if #need > 0 then
    need[#need + 1] = KEYS[3]
    broken = redis.call('EXISTS', unpack(need)) < #need
  end
end
local dropped = 0
if broken then
  dropped = math.max((tonumber(c[2]) or 0) + (tonumber(c[3]) or 0), redis.call('HLEN', KEYS[9]) + redis.call('HLEN', KEYS[4]))
  -- What was seen stays seen (KEYS[12]), and what was done stays done
  -- (KEYS[7]): the journals queue again only what is not done, and a link
  -- found again to a page of an earlier generation is not queued again.
  if redis.call('EXISTS', KEYS[3]) == 1 then
    if redis.call('EXISTS', KEYS[12]) == 1 then
      redis.call('SUNIONSTORE', KEYS[12], KEYS[12], KEYS[3])
    else
      redis.call('RENAME', KEYS[3], KEYS[12])
    end
    redis.call('PEXPIRE', KEYS[12], ARGV[4])
  end
  for k = 1, 11 do
    if k ~= 7 then redis.call('DEL', KEYS[k]) end
  end
  gen = nil
end
-- Q, L: the counters' q and l, kept up to date by the scripts' changes;
-- DK: the done set was given its TTL (field dk); AB: the entries of the
-- abandoned zset when it was last written (field ab: 0, none to look up).
local Q, L, DK, AB = tonumber(c[2]) or 0, tonumber(c[3]) or 0, c[4], tonumber(c[5]) or 0
if broken then Q, L, DK, AB = 0, 0, nil, 0 end
if not gen then
  gen = ARGV[1]
  redis.call('HSET', KEYS[2], 'gen', gen)
  if broken then redis.call('HSET', KEYS[2], 'lost', dropped) end
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
-- keep gives k the TTL of the seen set (set by frAddScript) if it has none.
local function keep(k)
  if redis.call('PTTL', k) == -1 then
    local t = redis.call('PTTL', KEYS[3])
    if t > 0 then redis.call('PEXPIRE', k, t) end
  end
end
local function unhold(host)
  if redis.call('HINCRBY', KEYS[6], host, -1) <= 0 then redis.call('HDEL', KEYS[6], host) end
end
local function hostOf(v)
  local i = string.find(v, '\n', 1, true)
  return string.sub(v, 1, i - 1), string.sub(v, i + 1)
end
-- Each host's queue is a FIFO in two hashes of the partition (KEYS 9 and
-- 10): no key per host, so that every key is declared.
local QI, QE = KEYS[9], KEYS[10]
local function qends(host)
  local e = redis.call('HMGET', QE, 'h:' .. host, 't:' .. host)
  return tonumber(e[1]) or 1, tonumber(e[2]) or 0
end
local function qlen(host)
  local h, t = qends(host)
  return math.max(t - h + 1, 0)
end
local function qpush(host, payload)
  local h, t = qends(host)
  if t < h then h, t = 1, 0 end
  t = t + 1
  redis.call('HSET', QI, host .. '\n' .. I(t), payload)
  redis.call('HSET', QE, 'h:' .. host, I(h), 't:' .. host, I(t))
end
local function qpushFront(host, payload)
  local h, t = qends(host)
  if t < h then h, t = 1, 1 else h = h - 1 end
  redis.call('HSET', QI, host .. '\n' .. I(h), payload)
  redis.call('HSET', QE, 'h:' .. host, I(h), 't:' .. host, I(t))
end
-- qpop removes and returns the head of host's FIFO (nil if empty) and
-- how many requests are left.
local function qpop(host)
  local h, t = qends(host)
  if t < h then return nil, 0 end
  local f = host .. '\n' .. I(h)
  local payload = redis.call('HGET', QI, f)
  redis.call('HDEL', QI, f)
  if h >= t then
    redis.call('HDEL', QE, 'h:' .. host, 't:' .. host)
  else
    redis.call('HSET', QE, 'h:' .. host, I(h + 1))
  end
  return payload, t - h
end
-- wakeOne wakes one process that waits on the partition and would look
-- at it only after at (µs): it publishes on that process's own channel
-- (the partition's channel .. ':' .. its id) the hosts key and the µs
-- until at, and records that it looks at at (an earlier event wakes it
-- again, a later one wakes another). Nobody waits: no message.
local function wakeOne(at)
  local w = redis.call('ZRANGEBYSCORE', KEYS[11], '(' .. I(at), '+inf', 'LIMIT', 0, 1)
  if #w == 0 then return end
  redis.call('ZADD', KEYS[11], I(at), w[1])
  redis.call(PUB, WAKE .. ':' .. w[1], KEYS[1] .. '\n' .. I(math.max(at - now, 0)))
end
-- wakeAll tells every process that waits on the partition, on the
-- partition's channel, that it emptied (nothing queued, nothing out: hint
-- -1), which is what a pop would tell them: they need not look. Each
-- stays a waiter, registered as looking only when woken (+inf), so that
-- the next request queued wakes one (wakeOne).
local function wakeAll()
  local w = redis.call('ZRANGE', KEYS[11], 0, -1)
  if #w == 0 then return end
  for i = 1, #w, 1000 do
    local args = {}
    for j = i, math.min(i + 999, #w) do
      args[#args + 1] = '+inf'
      args[#args + 1] = w[j]
    end
    redis.call('ZADD', KEYS[11], unpack(args))
  end
  redis.call(PUB, WAKE, KEYS[1] .. '\n-1')
end
-- putBack ends lease id, if it is there, putting its request back at the
-- head of its host's list; it returns the host, or nil if it was not there.
local function putBack(id)
  redis.call('ZREM', KEYS[5], id)
  local v = redis.call('HGET', KEYS[4], id)
  if not v then return nil end
  local host, payload = hostOf(v)
  redis.call('HDEL', KEYS[4], id)
  qpushFront(host, payload)
  unhold(host)
  redis.call('ZADD', KEYS[1], 0, host)
  Q = redis.call('HINCRBY', KEYS[2], 'q', 1)
  L = redis.call('HINCRBY', KEYS[2], 'l', -1)
  return host
end
-- Leases that ended (their process stopped renewing them: it died) put
-- their request back at the head of its host's list.
local function reap(limit)
  local ids = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', I(now), 'LIMIT', 0, limit)
  local n = 0
  for _, id in ipairs(ids) do
    if putBack(id) then n = n + 1 end
  end
  return n
end
`

// frAddScript queues requests not seen before. ARGV 5 TTL (ms) of the
// frontier's keys, 6 "1" when the requests are queued again from a
// journal after a loss (queued unless done, or queued again already in
// this generation; else unless seen in this generation or an earlier
// one), 7.. triples: key, host, payload. Returns gen, then 1 (queued) or
// 0 (seen) per request.
var frAddScript = redis.NewScript(frontierLuaHead + `
local out = {gen}
local added = 0
local ttl = ARGV[5]
local again = ARGV[6] == '1'
local function fresh(key)
  if again then
    return redis.call('SISMEMBER', KEYS[7], key) == 0 and redis.call('SADD', KEYS[3], key) == 1
  end
  -- (Not in the seen set if seen in an earlier generation: the journals
  -- queue it again after a loss when it is not done.)
  return redis.call('SISMEMBER', KEYS[12], key) == 0 and redis.call('SADD', KEYS[3], key) == 1
end
for i = 7, #ARGV, 3 do
  if fresh(ARGV[i]) then
    qpush(ARGV[i + 1], ARGV[i + 2])
    if redis.call('ZADD', KEYS[1], 'NX', 0, ARGV[i + 1]) == 1 then wakeOne(now) end
    added = added + 1
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
if added > 0 then
  redis.call('HINCRBY', KEYS[2], 'q', added)
  -- The keys it wrote (the others get theirs when written first, and
  -- from the processes' touch, frTouchScript).
  for _, k in ipairs({1, 2, 3, 9, 10}) do redis.call('PEXPIRE', KEYS[k], ttl) end
end
return out
`)

// frPopScript hands out the next request of a host that may be asked now.
// ARGV 5 the partition's key prefix (its limiter keys: prefix .. "host:"
// .. host), 6 lease id, 7 lease µs, 8 per host, 9 force (1: if none is
// ready, take from the host ready soonest), 10 hosts to look at, 11 µs
// before a busy host is looked at again, 12 µs before a host held PerHost
// times is (a done request or a reaped lease sets it back), 13 MaxWait
// µs, 14 µs before a partition with requests out and none queued is
// looked at again, 15 the process's id, 16 grant (1: the request of a
// ready host comes with a permit of the host's limiter granted under the
// lease id, robots_host_grant), 17 the limiter's idle TTL µs, 18 policy
// cap (> 0: the reply of a request handed out carries the value of its
// host's stored policy, key ARGV 5 .. "policy:" .. ARGV 19 .. host,
// keys.go, when it is shorter than that many bytes), 19 the store keys'
// part before the authority, 20.. pairs
// of a lease id this process abandons and µs: ids of its earlier pops
// that failed on the client (timed out: the script may run later, when
// Redis resumes after a hang), with 0, and of requests it postponed
// (Frontier.Postpone), with the µs until their host may be asked.
// Every pop registers the process in the waiters (KEYS[11]) with the time
// it will look at the partition again (as the client computes it from the
// reply; after a request handed out: look µs), so that an earlier event
// wakes it.
// Returns {gen, 1, payload, reaped, now, early, look µs, granted, d µs,
// fail, mode, policy} (granted to mode: robots_host_grant's, zeros if no
// permit was granted; policy: the stored value, "" if none, 0 if not
// asked or not shorter than the cap) or {gen, 0, "", reaped, now, look µs
// (-1: nothing queued), leased}.
//
// An abandoned id whose pop ran already has its request put back at the
// head of its host's list, and the permit granted under it (if any) given
// back without a release (its request was never sent), and its host
// scored at the µs given with it from now (if not 0); one whose pop has
// not run yet (calls on different connections run in any order after a
// hang) is written to KEYS[8] for a lease, and a pop under such an id
// leases and grants nothing. So a pop the client gave up on never holds a
// host for a lease, and loses nothing.
var frPopScript = redis.NewScript(frontierLuaHead + hostReadyLua + hostDueLua + hostGrantLua + `
local lp, id, lease, per = ARGV[5], ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8])
local force, scan, busyPoll, capWait = ARGV[9] == '1', tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
local maxWait, reapPoll, me = tonumber(ARGV[13]), tonumber(ARGV[14]), ARGV[15]
local grant, idle = ARGV[16] == '1', tonumber(ARGV[17])
-- policy returns the value stored for host's robots.txt policy ('':
-- none), or 0 when not asked or not shorter than the cap (a large value
-- is not copied for every request of its host).
local function policy(host)
  local cap = tonumber(ARGV[18])
  if cap <= 0 then return 0 end
  local v = redis.call('GETRANGE', lp .. 'policy:' .. ARGV[19] .. host, 0, cap - 1)
  if #v >= cap then return 0 end
  return v
end
if #ARGV >= 20 then
  for i = 20, #ARGV, 2 do
    local host = putBack(ARGV[i])
    if host then
      redis.call('ZREM', lp .. 'hold:' .. host, ARGV[i])
      local wait = tonumber(ARGV[i + 1])
      if wait > 0 then redis.call('ZADD', KEYS[1], I(now + wait), host) end
    else
      redis.call('ZADD', KEYS[8], I(now + lease), ARGV[i])
    end
  end
  keep(KEYS[8])
  AB = -1
end
-- An abandoned id counts until its score. The zset is read only while
-- the counters say it has entries.
if AB ~= 0 then
  local ab = redis.call('ZSCORE', KEYS[8], id)
  redis.call('ZREMRANGEBYSCORE', KEYS[8], '-inf', I(now))
  local n = redis.call('ZCARD', KEYS[8])
  if n ~= AB then redis.call('HSET', KEYS[2], 'ab', n) end
  if ab and tonumber(ab) > now then
    return {gen, 0, '', 0, I(now), 0, 0}
  end
end
-- Leases are out only while the counters say so (L).
local reaped = 0
if L > 0 then reaped = reap(16) end
local function take(host)
  local payload, left = qpop(host)
  if not payload then
    redis.call('ZREM', KEYS[1], host)
    return nil
  end
  local held = redis.call('HINCRBY', KEYS[6], host, 1)
  Q, L = Q - 1, L + 1
  redis.call('HSET', KEYS[2], 'q', I(Q), 'l', I(L))
  redis.call('HSET', KEYS[4], id, host .. '\n' .. payload)
  redis.call('ZADD', KEYS[5], I(now + lease), id)
  -- The lease keys exist while a lease is out (the counters say so: the
  -- check above), with their TTL: they are new when this is the only one.
  if L == 1 then
    for k = 4, 6 do redis.call('PEXPIRE', KEYS[k], ARGV[4]) end
  end
  if left == 0 then
    redis.call('ZREM', KEYS[1], host)
  elseif held >= per then
    redis.call('ZADD', KEYS[1], I(now + capWait), host)
  else
    redis.call('ZADD', KEYS[1], I(now), host)
  end
  return payload
end
-- register records in the waiters when this process looks at the
-- partition again, and returns it: the soonest host's time unless another
-- process looks by then, or MaxWait (nothing queued), or the reap poll
-- (nothing queued, requests out), at most MaxWait.
local function register()
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local look = now + maxWait
  if #first == 0 and L > 0 then look = now + math.min(maxWait, reapPoll) end
  -- Registered at look first: this process is then not counted below
  -- (look is after at when it counts).
  local new = redis.call('ZADD', KEYS[11], I(look), me)
  if #first > 0 then
    local at = math.max(tonumber(first[2]), now)
    -- One process looks when the soonest host is due: if another will
    -- look by then, this one waits for an event (wakeOne) or MaxWait.
    if at < look and redis.call('ZCOUNT', KEYS[11], I(now), I(at)) == 0 then
      look = at
      redis.call('ZADD', KEYS[11], I(look), me)
    end
  end
  if new == 1 then redis.call('PEXPIRE', KEYS[11], ARGV[4]) end
  return first, look
end
local cands = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', I(now), 'LIMIT', 0, scan)
for _, host in ipairs(cands) do
  local held = tonumber(redis.call('HGET', KEYS[6], host)) or 0
  if held >= per then
    redis.call('ZADD', KEYS[1], I(now + capWait), host)
  else
    local at, busy, bar = robots_host_due(lp, host, now, 0)
    if busy == 1 then at = math.min(at, now + busyPoll) end
    if at <= now then
      local p = take(host)
      if p then
        local g, d, fail, mode = 0, 0, 0, 0
        if grant and busy == 0 then g, d, fail, mode = robots_host_grant(lp, host, id, now, lease, idle, bar) end
        local _, look = register()
        return {gen, 1, p, reaped, I(now), 0, I(look), g, I(d), fail, mode, policy(host)}
      end
    else
      redis.call('ZADD', KEYS[1], I(at), host)
    end
  end
end
if force then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0)
  local p = #first > 0 and take(first[1])
  if p then
    local _, look = register()
    return {gen, 1, p, reaped, I(now), 1, I(look), 0, 0, 0, 0, policy(first[1])}
  end
end
local first, look = register()
if #first == 0 then return {gen, 0, '', reaped, I(now), -1, L} end
return {gen, 0, '', reaped, I(now), I(look), L}
`)

// frDoneScript runs limiter operations of hosts of the partition (the
// releases of the requests reported done, grant.go), then ends leases and
// records their requests done fleet-wide. ARGV 5 µs before a busy host is
// looked at again, 6 m, the limiter operations, then for each: the number
// k of its ARGV and those k ARGV (hostScript's), then pairs: lease id,
// request key; KEYS 13.. the limiter operations' KEYS, seven each
// (hostScript's). Returns {gen, ended, then each limiter operation's reply's
// last element: the partition's limiter generation (0 if it failed)}.
// A host with requests queued is put
// back at its ready time by its limiter state (its request's release came
// first), so that no pop looks at it before then, and wakes one waiting
// process for that time (wakeOne); a partition left with nothing queued
// or out wakes them all (so that they can end).
var frDoneScript = redis.NewScript(frontierLuaHead + hostReadyLua + hostDueLua + hostOpLua + `
local n = 0
local ops = {}
local a, kk = 7, 13
for _ = 1, tonumber(ARGV[6]) do
  local k = tonumber(ARGV[a])
  local r = robots_host_op({unpack(KEYS, kk, kk + 6)}, {unpack(ARGV, a + 1, a + k)}, now)
  if type(r) == 'table' and #r > 0 then ops[#ops + 1] = r[#r] else ops[#ops + 1] = 0 end
  a, kk = a + 1 + k, kk + 7
end
for i = a, #ARGV, 2 do
  redis.call('SADD', KEYS[7], ARGV[i + 1])
  if not DK then
    -- Once per done set: its TTL (the counters' dk says it has one).
    keep(KEYS[7])
    redis.call('HSET', KEYS[2], 'dk', '1')
    DK = '1'
  end
  local v = redis.call('HGET', KEYS[4], ARGV[i])
  if v then
    local host = hostOf(v)
    redis.call('HDEL', KEYS[4], ARGV[i])
    redis.call('ZREM', KEYS[5], ARGV[i])
    unhold(host)
    L = redis.call('HINCRBY', KEYS[2], 'l', -1)
    if qlen(host) > 0 then
      -- The host is looked at when its limiter state says it is ready
      -- (its request's release came before this report), not at once: a
      -- pop never walks hosts that are done but not ready.
      -- Within the busy poll, the pace record's time is the answer (a
      -- permit out that ends by then: looked at then as if busy).
      local at, busy = robots_host_due(ARGV[2], host, now, tonumber(ARGV[5]))
      if busy == 1 then at = math.min(at, now + tonumber(ARGV[5])) end
      at = math.max(at, now)
      redis.call('ZADD', KEYS[1], I(at), host)
      wakeOne(at)
    end
    n = n + 1
  end
end
if n > 0 and Q <= 0 and L <= 0 then wakeAll() end
local out = {gen, n}
for _, e in ipairs(ops) do out[#out + 1] = e end
return out
`)

// frRenewScript extends leases that are still there. ARGV 5 lease µs,
// 6.. ids. Returns {gen, renewed}.
var frRenewScript = redis.NewScript(frontierLuaHead + `
local n = 0
for i = 6, #ARGV do
  n = n + redis.call('ZADD', KEYS[5], 'XX', 'CH', I(now + tonumber(ARGV[5])), ARGV[i])
end
return {gen, n}
`)

// frReattachScript registers again, after Redis lost its data, the
// leases a process still holds. ARGV 5 lease µs, 6.. quadruples: id, host,
// key, payload. Returns {gen, registered}.
var frReattachScript = redis.NewScript(frontierLuaHead + `
local n = 0
for i = 6, #ARGV, 4 do
  if redis.call('HEXISTS', KEYS[4], ARGV[i]) == 0 then
    redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1] .. '\n' .. ARGV[i + 3])
    redis.call('ZADD', KEYS[5], I(now + tonumber(ARGV[5])), ARGV[i])
    redis.call('HINCRBY', KEYS[6], ARGV[i + 1], 1)
    L = redis.call('HINCRBY', KEYS[2], 'l', 1)
    redis.call('SADD', KEYS[3], ARGV[i + 2])
    n = n + 1
  end
end
-- The lease keys have a TTL whenever they exist (the pop's take relies
-- on it).
if n > 0 then keep(KEYS[4]) keep(KEYS[5]) keep(KEYS[6]) end
return {gen, n}
`)

// frPruneScript tells which request keys are done fleet-wide. ARGV 5..
// request keys. Returns gen, then 1 (done) or 0 per key.
var frPruneScript = redis.NewScript(frontierLuaHead + `
local out = {gen}
for i = 5, #ARGV do out[#out + 1] = redis.call('SISMEMBER', KEYS[7], ARGV[i]) end
return out
`)

// frTouchScript sets the TTL of the partition's frontier keys (a fixed
// number: the cost does not grow with the hosts). ARGV 5 TTL (ms).
// Returns {gen, hosts queued}.
var frTouchScript = redis.NewScript(frontierLuaHead + `
for k = 1, #KEYS do redis.call('PEXPIRE', KEYS[k], ARGV[5]) end
return {gen, redis.call('ZCARD', KEYS[1])}
`)

// frDropScript deletes the partition's frontier keys. Returns {gen, hosts
// that were queued}.
var frDropScript = redis.NewScript(frontierLuaHead + `
local n = redis.call('ZCARD', KEYS[1])
for k = 1, #KEYS do redis.call('DEL', KEYS[k]) end
redis.call(PUB, WAKE, KEYS[1])
return {gen, n}
`)
