package fleetfrontier

import "strconv"

// The frontier scripts' replies, decoded by field. Each script's file in
// internal/lua documents the positions; the decoders below are the only
// code that reads them.

// popReply is the reply of internal/lua/frontier_pop.lua.
type popReply struct {
	Reaped int64 // leases of dead processes put back
	Now    int64 // the server's time (µs)

	// Handed: a request was handed out. Then Payload is it, Early tells
	// that its host was not ready yet (MaxWait passed), Look is when
	// (server µs) this process is registered to look at the partition
	// again, Granted that a permit of the host's limiter came with it
	// (under Delay µs, the host's 429/503 run Fail, spacing Mode), and,
	// when PolicyRead, Policy is the host's stored policy ("": none).
	Handed     bool
	Payload    string
	Early      bool
	Look       int64
	Granted    bool
	Delay      int64
	Fail       int64
	Mode       int
	Policy     string
	PolicyRead bool

	// Not handed: Soonest is when (server µs) the partition is worth a
	// look (-1: nothing queued), Leased the requests out fleet-wide.
	Soonest int64
	Leased  int64
}

// decodePop reads v, a reply of frontier_pop.lua checked by reply.
func decodePop(v []any) popReply {
	r := popReply{Handed: frNum(frAt(v, 1)) == 1, Reaped: frNum(frAt(v, 3)), Now: frNum(frAt(v, 4))}
	if !r.Handed {
		r.Soonest, r.Leased = frNum(frAt(v, 5)), frNum(frAt(v, 6))
		return r
	}
	r.Payload, _ = frAt(v, 2).(string)
	r.Early = frNum(frAt(v, 5)) == 1
	r.Look = frNum(frAt(v, 6))
	r.Granted = frNum(frAt(v, 7)) == 1
	r.Delay, r.Fail, r.Mode = frNum(frAt(v, 8)), frNum(frAt(v, 9)), int(frNum(frAt(v, 10)))
	r.Policy, r.PolicyRead = frAt(v, 11).(string)
	return r
}

// decodeFlags reads the replies of frontier_add.lua (1: queued, 0: seen
// before) and frontier_prune.lua (1: done, 0: not), one flag per item
// after the generation.
func decodeFlags(v []any) []bool {
	out := make([]bool, max(len(v)-1, 0))
	for i := range out {
		out[i] = frNum(v[i+1]) == 1
	}
	return out
}

// doneReply is the reply of internal/lua/frontier_done.lua.
type doneReply struct {
	Ended int64 // leases ended
	// OpGens are, for each limiter operation the report carried, the
	// partition's limiter generation its reply ended with (0: it failed).
	OpGens []int64
}

// decodeDone reads v, a reply of frontier_done.lua carrying ops limiter
// operations.
func decodeDone(v []any, ops int) doneReply {
	r := doneReply{Ended: frNum(frAt(v, 1)), OpGens: make([]int64, ops)}
	for i := range r.OpGens {
		r.OpGens[i] = frNum(frAt(v, 2+i))
	}
	return r
}

// frAt returns v[i], or nil.
func frAt(v []any, i int) any {
	if i < len(v) {
		return v[i]
	}
	return nil
}

// frNum reads a script's integer, sent as a Lua number or as the string
// of an integer (times in µs, which Lua's numbers would round).
func frNum(x any) int64 {
	switch n := x.(type) {
	case int64:
		return n
	case string:
		v, _ := strconv.ParseInt(n, 10, 64)
		return v
	}
	return 0
}
