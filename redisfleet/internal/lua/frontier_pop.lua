-- frontier_pop.lua hands out the next request of a host that may be asked now.
-- ARGV 5 the partition's key prefix (its limiter keys: prefix .. "host:"
-- .. host), 6 lease id, 7 lease µs, 8 per host, 9 force (1: if none is
-- ready, take from the host ready soonest), 10 hosts to look at, 11 µs
-- before a busy host is looked at again, 12 µs before a host held PerHost
-- times is (a done request or a reaped lease sets it back), 13 MaxWait
-- µs, 14 µs before a partition with requests out and none queued is
-- looked at again, 15 the process's id, 16 grant (1: the request of a
-- ready host comes with a permit of the host's limiter granted under the
-- lease id, robots_host_grant), 17 the limiter's idle TTL µs, 18 policy
-- cap (> 0: the reply of a request handed out carries the value of its
-- host's stored policy, key ARGV 5 .. "policy:" .. ARGV 19 .. host,
-- keys.go, when it is shorter than that many bytes), 19 the store keys'
-- part before the authority, 20.. pairs
-- of a lease id this process abandons and µs: ids of its earlier pops
-- that failed on the client (timed out: the script may run later, when
-- Redis resumes after a hang), with 0, and of requests it postponed
-- (Frontier.Postpone), with the µs until their host may be asked.
-- Every pop registers the process in the waiters (KEYS[11]) with the time
-- it will look at the partition again (as the client computes it from the
-- reply; after a request handed out: look µs), so that an earlier event
-- wakes it.
-- Returns {gen, 1, payload, reaped, now, early, look µs, granted, d µs,
-- fail, mode, policy} (granted to mode: robots_host_grant's, zeros if no
-- permit was granted; policy: the stored value, "" if none, 0 if not
-- asked or not shorter than the cap) or {gen, 0, "", reaped, now, look µs
-- (-1: nothing queued), leased}.
--
-- An abandoned id whose pop ran already has its request put back at the
-- head of its host's list, and the permit granted under it (if any) given
-- back without a release (its request was never sent), and its host
-- scored at the µs given with it from now (if not 0); one whose pop has
-- not run yet (calls on different connections run in any order after a
-- hang) is written to KEYS[8] for a lease, and a pop under such an id
-- leases and grants nothing. So a pop the client gave up on never holds a
-- host for a lease, and loses nothing.
--#include frontier_head
--#include host_ready
--#include host_due
--#include host_grant
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
