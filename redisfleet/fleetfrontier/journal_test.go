package fleetfrontier

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/link"
	"github.com/politecrawl/robots/redisfleet/internal/lua"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// TestFrontierJournalPruned: a process's journal drops the requests other
// processes finished, and after Redis comes back empty only the requests
// not done are queued again.
func TestFrontierJournalPruned(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	// A call timeout of 1 s: the first call to the restarted (fresh)
	// Redis dials a new connection, slow on a loaded machine.
	cfg := redisfleet.Config{Lease: 3 * time.Second, CallTimeout: time.Second}
	p1 := frOpen(t, frFleet(t, srv, cfg), Config{MaxWait: 100 * time.Millisecond})
	p2 := frOpen(t, frFleet(t, srv, cfg), Config{MaxWait: 100 * time.Millisecond})
	const n, left = 20, 5
	for i := range n {
		if err := p1.AddRequest(testutil.CollyRequest(t, fmt.Sprintf("http://h%d.example/p", i))); err != nil {
			t.Fatal(err)
		}
	}
	for range n - left {
		_, l := frGet(t, p2)
		p2.Done(l)
	}
	redistest.WaitFor(t, 10*time.Second, "pruned", func() bool { return p1.Stats().Journal == left })
	if st := p1.Stats(); st.Pruned != n-left {
		t.Fatalf("stats %+v, want %d pruned", st, n-left)
	}
	srv.Stop()
	if err := srv.Start(); err != nil { // back, empty
		t.Fatal(err)
	}
	got := frSize(t, p1)
	t.Logf("stats %+v", p1.Stats())
	if got != left {
		t.Fatalf("after Redis came back empty the frontier holds %d requests, want the %d not done", got, left)
	}
	if st := p1.Stats(); st.Recovered != left {
		t.Fatalf("stats %+v, want %d recovered", st, left)
	}
}

// TestFrontierJournalCap: the journal holds at most its cap; the others
// are counted.
func TestFrontierJournalCap(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	p := frOpen(t, frFleet(t, srv), Config{JournalCap: 3})
	for i := range 5 {
		if err := p.AddRequest(testutil.CollyRequest(t, fmt.Sprintf("http://h%d.example/p", i))); err != nil {
			t.Fatal(err)
		}
	}
	if st := p.Stats(); st.Journal != 3 || st.NotJournaled != 2 || st.Added != 5 {
		t.Fatalf("stats %+v, want journal 3, not journaled 2", st)
	}
}

// TestFrontierTTLAndDrop: every key of the frontier carries the TTL, and
// Drop deletes them all.
func TestFrontierTTLAndDrop(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	f := frFleet(t, srv, redisfleet.Config{Prefix: "ttl:"})
	p := frOpen(t, f, Config{TTL: time.Hour, MaxWait: 100 * time.Millisecond})
	for _, u := range []string{"http://a.example/1", "http://a.example/2", "http://b.example/1"} {
		if err := p.AddRequest(testutil.CollyRequest(t, u)); err != nil {
			t.Fatal(err)
		}
	}
	_, l := frGet(t, p)
	p.Done(l)
	ctx := context.Background()
	rdb := rdbOf(f)
	keys, err := rdb.Keys(ctx, keysOf(f).Prefix()+"*fr:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 6 {
		t.Fatalf("keys %v", keys)
	}
	for _, k := range keys {
		ttl, err := rdb.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 0 || ttl > time.Hour {
			t.Errorf("key %s: TTL %v, want (0, 1h]", k, ttl)
		}
	}
	if err := p.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if keys, _ := rdb.Keys(ctx, keysOf(f).Prefix()+"*fr:*").Result(); len(keys) != 0 {
		t.Fatalf("after Drop: %v", keys)
	}
	if n := frSize(t, p); n != 0 {
		t.Fatalf("QueueSize after Drop: %d", n)
	}
}

// TestFrontierDropBothBackends: Drop empties every partition (one
// pipelined script per partition; on a Cluster across the nodes, loading
// the script where it is missing): the queue is empty and a URL seen
// before may be queued again.
func TestFrontierDropBothBackends(t *testing.T) {
	redistest.ForBackends(t, func(t *testing.T, srv redistest.Backend) {
		p := frOpen(t, frFleet(t, srv, redisfleet.Config{Prefix: "drop:"}), Config{MaxWait: 100 * time.Millisecond})
		urls := []string{"http://a.example/1", "http://b.example/1", "http://c.example/1", "http://d.example/1"}
		for _, u := range urls {
			if err := p.AddRequest(testutil.CollyRequest(t, u)); err != nil {
				t.Fatal(err)
			}
		}
		if n := frSize(t, p); n != len(urls) {
			t.Fatalf("QueueSize = %d, want %d", n, len(urls))
		}
		if err := p.Drop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := frSize(t, p); n != 0 {
			t.Fatalf("QueueSize after Drop = %d", n)
		}
		if err := p.AddRequest(testutil.CollyRequest(t, urls[0])); err != nil {
			t.Fatalf("a URL queued again after Drop: %v", err)
		}
		if n := frSize(t, p); n != 1 {
			t.Fatalf("QueueSize = %d, want 1", n)
		}
	})
}

// TestFrontierJournalUnsureAdd: an AddRequest whose call ran in Redis but
// whose reply never came (Redis hung past the call timeout) keeps the
// request and writes it again later; Redis then says it was seen (the
// first call queued it), and the process journals it all the same: no
// other process does, and a Redis that loses its data, or refuses writes
// (its requests reported not crawled), would otherwise lose it silently.
func TestFrontierJournalUnsureAdd(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	px := redistest.NewStallProxy(t, srv.Addr)
	c := redis.NewClient(&redis.Options{Addr: px.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	f, err := redisfleet.New(ctx, c, redisfleet.Config{CallTimeout: time.Second, Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := lua.FrontierAdd.Load(ctx, c).Err(); err != nil { // runs under the stall, no NOSCRIPT
		t.Fatal(err)
	}
	q := frOpen(t, f, Config{MaxWait: 100 * time.Millisecond})
	const u = "http://a.example/1"
	px.Stall(true)
	if err := q.AddRequest(testutil.CollyRequest(t, u)); err != nil {
		t.Fatalf("AddRequest with Redis hung: %v (the request is kept)", err)
	}
	px.Stall(false)
	if st := q.Stats(); st.Pending != 1 || st.Journal != 0 {
		t.Fatalf("after the call timed out: %+v, want the request kept (1 pending), not journaled", st)
	}
	// Queued by the call that timed out on the client.
	raw := redistest.Client(t, srv, 0)
	if n, err := raw.HGet(ctx, q.parts[link.Of(f).Part("http://a.example")].keys[1], "q").Int(); err != nil || n != 1 {
		t.Fatalf("queued in Redis: %d, %v; want 1 (the call ran)", n, err)
	}
	if n := frSize(t, q); n != 1 { // writes the kept request: seen
		t.Fatalf("QueueSize = %d, want 1", n)
	}
	st := q.Stats()
	if st.Pending != 0 || st.Seen != 1 || st.Journal != 1 {
		t.Fatalf("after the request was written again: %+v, want none pending, 1 seen, 1 journaled", st)
	}
}
