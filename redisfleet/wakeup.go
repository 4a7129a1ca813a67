package redisfleet

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// listen makes sure this process hears the wake-ups of partitions ps:
// the first call for a partition subscribes (on a Cluster, SSUBSCRIBE on a
// connection per partition; on one server, SUBSCRIBE on the process's one
// Pub/Sub connection) and waits for Redis to
// confirm it, at most a call timeout or ctx for all of them together;
// later calls cost nothing. A subscription that fails is retried by
// go-redis in the background; meanwhile waits end on their timers.
func (f *Fleet) listen(ctx context.Context, ps ...int) {
	var wait []*shard
	f.shMu.Lock()
	if f.closed.Load() {
		f.shMu.Unlock()
		return
	}
	for _, p := range ps {
		sh := f.shards[p]
		if sh == nil {
			sh = &shard{ready: make(chan struct{})}
			ch, own := f.pkey(p, kindWake), f.ownWake(p)
			f.shards[p], f.byChan[ch], f.byChan[own] = sh, sh, sh
			if cc, ok := f.rdb.(*redis.ClusterClient); ok {
				// SSUBSCRIBE takes channels of one slot: a connection per
				// partition, on the partition's master.
				sh.ps = cc.SSubscribe(context.WithoutCancel(ctx), ch, own)
				f.shWG.Add(1)
				go f.dispatch(sh.ps.ChannelWithSubscriptions())
			} else {
				if f.single == nil {
					f.single = f.rdb.Subscribe(context.WithoutCancel(ctx))
					f.shWG.Add(1)
					go f.dispatch(f.single.ChannelWithSubscriptions())
				}
				f.single.Subscribe(context.WithoutCancel(ctx), ch, own)
			}
		}
		if !sh.waited.Load() {
			wait = append(wait, sh)
		}
	}
	f.shMu.Unlock()
	if len(wait) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, f.cfg.callTimeout)
	defer cancel()
	for _, sh := range wait {
		select {
		case <-sh.ready:
		case <-cctx.Done():
		}
		sh.waited.Store(true)
	}
}

// dispatch routes the wake-up messages of one partition's subscription to
// the local waiters subscribed to their key. A payload is a key,
// optionally followed by "\n" and a hint (the µs from the publication
// until the state is worth looking at again) and by "\n" and a target (the
// token of the one waiter the message is for: the head of the host's
// fleet-wide queue).
func (f *Fleet) dispatch(ch <-chan any) {
	defer f.shWG.Done()
	for x := range ch {
		switch m := x.(type) {
		case *redis.Subscription:
			f.shMu.Lock()
			sh := f.byChan[m.Channel]
			f.shMu.Unlock()
			if sh != nil && (m.Kind == "subscribe" || m.Kind == "ssubscribe") {
				sh.once.Do(func() { close(sh.ready) })
			}
		case *redis.Message:
			f.heard.Add(1)
			key, rest, _ := strings.Cut(m.Payload, "\n")
			h, target, _ := strings.Cut(rest, "\n")
			hint, _ := strconv.ParseInt(h, 10, 64)
			f.wake(key, hint, target)
		}
	}
}

// waiter is a local subscriber: a coalescing channel of hints, and the
// token it answers to (empty: every message of its key).
type waiter struct {
	c    chan int64
	self string
}

// wake signals the local waiters of key that the message is for, without
// blocking; a waiter that has a signal pending keeps the later hint.
func (f *Fleet) wake(key string, hint int64, target string) {
	f.subMu.Lock()
	for w := range f.subs[key] {
		if target != "" && w.self != "" && w.self != target {
			continue
		}
		select {
		case w.c <- hint:
		default:
			select {
			case <-w.c:
			default:
			}
			select {
			case w.c <- hint:
			default:
			}
		}
	}
	f.subMu.Unlock()
}

// subscribe registers a local waiter for the wake-ups of key, published
// on partition p's channel, that are for self (or for anyone); cancel
// removes it. The partition's subscription is made first (see listen).
func (f *Fleet) subscribe(ctx context.Context, p int, key, self string) (chan int64, func()) {
	w := &waiter{c: make(chan int64, 1), self: self}
	f.subMu.Lock()
	m := f.subs[key]
	if m == nil {
		m = make(map[*waiter]struct{})
		f.subs[key] = m
	}
	m[w] = struct{}{}
	f.subMu.Unlock()
	f.listen(ctx, p)
	return w.c, func() {
		f.subMu.Lock()
		delete(m, w)
		if len(m) == 0 && len(f.subs[key]) == 0 {
			delete(f.subs, key)
		}
		f.subMu.Unlock()
	}
}

// notify publishes a wake-up for key on partition p's channel: every
// process's waiters subscribed to key re-check their state. A lost
// notification costs only latency (every wait is also bounded by a
// timer).
func (f *Fleet) notify(ctx context.Context, p int, key string) error {
	cctx, cancel := context.WithTimeout(ctx, f.cfg.callTimeout)
	defer cancel()
	var err error
	if f.cluster {
		err = f.rdb.SPublish(cctx, f.pkey(p, kindWake), key).Err()
	} else {
		err = f.rdb.Publish(cctx, f.pkey(p, kindWake), key).Err()
	}
	if err != nil {
		return f.callError(f.pubCmd, err)
	}
	return nil
}

// wakeups returns a channel that receives a value (coalesced, never
// blocking the sender) after each wake-up for key on partition p from any
// process of the fleet, and a func that ends the subscription (call it:
// it also ends the goroutine that feeds the channel).
func (f *Fleet) wakeups(ctx context.Context, p int, key string) (<-chan struct{}, func()) {
	w, cancel := f.subscribe(ctx, p, key, "")
	out := make(chan struct{}, 1)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-w:
				select {
				case out <- struct{}{}:
				default:
				}
			case <-stop:
				return
			}
		}
	}()
	var once sync.Once
	return out, func() { once.Do(func() { cancel(); close(stop) }) }
}
