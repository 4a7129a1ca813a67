package fleetfrontier

import (
	"context"
	"log/slog"
	"time"

	"github.com/politecrawl/robots/redisfleet/internal/lua"
)

// renewLoop renews this process's leases every third of the lease, counts
// done the requests out for longer than the hold, writes what was kept
// while Redis was away, prunes the journal and refreshes the keys' TTL.
func (q *Frontier) renewLoop() {
	defer close(q.stopped)
	t := time.NewTicker(q.set.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-q.stop:
			return
		case <-t.C:
		}
		ctx := context.Background()
		now := time.Now()
		q.mu.Lock()
		expired, ids := q.st.overdue(now, q.cfg.hold)
		q.mu.Unlock()
		for id, l := range expired {
			q.log.Warn("redisfleet: frontier: a request handed out was never reported done; counted done (dropped by Colly before OnRequest? see robots.AttachFrontier)",
				slog.String("url", l.url), slog.Duration("after", now.Sub(l.at)))
			q.Done(id)
		}
		q.flush(ctx)
		for p, v := range ids {
			q.run(ctx, p, lua.FrontierRenew, append([]any{q.set.Lease.Microseconds()}, v...)...)
		}
		q.prune(ctx)
		if time.Since(q.touched) >= min(q.cfg.ttl/4, frontierTouchMax) {
			if _, err := q.runAll(ctx, lua.FrontierTouch, q.cfg.ttl.Milliseconds()); err == nil {
				q.touched = time.Now()
			}
		}
	}
}

// prune drops from the journal up to frontierPruneMax requests that the
// fleet reported done (another process fetched them), in batches of
// frontierBatch per partition.
func (q *Frontier) prune(ctx context.Context) {
	q.mu.Lock()
	byPart := q.st.prunable(frontierPruneMax, q.fl.Part)
	q.mu.Unlock()
	for p, keys := range byPart {
		for len(keys) > 0 {
			n := min(len(keys), frontierBatch)
			args := make([]any, n)
			for i, k := range keys[:n] {
				args[i] = k
			}
			v, err := q.run(ctx, p, lua.FrontierPrune, args...)
			if err != nil {
				return
			}
			q.mu.Lock()
			q.st.pruned(keys[:n], decodeFlags(v))
			q.mu.Unlock()
			keys = keys[n:]
		}
	}
}

// Drop deletes the frontier's keys from Redis (queues, seen and done
// sets, leases, counters) and empties this process's journal and kept
// requests: call it once the crawl is over in every process (queue.Run
// returned everywhere), to free Redis before the keys' TTL
// ([Config.TTL]) does. A process still running on the frontier
// would see the data as lost and queue its journal again. It is bounded
// by the call timeout.
func (q *Frontier) Drop(ctx context.Context) error {
	if _, err := q.runAll(ctx, lua.FrontierDrop); err != nil {
		return err
	}
	q.mu.Lock()
	own := q.st.reset()
	q.mu.Unlock()
	for _, l := range own {
		q.fl.Permits().Dropped(l.host)
	}
	return nil
}

// kept returns how many requests this process knows not crawled: those
// it keeps to write and those in its journal.
func (q *Frontier) kept() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.st.kept()
}

// lossError returns an error when Redis has kept losing the frontier's
// keys (recoveries, each within a lease of the previous) for longer than
// the outage limit: an evicting Redis whose maxmemory cannot hold the
// queue (redisfleet.Config.Eviction), where every recovery is evicted again.
func (q *Frontier) lossError() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.st.lossError(time.Now(), q.set.Lease, q.cfg.outageLimit)
}

// recover queues again, after Redis lost the data of the partitions in
// q.lost, what this process knows of them: its leases (registered again)
// and its journal. It first asks every partition for its generation (one
// pipeline), so that the other partitions Redis lost are found too. A
// recovery already running takes over the partitions found meanwhile.
func (q *Frontier) recover(ctx context.Context) {
	var sum lossSum
	defer func() { q.logLoss(sum) }()
	for {
		if !q.recMu.TryLock() {
			return // the running recovery sees q.lost
		}
		q.count(ctx) // marks the other partitions lost
		for {
			if q.lossError() != nil {
				// Redis keeps losing what is queued again: stop (QueueSize
				// returns the error, which ends the crawl).
				break
			}
			q.mu.Lock()
			p := -1
			for x := range q.lost {
				p = x
				break
			}
			delete(q.lost, p)
			q.mu.Unlock()
			if p < 0 {
				break
			}
			sum.add(q.recoverPart(ctx, p))
		}
		q.recMu.Unlock()
		q.mu.Lock()
		more := len(q.lost) > 0
		q.mu.Unlock()
		if !more || q.lossError() != nil {
			return
		}
	}
}

// lossSum is what one recovery found and did, summed over the partitions
// it recovered: the fields of its log line (docs/fleet.md explains them).
type lossSum struct {
	partitions int   // partitions whose data Redis lost
	emptied    int   // of which emptied because a key of theirs vanished
	dropped    int64 // requests the emptied partitions held (queued or out)
	requeued   int   // requests of this process's journal queued again
	leases     int   // requests this process holds, registered again
}

func (s *lossSum) add(o lossSum) {
	s.partitions += o.partitions
	s.emptied += o.emptied
	s.dropped += o.dropped
	s.requeued += o.requeued
	s.leases += o.leases
}

// logLoss logs one line for a recovery: a warning when the loss starts an
// incident (a restart this process did not see as an outage, a key
// evicted), else Info (the incident's warning is logged already). In a
// storm of losses (see lossError) at most one line a second goes out; the
// next one counts the recoveries not logged.
func (q *Frontier) logLoss(s lossSum) {
	if s.partitions == 0 {
		return
	}
	now := time.Now()
	level := q.fl.IncidentLevel(now)
	q.mu.Lock()
	if level == slog.LevelInfo && now.Sub(q.lossLogged) < time.Second {
		q.lossQuiet++
		q.mu.Unlock()
		return
	}
	quiet := q.lossQuiet
	q.lossLogged, q.lossQuiet = now, 0
	q.mu.Unlock()
	q.log.Log(context.Background(), level, "redisfleet: frontier: Redis lost the frontier's data; queuing again what this process knows (pages fetched by other processes may be fetched again; requests no process journaled are lost)",
		slog.Int("partitions", s.partitions), slog.Int("emptied", s.emptied), slog.Int64("dropped", s.dropped),
		slog.Int("requeued", s.requeued), slog.Int("leases", s.leases), slog.Int("recoveries_not_logged", quiet))
}

// recoverPart queues again what this process knows of partition p and
// returns what it found and did.
func (q *Frontier) recoverPart(ctx context.Context, p int) lossSum {
	q.mu.Lock()
	leases, items := q.st.lost(time.Now(), q.set.Lease, p, q.fl.Part)
	q.mu.Unlock()
	sum := lossSum{partitions: 1, requeued: len(items), leases: len(leases) / 4}
	// A partition emptied because one of its keys vanished (evicted,
	// deleted: internal/lua/include/frontier_head.lua) says how many requests it
	// held then; one Redis lost whole has no such count.
	cctx, cancel := context.WithTimeout(ctx, q.set.CallTimeout)
	dropped, err := q.rdb.HGet(cctx, q.parts[p].keys[1], "lost").Int64()
	cancel()
	if err == nil {
		sum.emptied, sum.dropped = 1, dropped
	}
	if len(leases) > 0 {
		q.run(ctx, p, lua.FrontierReattach, append([]any{q.set.Lease.Microseconds()}, leases...)...)
	}
	q.flush(ctx)
	return sum
}
