-- fetch_renew.lua extends a fetch lock held by ARGV[1] to ARGV[2] ms.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
