package redisfleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

func TestStoreRoundTripAndVersion(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	f := newFleet(t, srv)
	s := f.Store()
	ctx := context.Background()
	if _, ok, err := s.Get(ctx, "rfc9309 https://a.example"); ok || err != nil {
		t.Fatalf("Get on an empty Redis: ok=%v err=%v", ok, err)
	}
	if err := s.Put(ctx, "rfc9309 https://a.example", []byte("payload"), time.Minute); err != nil {
		t.Fatal(err)
	}
	// Another handle (another process) reads it.
	v, ok, err := newFleet(t, srv).Store().Get(ctx, "rfc9309 https://a.example")
	if !ok || err != nil || string(v) != "payload" {
		t.Fatalf("Get from another handle = %q, %v, %v", v, ok, err)
	}
	raw := newClient(t, srv)
	// In the partition of the authority (keys.go).
	keyA := fmt.Sprintf("robots:v2:{robots:%d}:policy:rfc9309 https://a.example", f.part("https://a.example"))
	b, err := raw.Get(ctx, keyA).Bytes()
	if err != nil || string(b) != "robots-policy/v2\npayload" {
		t.Fatalf("stored value %q, %v: want the version header then the payload", b, err)
	}
	// A value of another format version under the key is a miss.
	raw.Set(ctx, fmt.Sprintf("robots:v2:{robots:%d}:policy:rfc9309 https://b.example", f.part("https://b.example")), "robots-policy/v1\npayload", time.Minute)
	if v, ok, err := s.Get(ctx, "rfc9309 https://b.example"); ok || err != nil {
		t.Fatalf("a value of version 1 read as %q, %v, %v; want a miss", v, ok, err)
	}
	// Another prefix is another fleet.
	if _, ok, _ := newFleet(t, srv, Config{Prefix: "other:"}).Store().Get(ctx, "rfc9309 https://a.example"); ok {
		t.Fatal("a fleet with another prefix read the value")
	}
	// The TTL is Redis's: set on the key (Redis expires it).
	if ttl, err := raw.PTTL(ctx, keyA).Result(); err != nil || ttl <= 0 || ttl > time.Minute {
		t.Fatalf("the key's TTL is %v, %v; want (0, 1m]", ttl, err)
	}
}

// robotsSite serves a robots.txt after a pause, counting the fetches.
type robotsSite struct {
	*httptest.Server
	robots atomic.Int32
}

func newRobotsSite(t testing.TB, body string, pause time.Duration) *robotsSite {
	s := &robotsSite{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			s.robots.Add(1)
			time.Sleep(pause)
			w.Write([]byte(body))
			return
		}
		w.Write([]byte("<html>page</html>"))
	}))
	t.Cleanup(s.Close)
	return s
}

// resolveAtOnce makes one resolver per fleet handle (each with its own
// memory cache and Redis client, as separate processes have) ask for u's
// policy at the same time.
func resolveAtOnce(t *testing.T, fleets []*Fleet, u string) []*policy.Policy {
	t.Helper()
	pu, _ := url.Parse(u)
	out := make([]*policy.Policy, len(fleets))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, f := range fleets {
		r, err := policy.NewResolver(policy.WithStore(f.Store()), policy.WithAgents("examplebot"))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			p, err := r.Policy(context.Background(), pu)
			if err != nil {
				t.Errorf("resolver %d: %v", i, err)
				return
			}
			out[i] = p
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// TestStoreOneFetchForTheFleet: eight resolvers on eight fleet handles fetch
// robots.txt once; every one gets the policy.
func TestStoreOneFetchForTheFleet(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		site := newRobotsSite(t, "User-agent: *\nDisallow: /private\nCrawl-delay: 2\n", 300*time.Millisecond)
		fleets := make([]*Fleet, 8)
		for i := range fleets {
			fleets[i] = newFleet(t, srv)
		}
		ps := resolveAtOnce(t, fleets, site.URL+"/")
		if n := site.robots.Load(); n != 1 {
			t.Fatalf("8 resolvers sharing Redis fetched robots.txt %d times, want 1", n)
		}
		priv, _ := url.Parse(site.URL + "/private/x")
		for i, p := range ps {
			if p == nil {
				continue
			}
			if d, ok := p.CrawlDelay(); !ok || d != 2*time.Second || p.Check(priv).Allowed {
				t.Errorf("resolver %d: %s, delay %v", i, p, d)
			}
		}
	})
}

// TestStoreDeadFetchHolder: a fetch lock whose holder died (set by hand,
// never renewed) holds the others until its lease ends, not longer; then
// one of them fetches.
func TestStoreDeadFetchHolder(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		site := newRobotsSite(t, "User-agent: *\nDisallow: /private\n", 0)
		fleets := []*Fleet{newFleet(t, srv), newFleet(t, srv), newFleet(t, srv)}
		u, _ := url.Parse(site.URL + "/")
		auth, _ := policy.Authority(u)
		const lease = time.Second
		start := time.Now()
		key := fleets[0].key(kindFetch, dialect.RFC9309.Name()+" "+auth)
		if err := newClient(t, srv).Set(context.Background(), key, "dead-holder", lease).Err(); err != nil {
			t.Fatal(err)
		}
		resolveAtOnce(t, fleets, site.URL+"/")
		if n := site.robots.Load(); n != 1 {
			t.Fatalf("after a dead holder's lease: %d fetches, want 1", n)
		}
		if el := time.Since(start); el < lease-5*time.Millisecond {
			t.Fatalf("fetched %v after a dead holder took the lock, before its %v lease ended", el, lease)
		}
	})
}

// TestStoreLockRenewed: a live holder keeps its lock past the lease (it
// renews it), and its unlock wakes a waiter of another handle at once.
func TestStoreLockRenewed(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a, b := newFleet(t, srv), newFleet(t, srv)
	ctx := context.Background()
	// Renewed every third of the lease: after 2 leases it is held only if
	// renewed.
	const lease = 1500 * time.Millisecond
	unlock, ok, err := a.Store().LockFetch(ctx, "k", lease)
	if !ok || err != nil {
		t.Fatalf("LockFetch: %v %v", ok, err)
	}
	time.Sleep(2 * lease)
	if _, ok, _ := b.Store().LockFetch(ctx, "k", time.Second); ok {
		t.Fatal("a live holder lost its lock after its lease: not renewed")
	}
	done := make(chan time.Time, 1)
	go func() {
		if err := b.Store().WaitFetch(ctx, "k"); err != nil {
			t.Error(err)
		}
		done <- time.Now()
	}()
	time.Sleep(100 * time.Millisecond)
	at := time.Now()
	unlock()
	woke := <-done
	if woke.Before(at) {
		t.Fatal("WaitFetch returned while the lock was held")
	}
	if _, ok, _ := b.Store().LockFetch(ctx, "k", time.Second); !ok {
		t.Fatal("an unlocked key could not be locked")
	}
}

// TestStoreRedisDown: with Redis gone, Get and Put fail with
// ErrUnavailable, and a resolver on the Store still gets its policy by
// fetching.
func TestStoreRedisDown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	f := newFleet(t, srv, Config{CallTimeout: time.Second})
	site := newRobotsSite(t, "User-agent: *\nDisallow: /private\n", 0)
	srv.Stop()
	ctx := context.Background()
	if _, _, err := f.Store().Get(ctx, "k"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Get with Redis down: %v", err)
	}
	if err := f.Store().Put(ctx, "k", []byte("v"), time.Minute); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Put with Redis down: %v", err)
	}
	r, err := policy.NewResolver(policy.WithStore(f.Store()), policy.WithStoreTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(site.URL + "/private")
	v, err := r.Check(ctx, u)
	if err != nil || v.Allowed {
		t.Fatalf("resolver with Redis down: %v, %v", v, err)
	}
	if site.robots.Load() != 1 {
		t.Fatalf("robots.txt fetched %d times", site.robots.Load())
	}
}

// TestStoreStaleRead: a value a pop read more than policyFresh ago does
// not answer the Store's Get: Redis's value does.
func TestStoreStaleRead(t *testing.T) {
	ctx := context.Background()
	f := newFleet(t, redistest.Start(t))
	s := f.Store()
	key := dialect.RFC9309.Name() + " http://a.example"
	if err := s.Put(ctx, key, []byte("payload a"), time.Minute); err != nil {
		t.Fatal(err)
	}
	f.pols.Keep(key, "robots-policy/v2\nstale")
	f.pols.mu.Lock()
	r := f.pols.m[key]
	r.at = r.at.Add(-policyFresh)
	f.pols.m[key] = r
	f.pols.mu.Unlock()
	if v, ok, err := s.Get(ctx, key); !ok || err != nil || string(v) != "payload a" {
		t.Fatalf("Get after a stale read = %q, %v, %v; want Redis's value", v, ok, err)
	}
	// A fresh one does, once.
	f.pols.Keep(key, "robots-policy/v2\nfresh")
	if v, ok, err := s.Get(ctx, key); !ok || err != nil || string(v) != "fresh" {
		t.Fatalf("Get after a fresh read = %q, %v, %v; want the value read", v, ok, err)
	}
	if v, _, _ := s.Get(ctx, key); string(v) != "payload a" {
		t.Fatalf("second Get after a fresh read = %q; want Redis's value", v)
	}
}
