-- frontier_renew.lua extends leases that are still there. ARGV 5 lease µs,
-- 6.. ids. Returns {gen, renewed}.
--#include frontier_head
local n = 0
for i = 6, #ARGV do
  n = n + redis.call('ZADD', KEYS[5], 'XX', 'CH', I(now + tonumber(ARGV[5])), ARGV[i])
end
return {gen, n}
