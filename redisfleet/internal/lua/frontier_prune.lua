-- frontier_prune.lua tells which request keys are done fleet-wide. ARGV 5..
-- request keys. Returns gen, then 1 (done) or 0 per key.
--#include frontier_head
local out = {gen}
for i = 5, #ARGV do out[#out + 1] = redis.call('SISMEMBER', KEYS[7], ARGV[i]) end
return out
