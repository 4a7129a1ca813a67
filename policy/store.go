package policy

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/politecrawl/robots/dialect"
)

// Store is a shared place for serialised policies behind the in-memory
// cache, so that several crawler processes (or a restarted one) fetch each
// robots.txt once. Keys are "dialect authority" strings; values are opaque
// bytes, at most about 700 KB (a 500 KiB robots.txt and its state).
//
// The resolver calls Get when an authority's policy is not in memory (or has
// expired) and Put after every fetch. A Store error is logged and otherwise
// ignored: the resolver then fetches (Get) or keeps the policy in memory
// only (Put). Implementations must be safe for concurrent use.
type Store interface {
	// Get returns the value stored under key, and false when there is none
	// or it has expired.
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	// Put stores value under key for ttl; after ttl the store may drop it.
	Put(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// FetchLocker is an optional interface of a [Store]: a lock per key, so
// that of several resolvers sharing the Store (in several processes) only
// one fetches a given robots.txt at a time while the others wait for its
// result. The resolver uses it, when its Store has it, inside its own
// single flight: after a Store miss it takes the lock, looks in the Store
// again (another holder may have just finished), fetches, puts the policy
// and unlocks; a resolver that does not get the lock waits with WaitFetch
// and reads the Store. A lock error is logged and the resolver fetches
// without it.
type FetchLocker interface {
	// LockFetch tries once to take the fetch lock of key (a Store key) for
	// lease, without waiting. acquired reports whether the caller holds it;
	// then it must call unlock (idempotent) when its policy is in the Store
	// or its fetch is abandoned. The lock ends by itself after lease if the
	// holder dies; an implementation may renew it while the holder lives.
	LockFetch(ctx context.Context, key string, lease time.Duration) (unlock func(), acquired bool, err error)
	// WaitFetch blocks until the fetch lock of key is free (unlocked, its
	// lease over, or never taken), or ctx is done (it then returns an error
	// wrapping ctx.Err()). It must not poll in a tight loop.
	WaitFetch(ctx context.Context, key string) error
}

// MemoryStore is a [Store] in memory, for tests and as an example of the
// interface. It keeps every item until it expires. It is also a
// [FetchLocker].
type MemoryStore struct {
	clock Clock
	mu    sync.Mutex
	m     map[string]memoryItem
	locks map[string]*memoryLock
}

type memoryLock struct {
	expires time.Time     // by the store's clock
	timer   *time.Timer   // ends the lease on the real clock
	done    chan struct{} // closed when the lock ends
}

type memoryItem struct {
	value   []byte
	expires time.Time
}

// NewMemoryStore returns an empty MemoryStore that reads the time from clock
// (nil: the system clock).
func NewMemoryStore(clock Clock) *MemoryStore {
	if clock == nil {
		clock = systemClock{}
	}
	return &MemoryStore{clock: clock, m: make(map[string]memoryItem), locks: make(map[string]*memoryLock)}
}

// LockFetch implements [FetchLocker]. The lease runs on the real clock
// (and is also over once the store's clock passes it).
func (s *MemoryStore) LockFetch(ctx context.Context, key string, lease time.Duration) (func(), bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if lk := s.locks[key]; lk != nil {
		if s.clock.Now().Before(lk.expires) {
			return nil, false, nil
		}
		s.endLock(key, lk)
	}
	lk := &memoryLock{expires: s.clock.Now().Add(lease), done: make(chan struct{})}
	lk.timer = time.AfterFunc(lease, func() {
		s.mu.Lock()
		s.endLock(key, lk)
		s.mu.Unlock()
	})
	s.locks[key] = lk
	return func() {
		s.mu.Lock()
		s.endLock(key, lk)
		s.mu.Unlock()
	}, true, nil
}

// endLock ends lk, the lock of key, if it is still in force; s.mu is held.
func (s *MemoryStore) endLock(key string, lk *memoryLock) {
	if s.locks[key] != lk {
		return
	}
	delete(s.locks, key)
	lk.timer.Stop()
	close(lk.done)
}

// WaitFetch implements [FetchLocker].
func (s *MemoryStore) WaitFetch(ctx context.Context, key string) error {
	s.mu.Lock()
	lk := s.locks[key]
	if lk != nil && !s.clock.Now().Before(lk.expires) {
		s.endLock(key, lk)
		lk = nil
	}
	s.mu.Unlock()
	if lk == nil {
		return ctx.Err()
	}
	select {
	case <-lk.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Get implements [Store].
func (s *MemoryStore) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.m[key]
	if !ok {
		return nil, false, nil
	}
	if !s.clock.Now().Before(it.expires) {
		delete(s.m, key)
		return nil, false, nil
	}
	return append([]byte(nil), it.value...), true, nil
}

// Put implements [Store].
func (s *MemoryStore) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = memoryItem{value: append([]byte(nil), value...), expires: s.clock.Now().Add(ttl)}
	return nil
}

// Len returns the number of items stored, expired or not.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// storeKey is the Store key of an authority's policy: the fetch outcome's
// meaning depends on the dialect.
func storeKey(d *dialect.Dialect, authority string) string {
	return d.Name() + " " + authority
}

// storedPolicy is the serialised form of a Policy. Times are Unix
// nanoseconds (0 = none).
type storedPolicy struct {
	V               int      `json:"v"`
	Authority       string   `json:"authority"`
	Dialect         string   `json:"dialect"`
	URL             string   `json:"url"`
	FinalURL        string   `json:"final_url"`
	Redirects       int      `json:"redirects,omitempty"`
	Status          int      `json:"status"`
	Err             string   `json:"err,omitempty"`
	Outcome         uint8    `json:"outcome"`
	FetchTime       int64    `json:"fetch_time"`
	Bytes           int      `json:"bytes"`
	Truncated       bool     `json:"truncated,omitempty"`
	MaxAge          int64    `json:"max_age"`
	Warnings        []string `json:"warnings,omitempty"`
	Action          uint8    `json:"action"`
	Retry           int64    `json:"retry,omitempty"`
	Expires         int64    `json:"expires"`
	FailSince       int64    `json:"fail_since,omitempty"`
	HasLastGood     bool     `json:"has_last_good,omitempty"`
	LastGood        []byte   `json:"last_good,omitempty"`
	LastGoodFetched int64    `json:"last_good_fetched,omitempty"`
}

const storedVersion = 1

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// encodePolicy serialises p for a Store.
func encodePolicy(p *Policy) ([]byte, error) {
	sp := storedPolicy{
		V:         storedVersion,
		Authority: p.authority,
		Dialect:   p.dialect.Name(),
		URL:       p.fetch.URL,
		FinalURL:  p.fetch.FinalURL,
		Redirects: p.fetch.Redirects,
		Status:    p.fetch.Status,
		Err:       p.fetch.Err,
		Outcome:   uint8(p.fetch.Outcome),
		FetchTime: unixNano(p.fetch.Time),
		Bytes:     p.fetch.Bytes,
		Truncated: p.fetch.Truncated,
		MaxAge:    int64(p.fetch.MaxAge),
		Warnings:  p.fetch.Warnings,
		Action:    uint8(p.decision.Action),
		Retry:     int64(p.decision.Retry),
		Expires:   unixNano(p.expires),
		FailSince: unixNano(p.failSince),
	}
	if lg := p.lastGood; lg != nil {
		sp.HasLastGood = true
		sp.LastGood = []byte(lg.body)
		sp.LastGoodFetched = unixNano(lg.fetched)
	}
	return json.Marshal(&sp)
}

var errBadStored = errors.New("policy: stored policy is not usable")

// decodePolicy rebuilds a policy serialised by encodePolicy, for dialect d
// and the product tokens.
func decodePolicy(b []byte, d *dialect.Dialect, tokens []string) (*Policy, error) {
	var sp storedPolicy
	if err := json.Unmarshal(b, &sp); err != nil {
		return nil, err
	}
	if sp.V != storedVersion || sp.Dialect != d.Name() || sp.Authority == "" ||
		sp.Action > uint8(dialect.ActionUseLastGood) || sp.Outcome > uint8(dialect.OutcomeOtherStatus) {
		return nil, errBadStored
	}
	p := &Policy{
		authority: sp.Authority,
		dialect:   d,
		fetch: FetchInfo{
			URL: sp.URL, FinalURL: sp.FinalURL, Redirects: sp.Redirects, Status: sp.Status, Err: sp.Err,
			Outcome: dialect.Outcome(sp.Outcome), Time: fromUnixNano(sp.FetchTime), Bytes: sp.Bytes,
			Truncated: sp.Truncated, MaxAge: time.Duration(sp.MaxAge), Warnings: sp.Warnings,
		},
		decision: dialect.Decision{
			Outcome: dialect.Outcome(sp.Outcome), Action: dialect.Action(sp.Action), Retry: time.Duration(sp.Retry),
		},
		expires:   fromUnixNano(sp.Expires),
		failSince: fromUnixNano(sp.FailSince),
	}
	if sp.HasLastGood {
		body := string(sp.LastGood)
		p.lastGood = &robotsCopy{body: body, robots: d.ParseString(body), fetched: fromUnixNano(sp.LastGoodFetched)}
	}
	if usesRules(p.decision.Action) {
		if p.lastGood == nil {
			return nil, errBadStored
		}
		p.rules = p.lastGood.robots.For(tokens...)
	}
	return p, nil
}

func usesRules(a dialect.Action) bool {
	return a == dialect.ActionParse || a == dialect.ActionUseLastGood
}
