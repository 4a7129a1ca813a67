-- frontier_done.lua runs limiter operations of hosts of the partition (the
-- releases of the requests reported done, grant.go), then ends leases and
-- records their requests done fleet-wide. ARGV 5 µs before a busy host is
-- looked at again, 6 m, the limiter operations, then for each: the number
-- k of its ARGV and those k ARGV (limiter.lua's), then pairs: lease id,
-- request key; KEYS 13.. the limiter operations' KEYS, seven each
-- (limiter.lua's). Returns {gen, ended, then each limiter operation's reply's
-- last element: the partition's limiter generation (0 if it failed)}.
-- A host with requests queued is put
-- back at its ready time by its limiter state (its request's release came
-- first), so that no pop looks at it before then, and wakes one waiting
-- process for that time (wakeOne); a partition left with nothing queued
-- or out wakes them all (so that they can end).
--#include frontier_head
--#include host_ready
--#include host_due
--#include limiter_op
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
