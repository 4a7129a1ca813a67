package redisfleet

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

// A key of the fleet that vanishes anyway (evicted under Config.Eviction,
// deleted) never yields a gap shorter than the Crawl-delay, never strands a
// host and never loses a URL silently. These tests delete one kind of key
// at a time at the moment it matters and check the three promises on the
// server's side (the crawls with a frontier: package fleetfrontier's).

// vanishSite is a server whose request for /held blocks for a second
// while another limiter asks for the host (the test deletes keys
// meanwhile); it records every request's span.
type vanishSite struct {
	*httptest.Server
	first   chan struct{} // closed when /held arrives
	inside  func()        // run inside /held, before it blocks
	mu      sync.Mutex
	visits  []visit
	in, max int
}

func newVanishSite(t *testing.T, inside func()) *vanishSite {
	s := &vanishSite{first: make(chan struct{}), inside: inside}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.mu.Lock()
		n := len(s.visits)
		s.visits = append(s.visits, visit{start: start})
		s.in++
		s.max = max(s.max, s.in)
		s.mu.Unlock()
		if r.URL.Path == "/held" {
			s.inside()
			close(s.first)
			time.Sleep(time.Second) // the other limiter asks meanwhile
		}
		w.Write([]byte("body"))
		w.(http.Flusher).Flush()
		end := time.Now()
		s.mu.Lock()
		s.visits[n].end = end
		s.in--
		s.mu.Unlock()
	}))
	t.Cleanup(s.Close)
	return s
}

// limiterKeys names the limiter's keys of one host (and its partition's)
// by kind.
func limiterKeys(f *Fleet, host string) map[string]string {
	p := f.part(host)
	return map[string]string{
		"host":  f.key(kindHost, host),
		"hold":  f.key(kindHold, host),
		"wait":  f.key(kindWait, host),
		"early": f.key(kindEarly, host),
		"seen":  f.key(kindSeen, host),
		"epoch": f.pkey(p, kindEpoch),
		"pace":  f.pkey(p, kindPace),
	}
}

// TestLimiterKeyVanishes: one limiter sends a request to a host (in flight
// for a second), another asks for the host while it is in flight, or just
// after its release; the keys named by a case are deleted while the first
// request is in flight ("inflight") or just after its release
// ("released"), before the second asks. The server never sees two requests at once nor a
// gap under the delay, and the second request is granted (no host
// stranded). A host whose state is missing while a permit is out is held
// until the permit's release, or its lease's end plus the delay: at most a
// lease, as after a restart.
func TestLimiterKeyVanishes(t *testing.T) {
	all := []string{"host", "hold", "wait", "early", "seen", "epoch", "pace"}
	cases := []struct {
		keys     []string
		released bool // deleted just after the first request's release (else while it is in flight)
	}{
		{keys: []string{"host"}, released: true},
		{keys: []string{"host"}},
		{keys: []string{"hold"}},
		{keys: []string{"host", "hold"}},
		{keys: []string{"host", "hold"}, released: true},
		{keys: []string{"epoch"}},
		{keys: []string{"epoch"}, released: true},
		{keys: []string{"pace"}},
		{keys: []string{"pace"}, released: true},
		{keys: []string{"pace", "host"}, released: true},
		{keys: []string{"wait", "early", "seen"}},
		{keys: all},
		{keys: all, released: true},
	}
	const d = 300 * time.Millisecond
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		for i, tc := range cases {
			name := strings.Join(tc.keys, "+") + map[bool]string{true: " released", false: " inflight"}[tc.released]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				cfg := Config{Prefix: fmt.Sprintf("vanish%d:", i), Lease: 3 * time.Second, CallTimeout: time.Second}
				f1, f2 := newFleet(t, srv, cfg), newFleet(t, srv, cfg)
				l1, l2 := f1.Limiter(LimiterConfig{}), f2.Limiter(LimiterConfig{})
				rdb := redistest.Client(t, srv, 3)
				var host string
				del := func() {
					keys := limiterKeys(f1, host)
					for _, k := range tc.keys {
						if err := rdb.Del(context.Background(), keys[k]).Err(); err != nil {
							t.Errorf("DEL %s: %v", keys[k], err)
						}
					}
				}
				s := newVanishSite(t, func() {
					if !tc.released {
						del()
					}
				})
				host = "http://" + s.Listener.Addr().String()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				// A first request to the host from each limiter, so that its
				// state exists and both know the partition (a process that
				// never saw it cannot tell a loss of all its keys from a
				// fresh start: see the package doc), then the two that the
				// test is about.
				for _, l := range []*Limiter{l1, l2} {
					if _, err := get(ctx, l, host, s.URL+"/warm", d); err != nil {
						t.Fatal(err)
					}
				}
				s.mu.Lock()
				s.visits = nil
				s.mu.Unlock()
				errs := make(chan error, 2)
				released := make(chan struct{})
				go func() {
					_, err := get(ctx, l1, host, s.URL+"/held", d)
					if tc.released {
						del()
					}
					close(released)
					errs <- err
				}()
				// The second request: asked while the first is in flight,
				// or, when the keys vanish after its release, just after.
				wait := s.first
				if tc.released {
					wait = released
				}
				select {
				case <-wait:
				case <-ctx.Done():
					t.Fatal("the first request never ended")
				}
				start := time.Now()
				go func() {
					_, err := get(ctx, l2, host, s.URL+"/next", d)
					errs <- err
				}()
				for range 2 {
					if err := <-errs; err != nil {
						t.Fatalf("a request never got its turn (host stranded): %v", err)
					}
				}
				s.mu.Lock()
				v := append([]visit(nil), s.visits...)
				maxIn := s.max
				s.mu.Unlock()
				sort.Slice(v, func(i, j int) bool { return v[i].start.Before(v[j].start) })
				if len(v) != 2 {
					t.Fatalf("the server saw %d requests, want 2", len(v))
				}
				if maxIn > 1 {
					t.Fatalf("two requests to the host at once after %s vanished", name)
				}
				g := v[1].start.Sub(v[0].end)
				t.Logf("gap %v for a delay of %v; the second request waited %v", g.Round(time.Millisecond), d, time.Since(start).Round(time.Millisecond))
				if g < d-jitterE2S {
					t.Fatalf("gap %v under the delay %v after %s vanished", g, d, name)
				}
				// Held at most a lease (3 s) past the release, plus the
				// delay and the call timeouts of a loaded machine: not
				// stranded.
				if g > 10*time.Second {
					t.Fatalf("the host was held %v after the release: more than a lease", g)
				}
			})
		}
	})
}
