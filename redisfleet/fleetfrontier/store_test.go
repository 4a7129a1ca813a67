package fleetfrontier

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/link"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// TestStoreGetAnsweredByPop: the frontier's pop that hands out a request
// of a host reads the host's stored policy in its script (the policy's
// key is in the host's partition), and the Store's next Get of it in this
// process costs no round trip, a miss as well as a hit; once: the Get
// after it asks Redis, and so does a Get of a value too large for the
// pops to read (8 KiB or more).
func TestStoreGetAnsweredByPop(t *testing.T) {
	testutil.CheckGoroutines(t)
	redistest.ForBackends(t, func(t *testing.T, srv redistest.Backend) {
		ctx := context.Background()
		f := frFleet(t, srv, redisfleet.Config{Lease: time.Hour}) // no renewal tick in the counts
		var log tripLog
		link.Of(f).Client().AddHook(&log)
		s := f.Store()
		q := frOpen(t, f, Config{MaxWait: time.Second})
		key := func(host string) string { return dialect.RFC9309.Name() + " " + host }
		// Before the Store has seen a key, the pops read no policy.
		if _, ok, err := s.Get(ctx, key("http://z.example")); ok || err != nil {
			t.Fatalf("Get on an empty Redis: %v, %v", ok, err)
		}
		if err := s.Put(ctx, key("http://a.example"), []byte("payload a"), time.Minute); err != nil {
			t.Fatal(err)
		}
		big := strings.Repeat("x", 8<<10) // the pops read values under 8 KiB
		if err := s.Put(ctx, key("http://c.example"), []byte(big), time.Minute); err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{"http://a.example/1", "http://b.example/1", "http://c.example/1"} {
			if err := q.AddRequest(testutil.CollyRequest(t, u)); err != nil {
				t.Fatal(err)
			}
		}
		for range 3 {
			u, lease := grantGet(t, q)
			host := u[:len("http://a.example")]
			log.take()
			v, ok, err := s.Get(ctx, key(host))
			trips := log.take()
			if want := []string{}; host == "http://c.example" {
				if !slices.Equal(trips, []string{"get"}) {
					t.Fatalf("Get of a value too large for the pop made round trips %v, want [get]", trips)
				}
			} else if !slices.Equal(trips, want) {
				t.Fatalf("%s: Get after the pop made round trips %v, want none", host, trips)
			}
			switch {
			case err != nil:
				t.Fatal(err)
			case host == "http://a.example" && (!ok || string(v) != "payload a"):
				t.Fatalf("Get(a) = %q, %v; want the stored payload", v, ok)
			case host == "http://b.example" && ok:
				t.Fatalf("Get(b) = %q: want a miss (nothing stored)", v)
			case host == "http://c.example" && (!ok || string(v) != big):
				t.Fatalf("Get(c): %d bytes, %v; want the stored %d", len(v), ok, len(big))
			}
			if _, _, err := s.Get(ctx, key(host)); err != nil {
				t.Fatal(err)
			}
			if trips := log.take(); !slices.Equal(trips, []string{"get"}) {
				t.Fatalf("%s: second Get made round trips %v, want [get]", host, trips)
			}
			q.Done(lease)
		}
	})
}
