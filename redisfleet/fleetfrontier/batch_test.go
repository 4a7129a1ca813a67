package fleetfrontier

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/link"
	"github.com/politecrawl/robots/redisfleet/internal/lua"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// TestFrontierBatching: with Config.Batching, AddRequest keeps the links in
// memory (nothing reaches Redis: another process counts none of them)
// until the next Done writes them in the same pipeline, links first; a
// link seen before is dropped then and counted; QueueSize answers from
// what the process knows while that is non-zero; the timer writes links
// kept by a process that reports nothing done.
func TestFrontierBatching(t *testing.T) {
	testutil.CheckGoroutines(t)
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		p1 := frOpen(t, frFleet(t, srv), Config{MaxWait: 100 * time.Millisecond, Batching: time.Hour})
		p2 := frOpen(t, frFleet(t, srv), Config{MaxWait: 100 * time.Millisecond})
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
		p1.Done(lease) // the links, then the done report (with the next pop, or after its linger)
		redistest.WaitFor(t, 10*time.Second, "the links written with the done report", func() bool { return frSize(t, p2) == 2 })
		if st := p1.Stats(); st.Added != 3 || st.Seen != 1 || st.Pending != 0 || st.Done != 1 {
			t.Fatalf("stats %+v, want 3 added, 1 seen, none pending, 1 done", st)
		}

		p3 := frOpen(t, frFleet(t, srv), Config{MaxWait: 100 * time.Millisecond, Batching: 200 * time.Millisecond})
		if err := p3.AddRequest(testutil.CollyRequest(t, "http://c.example/1")); err != nil {
			t.Fatal(err)
		}
		redistest.WaitFor(t, 10*time.Second, "the kept link written by the timer", func() bool { return frSize(t, p2) == 3 })
	})
}

// tripLog is a go-redis hook recording each round trip: the frontier's
// scripts by name (add, pop, done), other commands by name, a pipeline as
// "pipe(" its calls joined by "+" ")".
type tripLog struct {
	mu    sync.Mutex
	trips []string
}

func (*tripLog) DialHook(next redis.DialHook) redis.DialHook { return next }

func (l *tripLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		l.add(tripName(cmd))
		return next(ctx, cmd)
	}
}

func (l *tripLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var names []string
		for _, c := range cmds {
			names = append(names, tripName(c))
		}
		l.add("pipe(" + strings.Join(names, "+") + ")")
		return next(ctx, cmds)
	}
}

func (l *tripLog) add(s string) {
	l.mu.Lock()
	l.trips = append(l.trips, s)
	l.mu.Unlock()
}

// take returns the round trips recorded since the last take.
func (l *tripLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.trips
	l.trips = nil
	return out
}

func tripName(c redis.Cmder) string {
	if a := c.Args(); len(a) > 1 && c.Name() == "evalsha" {
		switch a[1] {
		case lua.FrontierAdd.Hash():
			return "add"
		case lua.FrontierPop.Hash():
			return "pop"
		case lua.FrontierDone.Hash():
			return "done"
		}
	}
	return c.Name()
}

// TestFrontierDoneRidesPop: with Config.Batching, Done sends nothing: the
// done report waits for this process's next pop and goes first in its
// pipeline, one round trip for both, so that the host it frees is handed
// out by that very pop (PerHost 1). A done report no pop follows is
// written by its timer; QueueSize, when it asks Redis, and Close write one
// kept first.
func TestFrontierDoneRidesPop(t *testing.T) {
	testutil.CheckGoroutines(t)
	redistest.ForBackends(t, func(t *testing.T, srv redistest.Backend) {
		ctx := context.Background()
		f := frFleet(t, srv, redisfleet.Config{Lease: time.Hour}) // no renewal tick (a flush, a renewal) in the counts
		var log tripLog
		rdbOf(f).AddHook(&log)
		for _, s := range []*redis.Script{lua.FrontierAdd, lua.FrontierPop, lua.FrontierDone} {
			if err := s.Load(ctx, rdbOf(f)).Err(); err != nil { // no NOSCRIPT fallback in the counts
				t.Fatal(err)
			}
		}
		q := frOpen(t, f, Config{MaxWait: time.Second, Batching: time.Hour})
		q.cfg.linger = time.Hour // only a pop, QueueSize or Close writes a done report here
		for _, u := range []string{"http://a.example/1", "http://a.example/2", "http://a.example/3"} {
			if err := q.AddRequest(testutil.CollyRequest(t, u)); err != nil {
				t.Fatal(err)
			}
		}
		u, lease := grantGet(t, q)
		if u != "http://a.example/1" {
			t.Fatalf("got %s, want a/1", u)
		}
		p := link.Of(f).Part("http://a.example")
		leased := func() int64 {
			t.Helper()
			n, err := rdbOf(f).HGet(ctx, q.parts[p].keys[1], "l").Int64()
			if err != nil && !errors.Is(err, redis.Nil) {
				t.Fatal(err)
			}
			return n
		}
		log.take()
		q.Done(lease)
		if trips := log.take(); len(trips) != 0 {
			t.Fatalf("Done made round trips %v, want none (kept for the next pop)", trips)
		}
		if n := leased(); n != 1 {
			t.Fatalf("%d leased in Redis after Done, want 1 (the report kept)", n)
		}
		// The partition of a.example is the one worth a look now (as after
		// a wake-up), the others not before an hour.
		q.mu.Lock()
		for i := range q.parts {
			q.st.parts[i].look = time.Now().Add(time.Hour)
		}
		q.st.parts[p].look = time.Time{}
		q.mu.Unlock()
		log.take()
		b, err := q.GetRequest()
		if err != nil {
			t.Fatalf("GetRequest: %v", err)
		}
		if u, lease = frRead(t, b); u != "http://a.example/2" {
			t.Fatalf("got %s, want a/2 (its host freed by the done report in the pop's pipeline)", u)
		}
		if trips := log.take(); !slices.Equal(trips, []string{"pipe(done+pop)"}) {
			t.Fatalf("round trips of the GetRequest after Done: %v, want [pipe(done+pop)]", trips)
		}
		if n := leased(); n != 1 {
			t.Fatalf("%d leased in Redis, want 1 (a/1 done, a/2 out)", n)
		}

		// QueueSize asking Redis writes the kept report before it counts.
		q.Done(lease)
		q.mu.Lock()
		q.askSize = true
		q.mu.Unlock()
		if n := frSize(t, q); n != 1 {
			t.Fatalf("QueueSize = %d, want 1 (a/3 queued, a/2 done)", n)
		}
		u, lease = grantGet(t, q)
		if u != "http://a.example/3" {
			t.Fatalf("got %s, want a/3", u)
		}
		// Close writes the kept report.
		q.Done(lease)
		if n := leased(); n != 1 {
			t.Fatalf("%d leased in Redis after Done, want 1 (the report kept)", n)
		}
		q.Close()
		if n := leased(); n != 0 {
			t.Fatalf("%d leased in Redis after Close, want 0", n)
		}

		// The timer writes a report no pop takes.
		q2 := frOpen(t, f, Config{Name: "timer", MaxWait: time.Second, Batching: time.Hour})
		if err := q2.AddRequest(testutil.CollyRequest(t, "http://a.example/1")); err != nil {
			t.Fatal(err)
		}
		_, lease = grantGet(t, q2)
		q2.Done(lease)
		redistest.WaitFor(t, 10*time.Second, "the done report written by its timer", func() bool {
			n, err := rdbOf(f).HGet(ctx, q2.parts[p].keys[1], "l").Int64()
			return err == nil && n == 0
		})
	})
}

// TestFrontierWakesOne: an event that makes a host ready wakes one of
// the processes waiting on the partition, on its own channel; the others
// hear nothing.
func TestFrontierWakesOne(t *testing.T) {
	testutil.CheckGoroutines(t)
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		var fs []*redisfleet.Fleet
		for range 3 {
			f := frFleet(t, srv)
			fs = append(fs, f)
			q := frOpen(t, f, Config{MaxWait: time.Minute})
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
		p := link.Of(fs[0]).Part("http://a.example")
		var marks []<-chan int64
		for _, f := range fs {
			c, cancel := link.Of(f).Subscribe(context.Background(), p, "marker")
			t.Cleanup(cancel)
			marks = append(marks, c)
		}
		if f := fs[0]; isCluster(f) {
			rdbOf(f).SPublish(context.Background(), keysOf(f).PartKey(p, "wake"), "marker")
		} else {
			rdbOf(f).Publish(context.Background(), keysOf(f).PartKey(p, "wake"), "marker")
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

// TestFrontierReadyAnswersWait: the limiter's early wait for a host whose
// request the frontier just handed out as ready costs no Redis call, once;
// a second early wait asks Redis, and Acquire always does.
func TestFrontierReadyAnswersWait(t *testing.T) {
	testutil.CheckGoroutines(t)
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		var calls redistest.CallCounter
		c := redistest.Client(t, srv, -1)
		c.AddHook(&calls)
		f, err := redisfleet.New(context.Background(), c, redisfleet.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		keysOf(f).SetReadyFresh(time.Hour) // the machine's load decides nothing
		q := frOpen(t, f, Config{MaxWait: 100 * time.Millisecond})
		lim := f.Limiter(redisfleet.LimiterConfig{})
		if err := q.AddRequest(testutil.CollyRequest(t, "http://a.example/1")); err != nil {
			t.Fatal(err)
		}
		u, _ := frGet(t, q)
		host := u[:len("http://a.example")]
		before := calls.N.Load()
		if _, err := lim.WaitMax(context.Background(), host, 0, -1); err != nil {
			t.Fatal(err)
		}
		if n := calls.N.Load() - before; n != 0 {
			t.Fatalf("the early wait after the pop made %d Redis calls, want 0", n)
		}
		if _, err := lim.WaitMax(context.Background(), host, 0, -1); err != nil {
			t.Fatal(err)
		}
		if n := calls.N.Load() - before; n == 0 {
			t.Fatal("a second early wait asked nothing of Redis: the pop's finding answers one wait only")
		}
		before = calls.N.Load()
		p, err := lim.Acquire(context.Background(), host, 0)
		if err != nil {
			t.Fatal(err)
		}
		p.Release()
		if n := calls.N.Load() - before; n == 0 {
			t.Fatal("Acquire asked nothing of Redis")
		}
	})
}
