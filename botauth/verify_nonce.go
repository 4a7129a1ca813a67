package botauth

import (
	"container/heap"
	"crypto/sha256"
	"sync"
	"time"
)

// maxNonces bounds how many nonces a Verifier remembers.
const maxNonces = 100_000

// nonceKey identifies a nonce of a key of a directory.
func nonceKey(dir, kid, nonce string) [16]byte {
	h := sha256.New()
	for _, s := range []string{dir, kid, nonce} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	var k [16]byte
	copy(k[:], h.Sum(nil))
	return k
}

// A nonceSet remembers nonces until their signatures expire, in bounded
// memory.
type nonceSet struct {
	mu    sync.Mutex
	until map[[16]byte]int64
	order nonceHeap // by expiry, earliest first
}

type nonceEntry struct {
	key   [16]byte
	until int64
}

type nonceHeap []nonceEntry

func (h nonceHeap) Len() int           { return len(h) }
func (h nonceHeap) Less(i, j int) bool { return h[i].until < h[j].until }
func (h nonceHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *nonceHeap) Push(x any)        { *h = append(*h, x.(nonceEntry)) }
func (h *nonceHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// add records key until until and reports whether it was new; it forgets
// the nonces expired at now and, past limit, the one expiring first.
func (s *nonceSet) add(key [16]byte, until, now time.Time, limit int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.until == nil {
		s.until = make(map[[16]byte]int64)
	}
	for len(s.order) > 0 && s.order[0].until < now.Unix() {
		delete(s.until, heap.Pop(&s.order).(nonceEntry).key)
	}
	if _, seen := s.until[key]; seen {
		return false
	}
	for len(s.order) >= limit {
		delete(s.until, heap.Pop(&s.order).(nonceEntry).key)
	}
	s.until[key] = until.Unix()
	heap.Push(&s.order, nonceEntry{key, until.Unix()})
	return true
}
