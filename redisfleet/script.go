package redisfleet

// Operations of hostScript.
const (
	opAcquire = "acq"
	opWait    = "wait"
	opSent    = "sent"
	opRelease = "rel"
	opObserve = "obs"
	opRenew   = "renew"
	opPause   = "pause"
	opLeave   = "leave"
)

// hostScript is the limiter: every decision about a host, taken on the
// server's clock in one round trip (lua/limiter.lua gives its KEYS, ARGV
// and replies). The state is described in keys.go.
var hostScript = luaScript("limiter")
