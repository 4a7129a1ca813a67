-- host_grant.lua defines, for a Lua script run on the fleet's Redis, the
-- function
--
--   robots_host_grant(prefix, host, tok, now, lease, idle, bar) -> granted, d, fail, mode
--
-- which grants a permit of host's limiter under the token tok (the grant
-- of limiter.lua's acq: a member of hold:<host> whose score is the lease
-- end, hd set to the delay, ho to the lease end, claim cleared, g counted,
-- the host's entry in the partition's pace record raised to the lease end
-- plus the delay; bar is that entry's score as the caller read it, 0 if
-- none) for a caller that found the host ready (robots_host_due); prefix
-- is the partition's key prefix T(n), lease and idle are the lease and
-- the idle TTL in µs. It grants only when the grant cannot be told from
-- one limiter.lua would make at now under the host's stored delay d: the
-- host has limiter state (its hash exists: a host without state is held
-- after a data loss, which only limiter.lua judges), its stored state
-- allows a grant now (next, pause, the latest release or send plus the
-- delay, a lease whose hold zset vanished: as limiter.lua reads them), no
-- permit is in hold:<host> (none live, none whose lease ended and is not
-- yet counted), and no Acquire caller queues in wait:<host> (they come
-- first). It returns granted = 1, the stored delay d (µs: the grant is
-- valid for a request whose delay is at most d), the host's 429/503 run
-- and the stored spacing mode; else 0, 0, 0, 0, writing nothing.
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
  -- The pace record, as limiter.lua keeps it: no grant before this
  -- permit's lease ends and its delay passes, should the state vanish.
  -- (No ZADD GT: Redis 5 has none.)
  local bar1 = now + lease + d
  if bar1 > bar then
    redis.call('ZADD', prefix .. 'pace', string.format('%d', bar1), hkey)
  end
  return 1, d, tonumber(s[3]) or 0, tonumber(s[4]) or 0
end
