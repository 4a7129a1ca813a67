package redisfleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/redisfleet/internal/lua"
)

// valueHeader starts every stored policy value: the format version. A value
// with another header reads as a miss.
var valueHeader = []byte(fmt.Sprintf("robots-policy/v%d\n", formatVersion))

// maxLockWait bounds one sleep of WaitFetch between two looks at the lock,
// in case a wake-up is lost.
const maxLockWait = time.Second

// Store is a [policy.Store] on Redis, and a [policy.FetchLocker]: a policy
// fetched by one process serves every process of the fleet until it
// expires, and one process at a time fetches a given robots.txt while the
// others wait for its result. Get from an unreachable Redis returns an
// error (the resolver then fetches); a value written by another format
// version is a miss. Make one with [Fleet.Store]. It is safe for
// concurrent use.
type Store struct{ f *Fleet }

var (
	_ policy.Store       = (*Store)(nil)
	_ policy.FetchLocker = (*Store)(nil)
)

// Store returns the fleet's policy store.
func (f *Fleet) Store() *Store { return &Store{f: f} }

func (s *Store) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.f.cfg.callTimeout)
}

// Get implements [policy.Store]: one GET, or none when the frontier's
// pop that handed out a request of the key's authority in this process
// read the stored value with it, less than a second ago (once per pop: a
// second Get asks Redis; a value of 8 KiB or more is not read by the pops;
// see the package doc, Round trips per request).
func (s *Store) Get(ctx context.Context, key string) ([]byte, bool, error) {
	s.f.pols.learn(key)
	b, ok := s.f.pols.take(key)
	if !ok {
		cctx, cancel := s.ctx(ctx)
		defer cancel()
		var err error
		b, err = s.f.rdb.Get(cctx, s.f.polKey(key)).Bytes()
		if errors.Is(err, redis.Nil) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, s.f.callError("store get", err)
		}
	}
	if !bytes.HasPrefix(b, valueHeader) {
		return nil, false, nil // none stored, or another format version: a miss
	}
	return b[len(valueHeader):], true, nil
}

// Policies the frontier's pops read (fleetfrontier.Frontier.GetRequest), kept for the
// Store's next Get of each in this process.
const (
	policyReadMax = 8 << 10     // a pop reads a stored value shorter than this (bytes)
	policyFresh   = time.Second // a value read by a pop answers a Get this long
	policyKept    = 256         // values kept at most (the oldest beyond are not kept)
)

// polRead is a stored policy's value as a pop read it (nil: none stored).
type polRead struct {
	v  string // copied into a []byte only if a Get takes it
	at time.Time
}

// policyReads keeps the stored policies the frontier's pops read for
// this process's Store: the store keys' part before the authority, as the
// Store last saw it (the pops need it to name the keys), and the values
// read, each answering the Store's next Get of its key for policyFresh.
type policyReads struct {
	pre atomic.Pointer[string]
	mu  sync.Mutex
	m   map[string]polRead // store key -> the value a pop read
}

// learn records the part of store key k before its authority: the
// frontier's pops then read the policies stored under that part and the
// authorities they hand out.
func (r *policyReads) learn(k string) {
	pre := k[:len(k)-len(storeAuthority(k))]
	if cur := r.pre.Load(); cur == nil || *cur != pre {
		r.pre.Store(&pre)
	}
}

// Prefix implements link.Policies: the part of the store keys before the
// authority (learn), and the largest value a pop reads; 0 before the
// Store has seen a key.
func (r *policyReads) Prefix() (string, int) {
	if p := r.pre.Load(); p != nil {
		return *p, policyReadMax
	}
	return "", 0
}

// Keep implements link.Policies: it keeps v, the value a pop read for
// store key k ("": none stored), for the next Get of k.
func (r *policyReads) Keep(k, v string) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]polRead{}
	}
	if len(r.m) >= policyKept {
		for x, e := range r.m {
			if now.Sub(e.at) >= policyFresh {
				delete(r.m, x)
			}
		}
		if len(r.m) >= policyKept {
			return
		}
	}
	r.m[k] = polRead{v: v, at: now}
}

// take removes and returns the value a pop read for store key k, if it
// is fresh.
func (r *policyReads) take(k string) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.m[k]
	if !ok {
		return nil, false
	}
	delete(r.m, k)
	var v []byte
	if e.v != "" {
		v = []byte(e.v)
	}
	return v, time.Since(e.at) < policyFresh
}

// Put implements [policy.Store]: one SET with the TTL in milliseconds (at
// least 1 ms). A ttl ≤ 0 stores nothing.
func (s *Store) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return nil
	}
	v := make([]byte, 0, len(valueHeader)+len(value))
	v = append(append(v, valueHeader...), value...)
	cctx, cancel := s.ctx(ctx)
	defer cancel()
	if err := s.f.rdb.Set(cctx, s.f.polKey(key), v, max(ttl, time.Millisecond)).Err(); err != nil {
		return s.f.callError("store put", err)
	}
	return nil
}

// LockFetch implements [policy.FetchLocker]: SET NX with the lease (one
// round trip). While the lock is held, a timer renews it every third of the
// lease; unlock stops the renewal, deletes the lock if this holder still
// has it and wakes the waiters of every process (one round trip).
func (s *Store) LockFetch(ctx context.Context, key string, lease time.Duration) (func(), bool, error) {
	lease = max(lease, 100*time.Millisecond)
	k := s.f.key(kindFetch, key)
	tok := s.f.token()
	cctx, cancel := s.ctx(ctx)
	ok, err := s.f.rdb.SetNX(cctx, k, tok, lease).Result()
	cancel()
	if err != nil {
		return nil, false, s.f.callError("fetch lock", err)
	}
	if !ok {
		return nil, false, nil
	}
	lk := &fetchLock{s: s, key: k, part: s.f.part(key), token: tok, lease: lease}
	lk.mu.Lock()
	lk.timer = time.AfterFunc(lease/3, lk.renew)
	lk.mu.Unlock()
	return lk.unlock, true, nil
}

type fetchLock struct {
	s          *Store
	key, token string
	part       int
	lease      time.Duration
	mu         sync.Mutex
	timer      *time.Timer
	done       bool
}

func (lk *fetchLock) renew() {
	ctx, cancel := lk.s.ctx(context.Background())
	held, err := lua.FetchRenew.Run(ctx, lk.s.f.rdb, []string{lk.key}, lk.token, lk.lease.Milliseconds()).Int()
	cancel()
	lk.mu.Lock()
	defer lk.mu.Unlock()
	if lk.done || (err == nil && held == 0) {
		return // unlocked, or the lock is no longer ours
	}
	lk.timer.Reset(lk.lease / 3)
}

func (lk *fetchLock) unlock() {
	lk.mu.Lock()
	if lk.done {
		lk.mu.Unlock()
		return
	}
	lk.done = true
	lk.timer.Stop()
	lk.mu.Unlock()
	ctx, cancel := lk.s.ctx(context.Background())
	defer cancel()
	// On failure the lease ends the lock; the waiters' timers see it.
	if err := lua.FetchUnlock.Run(ctx, lk.s.f.rdb, []string{lk.key}, lk.token, lk.s.f.pkey(lk.part, kindWake), lk.s.f.pubCmd).Err(); err != nil {
		lk.s.f.lostRelease("fetch unlock", lk.s.f.callError("fetch unlock", err))
	}
}

// WaitFetch implements [policy.FetchLocker]: it reads the lock's remaining
// lease (PTTL) and sleeps until the lock's holder publishes its unlock, or
// the lease would end, or one second has passed (a guard against a lost
// wake-up), then looks again. An unreachable Redis is an error wrapping
// [ErrUnavailable].
func (s *Store) WaitFetch(ctx context.Context, key string) error {
	k := s.f.key(kindFetch, key)
	wake, cancelSub := s.f.subscribe(ctx, s.f.part(key), k, "")
	defer cancelSub()
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		cctx, cancel := s.ctx(ctx)
		ttl, err := s.f.rdb.PTTL(cctx, k).Result()
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return s.f.callError("fetch lock wait", err)
		}
		if ttl < 0 { // -2: no lock; -1: no expiry, which this package never sets
			return nil
		}
		if !sleep(ctx, &t, min(ttl+time.Millisecond, maxLockWait), wake) {
			return ctx.Err()
		}
	}
}
