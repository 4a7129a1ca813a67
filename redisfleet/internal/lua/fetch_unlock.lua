-- fetch_unlock.lua deletes a fetch lock held by ARGV[1] and publishes its key
-- on ARGV[2], the wake channel of its partition, with the command ARGV[3]
-- (PUBLISH, SPUBLISH).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call(ARGV[3], ARGV[2], KEYS[1])
  return 1
end
return 0
