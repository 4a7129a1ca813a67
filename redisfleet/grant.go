package redisfleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/politecrawl/robots/redisfleet/internal/lua"
	"github.com/redis/go-redis/v9"
)

// Folding the limiter into the frontier's round trips, in one process:
//
//   - A pop of the frontier that hands out the request of a ready host
//     also grants, in the same script, a permit of the host's limiter
//     under the request's lease id (robots_host_grant; only while this
//     Fleet has a Limiter). The frontier hands it to the permitDesk
//     (limiter_desk.go, a pregrant, through link.Permits), where it waits
//     for the limiter's next AcquireMax of that host in this process, which takes
//     it without a round trip if its delay is not above the delay the
//     grant was made under; else, and if nobody takes it within
//     grantFresh, it is given back (the limiter's leave: no release
//     event, its request was never sent), by the AcquireMax, by the
//     request's done report, or by a timer.
//   - A permit released while this process's frontier has a request of
//     the same host out (whose done report is coming) is not released at
//     once: its release waits (deferred) for the frontier's next pipeline,
//     the done report's, and runs inside the done report's script of its
//     partition (frontier_done.lua runs the limiter's body first, as
//     robots_host_op), or beside it when that pipeline has no done report
//     of its partition: the frontier takes them, and hands back their
//     replies, through link.Carrier (fleetLink.TakeCarried). It goes alone after releaseDefer at the latest,
//     and before the next AcquireMax of the host in this process. A later
//     release only lengthens the gap before the host's next grant.

// releaseDefer bounds how long a release waits for the frontier's next
// pipeline.
const releaseDefer = 100 * time.Millisecond

// pregrant is a permit a frontier pop granted for a host in this process.
type pregrant struct {
	host  string
	p     int    // the host's partition
	id    string // the lease id: the permit's token
	d     int64  // µs, the delay the grant was made under
	fail  int64  // the host's 429/503 run at the grant
	mode  int    // the spacing mode stored with the host
	at    time.Time
	timer *time.Timer // gives it back if nobody takes it
}

// hostOp is a lua.Limiter call waiting for a pipeline: a deferred release
// (or send mark), or the give-back (leave) of a pregrant nobody took.
type hostOp struct {
	host  string
	p     int
	mode  int
	op    string
	tok   string
	extra []any
}

// hostScriptKeys returns the KEYS of lua.Limiter for host (internal/lua/limiter.lua).
func (f *Fleet) hostScriptKeys(host string) []string {
	hash, hold := f.hostKeys(host)
	p := f.part(host)
	return []string{hash, hold, f.pkey(p, kindEpoch), f.key(kindWait, host), f.key(kindSeen, host), f.key(kindEarly, host), f.pkey(p, kindPace)}
}

// hostArgs returns the ARGV of a lua.Limiter call on partition p (delay in
// µs, < 0: keep).
func (f *Fleet) hostArgs(p, mode int, op, tok string, delay int64, extra ...any) []any {
	args := make([]any, 0, 9+len(extra))
	args = append(args, op, tok, delay, f.cfg.lease.Microseconds(), mode, f.cfg.idleTTL.Microseconds(),
		f.pkey(p, kindWake), f.pubCmd, f.gens[p].Load())
	return append(args, extra...)
}

// runHost runs one operation of the host script, bounded by the call
// timeout, and returns its reply without the partition's generation
// (which it records).
func (f *Fleet) runHost(ctx context.Context, p int, keys []string, mode int, op, tok string, delay int64, extra ...any) (limiterReply, error) {
	cctx, cancel := context.WithTimeout(ctx, f.cfg.callTimeout)
	defer cancel()
	v, err := lua.Limiter.Run(cctx, f.rdb, keys, f.hostArgs(p, mode, op, tok, delay, extra...)...).Int64Slice()
	if err != nil {
		if ctx.Err() != nil {
			return limiterReply{}, ctx.Err()
		}
		return limiterReply{}, f.callError("limiter "+op, err)
	}
	return f.hostReply(op, p, v)
}

// runHostAfter is runHost preceded, in the same pipeline, by ops (the
// deferred releases of the host a grant would wait for).
func (f *Fleet) runHostAfter(ctx context.Context, ops []hostOp, p int, keys []string, mode int, op, tok string, delay int64, extra ...any) (limiterReply, error) {
	if len(ops) == 0 {
		return f.runHost(ctx, p, keys, mode, op, tok, delay, extra...)
	}
	cctx, cancel := context.WithTimeout(ctx, f.cfg.callTimeout)
	defer cancel()
	pipe := f.rdb.Pipeline()
	cmds := f.queueHostOps(cctx, pipe, ops)
	cmd := lua.Limiter.EvalSha(cctx, pipe, keys, f.hostArgs(p, mode, op, tok, delay, extra...)...)
	pipe.Exec(cctx) // each command carries its own error
	if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		// The node lacks the script: every call of the pipeline was
		// refused; send them again, one by one (Run loads it).
		f.sendHostOps(ops)
		return f.runHost(ctx, p, keys, mode, op, tok, delay, extra...)
	}
	f.hostOpsDone(ops, cmds)
	v, err := cmd.Int64Slice()
	if err != nil {
		if ctx.Err() != nil {
			return limiterReply{}, ctx.Err()
		}
		return limiterReply{}, f.callError("limiter "+op, err)
	}
	return f.hostReply(op, p, v)
}

// hostReply checks a lua.Limiter reply to op on partition p, records the
// partition's generation (its last element) and decodes the rest.
func (f *Fleet) hostReply(op string, p int, v []int64) (limiterReply, error) {
	if len(v) < 2 {
		return limiterReply{}, fmt.Errorf("redisfleet: limiter %s: short reply", op)
	}
	f.gens[p].Store(v[len(v)-1])
	return decodeLimiter(op, v[:len(v)-1]), nil
}

func (g *pregrant) leaveOp() hostOp {
	return hostOp{host: g.host, p: g.p, mode: g.mode, op: opLeave, tok: g.id}
}

// queueHostOps adds ops to pipe (EVALSHA of lua.Limiter) and returns their
// commands.
func (f *Fleet) queueHostOps(ctx context.Context, pipe redis.Pipeliner, ops []hostOp) []*redis.Cmd {
	cmds := make([]*redis.Cmd, len(ops))
	for i, op := range ops {
		cmds[i] = lua.Limiter.EvalSha(ctx, pipe, f.hostScriptKeys(op.host), f.hostArgs(op.p, op.mode, op.op, op.tok, -1, op.extra...)...)
	}
	return cmds
}

// hostOpsDone handles the replies of ops sent in a pipeline: a call that
// did not reach Redis is retried in the background (callOrRetry's rule),
// one Redis refused is logged and counted as a lost release.
// It reports whether every op ran.
func (f *Fleet) hostOpsDone(ops []hostOp, cmds []*redis.Cmd) bool {
	ok := true
	for i, op := range ops {
		v, err := cmds[i].Int64Slice()
		if err == nil {
			_, err = f.hostReply(op.op, op.p, v)
		}
		if err == nil {
			continue
		}
		ok = false
		err = f.callError("limiter "+op.op, err)
		if !errors.Is(err, ErrUnavailable) {
			f.lostRelease("limiter "+op.op, err)
			continue
		}
		f.outage(op.op, err)
		go f.retryHostOp(op)
	}
	return ok
}

// sendHostOps sends ops in one pipeline (loading the script where a node
// lacks it) and reports whether every op ran (one that did not is retried
// in the background, or counted lost: hostOpsDone).
func (f *Fleet) sendHostOps(ops []hostOp) bool {
	if len(ops) == 0 {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.cfg.callTimeout)
	defer cancel()
	pipe := f.rdb.Pipeline()
	cmds := f.queueHostOps(ctx, pipe, ops)
	pipe.Exec(ctx) // each command carries its own error
	var again []int
	for i, c := range cmds {
		if redis.HasErrorPrefix(c.Err(), "NOSCRIPT") {
			again = append(again, i)
		}
	}
	if len(again) > 0 && lua.Limiter.Load(ctx, f.rdb).Err() == nil {
		// Send again only the calls a node refused (the others ran).
		retry := make([]hostOp, len(again))
		for j, i := range again {
			retry[j] = ops[i]
		}
		pipe = f.rdb.Pipeline()
		rc := f.queueHostOps(ctx, pipe, retry)
		pipe.Exec(ctx)
		for j, i := range again {
			cmds[i] = rc[j]
		}
	}
	return f.hostOpsDone(ops, cmds)
}

// retryHostOp sends op again with backoff, for one lease and a second at
// most, while Redis cannot be reached.
func (f *Fleet) retryHostOp(op hostOp) {
	end := time.Now().Add(f.cfg.lease + time.Second)
	keys := f.hostScriptKeys(op.host)
	var b time.Duration
	var err error
	for time.Now().Before(end) {
		b = nextBackoff(b)
		time.Sleep(b)
		_, err = f.runHost(context.Background(), op.p, keys, op.mode, op.op, op.tok, -1, op.extra...)
		if err == nil {
			return
		}
		if !errors.Is(err, ErrUnavailable) {
			break
		}
	}
	f.lostRelease("limiter "+op.op, err)
}
