package policy

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/robots/dialect"
)

// slowRobots answers robots.txt after d, so that concurrent resolvers
// overlap.
func slowRobots(d time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(d)
		text(200, rulesBody+"Crawl-delay: 2\n")(w, r)
	}
}

// plainStore hides the FetchLocker of the store it wraps.
type plainStore struct{ s Store }

func (p plainStore) Get(ctx context.Context, k string) ([]byte, bool, error) { return p.s.Get(ctx, k) }
func (p plainStore) Put(ctx context.Context, k string, v []byte, ttl time.Duration) error {
	return p.s.Put(ctx, k, v, ttl)
}

// policiesAtOnce makes n resolvers on store (separate memory caches, as
// separate processes have) ask for srv's policy at the same time.
func policiesAtOnce(t *testing.T, n int, store Store, srv *robotsServer) []*Policy {
	t.Helper()
	out := make([]*Policy, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		r := newResolver(t, WithStore(store), WithAgents("examplebot"))
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = mustPolicy(t, r, srv.URL+"/private/x")
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// TestFetchLockOneFetch: resolvers sharing a Store that is a FetchLocker
// fetch robots.txt once between them; the others get the holder's policy.
// The same resolvers on the same Store without its lock each fetch.
func TestFetchLockOneFetch(t *testing.T) {
	const n = 6
	srv := newRobotsServer(t, slowRobots(300*time.Millisecond))
	ps := policiesAtOnce(t, n, NewMemoryStore(nil), srv)
	if h := srv.hits.Load(); h != 1 {
		t.Fatalf("%d resolvers sharing a locking store fetched robots.txt %d times, want 1", n, h)
	}
	for i, p := range ps {
		if d, ok := p.CrawlDelay(); !ok || d != 2*time.Second || p.Check(mustURL(t, srv.URL+"/private/x")).Allowed {
			t.Errorf("resolver %d got %s (delay %v)", i, p, d)
		}
	}

	// Without the lock, every fetch is held until a second one has
	// arrived: proof that they overlap, however late the goroutines run.
	var bare *robotsServer
	second := make(chan struct{})
	var once sync.Once
	bare = newRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		if bare.hits.Load() >= 2 {
			once.Do(func() { close(second) })
		}
		select {
		case <-second:
		case <-time.After(10 * time.Second):
		}
		text(200, rulesBody+"Crawl-delay: 2\n")(w, r)
	})
	policiesAtOnce(t, n, plainStore{NewMemoryStore(nil)}, bare)
	if h := bare.hits.Load(); h < 2 {
		t.Fatalf("without the fetch lock %d overlapping resolvers fetched %d times: the test cannot tell the lock's effect", n, h)
	}
}

// TestFetchLockHolderDies: a lock whose holder never unlocks keeps the
// others waiting until its lease ends, not longer; then one of them
// fetches.
func TestFetchLockHolderDies(t *testing.T) {
	store := NewMemoryStore(nil)
	srv := newRobotsServer(t, text(200, rulesBody))
	u := mustURL(t, srv.URL+"/")
	auth, err := Authority(u)
	if err != nil {
		t.Fatal(err)
	}
	const lease = 400 * time.Millisecond
	start := time.Now()
	_, ok, err := store.LockFetch(context.Background(), storeKey(dialect.RFC9309, auth), lease)
	if !ok || err != nil {
		t.Fatalf("LockFetch on a free key: %v, %v", ok, err)
	}
	ps := policiesAtOnce(t, 3, store, srv)
	if h := srv.hits.Load(); h != 1 {
		t.Fatalf("after the dead holder's lease, %d fetches, want 1", h)
	}
	if el := time.Since(start); el < lease {
		t.Fatalf("a resolver fetched %v after the lock was taken, before its %v lease ended", el, lease)
	}
	for _, p := range ps {
		if p.Action() != dialect.ActionParse {
			t.Fatalf("policy %s", p)
		}
	}
}

// TestFetchLockContract: MemoryStore's lock is exclusive until unlocked or
// its lease ends; WaitFetch returns at once on a free key and when the lock
// ends, and with ctx's error when ctx ends first.
func TestFetchLockContract(t *testing.T) {
	s := NewMemoryStore(nil)
	ctx := context.Background()
	if err := s.WaitFetch(ctx, "k"); err != nil {
		t.Fatalf("WaitFetch on a free key: %v", err)
	}
	unlock, ok, _ := s.LockFetch(ctx, "k", time.Hour)
	if !ok {
		t.Fatal("a free key was not locked")
	}
	if _, ok2, _ := s.LockFetch(ctx, "k", time.Hour); ok2 {
		t.Fatal("a held lock was granted twice")
	}
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := s.WaitFetch(cctx, "k"); err == nil {
		t.Fatal("WaitFetch on a held lock returned nil before ctx ended")
	}
	done := make(chan error, 1)
	go func() { done <- s.WaitFetch(ctx, "k") }()
	time.Sleep(20 * time.Millisecond)
	unlock()
	unlock() // idempotent
	if err := <-done; err != nil {
		t.Fatalf("WaitFetch after unlock: %v", err)
	}
	if _, ok, _ := s.LockFetch(ctx, "k", 30*time.Millisecond); !ok {
		t.Fatal("an unlocked key was not locked again")
	}
	if err := s.WaitFetch(ctx, "k"); err != nil {
		t.Fatalf("WaitFetch until the lease ends: %v", err)
	}
	if _, ok, _ := s.LockFetch(ctx, "k", time.Hour); !ok {
		t.Fatal("a key whose lease ended was not locked again")
	}
}
