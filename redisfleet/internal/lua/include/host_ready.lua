-- host_ready.lua defines, for a Lua script run on the fleet's Redis, the
-- function
--
--   robots_host_ready_at(hkey, zkey, pkey, now) -> at, held
--
-- where hkey and zkey are a host's keys (keys.go), pkey its
-- partition's pace record and now is the server's time in µs (from
-- TIME). It returns the earliest time (µs) at
-- which the host's limiter grants a permit by what is known now, and
-- held = 1 when a live permit blocks the host (then at is at least the end
-- of the earliest lease, and the real time depends on a release). A lease
-- that has ended counts as a release at its end. A host
-- with no state returns its pace record's time (0 without one), 0. It
-- only reads. Include it at the top of the
-- script.
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
