package robots

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// cache holds the policies of at most capacity authorities in memory and
// evicts the least recently used. From shardMin authorities it is split
// into 16 shards, each with its own lock and LRU list (an authority's shard
// is chosen by hash); a full cache then evicts the least recently used entry
// of the shard that receives the new one, which approximates LRU. Below
// shardMin it is one exact LRU.
type cache struct {
	seed     maphash.Seed
	shards   []cacheShard
	capacity int64
	count    atomic.Int64
}

type cacheShard struct {
	mu   sync.Mutex
	m    map[string]*cacheEntry
	head cacheEntry // sentinel: head.next is the most recently used
	_    [64]byte   // keep the shards' locks on separate cache lines
}

type cacheEntry struct {
	key        string
	pol        *Policy
	prev, next *cacheEntry
}

// shardMin is the capacity from which the cache is sharded.
const shardMin = 4096

func newCache(capacity int) *cache {
	if capacity < 1 {
		capacity = 1
	}
	n := 1
	if capacity >= shardMin {
		n = 16
	}
	c := &cache{seed: maphash.MakeSeed(), shards: make([]cacheShard, n), capacity: int64(capacity)}
	for i := range c.shards {
		s := &c.shards[i]
		s.m = make(map[string]*cacheEntry, min(capacity/n, 1024))
		s.head.next, s.head.prev = &s.head, &s.head
	}
	return c
}

func (c *cache) shard(key []byte) *cacheShard {
	if len(c.shards) == 1 {
		return &c.shards[0]
	}
	return &c.shards[maphash.Bytes(c.seed, key)&uint64(len(c.shards)-1)]
}

func (c *cache) shardString(key string) *cacheShard {
	if len(c.shards) == 1 {
		return &c.shards[0]
	}
	return &c.shards[maphash.String(c.seed, key)&uint64(len(c.shards)-1)]
}

// get returns the policy of key if it is cached and still valid at now, and
// marks it used. It does not allocate.
func (c *cache) get(key []byte, now time.Time) *Policy {
	s := c.shard(key)
	s.mu.Lock()
	e := s.m[string(key)]
	if e == nil || !now.Before(e.pol.expires) {
		s.mu.Unlock()
		return nil
	}
	s.moveToFront(e)
	p := e.pol
	s.mu.Unlock()
	return p
}

// peek returns the policy of key, valid or not, without marking it used.
func (c *cache) peek(key string) *Policy {
	s := c.shardString(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.m[key]; e != nil {
		return e.pol
	}
	return nil
}

// put stores p as the policy of key, evicting the least recently used entry
// of the shard when it is full.
func (c *cache) put(key string, p *Policy) {
	s := c.shardString(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.m[key]; e != nil {
		e.pol = p
		s.moveToFront(e)
		return
	}
	if c.count.Load() >= c.capacity && len(s.m) > 0 {
		old := s.head.prev
		s.unlink(old)
		delete(s.m, old.key)
	} else {
		c.count.Add(1)
	}
	e := &cacheEntry{key: key, pol: p}
	s.m[key] = e
	s.pushFront(e)
}

// len returns the number of cached authorities.
func (c *cache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}

func (s *cacheShard) unlink(e *cacheEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (s *cacheShard) pushFront(e *cacheEntry) {
	e.prev, e.next = &s.head, s.head.next
	s.head.next.prev = e
	s.head.next = e
}

func (s *cacheShard) moveToFront(e *cacheEntry) {
	if s.head.next == e {
		return
	}
	s.unlink(e)
	s.pushFront(e)
}
