package redisfleet

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/internal/testutil"
)

// TestFrontierBatching: with WithBatching, AddRequest keeps the links in
// memory (nothing reaches Redis: another process counts none of them)
// until the next Done writes them in the same pipeline, links first; a
// link seen before is dropped then and counted; QueueSize answers from
// what the process knows while that is non-zero; the timer writes links
// kept by a process that reports nothing done.
func TestFrontierBatching(t *testing.T) {
	testutil.CheckGoroutines(t)
	forBackends(t, func(t *testing.T, srv backend) {
		p1 := frOpen(t, frFleet(t, srv), WithMaxWait(100*time.Millisecond), WithBatching(time.Hour))
		p2 := frOpen(t, frFleet(t, srv), WithMaxWait(100*time.Millisecond))
		if err := p1.AddRequest(testutil.CollyRequest(t, "http://a.example/1")); err != nil {
			t.Fatal(err)
		}
		if err := p1.AddRequest([]byte("junk")); !errors.Is(err, frontier.ErrBadRequest) {
			t.Fatalf("junk: %v", err)
		}
		if n := frSize(t, p2); n != 0 {
			t.Fatalf("another process counts %d requests, want 0 (kept by p1)", n)
		}
		if n := frSize(t, p1); n != 1 {
			t.Fatalf("QueueSize of the process that keeps one = %d, want 1", n)
		}
		u, lease := frGet(t, p1) // nothing out here: GetRequest writes what is kept
		if u != "http://a.example/1" {
			t.Fatalf("got %s", u)
		}
		for _, u := range []string{"http://a.example/2", "http://b.example/1", "http://a.example/1"} {
			if err := p1.AddRequest(testutil.CollyRequest(t, u)); err != nil {
				t.Fatalf("%s: %v (a kept request is never refused)", u, err)
			}
		}
		if n := frSize(t, p2); n != 1 {
			t.Fatalf("another process counts %d, want 1 (a/1 out; the links kept)", n)
		}
		p1.Done(lease) // the links, then the done report
		if n := frSize(t, p2); n != 2 {
			t.Fatalf("after Done another process counts %d, want 2 (a/2, b/1)", n)
		}
		if st := p1.Stats(); st.Added != 3 || st.Seen != 1 || st.Pending != 0 || st.Done != 1 {
			t.Fatalf("stats %+v, want 3 added, 1 seen, none pending, 1 done", st)
		}

		p3 := frOpen(t, frFleet(t, srv), WithMaxWait(100*time.Millisecond), WithBatching(200*time.Millisecond))
		if err := p3.AddRequest(testutil.CollyRequest(t, "http://c.example/1")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, "the kept link written by the timer", func() bool { return frSize(t, p2) == 3 })
	})
}

// TestFrontierWakesOne: an event that makes a host ready wakes one of
// the processes waiting on the partition, on its own channel; the others
// hear nothing.
func TestFrontierWakesOne(t *testing.T) {
	testutil.CheckGoroutines(t)
	forBackends(t, func(t *testing.T, srv backend) {
		var fs []*Fleet
		for range 3 {
			f := frFleet(t, srv)
			fs = append(fs, f)
			q := frOpen(t, f, WithMaxWait(time.Minute))
			// Nothing queued or out anywhere: ErrEmpty at once, after
			// pops that register the process as waiting for a minute.
			if _, err := q.GetRequest(); !errors.Is(err, frontier.ErrEmpty) {
				t.Fatal(err)
			}
		}
		adder := frOpen(t, frFleet(t, srv))
		if err := adder.AddRequest(testutil.CollyRequest(t, "http://a.example/1")); err != nil {
			t.Fatal(err)
		}
		// A marker on the partition's channel, heard by all three after
		// any earlier message of that channel (one connection per
		// partition's slot, dispatched in order).
		p := fs[0].part("http://a.example")
		var marks []chan int64
		for _, f := range fs {
			c, cancel := f.subscribe(context.Background(), p, "marker", "")
			t.Cleanup(cancel)
			marks = append(marks, c)
		}
		if f := fs[0]; f.cluster {
			f.rdb.SPublish(context.Background(), f.pkey(p, kindWake), "marker")
		} else {
			f.rdb.Publish(context.Background(), f.pkey(p, kindWake), "marker")
		}
		heard := int64(0)
		for i, c := range marks {
			select {
			case <-c:
			case <-time.After(10 * time.Second):
				t.Fatal("marker not heard")
			}
			heard += fs[i].WakeupsHeard() - 1
		}
		if heard != 1 {
			t.Fatalf("%d wake-ups heard by the three waiting processes, want 1", heard)
		}
	})
}

// callCount is a go-redis hook counting the commands and pipelines sent.
type callCount struct{ n atomic.Int64 }

func (*callCount) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *callCount) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.n.Add(1); return next(ctx, cmd) }
}
func (c *callCount) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.n.Add(1); return next(ctx, cmds) }
}

// TestFrontierReadyAnswersWait: the limiter's early wait for a host whose
// request the frontier just handed out as ready costs no Redis call, once;
// a second early wait asks Redis, and Acquire always does.
func TestFrontierReadyAnswersWait(t *testing.T) {
	testutil.CheckGoroutines(t)
	forBackends(t, func(t *testing.T, srv backend) {
		var calls callCount
		c := client(t, srv, -1)
		c.AddHook(&calls)
		f, err := New(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		f.fresh = time.Hour // the machine's load decides nothing
		q := frOpen(t, f, WithMaxWait(100*time.Millisecond))
		lim := f.Limiter(LimiterConfig{})
		if err := q.AddRequest(testutil.CollyRequest(t, "http://a.example/1")); err != nil {
			t.Fatal(err)
		}
		u, _ := frGet(t, q)
		host := u[:len("http://a.example")]
		before := calls.n.Load()
		if _, err := lim.WaitMax(context.Background(), host, 0, -1); err != nil {
			t.Fatal(err)
		}
		if n := calls.n.Load() - before; n != 0 {
			t.Fatalf("the early wait after the pop made %d Redis calls, want 0", n)
		}
		if _, err := lim.WaitMax(context.Background(), host, 0, -1); err != nil {
			t.Fatal(err)
		}
		if n := calls.n.Load() - before; n == 0 {
			t.Fatal("a second early wait asked nothing of Redis: the pop's finding answers one wait only")
		}
		before = calls.n.Load()
		p, err := lim.Acquire(context.Background(), host, 0)
		if err != nil {
			t.Fatal(err)
		}
		p.Release()
		if n := calls.n.Load() - before; n == 0 {
			t.Fatal("Acquire asked nothing of Redis")
		}
	})
}
