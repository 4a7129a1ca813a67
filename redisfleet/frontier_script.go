package redisfleet

// The frontier's scripts, one file each in lua/ (their KEYS, ARGV and
// replies are documented there; what they share, in
// lua/include/frontier_head.lua).
var (
	frAddScript      = luaScript("frontier_add")
	frPopScript      = luaScript("frontier_pop")
	frDoneScript     = luaScript("frontier_done")
	frRenewScript    = luaScript("frontier_renew")
	frReattachScript = luaScript("frontier_reattach")
	frPruneScript    = luaScript("frontier_prune")
	frTouchScript    = luaScript("frontier_touch")
	frDropScript     = luaScript("frontier_drop")
)
