package redisfleet

// Operations of lua.Limiter, the limiter's script: every decision about
// a host, taken on the server's clock in one round trip
// (internal/lua/limiter.lua gives its KEYS, ARGV and replies). The state
// is described in keys.go.
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
