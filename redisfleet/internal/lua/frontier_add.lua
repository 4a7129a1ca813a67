-- frontier_add.lua queues requests not seen before. ARGV 5 TTL (ms) of the
-- frontier's keys, 6 "1" when the requests are queued again from a
-- journal after a loss (queued unless done, or queued again already in
-- this generation; else unless seen in this generation or an earlier
-- one), 7.. triples: key, host, payload. Returns gen, then 1 (queued) or
-- 0 (seen) per request.
--#include frontier_head
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
  -- from the processes' touch, frontier_touch.lua).
  for _, k in ipairs({1, 2, 3, 9, 10}) do redis.call('PEXPIRE', KEYS[k], ttl) end
end
return out
