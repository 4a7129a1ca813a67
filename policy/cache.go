package policy

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// cache holds the policies of at most capacity authorities, and about
// maxBytes bytes of them (Policy.footprint), in memory and evicts the least
// recently used. From shardMin authorities it is split into 16 shards, each
// with its own lock and LRU list (an authority's shard is chosen by hash); a
// full cache then evicts the least recently used entries of the shard that
// receives the new one, then of the other shards in turn, which
// approximates LRU. Below shardMin it is one exact LRU. The entry just put
// is never evicted, so one policy larger than maxBytes is still cached.
type cache struct {
	seed     maphash.Seed
	shards   []cacheShard
	capacity int64
	maxBytes int64
	count    atomic.Int64
	bytes    atomic.Int64
	turn     atomic.Uint32 // the next shard trim evicts from
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
	size       int64 // pol.footprint()
	prev, next *cacheEntry
}

// shardMin is the capacity from which the cache is sharded.
const shardMin = 4096

func newCache(capacity int, maxBytes int64) *cache {
	if capacity < 1 {
		capacity = 1
	}
	n := 1
	if capacity >= shardMin {
		n = 16
	}
	c := &cache{seed: maphash.MakeSeed(), shards: make([]cacheShard, n), capacity: int64(capacity), maxBytes: maxBytes}
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

// put stores p as the policy of key, then evicts least recently used
// entries while the cache holds more than capacity entries or maxBytes.
func (c *cache) put(key string, p *Policy) {
	size := p.footprint()
	s := c.shardString(key)
	s.mu.Lock()
	if e := s.m[key]; e != nil {
		c.bytes.Add(size - e.size)
		e.pol, e.size = p, size
		s.moveToFront(e)
	} else {
		e := &cacheEntry{key: key, pol: p, size: size}
		s.m[key] = e
		s.pushFront(e)
		c.count.Add(1)
		c.bytes.Add(size)
	}
	for c.over() && len(s.m) > 1 { // the entry just put is at the front
		c.evict(s, s.head.prev)
	}
	s.mu.Unlock()
	if c.over() {
		c.trim(key)
	}
}

func (c *cache) over() bool { return c.count.Load() > c.capacity || c.bytes.Load() > c.maxBytes }

// evict removes e from s; s.mu is held.
func (c *cache) evict(s *cacheShard, e *cacheEntry) {
	s.unlink(e)
	delete(s.m, e.key)
	c.count.Add(-1)
	c.bytes.Add(-e.size)
}

// trim evicts the least recently used entry of each shard in turn, never
// keep, until the cache is within its bounds or only keep is left.
func (c *cache) trim(keep string) {
	idle := 0 // shards in a row with nothing to evict
	for c.over() && idle < len(c.shards) {
		s := &c.shards[c.turn.Add(1)%uint32(len(c.shards))]
		s.mu.Lock()
		if e := s.head.prev; e != &s.head && e.key != keep {
			c.evict(s, e)
			idle = 0
		} else {
			idle++
		}
		s.mu.Unlock()
	}
}

// bytesHeld returns about how many bytes the cached policies hold.
func (c *cache) bytesHeld() int64 { return c.bytes.Load() }

// len returns the number of cached authorities.
func (c *cache) len() int { return int(c.count.Load()) }

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
