-- host_due.lua defines, for a Lua script run on the fleet's Redis (after
-- host_ready.lua), the function
--
--   robots_host_due(prefix, host, now, near) -> at, held, bar
--
-- which tells, as robots_host_ready_at does, when host's limiter grants a
-- permit (at, µs) and whether a live permit blocks it (held = 1), reading
-- as little as it can: the host's entry in its partition's pace record
-- (bar, µs, 0 without one), which is the earliest grant the stored state
-- allows (limiter.lua's bar) while it is in the future; only when that is
-- more than near µs ahead and a permit is out (the hash's ho, the latest
-- lease end, is in the future) does it ask robots_host_ready_at, whose
-- answer then differs (a host of delay 0 is ready while a permit is out;
-- within near µs, bar is the answer, held = 0). prefix is
-- the partition's key prefix T(n). A pace record that lost the host's
-- entry makes the host look ready too soon: the answer is a hint for the
-- frontier's order, never a permit (robots_host_grant checks the stored
-- state again). It only reads.
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
