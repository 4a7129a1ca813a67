-- frontier_reattach.lua registers again, after Redis lost its data, the
-- leases a process still holds. ARGV 5 lease µs, 6.. quadruples: id, host,
-- key, payload. Returns {gen, registered}.
--#include frontier_head
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
