package redisfleet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/redisfleet/internal/lua"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// newClient returns a client of srv with the options ParseURL (or
// ParseClusterURL) sets, closed when t ends.
func newClient(t testing.TB, srv redistest.Backend) redis.UniversalClient {
	t.Helper()
	return redistest.Client(t, srv, 0)
}

// newFleet returns a Fleet on a client of its own, closed when t ends.
func newFleet(t testing.TB, srv redistest.Backend, cfg ...Config) *Fleet {
	t.Helper()
	f, err := New(context.Background(), newClient(t, srv), redistest.First(cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestNewUnreachable(t *testing.T) {
	t.Parallel()
	addr := redistest.DeadAddr(t) // nothing listens there
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer c.Close()
	f, err := New(context.Background(), c, Config{CallTimeout: 500 * time.Millisecond})
	if err == nil {
		f.Close()
		t.Fatal("New on an address nothing listens on succeeded")
	}
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("New's error %q does not wrap ErrUnavailable", err)
	}
}

func TestNewKeysAndPartitions(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	f := newFleet(t, srv, Config{Prefix: "t1:"})
	c := newClient(t, srv)
	ctx := context.Background()
	if v, err := c.Get(ctx, "t1:v2:config").Result(); err != nil || v != "partitions=16" {
		t.Fatalf("config after New = %q, %v; want partitions=16", v, err)
	}
	if n, _ := c.Exists(ctx, f.pkey(0, kindEpoch)).Result(); n != 0 {
		t.Fatal("New wrote an epoch: a fresh fleet is told by the limiter's script, from the fleet's own keys")
	}
	const host = "https://example.com"
	p := f.part(host)
	h, z := f.hostKeys(host)
	tag := fmt.Sprintf("t1:v2:{t1:%d}:", p)
	if h != tag+"host:"+host || z != tag+"hold:"+host || f.pkey(p, kindWake) != tag+"wake" {
		t.Fatalf("hostKeys = %q, %q, wake %q; want under %q", h, z, f.pkey(p, kindWake), tag)
	}
	if k := f.polKey("rfc9309 " + host); k != tag+"policy:rfc9309 "+host {
		t.Fatalf("policy key %q: want in the partition of its authority, %q", k, tag)
	}
	// Every key of a partition is in one Cluster hash slot.
	slot := func(k string) int64 {
		n, err := c.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Skipf("CLUSTER KEYSLOT: %v", err)
		}
		return n
	}
	if slot(h) != slot(z) || slot(h) != slot(f.pkey(p, kindEpoch)) || slot(h) != slot(f.tag(p)+"fr:default:hosts") {
		t.Fatal("a partition's keys are in different hash slots")
	}
	// Another partition count for the same fleet is refused.
	if _, err := New(ctx, newClient(t, srv), Config{Prefix: "t1:", Partitions: 8}); err == nil || !strings.Contains(err.Error(), "Config.Partitions") {
		t.Fatalf("New with 8 partitions on a fleet of 16: %v", err)
	}
	for _, n := range []int{-1, 16385} {
		if _, err := New(ctx, newClient(t, srv), Config{Prefix: "t2:", Partitions: n}); err == nil {
			t.Fatalf("Config{Partitions: %d} accepted", n)
		}
	}
}

// TestFreshStartWithListener: a client subscribed to the fleet's wake-up
// channels (a monitor, a leftover) when a fleet starts on an empty Redis
// does not make the fleet believe Redis lost its data: the first request
// is granted at once, not after a lease (10.13 s instead of 0.18 s when
// the listener was taken for a lost Redis).
func TestFreshStartWithListener(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := newClient(t, srv)
	ctx := context.Background()
	ps := c.PSubscribe(ctx, "robots:*")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	const lease = 6 * time.Second
	f := newFleet(t, srv, Config{Lease: lease, CallTimeout: time.Second})
	sub := c.Subscribe(ctx, f.pkey(f.part("https://fresh.example"), kindWake))
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p, err := f.Limiter(LimiterConfig{}).Acquire(ctx, "https://fresh.example", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	p.Release()
	if el := time.Since(start); el > lease/2 {
		t.Fatalf("the first grant of a fresh fleet took %v (lease %v): held as after a data loss", el, lease)
	}
}

func TestNotifyReachesSubscribers(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a, b := newFleet(t, srv), newFleet(t, srv)
	ch, cancel := b.wakeups(context.Background(), 3, "k")
	defer cancel()
	if err := a.notify(context.Background(), 3, "k"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("a wake-up published by one fleet handle did not reach another's subscriber")
	}
}

// The child process of TestLimiterLeaseOfKilledProcess: it acquires the
// host and prints its token, then hangs until it is killed.
func TestHelperChildAcquire(t *testing.T) {
	if os.Getenv("REDISFLEET_CHILD") != "acquire" {
		t.Skip("run by TestLimiterLeaseOfKilledProcess")
	}
	lease, _ := time.ParseDuration(os.Getenv("REDISFLEET_LEASE"))
	delay, _ := time.ParseDuration(os.Getenv("REDISFLEET_DELAY"))
	c := redis.NewClient(&redis.Options{Addr: os.Getenv("REDISFLEET_ADDR"), ContextTimeoutEnabled: true})
	f, err := New(context.Background(), c, Config{Lease: lease, CallTimeout: lease / 3})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	if _, err := f.Limiter(LimiterConfig{}).Acquire(context.Background(), os.Getenv("REDISFLEET_HOST"), delay); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("granted")
	time.Sleep(time.Minute)
	os.Exit(2)
}

// TestLimiterLeaseOfKilledProcess: a process killed (SIGKILL) while it holds
// a host keeps it until its lease ends; the host is then granted again, no
// earlier than the delay after the lease's end.
func TestLimiterLeaseOfKilledProcess(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const (
		lease = 3 * time.Second
		delay = 300 * time.Millisecond
		host  = "https://held.example"
	)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperChildAcquire$", "-test.v")
	cmd.Env = append(os.Environ(), "REDISFLEET_CHILD=acquire", "REDISFLEET_ADDR="+srv.Addr,
		"REDISFLEET_HOST="+host, "REDISFLEET_LEASE="+lease.String(), "REDISFLEET_DELAY="+delay.String())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	granted := false
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "granted") {
			granted = true
			break
		}
		if strings.HasPrefix(sc.Text(), "error") {
			t.Fatalf("child: %s", sc.Text())
		}
	}
	if !granted {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the child process never got the host")
	}
	cmd.Process.Kill()
	cmd.Wait()

	f := newFleet(t, srv, Config{Lease: lease, CallTimeout: lease / 3})
	c := newClient(t, srv)
	_, hold := f.hostKeys(host)
	ctx := context.Background()
	held, err := c.ZRangeWithScores(ctx, hold, 0, -1).Result()
	if err != nil || len(held) != 1 {
		t.Fatalf("the killed child's permit in Redis: %v, %v", held, err)
	}
	leaseEnd := int64(held[0].Score)
	p, err := f.Limiter(LimiterConfig{}).Acquire(ctx, host, delay)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	now, _ := c.Time(ctx).Result()
	after, _ := c.ZRangeWithScores(ctx, hold, 0, -1).Result()
	if len(after) != 1 || after[0].Member == held[0].Member {
		t.Fatalf("permits after the grant: %v (the dead one: %v)", after, held)
	}
	grant := int64(after[0].Score) - lease.Microseconds() // its lease end minus the lease
	t.Logf("granted %v after the dead process's lease ended (delay %v)", time.Duration(grant-leaseEnd)*time.Microsecond, delay)
	if grant < leaseEnd+delay.Microseconds() {
		t.Fatalf("granted %v after the dead process's lease ended: before the delay %v",
			time.Duration(grant-leaseEnd)*time.Microsecond, delay)
	}
	if now.UnixMicro() < grant {
		t.Fatalf("Redis time %d after the grant is before the grant %d", now.UnixMicro(), grant)
	}
}

// TestLimiterRedisRestartedMidRun: Redis is killed while two processes crawl
// a host and comes back empty a second later. Requests wait for it (the
// default), none goes out closer than the delay to the previous one, and
// every request is made.
func TestLimiterRedisRestartedMidRun(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	s := newSite(t, 20*time.Millisecond)
	const (
		d       = 150 * time.Millisecond
		workers = 2
		each    = 6
	)
	host := "http://" + s.Listener.Addr().String()
	lims := []*Limiter{
		newFleet(t, srv, Config{Lease: 3 * time.Second, CallTimeout: time.Second}).Limiter(LimiterConfig{}),
		newFleet(t, srv, Config{Lease: 3 * time.Second, CallTimeout: time.Second}).Limiter(LimiterConfig{}),
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var done atomic.Int32
	for _, l := range lims {
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					if _, err := get(ctx, l, host, s.URL, d); err != nil {
						t.Error(err)
						return
					}
					done.Add(1)
				}
			}()
		}
	}
	time.Sleep(500 * time.Millisecond)
	before := done.Load()
	srv.Stop()
	time.Sleep(time.Second)
	during := done.Load()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	v := s.log()
	if len(v) != 2*workers*each {
		t.Fatalf("server saw %d requests, want %d", len(v), 2*workers*each)
	}
	if s.maxIn != 1 {
		t.Fatalf("%d requests in flight at once", s.maxIn)
	}
	g := minGap(v, false)
	t.Logf("%d requests before the kill, %d more while Redis was down; shortest gap %v for %v", before, during-before, g, d)
	if g < d-jitterE2S {
		t.Fatalf("shortest gap %v across a Redis restart, want ≥ %v", g, d)
	}
	if during-before > 1 {
		t.Fatalf("%d requests completed while Redis was down (at most the one in flight may)", during-before)
	}
}

// TestLimiterFallBackLocal: with FallBackLocal, requests go on through the
// local gate while Redis is away, spaced by the delay, with a warning; once
// Redis is back the fleet's state is used again.
func TestLimiterFallBackLocal(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	s := newSite(t, 0)
	var logs testutil.Buffer
	f := newFleet(t, srv, Config{OnRedisDown: FallBackLocal, CallTimeout: time.Second, Lease: 3 * time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	l := f.Limiter(LimiterConfig{})
	host := "http://" + s.Listener.Addr().String()
	ctx := context.Background()
	const d = 100 * time.Millisecond
	srv.Stop()
	for i := range 3 {
		if _, err := get(ctx, l, host, s.URL, d); err != nil {
			t.Fatalf("request %d with Redis down: %v", i, err)
		}
	}
	if g := minGap(s.log(), false); g < d-jitterE2S {
		t.Fatalf("local fallback gap %v, want ≥ %v", g, d)
	}
	if !strings.Contains(logs.String(), "Redis is unavailable") || !strings.Contains(logs.String(), "on_redis_down=local") {
		t.Fatalf("no warning logged: %q", logs.String())
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(downSkip + 100*time.Millisecond)
	if _, err := get(ctx, l, host, s.URL, d); err != nil {
		t.Fatal(err)
	}
	h, _ := f.hostKeys(host)
	if g, _ := newClient(t, srv).HGet(ctx, h, "g").Int(); g != 1 {
		t.Fatalf("after Redis came back the grant was not taken in Redis (g = %d)", g)
	}
}

// TestSlowRedis: a Redis that stops answering costs each call the call
// timeout, not more: New fails with ErrUnavailable, Acquire (waiting for
// Redis) ends with its context and grants nothing, and a FallBackLocal
// limiter moves to the local gate.
func TestSlowRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	px := redistest.NewStallProxy(t, srv.Addr)
	mk := func(onDown OnRedisDown) *Fleet {
		c := redis.NewClient(&redis.Options{Addr: px.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		f, err := New(context.Background(), c, Config{CallTimeout: time.Second, OnRedisDown: onDown})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	wait, local := mk(WaitForRedis).Limiter(LimiterConfig{}), mk(FallBackLocal).Limiter(LimiterConfig{})
	px.Stall(true)
	defer px.Stall(false)

	c := redis.NewClient(&redis.Options{Addr: px.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	defer c.Close()
	if _, err := New(context.Background(), c, Config{CallTimeout: time.Second}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("New on a Redis that does not answer: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if p, err := wait.Acquire(ctx, "https://slow.example", time.Second); err == nil || p != nil {
		t.Fatalf("Acquire with Redis hung returned %v, %v; want the context's error", p, err)
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire with Redis hung: %v", err)
	}
	p, err := local.Acquire(context.Background(), "https://slow.example", time.Second)
	if err != nil {
		t.Fatalf("FallBackLocal Acquire with Redis hung: %v", err)
	}
	p.Release()
	if st, ok := local.local.Stats("https://slow.example"); !ok || st.Grants != 1 {
		t.Fatalf("the local gate did not grant: %+v", st)
	}
}

// TestLimiterDeadWaiterDropped: a caller that died while at the head of a
// host's fleet-wide queue (entered by hand, never seen again) holds the
// host only until it counts as dead; then the next caller is granted.
func TestLimiterDeadWaiterDropped(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	f := newFleet(t, srv, Config{CallTimeout: time.Second})
	c := newClient(t, srv)
	ctx := context.Background()
	const host = "https://queued.example"
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	us := float64(now.UnixMicro())
	c.ZAdd(ctx, f.key(kindWait, host), redis.Z{Score: us, Member: "dead"})
	c.ZAdd(ctx, f.key(kindSeen, host), redis.Z{Score: us, Member: "dead"})
	l := f.Limiter(LimiterConfig{})
	start := time.Now()
	actx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	p, err := l.Acquire(actx, host, 50*time.Millisecond)
	if err != nil {
		t.Fatalf("Acquire behind a dead waiter: %v", err)
	}
	p.Release()
	stale := time.Duration(l.stale()) * time.Microsecond
	if el := time.Since(start); el < stale-50*time.Millisecond {
		t.Fatalf("granted %v after a dead waiter was queued, before it counted as dead (%v)", el, stale)
	}
	if n, _ := c.ZCard(ctx, f.key(kindWait, host)).Result(); n != 0 {
		t.Fatalf("%d entries left in the queue", n)
	}
}

// TestFallBackLocalNoOverlapAcrossSwitch: a request granted by the local
// gate while Redis was away still runs when Redis is back and the process
// goes to Redis again: the next request of the process to that host waits
// for its release.
func TestFallBackLocalNoOverlapAcrossSwitch(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	f := newFleet(t, srv, Config{OnRedisDown: FallBackLocal, CallTimeout: time.Second, Lease: 3 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	l := f.Limiter(LimiterConfig{})
	const host, d = "https://overlap.example", 100 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv.Stop()
	p1, err := l.Acquire(ctx, host, d) // from the local gate
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(downSkip + 100*time.Millisecond) // the limiter tries Redis again
	granted := make(chan time.Time, 1)
	go func() {
		p2, err := l.Acquire(ctx, host, d)
		if err != nil {
			t.Error(err)
			granted <- time.Time{}
			return
		}
		granted <- time.Now()
		p2.Release()
	}()
	time.Sleep(2 * time.Second) // the long request under p1 runs on
	released := time.Now()
	p1.Release()
	at := <-granted
	if at.Before(released) {
		t.Fatalf("a Redis grant came %v before the release of the local permit of the same host", released.Sub(at))
	}
	if g := at.Sub(released); g < d-jitterE2S {
		t.Fatalf("next request %v after the local release, want ≥ %v", g, d)
	}
	h, _ := f.hostKeys(host)
	if g, _ := newClient(t, srv).HGet(ctx, h, "g").Int(); g != 1 {
		t.Fatalf("the second request was not granted by Redis (g = %d)", g)
	}
}

// The child process of TestOutageLogsOneWarning: it takes a host, stops its
// Redis and asks for hosts for two seconds through the local fallback, with
// the default logger (stderr), as a fleet process does.
func TestHelperChildOutage(t *testing.T) {
	if os.Getenv("REDISFLEET_CHILD") != "outage" {
		t.Skip("run by TestOutageLogsOneWarning")
	}
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	f, err := New(context.Background(), c, Config{OnRedisDown: FallBackLocal, CallTimeout: time.Second, Lease: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	l := f.Limiter(LimiterConfig{})
	ctx := context.Background()
	srv.Stop()
	for end := time.Now().Add(2 * downSkip); time.Now().Before(end); {
		p, err := l.Acquire(ctx, "https://outage.example", 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		p.Release()
	}
	fmt.Println("done")
}

// TestOutageLogsOneWarning: during a Redis outage a fleet process logs the
// fleet's one warning, not a go-redis line per failed dial (20–23 lines
// in a 6 s outage otherwise).
func TestOutageLogsOneWarning(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperChildOutage$")
	cmd.Env = append(os.Environ(), "REDISFLEET_CHILD=outage")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "done") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "WARN redisfleet: Redis is unavailable"); n != 1 {
		t.Errorf("%d outage warnings, want 1:\n%s", n, out)
	}
	if strings.Contains(string(out), "go-redis") || strings.Contains(string(out), "pool.go") {
		t.Errorf("go-redis's own lines reached stderr:\n%s", out)
	}
}

// TestLimiterRedisHang: Redis hangs (SIGSTOP) while a process asks for a
// host and resumes 3 s later. The Acquire whose call timed out retries
// under the same token; the grant its late call made is its own, so it
// gets the host at once, not after the lease; another process's Acquire
// that gave up (its context ended) while Redis hung leaves nothing
// behind either: the host is free again within a few call timeouts, not
// a lease, and no two permits overlap.
func TestLimiterRedisHang(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, be redistest.Backend) {
		srv := be.(redistest.Pausable)
		const (
			callTimeout = time.Second
			lease       = 10 * time.Second
			host        = "https://hang.example"
			d           = 50 * time.Millisecond
		)
		mk := func() *Limiter {
			// A client without retries (a hung server fails a call at once).
			f, err := New(context.Background(), redistest.Client(t, srv, -1),
				Config{CallTimeout: callTimeout, Lease: lease, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if err := lua.Limiter.Load(context.Background(), f.rdb).Err(); err != nil {
				t.Fatal(err)
			}
			return f.Limiter(LimiterConfig{})
		}
		a, b := mk(), mk()
		ctx := context.Background()
		// Both take and release the host once: pooled connections, scripts
		// loaded, as in a fleet that has been crawling.
		for _, l := range []*Limiter{a, b} {
			p, err := l.Acquire(ctx, host, d)
			if err != nil {
				t.Fatal(err)
			}
			p.Release()
		}
		if err := srv.Pause(); err != nil {
			t.Fatal(err)
		}
		type res struct {
			p   hostlimit.Permit
			err error
			at  time.Time
		}
		got := make(chan res, 1)
		go func() {
			p, err := a.Acquire(ctx, host, d)
			got <- res{p, err, time.Now()}
		}()
		bctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
		defer cancel()
		if p, err := b.Acquire(bctx, host, d); err == nil {
			p.Release()
			t.Fatal("granted while Redis hung")
		}
		time.Sleep(3*time.Second - 1500*time.Millisecond)
		resumed := time.Now()
		if err := srv.Resume(); err != nil {
			t.Fatal(err)
		}
		r := <-got
		if r.err != nil {
			t.Fatal(r.err)
		}
		t.Logf("the waiting Acquire granted %v after Redis resumed", r.at.Sub(resumed).Round(time.Millisecond))
		if r.at.Sub(resumed) > 4*callTimeout {
			t.Errorf("the waiting Acquire was granted %v after Redis resumed: its own late grant held the host (lease %v)", r.at.Sub(resumed), lease)
		}
		r.p.Release()
		released := time.Now()
		p, err := b.Acquire(ctx, host, d)
		if err != nil {
			t.Fatal(err)
		}
		p.Release()
		t.Logf("the other process granted %v after the release", time.Since(released).Round(time.Millisecond))
		if el := time.Since(released); el > 4*callTimeout {
			t.Errorf("the other process was granted %v after the release: a late grant of a caller that gave up held the host (lease %v)", el, lease)
		}
	})
}

// TestPubSubConnections: on one server a process hears every partition on
// one Pub/Sub connection; on a Cluster, on one per partition it waits on
// (SSUBSCRIBE takes one slot's channels). A wake-up still reaches the
// waiter in each case.
func TestPubSubConnections(t *testing.T) {
	redistest.ForBackends(t, func(t *testing.T, srv redistest.Backend) {
		a, b := newFleet(t, srv), newFleet(t, srv)
		all := make([]int, b.cfg.partitions)
		for p := range all {
			all[p] = p
		}
		b.listen(context.Background(), all...) // waits on every partition, as a frontier's Init
		var subs int
		b.shMu.Lock()
		for _, sh := range b.shards {
			if sh.ps != nil {
				subs++
			}
		}
		single := b.single != nil
		b.shMu.Unlock()
		_, cluster := srv.(*redistest.Cluster)
		if cluster && (subs != b.cfg.partitions || single) || !cluster && (subs != 0 || !single) {
			t.Fatalf("%d per-partition subscriptions, shared one: %v (Cluster: %v)", subs, single, cluster)
		}
		for _, p := range []int{0, 7, 15} {
			ch, cancel := b.wakeups(context.Background(), p, "k")
			if err := a.notify(context.Background(), p, "k"); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ch:
			case <-time.After(5 * time.Second):
				t.Fatalf("a wake-up on partition %d did not reach the other process", p)
			}
			cancel()
		}
	})
}
