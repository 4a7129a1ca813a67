package redisfleet

import (
	"time"
)

// The scripts' replies, decoded by field. Each script's file in internal/lua/
// documents the positions; the decoders below are the only code that
// reads them.

// limiterReply is a reply of internal/lua/limiter.lua, without its last element
// (the partition's generation, which hostReply records).
type limiterReply struct {
	// Status is the answer of acq and wait: 1 granted (wait: the host may
	// be asked), 0 not yet (come back after Wait), -1 paused for longer
	// than the caller's maxPause (for Wait). It is 1 for sent, rel,
	// renew and leave.
	Status int64
	// Wait is how long to wait, for a Status of 0 or -1.
	Wait time.Duration
	// Fail and Delay come with an acq grant: the host's run of 429/503
	// replies and the delay (µs) the permit was granted under.
	Fail, Delay int64
	// Pause is the pause obs or pause started (0: none).
	Pause time.Duration
}

// decodeLimiter reads the reply v of limiter.lua's operation op (its
// generation taken off).
func decodeLimiter(op string, v []int64) limiterReply {
	at := func(i int) int64 {
		if i < len(v) {
			return v[i]
		}
		return 0
	}
	switch op {
	case opObserve, opPause:
		return limiterReply{Status: 1, Pause: time.Duration(at(0)) * time.Microsecond}
	case opAcquire, opWait:
		r := limiterReply{Status: at(0)}
		if r.Status == 1 {
			r.Fail, r.Delay = at(1), at(2)
		} else {
			r.Wait = time.Duration(at(1)) * time.Microsecond
		}
		return r
	}
	return limiterReply{Status: at(0)}
}
