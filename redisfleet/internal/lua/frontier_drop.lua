-- frontier_drop.lua deletes the partition's frontier keys. Returns {gen, hosts
-- that were queued}.
--#include frontier_head
local n = redis.call('ZCARD', KEYS[1])
for k = 1, #KEYS do redis.call('DEL', KEYS[k]) end
redis.call(PUB, WAKE, KEYS[1])
return {gen, n}
