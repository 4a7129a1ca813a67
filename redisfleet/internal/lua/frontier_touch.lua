-- frontier_touch.lua sets the TTL of the partition's frontier keys (a fixed
-- number: the cost does not grow with the hosts). ARGV 5 TTL (ms).
-- Returns {gen, hosts queued}.
--#include frontier_head
for k = 1, #KEYS do redis.call('PEXPIRE', KEYS[k], ARGV[5]) end
return {gen, redis.call('ZCARD', KEYS[1])}
