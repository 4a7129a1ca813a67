package fleetfrontier

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/link"
	"github.com/politecrawl/robots/redisfleet/internal/lua"
)

// GetRequest implements queue.Storage: it hands out the next request of a
// host that may be asked now, with a lease id in its context (under
// frontier.LeaseKey). When none is ready it waits at most MaxWait, then
// hands out the request of the host ready soonest if this process has
// requests out, else returns frontier.ErrNotReady (as package frontier
// does, for the same reasons). When nothing is queued
// it waits at most MaxWait for a request to be queued, and returns
// frontier.ErrEmpty (at once if nothing is out in the fleet either). When
// Redis is away it retries until MaxWait and returns the error.
//
// It pops from the partitions worth a look (one round trip each), in
// turn: those not looked at yet, woken since (a request queued or done
// there), or whose soonest host is due by what the latest look said; a
// partition is looked at again after MaxWait at the latest.
func (q *Frontier) GetRequest() ([]byte, error) {
	b, err := q.getRequest()
	if b == nil && q.cfg.batch > 0 {
		q.mu.Lock()
		q.askSize = true
		q.mu.Unlock()
	}
	return b, err
}

func (q *Frontier) getRequest() ([]byte, error) {
	q.Init()
	ctx := context.Background()
	deadline := time.Now().Add(q.cfg.maxWait)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	backoff := frontierRetryInitial
	for {
		now := time.Now()
		past := !now.Before(deadline)
		q.mu.Lock()
		// What is kept goes in the pipeline of this loop's first pop
		// (pop); with no partition worth a look now, the links kept go
		// at once when nothing is out here (another process may be
		// waiting for them), and a done report kept for a pop waits for
		// one until its timer (Done).
		flush := (q.cfg.batch == 0 || len(q.st.own) == 0) && !q.st.anyDue(now)
		q.mu.Unlock()
		if flush {
			q.flush(ctx)
		}
		var lastErr error
		q.mu.Lock()
		start := q.next
		q.next = (q.next + 1) % len(q.parts)
		q.mu.Unlock()
		for i := range q.parts {
			p := (start + i) % len(q.parts)
			q.mu.Lock()
			due := q.st.due(p, now)
			q.mu.Unlock()
			if !due {
				continue
			}
			b, err := q.pop(ctx, p, false, deadline)
			if b != nil || err != nil && !errors.Is(err, redisfleet.ErrUnavailable) {
				return b, err
			}
			if err != nil {
				// Redis (or this partition's node) cannot be reached: one
				// call timeout per GetRequest loop, not one per partition;
				// the next loop starts at the next partition.
				lastErr = err
				break
			}
		}
		q.mu.Lock()
		o := q.st.outlook()
		own := len(q.st.own)
		woken := q.woken
		q.mu.Unlock()
		var wait time.Duration
		switch {
		case lastErr != nil:
			if past {
				return nil, lastErr
			}
			wait, backoff = backoff, min(2*backoff, frontierRetryMax)
		case o.allEmpty && (past || o.leased == 0):
			return nil, frontier.ErrEmpty
		case past && own > 0 && o.force >= 0:
			b, err := q.pop(ctx, o.force, true, time.Time{})
			if b != nil || err != nil {
				return b, err
			}
			return nil, frontier.ErrNotReady
		case past:
			return nil, frontier.ErrNotReady
		default:
			wait = min(time.Until(deadline), time.Until(o.next))
		}
		wait = max(min(wait, time.Until(deadline), frontierPollCap), 0)
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-woken:
			if !timer.Stop() {
				<-timer.C
			}
		case <-timer.C:
		}
	}
}

// pop runs the pop script on partition p (force: take from the host ready
// soonest if none is ready) and records what it says of the partition,
// for a GetRequest whose deadline is by (zero: none). It returns the
// request handed out, or nil.
func (q *Frontier) pop(ctx context.Context, p int, force bool, by time.Time) ([]byte, error) {
	id := q.fl.Token()
	args := []any{q.fl.Tag(p), id, q.set.Lease.Microseconds(), q.cfg.perHost,
		map[bool]int{true: 1}[force], frontierScan, frontierBusyPoll.Microseconds(), frontierCapWait.Microseconds(),
		q.cfg.maxWait.Microseconds(), frontierReapPoll.Microseconds(), q.set.ProcID,
		map[bool]int{true: 1}[q.fl.Permits().Granting()], q.set.IdleTTL.Microseconds()}
	// The policy of the host handed out, read for the Store's Get (link.Policies).
	pre, polMax := q.fl.Policies().Prefix()
	args = append(args, polMax, pre)
	q.mu.Lock()
	abandoned, waits, wakes := q.st.popping(p, time.Now(), frontierBatch)
	q.mu.Unlock()
	for i, a := range abandoned {
		args = append(args, a, waits[i].Microseconds())
	}
	sent := time.Now()
	// What this process keeps to write (done reports, links, the
	// limiter's releases kept for them) goes first in the pop's pipeline:
	// one round trip, and a host a done report frees may be handed out by
	// this very pop.
	v, err := q.flushWith(ctx, &frCall{p: p, s: lua.FrontierPop, args: args})
	got := time.Now()
	q.mu.Lock()
	q.st.popped(p, id, abandoned, err == nil, errors.Is(err, redisfleet.ErrUnavailable))
	q.mu.Unlock()
	if err != nil {
		return nil, err
	}
	r := decodePop(v)
	if n := r.Reaped; n > 0 {
		q.mu.Lock()
		q.st.stats.Reaped += n
		q.mu.Unlock()
		q.log.Warn("redisfleet: frontier: requests of a process that stopped renewing its leases were queued again", slog.Int64("requests", n))
	}
	if r.Handed {
		// The partition is looked at again when the pop registered this
		// process for (an earlier event wakes it), unless woken meanwhile.
		q.mu.Lock()
		q.st.handedFrom(p, lookAt(r.Look-r.Now, sent, got, q.cfg.maxWait), wakes)
		q.mu.Unlock()
		var g *link.Grant
		if r.Granted {
			// The pop granted a permit of the host's limiter with it.
			g = &link.Grant{Part: p, ID: id, Delay: r.Delay, Fail: r.Fail, Mode: r.Mode}
		}
		b, host, err := q.hand(p, id, r.Payload, r.Early, g)
		if polMax > 0 && err == nil && r.PolicyRead {
			// The stored policy of the host, read by the pop ("": none).
			q.fl.Policies().Keep(pre+host, r.Policy)
		}
		return b, err
	}
	q.mu.Lock()
	q.st.looked(p, lookSeen{soonest: r.Soonest, now: r.Now, leased: r.Leased, sent: sent, got: got, by: by, wakes: wakes}, q.cfg.maxWait)
	q.mu.Unlock()
	return nil, nil
}

// hand records a lease of this process on partition p and returns its
// request with the lease id in its context, and its host; g (nil: none)
// is the permit the pop granted with it, kept for the limiter or, if the
// request cannot be handed out, given back.
func (q *Frontier) hand(p int, id string, pl string, early bool, g *link.Grant) ([]byte, string, error) {
	r, err := frontier.Decode([]byte(pl))
	var b []byte
	if err == nil {
		b, err = frontier.SetLease([]byte(pl), id)
	}
	q.mu.Lock()
	q.st.handed(id, &ownLease{p: p, host: r.Host, key: r.Key, payload: pl, url: r.URL, at: time.Now()}, early)
	q.mu.Unlock()
	if g != nil {
		g.Host = r.Host
	}
	if err == nil {
		q.fl.Permits().Handed(r.Host, !early, g)
	}
	if err != nil {
		if g != nil {
			q.fl.Permits().GiveBack(*g)
		}
		// Cannot happen (AddRequest decoded it): end the lease so that the
		// host is not held, and say so.
		q.log.Error("redisfleet: frontier: a queued request cannot be read; dropped", slog.Any("error", err))
		q.mu.Lock()
		delete(q.st.own, id)
		q.mu.Unlock()
		q.run(context.Background(), p, lua.FrontierDone, frontierBusyPoll.Microseconds(), 0, id, "")
		return nil, r.Host, err
	}
	return b, r.Host, nil
}

// Done reports the request leased as id done: its lease ends and its host
// may be handed out again (once the fleet limiter says so). Unknown ids
// are ignored. While Redis is away the report is kept and sent later.
// Under [Config.Batching] the report waits (at most 5 ms) for this process's
// next pop and goes in its pipeline; otherwise it is sent at once.
func (q *Frontier) Done(id string) {
	q.mu.Lock()
	l := q.st.done(id)
	if l == nil {
		q.mu.Unlock()
		return
	}
	linger := q.cfg.batch > 0 && !q.closing()
	if linger && q.doneTimer == nil {
		q.doneTimer = time.AfterFunc(q.cfg.linger, func() { q.flush(context.Background()) })
	}
	q.mu.Unlock()
	q.fl.Permits().Done(l.host, id)
	if !linger {
		q.flush(context.Background())
	}
}
