-- Numbers go to Redis as strings of integers: Lua's own conversion keeps
-- 14 digits, and a time in µs has 16.
local function I(x) return string.format('%d', x) end
-- NOW: the server's time (µs) when a script that carries this one as
-- robots_host_op read it; nil when this is limiter.lua.
local now = NOW
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local H, Z = KEYS[1], KEYS[2]
local op, tok = ARGV[1], ARGV[2]
local nd, lease, mode, idle = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])

local s = redis.call('HMGET', H, 'd', 'next', 'pause', 'le', 'ls', 'fail', 'claim', 'wake', 'g', 'pc', 'lp', 'hd', 'ho')
local d = tonumber(s[1]) or 0
local nxt = tonumber(s[2])
local pause = tonumber(s[3]) or 0
local le = tonumber(s[4]) or 0
local ls = tonumber(s[5]) or 0
local fail = tonumber(s[6]) or 0
local claim = tonumber(s[7]) or 0
local wake = tonumber(s[8]) or 0
local g = tonumber(s[9]) or 0
local pc = tonumber(s[10]) or 0
local lp = tonumber(s[11]) or 0
local hd = tonumber(s[12]) or 0
local ho = tonumber(s[13]) or 0
-- bar0: the pace record's time as the latest call left it (see below).
local bar0 = 0
if s[2] then
  local dd0 = math.max(d, hd)
  bar0 = math.max(tonumber(s[2]), pause, le + dd0, ls + dd0)
  if ho > 0 then bar0 = math.max(bar0, ho + dd0) end
end
local touched = {} -- the zsets written to: their expiry is renewed
-- A permit was out (ho: its lease end) but the hold zset is gone (evicted,
-- deleted): a phantom permit stands for it until the end of its lease,
-- or until a permit of the host is released or marked sent.
if ho > 0 and redis.call('EXISTS', Z) == 0 then
  redis.call('ZADD', Z, I(ho), '~lost')
  touched[2] = true
end
-- The partition's epoch: its generation, and the time from which hosts
-- without state are held for a lease because the data was lost. Missing,
-- the partition is new or its data was lost: lost if the caller knew a
-- generation of it (it saw the fleet's state before), new otherwise (a
-- fresh fleet: nothing can be out). A caller that knew another
-- generation tells that the data was lost since and someone recreated it.
local known = tonumber(ARGV[9]) or 0
-- The partition's pace record (KEYS[7]) has a member '~' (score +inf)
-- from the epoch's creation on: without it, the record was lost, and
-- hosts without state are held for a lease as after a data loss; with it,
-- the partition is not fresh even if its epoch is gone.
-- It is read only when it matters: for a host without state, or a new
-- epoch.
local P = KEYS[7]
local paced
local function isPaced()
  if paced == nil then paced = redis.call('ZSCORE', P, '~') ~= false end
  return paced
end
local e = redis.call('HMGET', KEYS[3], 'gen', 'ep')
local egen, ep = tonumber(e[1]), tonumber(e[2]) or 0
if not egen then
  egen = now
  if isPaced() or known > 0 then ep = now else ep = 0 end
  redis.call('HSET', KEYS[3], 'gen', I(egen), 'ep', I(ep))
elseif known > 0 and known ~= egen and ep < egen then
  ep = egen
  redis.call('HSET', KEYS[3], 'ep', I(ep))
end
if nxt == nil and not isPaced() and egen < now then
  -- The record was lost (the epoch was not just created): as a loss.
  ep = now
  redis.call('HSET', KEYS[3], 'ep', I(ep))
end
if paced == false then
  redis.call('ZADD', P, '+inf', '~')
  paced = true
end
if nxt == nil then
  -- No state: a new host, one evicted idle, or one lost with Redis's data
  -- or alone (evicted, deleted): its pace record, if any, says until when
  -- the state forbade a grant; after a loss, hold such hosts for a lease,
  -- within which permits granted before the loss end or are registered
  -- again by their holders' renewal.
  nxt = tonumber(redis.call('ZSCORE', P, H)) or 0
  if ep > 0 and now < ep + lease then nxt = math.max(nxt, ep + lease) end
end
if nd >= 0 then d = nd end

-- A lease that ended counts as a release (a send) at its end.
local gone = redis.call('ZRANGEBYSCORE', Z, '-inf', I(now), 'WITHSCORES')
if #gone > 0 then
  for i = 2, #gone, 2 do
    local e = tonumber(gone[i])
    if mode == 0 then le = math.max(le, e) else ls = math.max(ls, e) end
    nxt = math.max(nxt, e + math.max(d, hd))
  end
  redis.call('ZREMRANGEBYSCORE', Z, '-inf', I(now))
end

-- dd is the delay that serialises: the delay passed, raised to hd, the
-- largest delay a permit still out was granted under (a caller passing a
-- lower delay, such as a robots.txt fetch of a process that does not know
-- the policy yet, does not end the serialisation of permits already out).
local live = redis.call('ZRANGE', Z, 0, 0, 'WITHSCORES')
local holdEnd = 0
if #live > 0 then holdEnd = tonumber(live[2]) else hd = 0 end
local dd = math.max(d, hd)

local function ready(early)
  local at = math.max(pause, nxt)
  local held = 0
  if dd > 0 then
    if mode == 0 then at = math.max(at, le + dd) else at = math.max(at, ls + dd) end
    if early then at = math.max(at, claim) end
    held = holdEnd
  end
  return at, held
end

-- publish wakes the waiters of the host, if any waits: the head of the
-- Acquire queue, else the head of the Wait queue (only it is woken), else
-- every waiter told to come back later than now; with a hint: how long
-- from now the host is worth asking again.
local function publish()
  local head = {}
  if redis.call('EXISTS', KEYS[4], KEYS[6]) > 0 then
    head = redis.call('ZRANGE', KEYS[4], 0, 0)
    if #head == 0 then head = redis.call('ZRANGE', KEYS[6], 0, 0) end
  end
  if #head > 0 or wake > now then
    redis.call(ARGV[8], ARGV[7], H .. '\n' .. I(math.max(nxt, pause) - now) .. '\n' .. (head[1] or ''))
  end
end

-- event records a release (a send mark) of a permit granted under delay
-- pd: the next grant is owed the larger of pd and the delay now.
local function event(pd)
  if mode == 0 then le = math.max(le, now) else ls = math.max(ls, now) end
  nxt = math.max(nxt, now + math.max(d, pd))
  publish()
end

local Q, S, E = KEYS[4], KEYS[5], KEYS[6]
local out
if (op == 'acq' or op == 'wait') and redis.call('HGET', H, 'ab') == tok then
  -- The caller gave up on this token (leave): a call of it that ran late,
  -- after a hang, takes nothing and queues nothing.
  out = {0, 1000000}
elseif op == 'acq' and redis.call('ZSCORE', Z, tok) then
  -- Granted to this caller by an earlier call whose reply it never got (a
  -- timeout; the call ran when Redis resumed): the grant is its own.
  redis.call('ZADD', Z, I(now + lease), tok)
  touched[2] = true
  redis.call('ZREM', Q, tok)
  redis.call('ZREM', S, tok)
  out = {1, fail, d}
elseif op == 'acq' or op == 'wait' then
  local early = op == 'wait'
  local first = true
  local stale = tonumber(ARGV[10])
  local mp = tonumber(ARGV[11])
  if mp >= 0 and pause - now > mp then out = {-1, pause - now} end
  if out == nil and dd > 0 then
    -- The fleet-wide queues of the host's Acquire callers and of its Wait
    -- callers, first come first served: only the head of a queue may pass,
    -- Wait callers only while no Acquire caller waits, and a release wakes
    -- only the head.
    local dead = redis.call('ZRANGEBYSCORE', S, '-inf', I(now - stale), 'LIMIT', 0, 100)
    if #dead > 0 then
      redis.call('ZREM', Q, unpack(dead))
      redis.call('ZREM', E, unpack(dead))
      redis.call('ZREM', S, unpack(dead))
    end
    local mine = Q
    if early then mine = E end
    redis.call('ZADD', mine, 'NX', I(now), tok)
    redis.call('ZADD', S, I(now), tok)
    if early then touched[6] = true else touched[4] = true end
    touched[5] = true
    local head = redis.call('ZRANGE', mine, 0, 0)
    first = head[1] == tok
    if early and first and redis.call('ZCARD', Q) > 0 then first = false end
  end
  if out == nil and not first then
    -- Not the head: come back when woken as the head, or within a second
    -- to stay in the queue.
    wake = math.max(wake, now + stale)
    out = {0, 1000000}
  end
  if out == nil then
    local at, held = ready(early)
    if held == 0 and at <= now then
      if early then
        if dd > 0 then claim = now + tonumber(ARGV[12]) end
        redis.call('ZREM', E, tok)
        redis.call('ZREM', S, tok)
        out = {1, 0}
      else
        redis.call('ZADD', Z, I(now + lease), tok)
        touched[2] = true
        hd = math.max(hd, d)
        redis.call('ZREM', Q, tok)
        redis.call('ZREM', S, tok)
        g = g + 1
        claim = 0
        out = {1, fail, d}
      end
    else
      local w = math.max(at, held)
      wake = math.max(wake, w)
      out = {0, w - now}
    end
  end
elseif op == 'sent' then
  redis.call('ZREM', Z, tok, '~lost')
  if mode == 1 then event(tonumber(ARGV[10])) end
  out = {1}
elseif op == 'rel' then
  if mode == 0 or ARGV[10] ~= '1' then
    redis.call('ZREM', Z, tok, '~lost')
    event(tonumber(ARGV[11]))
  end
  out = {1}
elseif op == 'leave' then
  -- A caller that gave up: out of the queues, a grant it never learned of
  -- given back, and its token marked so that a call of it still to run
  -- (one that timed out on the client) does nothing.
  redis.call('ZREM', Q, tok)
  redis.call('ZREM', E, tok)
  redis.call('ZREM', S, tok)
  redis.call('ZREM', Z, tok)
  redis.call('HSET', H, 'ab', tok)
  publish()
  out = {1}
elseif op == 'renew' then
  redis.call('ZADD', Z, I(now + lease), tok)
  touched[2] = true
  out = {1}
elseif op == 'obs' then
  local p = 0
  if ARGV[10] == '2' then
    fail = 0
  else
    fail = fail + 1
    local ra = tonumber(ARGV[11])
    if ra >= 0 then
      p = ra
      local cap = tonumber(ARGV[14])
      if cap >= 0 then p = math.min(p, cap) end
    else
      local mx = tonumber(ARGV[13])
      p = tonumber(ARGV[12])
      local i = 1
      while i < fail and p < mx do p = p * 2; i = i + 1 end
      p = math.min(p, mx)
    end
    lp = p
    if p > 0 then
      pc = pc + 1
      pause = math.max(pause, now + p)
    end
  end
  out = {p}
elseif op == 'pause' then
  local p = tonumber(ARGV[10])
  lp = p
  if p > 0 then
    pc = pc + 1
    pause = math.max(pause, now + p)
  end
  out = {p}
else
  return redis.error_reply('redisfleet: unknown op ' .. op)
end

-- ho: the end of the latest lease out (0: none), so that a hold zset
-- that vanishes is noticed (above).
if touched[2] or #gone > 0 or op == 'sent' or op == 'rel' or op == 'leave' then
  local top = redis.call('ZRANGE', Z, -1, -1, 'WITHSCORES')
  ho = 0
  if #top > 0 then ho = tonumber(top[2]) end
end
redis.call('HSET', H, 'd', I(d), 'm', I(mode), 'next', I(nxt), 'pause', I(pause), 'le', I(le), 'ls', I(ls),
  'fail', I(fail), 'claim', I(claim), 'wake', I(wake), 'g', I(g), 'pc', I(pc), 'lp', I(lp), 'hd', I(hd), 'ho', I(ho))
-- The pace record: the earliest grant the state allows by what is known
-- now (a lease out counting as released at its end), kept while in the
-- future, so that a host whose state vanishes is not asked sooner.
-- Written when it changed (bar0: as the latest call left it); entries
-- past are dropped by releases and send marks.
local bar = math.max(nxt, pause, le + dd, ls + dd)
if ho > 0 then bar = math.max(bar, ho + math.max(d, hd)) end
if bar ~= bar0 then
  if bar > now then redis.call('ZADD', P, I(bar), H) else redis.call('ZREM', P, H) end
end
if op == 'rel' or op == 'sent' then redis.call('ZREMRANGEBYSCORE', P, '-inf', I(now)) end
local last = math.max(nxt, pause, claim, wake, le + dd, ls + dd, now)
redis.call('PEXPIRE', H, I(math.ceil((last - now + idle) / 1000)))
local ttl = I(math.ceil((lease + idle) / 1000))
for i, k in pairs(touched) do
  redis.call('PEXPIRE', KEYS[i], ttl)
end
out[#out + 1] = egen
return out
