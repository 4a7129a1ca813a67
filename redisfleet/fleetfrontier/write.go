package fleetfrontier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/lua"
)

// AddRequest implements queue.Storage: it queues a request serialised by
// Colly at the end of its host's queue, once for the fleet: a request
// queued before (by any process) gets frontier.ErrSeen. Bytes that are not
// such a request get an error wrapping frontier.ErrBadRequest. While Redis
// is away the request is kept in memory and written once it answers; the
// error is then nil.
func (q *Frontier) AddRequest(b []byte) error {
	r, err := frontier.Decode(b)
	if err != nil {
		return err
	}
	q.Init()
	it := journalItem{key: r.Key, host: r.Host, payload: string(b)}
	ctx := context.Background()
	if q.cfg.batch > 0 {
		q.mu.Lock()
		q.st.pendingAdd = append(q.st.pendingAdd, it)
		n := len(q.st.pendingAdd)
		if q.batchTimer == nil {
			q.batchTimer = time.AfterFunc(q.cfg.batch, func() { q.flush(context.Background()) })
		}
		q.mu.Unlock()
		if n >= frontierBatch {
			q.flush(ctx)
		}
		return nil
	}
	q.flush(ctx)
	v, err := q.run(ctx, q.fl.Part(it.host), lua.FrontierAdd, q.cfg.ttl.Milliseconds(), 0, it.key, it.host, it.payload)
	if err != nil {
		if !errors.Is(err, redisfleet.ErrUnavailable) {
			return err
		}
		it.unsure = true // the call may have run (a reply that never came)
		q.mu.Lock()
		q.st.pendingAdd = append(q.st.pendingAdd, it)
		q.mu.Unlock()
		return nil
	}
	queued := decodeFlags(v)
	ok := len(queued) == 1 && queued[0]
	q.mu.Lock()
	filled := q.st.written(it, ok)
	q.mu.Unlock()
	q.warnFull(filled)
	if !ok {
		return frontier.ErrSeen
	}
	return nil
}

// warnFull logs, once the journal filled, that the requests queued from
// now on are not journaled.
func (q *Frontier) warnFull(filled bool) {
	if filled {
		q.log.Warn("redisfleet: frontier: the journal is full; requests queued from now on are lost if Redis loses its data (see fleetfrontier.Config.JournalCap)",
			slog.Int("cap", q.cfg.journalCap))
	}
}

// flush writes what is kept (queued requests and done reports, kept while
// Redis was away or by Config.Batching) in one pipeline: the requests first,
// by partition, then the done reports. What fails stays kept.
func (q *Frontier) flush(ctx context.Context) { q.flushWith(ctx, nil) }

// frCall is a script call of the frontier on one partition, with the
// partition's KEYS and ARGV q.argv(p, args...).
type frCall struct {
	p    int
	s    *redis.Script
	args []any
}

// flushWith is flush, with then (if not nil) last in the same pipeline,
// after the done reports (so that a host a done report frees can be handed
// out by a pop sent as then); it returns then's reply, checked as run
// does. With nothing kept, then goes alone (run).
func (q *Frontier) flushWith(ctx context.Context, then *frCall) ([]any, error) {
	q.mu.Lock()
	adds, dones := q.st.takePending()
	if q.batchTimer != nil {
		q.batchTimer.Stop()
		q.batchTimer = nil
	}
	if q.doneTimer != nil {
		q.doneTimer.Stop()
		q.doneTimer = nil
	}
	q.mu.Unlock()
	if len(adds) == 0 && len(dones) == 0 {
		if then == nil {
			return nil, nil
		}
		return q.run(ctx, then.p, then.s, then.args...)
	}
	// The limiter's releases kept for this pipeline (link.Carrier) go after
	// the requests and before the done reports, whose wake-ups then see
	// the hosts released: in the done report's script of their partition
	// when there is one, else alone.
	ops, carriedDone := q.fl.Carrier().TakeCarried()
	type call struct {
		p     int
		s     *redis.Script
		keys  []string // nil: the partition's
		args  []any
		adds  []journalItem
		dones []doneItem
		host  int   // 1 + the index in ops of a lua.Limiter call; 0: a frontier script
		ops   []int // the indexes in ops of the limiter operations a done report carries
	}
	var calls []call
	// By partition, and apart those queued again from the journal.
	type batch struct {
		p     int
		again bool
	}
	byPart := map[batch][]journalItem{}
	var order []batch
	for _, it := range adds {
		b := batch{q.fl.Part(it.host), it.again}
		if _, ok := byPart[b]; !ok {
			order = append(order, b)
		}
		byPart[b] = append(byPart[b], it)
	}
	for _, b := range order {
		items := byPart[b]
		again := 0
		if b.again {
			again = 1
		}
		for len(items) > 0 {
			n := min(len(items), frontierBatch)
			args := make([]any, 0, 2+3*n)
			args = append(args, q.cfg.ttl.Milliseconds(), again)
			for _, it := range items[:n] {
				args = append(args, it.key, it.host, it.payload)
			}
			calls = append(calls, call{p: b.p, s: lua.FrontierAdd, args: args, adds: items[:n]})
			items = items[n:]
		}
	}
	donesByPart := map[int][]doneItem{}
	var doneOrder []int
	for _, d := range dones {
		if _, ok := donesByPart[d.p]; !ok {
			doneOrder = append(doneOrder, d.p)
		}
		donesByPart[d.p] = append(donesByPart[d.p], d)
	}
	opsByPart := map[int][]int{}
	for i, op := range ops {
		if _, ok := donesByPart[op.Part]; ok {
			opsByPart[op.Part] = append(opsByPart[op.Part], i)
		} else {
			calls = append(calls, call{p: op.Part, s: lua.Limiter, host: i + 1})
		}
	}
	for _, p := range doneOrder {
		ds, carried := donesByPart[p], opsByPart[p]
		keys := q.parts[p].keys
		args := make([]any, 0, 2+2*len(ds))
		args = append(args, frontierBusyPoll.Microseconds(), len(carried))
		if len(carried) > 0 {
			keys = slices.Clip(keys)
			for _, i := range carried {
				keys = append(keys, ops[i].Keys...)
				args = append(append(args, len(ops[i].Args)), ops[i].Args...)
			}
		}
		for _, d := range ds {
			args = append(args, d.id, d.key)
		}
		calls = append(calls, call{p: p, s: lua.FrontierDone, keys: keys, args: args, dones: ds, ops: carried})
	}
	last := -1 // the index of then in calls
	if then != nil {
		last = len(calls)
		calls = append(calls, call{p: then.p, s: then.s, args: then.args})
	}
	cctx, cancel := context.WithTimeout(ctx, q.set.CallTimeout)
	defer cancel()
	cmds := make([]*redis.Cmd, len(calls))
	exec := func(only func(i int) bool) bool {
		pipe := q.rdb.Pipeline()
		for i, c := range calls {
			switch {
			case !only(i):
			case c.host > 0:
				op := ops[c.host-1]
				cmds[i] = lua.Limiter.EvalSha(cctx, pipe, op.Keys, op.Args...)
			default:
				keys := c.keys
				if keys == nil {
					keys = q.parts[c.p].keys
				}
				cmds[i] = c.s.EvalSha(cctx, pipe, keys, q.argv(c.p, c.args...)...)
			}
		}
		pipe.Exec(cctx) // each command carries its own error
		missing := false
		for _, c := range cmds {
			missing = missing || redis.HasErrorPrefix(c.Err(), "NOSCRIPT")
		}
		return missing
	}
	if exec(func(int) bool { return true }) {
		// A node that has not seen a script yet: load them everywhere and
		// send again only the calls it refused (the others ran).
		loaded := map[*redis.Script]bool{}
		var lerr error
		for i, c := range calls {
			if redis.HasErrorPrefix(cmds[i].Err(), "NOSCRIPT") && !loaded[c.s] {
				loaded[c.s] = true
				if err := c.s.Load(cctx, q.rdb).Err(); err != nil && lerr == nil {
					lerr = err
				}
			}
		}
		if lerr == nil {
			again := make([]bool, len(calls))
			for i := range calls {
				again[i] = redis.HasErrorPrefix(cmds[i].Err(), "NOSCRIPT")
			}
			exec(func(i int) bool { return again[i] })
		}
	}
	var failedAdds []journalItem
	var failedDones []doneItem
	opCmds := make([]*redis.Cmd, len(ops))
	for i, c := range calls {
		if c.host > 0 {
			opCmds[c.host-1] = cmds[i]
			continue
		}
		if i == last {
			continue
		}
		v, err := cmds[i].Slice()
		done := decodeDone(v, len(c.ops))
		for j, k := range c.ops {
			// The reply of a limiter operation the done report carried,
			// as lua.Limiter's own: {1, generation}.
			oc := redis.NewCmd(cctx)
			if e := done.OpGens[j]; err == nil && e != 0 {
				oc.SetVal([]any{int64(1), e})
			} else if err != nil {
				oc.SetErr(err)
			} else {
				oc.SetErr(fmt.Errorf("redisfleet: limiter %s in the done report: no reply", ops[k].Name))
			}
			opCmds[k] = oc
		}
		v, err = q.reply(ctx, c.p, v, err)
		if err != nil {
			for _, it := range c.adds {
				it.unsure = it.unsure || errors.Is(err, redisfleet.ErrUnavailable)
				failedAdds = append(failedAdds, it)
			}
			failedDones = append(failedDones, c.dones...)
			continue
		}
		if c.s != lua.FrontierAdd {
			continue
		}
		queued := decodeFlags(v)
		filled := false
		q.mu.Lock()
		for j, it := range c.adds {
			filled = q.st.written(it, j < len(queued) && queued[j]) || filled
		}
		q.mu.Unlock()
		q.warnFull(filled)
	}
	carriedDone(opCmds)
	if len(failedAdds) > 0 || len(failedDones) > 0 {
		q.mu.Lock()
		q.st.restore(failedAdds, failedDones)
		q.mu.Unlock()
	}
	if then == nil {
		return nil, nil
	}
	v, err := cmds[last].Slice()
	return q.reply(ctx, then.p, v, err)
}
