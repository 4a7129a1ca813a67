-- limiter_op.lua defines, for a Lua script run on the fleet's Redis (the
-- frontier's done report), the function
--
--   robots_host_op(keys, argv, now) -> reply
--
-- which runs limiter.lua with keys as its KEYS and argv as its ARGV, at
-- the server's time now (µs, the calling script's TIME: one TIME per
-- call), and returns its reply, so that a script can carry a limiter
-- operation of a host of its partition (a release) in the same call.
local function robots_host_op(KEYS, ARGV, NOW)
--#include limiter_body
end
