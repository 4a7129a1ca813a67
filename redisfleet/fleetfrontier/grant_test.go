package fleetfrontier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/lua"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// limiterCalls is a go-redis hook recording the limiter's script calls
// ("acq", "rel", "leave"...; renewals left out: their timers run on their
// own) and, for each pipeline that carries any, "pipe:" and the ops and
// "done" for a frontier done report in it.
type limiterCalls struct {
	mu    sync.Mutex
	calls []string
}

func (*limiterCalls) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *limiterCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if op := limiterOp(cmd); op != "" && op != "renew" {
			c.mu.Lock()
			c.calls = append(c.calls, op)
			c.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (c *limiterCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var ops []string
		for _, cmd := range cmds {
			if op := limiterOp(cmd); op != "" {
				ops = append(ops, op)
			} else if a := cmd.Args(); len(a) > 1 && a[1] == lua.FrontierDone.Hash() {
				ops = append(append(ops, doneOps(a)...), "done")
			}
		}
		if len(ops) > 0 {
			c.mu.Lock()
			c.calls = append(c.calls, "pipe:"+strings.Join(ops, "+"))
			c.mu.Unlock()
		}
		return next(ctx, cmds)
	}
}

// doneOps returns the ops of the limiter operations a lua.FrontierDone call
// (its args a) carries.
func doneOps(a []any) []string {
	n, _ := a[2].(int) // evalsha sha n k1..kn token tag pub ttl busyPoll m [k argv...]...
	i := 3 + n + 5
	if i >= len(a) {
		return nil
	}
	m, _ := a[i].(int)
	var ops []string
	for i++; m > 0 && i+1 < len(a); m-- {
		k, _ := a[i].(int)
		op, _ := a[i+1].(string)
		ops = append(ops, op)
		i += 1 + k
	}
	return ops
}

// take returns the calls recorded since the last take.
func (c *limiterCalls) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = nil
	return out
}

// limiterOp returns the op of a lua.Limiter call, or "".
func limiterOp(cmd redis.Cmder) string {
	a := cmd.Args()
	if len(a) < 4 || a[1] != lua.Limiter.Hash() {
		return ""
	}
	n, _ := a[2].(int) // evalsha sha n k1..kn op
	if len(a) <= 3+n {
		return ""
	}
	op, _ := a[3+n].(string)
	return op
}

// grantFleet returns a Fleet whose client records the limiter's calls,
// with a Limiter and a Frontier.
func grantFleet(t *testing.T, srv redistest.Backend) (*redisfleet.Fleet, *redisfleet.Limiter, *Frontier, *limiterCalls) {
	t.Helper()
	calls := &limiterCalls{}
	c := redistest.Client(t, srv, -1)
	c.AddHook(calls)
	f, err := redisfleet.New(context.Background(), c, redisfleet.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	// Every node knows the scripts: no call is sent again after a NOSCRIPT.
	for _, s := range []*redis.Script{lua.Limiter, lua.FrontierDone} {
		if err := s.Load(context.Background(), c).Err(); err != nil {
			t.Fatal(err)
		}
	}
	keysOf(f).SetReadyFresh(time.Hour) // pregrants wait a third of the lease: the machine's load decides nothing
	lim := f.Limiter(redisfleet.LimiterConfig{})
	q := frOpen(t, f, Config{MaxWait: 5 * time.Second})
	return f, lim, q, calls
}

// hostField reads a field of host's limiter state (0 if missing).
func hostField(t *testing.T, f *redisfleet.Fleet, host, field string) int64 {
	t.Helper()
	h, _ := hostKeys(f, host)
	v, err := rdbOf(f).HGet(context.Background(), h, field).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		t.Fatal(err)
	}
	return v
}

// hostHold returns the tokens of host's permits out.
func hostHold(t *testing.T, f *redisfleet.Fleet, host string) []string {
	t.Helper()
	_, z := hostKeys(f, host)
	v, err := rdbOf(f).ZRange(context.Background(), z, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// redisNow returns the Redis server's clock in µs.
func redisNow(t *testing.T, f *redisfleet.Fleet) int64 {
	t.Helper()
	tm, err := rdbOf(f).Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return tm.UnixMicro()
}

// grantSetup gives host limiter state (one request granted under delay d
// and released) and queues url for q.
func grantSetup(t *testing.T, lim *redisfleet.Limiter, q *Frontier, host, url string, d time.Duration) {
	t.Helper()
	p, err := lim.Acquire(context.Background(), host, d)
	if err != nil {
		t.Fatal(err)
	}
	p.Release()
	if err := q.AddRequest(testutil.CollyRequest(t, url)); err != nil {
		t.Fatal(err)
	}
}

// grantGet is frGet, asking again while GetRequest finds nothing: the
// wake-up of a request this process queued may come after its look.
func grantGet(t *testing.T, q *Frontier) (string, string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); ; {
		b, err := q.GetRequest()
		if (errors.Is(err, frontier.ErrEmpty) || errors.Is(err, frontier.ErrNotReady)) && time.Now().Before(end) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatalf("GetRequest: %v", err)
		}
		return frRead(t, b)
	}
}

// TestPregrantTaken: the pop that hands out the request of a ready host
// grants the host's permit under the lease id; AcquireMax takes it
// without a round trip, the permit's release waits for the done report
// and goes in its pipeline, before it.
func TestPregrantTaken(t *testing.T) {
	testutil.CheckGoroutines(t)
	redistest.ForBackends(t, func(t *testing.T, srv redistest.Backend) {
		f, lim, q, calls := grantFleet(t, srv)
		const host, d = "http://a.example", 100 * time.Millisecond
		grantSetup(t, lim, q, host, host+"/1", d)
		_, lease := grantGet(t, q)
		if h := hostHold(t, f, host); !slices.Equal(h, []string{lease}) {
			t.Fatalf("permits out after the pop: %q, want the lease id %q", h, lease)
		}
		calls.take()
		p, err := lim.AcquireMax(context.Background(), host, d, -1)
		if err != nil {
			t.Fatal(err)
		}
		if c := calls.take(); len(c) != 0 {
			t.Fatalf("AcquireMax of the pregranted host made limiter calls %q, want none", c)
		}
		if st, _ := lim.Stats(host); st.InFlight != 1 {
			t.Fatalf("in flight %d, want 1", st.InFlight)
		}
		le := hostField(t, f, host, "le")
		p.Release()
		if c := calls.take(); len(c) != 0 {
			t.Fatalf("Release with the request's done report to come made limiter calls %q, want none", c)
		}
		if h := hostHold(t, f, host); len(h) != 1 {
			t.Fatalf("permits out before the done report: %q, want the pregranted one", h)
		}
		q.Done(lease)
		if c := calls.take(); !slices.Equal(c, []string{"pipe:rel+done"}) {
			t.Fatalf("the done report made %q, want one pipeline: the release, then the done report", c)
		}
		if h := hostHold(t, f, host); len(h) != 0 {
			t.Fatalf("permits out after the done report: %q", h)
		}
		if got := hostField(t, f, host, "le"); got <= le {
			t.Fatalf("latest release %d, want after %d: the release was not recorded", got, le)
		}
	})
}

// TestPregrantLargerDelay: a pregrant made under a delay smaller than the
// one AcquireMax passes is given back (no release event) and the permit
// asked anew, which Redis grants no earlier than the larger delay after
// the latest release.
func TestPregrantLargerDelay(t *testing.T) {
	testutil.CheckGoroutines(t)
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		f, lim, q, calls := grantFleet(t, srv)
		const host, small, large = "http://a.example", 50 * time.Millisecond, 400 * time.Millisecond
		grantSetup(t, lim, q, host, host+"/1", small)
		_, lease := grantGet(t, q)
		le := hostField(t, f, host, "le")
		calls.take()
		p, err := lim.AcquireMax(context.Background(), host, large, -1)
		if err != nil {
			t.Fatal(err)
		}
		now := redisNow(t, f)
		if c := calls.take(); len(c) < 1 || c[0] != "pipe:leave+acq" || slices.ContainsFunc(c[1:], func(s string) bool { return s != "acq" }) {
			t.Fatalf("AcquireMax with a larger delay made %q, want the pregrant given back and an acquire in one pipeline, then acquires", c)
		}
		if now < le+large.Microseconds() {
			t.Fatalf("granted %v after the latest release, want at least %v", time.Duration(now-le)*time.Microsecond, large)
		}
		if got := hostField(t, f, host, "le"); got != le {
			t.Fatalf("the pregrant's give-back recorded a release (%d, was %d)", got, le)
		}
		if h := hostHold(t, f, host); len(h) != 1 || h[0] == lease {
			t.Fatalf("permits out %q, want one, not the pregrant %q", h, lease)
		}
		p.Release()
		q.Done(lease)
		if c := calls.take(); !slices.Equal(c, []string{"pipe:rel+done"}) {
			t.Fatalf("the done report made %q, want the release and the done report", c)
		}
	})
}

// TestPregrantUnused: a pregrant no AcquireMax takes is given back,
// without a release event: with the request's done report, or after
// grantFresh if none comes.
func TestPregrantUnused(t *testing.T) {
	testutil.CheckGoroutines(t)
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		f, lim, q, calls := grantFleet(t, srv)
		const d = 50 * time.Millisecond
		a, b := "http://a.example", "http://b.example"
		grantSetup(t, lim, q, a, a+"/1", d)
		_, lease := grantGet(t, q)
		le := hostField(t, f, a, "le")
		calls.take()
		q.Done(lease) // stopped before the send (robots.txt disallows it)
		if c := calls.take(); !slices.Equal(c, []string{"pipe:leave+done"}) {
			t.Fatalf("the done report made %q, want the give-back and the done report in one pipeline", c)
		}
		if h := hostHold(t, f, a); len(h) != 0 {
			t.Fatalf("permits out after the done report: %q", h)
		}
		if got := hostField(t, f, a, "le"); got != le {
			t.Fatalf("the give-back recorded a release (%d, was %d)", got, le)
		}

		keysOf(f).SetReadyFresh(300 * time.Millisecond)
		grantSetup(t, lim, q, b, b+"/1", d)
		_, lease = grantGet(t, q)
		if h := hostHold(t, f, b); !slices.Equal(h, []string{lease}) {
			t.Fatalf("permits out after the pop: %q, want the lease id %q", h, lease)
		}
		le = hostField(t, f, b, "le")
		redistest.WaitFor(t, 10*time.Second, "given back", func() bool { return len(hostHold(t, f, b)) == 0 })
		if got := hostField(t, f, b, "le"); got != le {
			t.Fatalf("the give-back recorded a release (%d, was %d)", got, le)
		}
		calls.take()
		p, err := lim.AcquireMax(context.Background(), b, d, -1)
		if err != nil {
			t.Fatal(err)
		}
		if c := calls.take(); !slices.Equal(c, []string{"acq"}) {
			t.Fatalf("AcquireMax after the give-back made %q, want an acquire", c)
		}
		p.Release()
		q.Done(lease)
	})
}

// TestPregrantGaps: three processes, each with a Limiter and a Frontier
// on one Redis and two workers (GetRequest, AcquireMax, a request,
// Release, Done), crawl 3 hosts of 5 pages: on the Redis server's clock,
// each grant comes at least the delay after the previous request of its
// host ended, and most grants came with their pop.
func TestPregrantGaps(t *testing.T) {
	testutil.CheckGoroutines(t)
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		const d, pages = 150 * time.Millisecond, 5
		hosts := []string{"http://a.example", "http://b.example", "http://c.example"}
		type span struct{ start, end int64 }
		var (
			mu    sync.Mutex
			spans = map[string][]span{}
			done  int
		)
		var fleets []*redisfleet.Fleet
		var all []*limiterCalls
		var wg sync.WaitGroup
		for range 3 {
			f, lim, q, calls := grantFleet(t, srv)
			fleets, all = append(fleets, f), append(all, calls)
			if len(fleets) == 1 {
				for _, h := range hosts {
					for i := range pages {
						if err := q.AddRequest(testutil.CollyRequest(t, fmt.Sprintf("%s/%d", h, i))); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						mu.Lock()
						finished := done == len(hosts)*pages
						mu.Unlock()
						if finished {
							return
						}
						b, err := q.GetRequest()
						if errors.Is(err, frontier.ErrEmpty) || errors.Is(err, frontier.ErrNotReady) {
							continue
						}
						if err != nil {
							t.Error(err)
							return
						}
						r, err := frontier.Decode(b)
						if err != nil {
							t.Error(err)
							return
						}
						cr, err := colly.NewCollector().UnmarshalRequest(b)
						if err != nil {
							t.Error(err)
							return
						}
						lease := leaseOf(cr.Ctx)
						p, err := lim.AcquireMax(context.Background(), r.Host, d, -1)
						if err != nil {
							t.Error(err)
							return
						}
						start := redisNow(t, f) // after the grant
						time.Sleep(20 * time.Millisecond)
						end := redisNow(t, f) // before the release
						p.Release()
						q.Done(lease)
						mu.Lock()
						spans[r.Host] = append(spans[r.Host], span{start, end})
						done++
						mu.Unlock()
					}
				}()
			}
		}
		wg.Wait()
		for _, h := range hosts {
			s := spans[h]
			if len(s) != pages {
				t.Fatalf("%s: %d requests, want %d", h, len(s), pages)
			}
			sort.Slice(s, func(i, j int) bool { return s[i].start < s[j].start })
			for i := 1; i < len(s); i++ {
				// start is read after the grant, end before the release: a
				// grant the delay after the release is at least this far.
				if gap := time.Duration(s[i].start-s[i-1].end) * time.Microsecond; gap < d {
					t.Errorf("%s: a grant %v after the previous request ended, want at least %v", h, gap, d)
				}
			}
		}
		acq := 0
		for _, c := range all {
			for _, call := range c.take() {
				acq += strings.Count(call, "acq")
			}
		}
		if acq >= len(hosts)*pages {
			t.Errorf("%d limiter acquires for %d requests: no grant came with its pop", acq, len(hosts)*pages)
		}
		t.Logf("%d limiter acquires for %d requests", acq, len(hosts)*pages)
	})
}
