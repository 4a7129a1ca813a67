package fleetfrontier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// frFleet returns a Fleet on a client of its own (one "process"), closed
// when t ends.
func frFleet(t testing.TB, srv redistest.Backend, cfg ...redisfleet.Config) *redisfleet.Fleet {
	t.Helper()
	c := redistest.Client(t, srv, -1) // a dead server fails a call at once
	fc := redistest.First(cfg)
	if fc.Logger == nil {
		fc.Logger = slog.New(slog.DiscardHandler)
	}
	f, err := redisfleet.New(context.Background(), c, fc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func frOpen(t testing.TB, f *redisfleet.Fleet, cfg ...Config) *Frontier {
	t.Helper()
	q := New(f, redistest.First(cfg))
	if err := q.Init(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// frGet hands out one request and returns its URL and lease, read by a
// real collector as Colly's loop does.
func frGet(t testing.TB, q *Frontier) (string, string) {
	t.Helper()
	b, err := q.GetRequest()
	if err != nil {
		t.Fatalf("GetRequest: %v", err)
	}
	return frRead(t, b)
}

// frRead reads a request GetRequest handed out as Colly does, and returns
// its URL and lease id.
func frRead(t testing.TB, b []byte) (string, string) {
	t.Helper()
	r, err := colly.NewCollector().UnmarshalRequest(b)
	if err != nil {
		t.Fatalf("Colly cannot read the request: %v", err)
	}
	return r.URL.String(), leaseOf(r.Ctx)
}

// leaseOf returns the lease id the frontier put in a request's context.
func leaseOf(ctx *colly.Context) string {
	s, _ := ctx.GetAny(frontier.LeaseKey).(string)
	return s
}

func frSize(t testing.TB, q *Frontier) int {
	t.Helper()
	n, err := q.QueueSize()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFrontierSharedQueue: two processes share one queue per host, one
// seen set, one request per host out at a time, and QueueSize counts what
// is out anywhere.
func TestFrontierSharedQueue(t *testing.T) {
	testutil.CheckGoroutines(t)
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		p1 := frOpen(t, frFleet(t, srv), Config{MaxWait: 100 * time.Millisecond})
		p2 := frOpen(t, frFleet(t, srv), Config{MaxWait: 100 * time.Millisecond})
		for _, u := range []string{"http://a.example/1", "http://a.example/2", "http://b.example/1"} {
			if err := p1.AddRequest(testutil.CollyRequest(t, u)); err != nil {
				t.Fatal(err)
			}
			if err := p2.AddRequest(testutil.CollyRequest(t, u)); !errors.Is(err, frontier.ErrSeen) {
				t.Fatalf("the second process queued %s again: %v", u, err)
			}
		}
		if err := p2.AddRequest([]byte("junk")); !errors.Is(err, frontier.ErrBadRequest) {
			t.Fatalf("junk: %v", err)
		}
		if n := frSize(t, p2); n != 3 {
			t.Fatalf("QueueSize = %d, want 3", n)
		}
		u1, l1 := frGet(t, p1)
		u2, l2 := frGet(t, p2)
		if u1 == u2 || l1 == "" || l2 == "" || u1[:18] == u2[:18] {
			t.Fatalf("handed out %s and %s: want one of each host", u1, u2)
		}
		// a is out (p1 or p2): a/2 waits for it; after MaxWait it comes out
		// early rather than never.
		if n := frSize(t, p1); n != 3 {
			t.Fatalf("QueueSize with 2 out = %d, want 3", n)
		}
		p1.Done(l1)
		p2.Done(l2)
		u3, l3 := frGet(t, p2)
		if u3 != "http://a.example/2" {
			t.Fatalf("got %s, want http://a.example/2", u3)
		}
		if st := p2.Stats(); st.Early != 0 {
			t.Fatalf("a/2 came out early though a was done: %+v", st)
		}
		if n := frSize(t, p1); n != 1 {
			t.Fatalf("QueueSize = %d, want 1 (one out)", n)
		}
		start := time.Now()
		if _, err := p1.GetRequest(); !errors.Is(err, frontier.ErrEmpty) {
			t.Fatalf("nothing queued, one out elsewhere: %v", err)
		}
		if time.Since(start) < 100*time.Millisecond {
			t.Fatal("GetRequest returned at once while another process works (Colly's loop would spin)")
		}
		p2.Done(l3)
		if n := frSize(t, p1); n != 0 {
			t.Fatalf("QueueSize = %d, want 0", n)
		}
		// An empty fleet: ErrEmpty without waiting for anything (a process
		// with a long MaxWait tells "at once" from "after MaxWait" whatever
		// the machine's load).
		p3 := frOpen(t, frFleet(t, srv), Config{MaxWait: time.Minute})
		start = time.Now()
		if _, err := p3.GetRequest(); !errors.Is(err, frontier.ErrEmpty) || time.Since(start) > 30*time.Second {
			t.Fatalf("empty fleet: %v after %v, want ErrEmpty at once", err, time.Since(start))
		}
	})
}

// TestFrontierReadsLimiter: a host whose fleet limiter holds a permit (or
// whose delay has not passed) is skipped for a ready one, read in the same
// script that pops.
func TestFrontierReadsLimiter(t *testing.T) {
	redistest.ForBackends(t, func(t *testing.T, srv redistest.Backend) {
		fl := frFleet(t, srv)
		q := frOpen(t, fl, Config{MaxWait: 5 * time.Second})
		lim := fl.Limiter(redisfleet.LimiterConfig{})
		ctx := context.Background()
		const delay = 300 * time.Millisecond
		p, err := lim.Acquire(ctx, "http://a.example", delay) // another request to a is in flight
		if err != nil {
			t.Fatal(err)
		}
		q.AddRequest(testutil.CollyRequest(t, "http://a.example/1"))
		q.AddRequest(testutil.CollyRequest(t, "http://b.example/1"))
		if u, _ := frGet(t, q); u != "http://b.example/1" {
			t.Fatalf("got %s while a is held: want b", u)
		}
		released := time.Now()
		p.Release()
		u, _ := frGet(t, q)
		if u != "http://a.example/1" {
			t.Fatalf("got %s", u)
		}
		if w := time.Since(released); w < delay-5*time.Millisecond {
			t.Fatalf("a handed out %v after the release, before its delay %v", w, delay)
		}
		if st := q.Stats(); st.Early != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// TestFrontierNotReady: a host paused far ahead by the fleet limiter (a
// 429 seen by any process) is not handed out; with nothing of this process
// out, GetRequest returns frontier.ErrNotReady after MaxWait; with a
// request of its own out it hands out the soonest instead (a queue thread
// may be waiting to hand it a new request).
func TestFrontierNotReady(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		fl := frFleet(t, srv)
		q := frOpen(t, fl, Config{MaxWait: 100 * time.Millisecond})
		if err := fl.Limiter(redisfleet.LimiterConfig{}).Pause(context.Background(), "http://a.example", time.Hour); err != nil {
			t.Fatal(err)
		}
		q.AddRequest(testutil.CollyRequest(t, "http://a.example/1"))
		q.AddRequest(testutil.CollyRequest(t, "http://a.example/2"))
		start := time.Now()
		if _, err := q.GetRequest(); !errors.Is(err, frontier.ErrNotReady) {
			t.Fatalf("GetRequest = %v, want ErrNotReady", err)
		}
		if time.Since(start) < 100*time.Millisecond {
			t.Fatal("returned before MaxWait")
		}
		q.AddRequest(testutil.CollyRequest(t, "http://b.example/1"))
		_, lb := frGet(t, q) // b is ready; now something of this process is out
		if u, _ := frGet(t, q); u != "http://a.example/1" {
			t.Fatalf("got %s, want a/1 handed out early", u)
		}
		if st := q.Stats(); st.Early != 1 {
			t.Fatalf("stats %+v", st)
		}
		q.Done(lb)
	})
}

// TestFrontierDeadProcess: a process that dies with a request out (its
// leases no longer renewed) loses it to the others after the lease.
func TestFrontierDeadProcess(t *testing.T) {
	testutil.CheckGoroutines(t)
	srv := redistest.Start(t)
	const lease = 3 * time.Second
	dying := New(frFleet(t, srv, redisfleet.Config{Lease: lease, CallTimeout: lease / 3}), Config{MaxWait: 100 * time.Millisecond})
	live := frOpen(t, frFleet(t, srv, redisfleet.Config{Lease: lease, CallTimeout: lease / 3}), Config{MaxWait: 4 * lease})
	dying.AddRequest(testutil.CollyRequest(t, "http://a.example/1"))
	if u, _ := frGet(t, dying); u != "http://a.example/1" {
		t.Fatal(u)
	}
	dying.Close() // stops renewing, as a killed process would
	start := time.Now()
	u, l := frGet(t, live)
	if u != "http://a.example/1" {
		t.Fatalf("got %s", u)
	}
	if time.Since(start) < lease/2 {
		t.Fatal("taken over before the lease ended")
	}
	if st := live.Stats(); st.Reaped != 1 {
		t.Fatalf("stats %+v", st)
	}
	live.Done(l)
	if n := frSize(t, live); n != 0 {
		t.Fatalf("QueueSize = %d", n)
	}
}

// TestFrontierLeaseRenewed: a live process keeps its request past the
// lease.
func TestFrontierLeaseRenewed(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		// The lease is renewed every lease/3: p2 waits out two leases, so a
		// missed renewal would hand it the request.
		const lease = 3 * time.Second
		p1 := frOpen(t, frFleet(t, srv, redisfleet.Config{Lease: lease, CallTimeout: lease / 3}))
		p2 := frOpen(t, frFleet(t, srv, redisfleet.Config{Lease: lease, CallTimeout: lease / 3}), Config{MaxWait: 2 * lease})
		p1.AddRequest(testutil.CollyRequest(t, "http://a.example/1"))
		frGet(t, p1)
		if _, err := p2.GetRequest(); !errors.Is(err, frontier.ErrEmpty) {
			t.Fatalf("the other process got a request that is out: %v", err)
		}
		if st := p2.Stats(); st.Reaped != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// TestFrontierRedisDown: requests queued while Redis is away are kept and
// written when it is back; if it comes back empty, each process queues
// again what it knows.
func TestFrontierRedisDown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	p1 := frOpen(t, frFleet(t, srv, redisfleet.Config{CallTimeout: time.Second}), Config{MaxWait: 200 * time.Millisecond, OutageLimit: time.Second})
	p2 := frOpen(t, frFleet(t, srv, redisfleet.Config{CallTimeout: time.Second}), Config{MaxWait: 200 * time.Millisecond})
	p1.AddRequest(testutil.CollyRequest(t, "http://a.example/1"))
	_, la := frGet(t, p2) // a: out at p2 while Redis is lost
	p2.AddRequest(testutil.CollyRequest(t, "http://b.example/1"))
	srv.Stop()
	if err := p1.AddRequest(testutil.CollyRequest(t, "http://c.example/1")); err != nil {
		t.Fatalf("AddRequest while Redis is away: %v (want it kept)", err)
	}
	if st := p1.Stats(); st.Pending != 1 {
		t.Fatalf("stats %+v", st)
	}
	if _, err := p1.QueueSize(); !errors.Is(err, redisfleet.ErrUnavailable) {
		t.Fatalf("QueueSize after the outage limit: %v", err)
	}
	if err := srv.Start(); err != nil { // back, empty
		t.Fatal(err)
	}
	p2.Done(la) // notices the loss: queues b again (its journal)
	// p1 notices it too: c (kept) and a (its journal: p1 cannot know
	// that p2 fetched it) come back. Nothing is lost; a is fetched twice.
	got := map[string]bool{}
	for frSize(t, p1) > 0 {
		u, l := frGet(t, p1)
		got[u] = true
		p1.Done(l)
	}
	if !got["http://b.example/1"] || !got["http://c.example/1"] {
		t.Fatalf("after the restart got %v, want b and c (a may come again)", got)
	}
	if st := p1.Stats(); st.Recovered < 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestFrontierColly runs real Colly queues in two processes' worth of
// Fleets over one Redis: every URL once, and both runs end.
func TestFrontierColly(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		var fetched = make(chan string, 100)
		run := func(q *Frontier) error {
			c := colly.NewCollector()
			c.WithTransport(frRoundTrip(func(r *http.Request) (*http.Response, error) {
				fetched <- r.URL.String()
				return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/html"}},
					Body: io.NopCloser(strings.NewReader("<html></html>")), Request: r}, nil
			}))
			robots.AttachFrontier(c, q)
			qq, err := queue.New(2, q)
			if err != nil {
				return err
			}
			for i := range 10 {
				qq.AddURL(fmt.Sprintf("http://h%d.example/p", i%3) + fmt.Sprint(i))
			}
			return qq.Run(c)
		}
		errs := make(chan error, 2)
		for range 2 {
			q := frOpen(t, frFleet(t, srv))
			go func() { errs <- run(q) }()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		close(fetched)
		seen := map[string]int{}
		for u := range fetched {
			seen[u]++
		}
		if len(seen) != 10 {
			t.Fatalf("fetched %d distinct URLs, want 10: %v", len(seen), seen)
		}
		for u, n := range seen {
			if n != 1 {
				t.Errorf("%s fetched %d times", u, n)
			}
		}
	})
}

type frRoundTrip func(*http.Request) (*http.Response, error)

func (f frRoundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestFrontierInitRedisDown: a frontier started while Redis is away
// subscribes to its partitions' wake-ups all at once, waiting one call
// timeout for them together, not one per partition (16 here).
func TestFrontierInitRedisDown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const callTimeout = 500 * time.Millisecond
	f := frFleet(t, srv, redisfleet.Config{CallTimeout: callTimeout})
	srv.Stop()
	start := time.Now()
	q := New(f, Config{})
	q.Init()
	defer q.Close()
	if el := time.Since(start); el > 8*callTimeout {
		t.Fatalf("Init with Redis away took %v (call timeout %v, %d partitions)", el, callTimeout, len(q.parts))
	}
}

// TestFrontierGetRequestRedisHung: while Redis hangs, GetRequest returns
// after about MaxWait and a call timeout, not a call timeout per
// partition.
func TestFrontierGetRequestRedisHung(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const callTimeout = 500 * time.Millisecond
	q := frOpen(t, frFleet(t, srv, redisfleet.Config{CallTimeout: callTimeout}), Config{MaxWait: 200 * time.Millisecond})
	if err := q.AddRequest(testutil.CollyRequest(t, "http://a.example/1")); err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	defer srv.Resume()
	start := time.Now()
	if _, err := q.GetRequest(); !errors.Is(err, redisfleet.ErrUnavailable) {
		t.Fatalf("GetRequest with Redis hung: %v", err)
	}
	if el := time.Since(start); el > 8*callTimeout {
		t.Fatalf("GetRequest with Redis hung took %v (call timeout %v, %d partitions)", el, callTimeout, len(q.parts))
	}
}

// TestFrontierFIFOAndPutBack: a host's requests come out in the order
// queued, and a request put back (here: its pop abandoned, as after a
// Redis hang) comes out first again, on both backends.
func TestFrontierFIFOAndPutBack(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		q := frOpen(t, frFleet(t, srv), Config{MaxWait: 100 * time.Millisecond})
		for i := 1; i <= 3; i++ {
			if err := q.AddRequest(testutil.CollyRequest(t, fmt.Sprintf("http://a.example/%d", i))); err != nil {
				t.Fatal(err)
			}
		}
		u, l := frGet(t, q)
		if u != "http://a.example/1" {
			t.Fatalf("first out %s", u)
		}
		// Forget the lease as a pop that timed out would; the next pop puts
		// its request back at the head of the host's queue.
		p := q.fl.Part("http://a.example")
		q.mu.Lock()
		delete(q.st.own, l)
		q.st.parts[p].abandoned[l] = time.Time{}
		q.mu.Unlock()
		var got []string
		for range 3 {
			u, l := frGet(t, q)
			got = append(got, u)
			q.Done(l)
		}
		if want := "http://a.example/1 http://a.example/2 http://a.example/3"; strings.Join(got, " ") != want {
			t.Fatalf("handed out %v, want %s", got, want)
		}
		if n := frSize(t, q); n != 0 {
			t.Fatalf("QueueSize = %d, want 0", n)
		}
	})
}

// TestFrontierDoneScoresReadyTime: a done report puts its host back at
// the time its limiter state makes it ready, so a pop never looks at the
// hosts that are done but not ready yet: 200 hosts in
// one partition, all handed out, then each done after its request at a
// delay of an hour; GetRequest learns that none is ready in one pop (looking at them would
// take one pop per 32 hosts). A host whose delay ends is handed out then.
func TestFrontierDoneScoresReadyTime(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		fl := frFleet(t, srv, redisfleet.Config{Partitions: 1})
		var pops popCounter
		rdbOf(fl).AddHook(&pops)
		q := frOpen(t, fl, Config{MaxWait: 5 * time.Second})
		lim := fl.Limiter(redisfleet.LimiterConfig{})
		ctx := context.Background()
		const n = 200
		for h := range n {
			for j := range 2 {
				if err := q.AddRequest(testutil.CollyRequest(t, fmt.Sprintf("http://h%d.example/p%d", h, j))); err != nil {
					t.Fatal(err)
				}
			}
		}
		leases := map[string]string{}
		for range n {
			u, lease := frGet(t, q)
			leases[u[:strings.LastIndexByte(u, '/')]] = lease
		}
		for host, lease := range leases {
			delay := time.Hour
			if host == "http://h99.example" {
				delay = time.Second // the one host that is ready again soon
			}
			p, err := lim.Acquire(ctx, host, delay)
			if err != nil {
				t.Fatal(err)
			}
			p.Release()
			q.Done(lease)
		}
		pops.n.Store(0)
		u, lease := frGet(t, q)
		if u != "http://h99.example/p1" {
			t.Fatalf("got %s, want h99 second page", u)
		}
		// One pop finds nothing ready and names the host's time; one more
		// at that time hands it out (a wake-up may add one).
		if got := pops.n.Load(); got > 3 {
			t.Fatalf("%d pops to hand out the one ready host of %d: the pops looked at hosts that were not ready", got, n)
		}
		q.Done(lease)
	})
}

// TestFrontierLookerDies: when a host is due, one waiting process looks
// and the others wait for an event; if that process dies first, another
// looks within its MaxWait, so the host is not stranded. Process A waits
// for the host's time (2 s away) and dies (its Redis client closes) before
// it; process B, which registered behind A, hands the request out at its
// MaxWait.
func TestFrontierLookerDies(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		flA, flB := frFleet(t, srv, redisfleet.Config{Partitions: 1}), frFleet(t, srv, redisfleet.Config{Partitions: 1})
		var popsA popCounter
		rdbOf(flA).AddHook(&popsA)
		a := frOpen(t, flA, Config{MaxWait: 5 * time.Second})
		b := frOpen(t, flB, Config{MaxWait: 4 * time.Second})
		ctx := context.Background()
		const host = "http://a.example"
		p, err := flB.Limiter(redisfleet.LimiterConfig{}).Acquire(ctx, host, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		p.Release()
		if err := a.AddRequest(testutil.CollyRequest(t, host+"/1")); err != nil {
			t.Fatal(err)
		}
		aDone := make(chan error, 1)
		go func() {
			_, err := a.GetRequest()
			aDone <- err
		}()
		// A has popped and registered to look at the host's time.
		for popsA.n.Load() == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		rdbOf(flA).Close()      // A dies: it never looks
		u, lease := frGet(t, b) // fails on ErrNotReady: B waited for A
		if u != host+"/1" {
			t.Fatalf("got %s", u)
		}
		b.Done(lease)
		if err := <-aDone; err == nil {
			t.Fatal("the dead process's GetRequest succeeded")
		}
	})
}
