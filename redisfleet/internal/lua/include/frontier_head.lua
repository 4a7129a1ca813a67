-- The frontier's scripts. Every one takes the same KEYS and first ARGV:
--
--   KEYS: 1 hosts (zset host -> earliest µs worth looking at it again),
--         2 counters (hash: q queued, l leased, gen data generation),
--         3 seen (set of request keys), 4 leases (hash id -> host "\n"
--         payload), 5 lease ends (zset id -> µs), 6 held (hash host -> leases
--         out), 7 done (set of request keys reported done by any process),
--         8 abandoned (zset lease id -> µs until which a pop under that id
--         leases nothing: its caller gave up on it), 9 queued requests
--         (hash host "\n" n -> payload: the n-th request of the host's
--         FIFO), 10 the hosts' FIFO ends (hash "h:" host -> n of its head,
--         "t:" host -> n of its tail; absent: empty), 11 waiters (zset
--         process id -> µs at which it looks at the partition again: a
--         process whose pop found nothing; wakeOne), 12 the seen set of
--         the partition's earlier generations (set of request keys: what
--         the seen set held when the partition was emptied because a key
--         vanished; a link found again is not queued again)
--   ARGV: 1 generation to set if the counters are missing (the data is new
--         or was lost), 2 the partition's key prefix (its limiter keys:
--         prefix .. "host:" .. host), 3 the command publishing a wake-up (PUBLISH, or SPUBLISH on
--         a Cluster), a space, and the partition's wake-up channel, 4 the
--         TTL (ms) of the frontier's keys
--
-- Every key is in one partition of the fleet (keys.go) and declared in
-- KEYS, but for the limiter's keys of the hosts the pop looks at and the
-- stored policy of the host it hands out, which it picks itself: they
-- share the hash slot of its KEYS.
--
-- and returns the generation first, so that a process notices when Redis
-- lost the data (the generation changes) and queues again what it knows.
-- Each per-host list is a FIFO of serialised requests. Times are µs of the
-- Redis server's clock, written as integer strings (I).
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
-- journal and registers its leases again (frontier.go: recover); the counters'
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
-- keep gives k the TTL of the seen set (set by frontier_add.lua) if it has none.
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
