package redisfleet

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// TestLeaseAtLeastThreeCallTimeouts: a lease that a renewal taking a whole
// call timeout could miss is raised, with a warning.
func TestLeaseAtLeastThreeCallTimeouts(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var logs testutil.Buffer
	f := newFleet(t, srv, Config{Lease: time.Second, CallTimeout: 2 * time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if got := f.cfg.lease; got != 6*time.Second {
		t.Fatalf("lease %v with a 2s call timeout, want 6s", got)
	}
	if !strings.Contains(logs.String(), "shorter than 3 call timeouts") {
		t.Fatalf("no warning: %q", logs.String())
	}
	if got := newFleet(t, srv, Config{Lease: time.Second, CallTimeout: 300 * time.Millisecond}).cfg.lease; got != time.Second {
		t.Fatalf("lease %v, want the 1s asked for", got)
	}
}

// TestNewAfterRestartKeepsHold: a process that starts on a Redis
// restarted empty, while another process of the fleet holds a permit,
// does not take the host: the live process's next call (its lease
// renewal, within a third of the lease) finds the partition's generation
// gone and marks the loss, and the host stays held until the holder
// releases it.
func TestNewAfterRestartKeepsHold(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const host, delay = "https://held.example", 100 * time.Millisecond
	cfg := Config{Lease: 6 * time.Second, CallTimeout: 2 * time.Second}
	fa := newFleet(t, srv, cfg)
	a := fa.Limiter(LimiterConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pa, err := a.Acquire(ctx, host, delay)
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if err := srv.Start(); err != nil { // back, empty
		t.Fatal(err)
	}
	c := newClient(t, srv)
	epoch := fa.pkey(fa.part(host), kindEpoch)
	redistest.WaitFor(t, 10*time.Second, "the live process's renewal", func() bool {
		ep, err := c.HGet(ctx, epoch, "ep").Int64()
		return err == nil && ep > 0
	})
	fb := newFleet(t, srv, cfg)
	granted := make(chan time.Time, 1)
	go func() {
		p, err := fb.Limiter(LimiterConfig{}).Acquire(ctx, host, delay)
		if err != nil {
			t.Error(err)
			granted <- time.Time{}
			return
		}
		granted <- time.Now()
		p.Release()
	}()
	time.Sleep(2500 * time.Millisecond) // the request under pa runs on
	released := time.Now()
	pa.Release()
	if at := <-granted; at.Before(released) {
		t.Fatalf("the new process was granted the host %v before the permit out in another process was released", released.Sub(at))
	}
}

// TestLostReleaseLogged: a release and a fetch unlock that Redis refuses
// are logged and counted, not dropped silently.
func TestLostReleaseLogged(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var logs testutil.Buffer
	f := newFleet(t, srv, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	c := newClient(t, srv)
	ctx := context.Background()
	const host = "https://refused.example"
	p, err := f.Limiter(LimiterConfig{}).Acquire(ctx, host, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := f.hostKeys(host)
	if err := c.Set(ctx, h, "not a hash", 0).Err(); err != nil { // the release's script now fails (WRONGTYPE)
		t.Fatal(err)
	}
	p.Release()
	if n := f.LostReleases(); n != 1 {
		t.Fatalf("LostReleases = %d after a refused release, want 1", n)
	}
	unlock, ok, err := f.Store().LockFetch(ctx, "https://refused.example", time.Second)
	if err != nil || !ok {
		t.Fatalf("LockFetch: %v, %v", ok, err)
	}
	k := f.key(kindFetch, "https://refused.example")
	if err := c.Del(ctx, k).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.HSet(ctx, k, "f", "v").Err(); err != nil {
		t.Fatal(err)
	}
	unlock()
	if n := f.LostReleases(); n != 2 {
		t.Fatalf("LostReleases = %d after a refused unlock, want 2", n)
	}
	if got := strings.Count(logs.String(), "did not take effect"); got != 2 {
		t.Fatalf("%d warnings, want 2: %q", got, logs.String())
	}
}

// TestNewRefusesEviction: New refuses a Redis whose maxmemory-policy may
// evict the fleet's keys, naming the setting to use, unless Config.Eviction
// says so; on a Cluster it asks every master.
func TestNewRefusesEviction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, policy := range []string{"allkeys-lru", "volatile-ttl"} {
		srv := redistest.Start(t, "--maxmemory-policy", policy)
		_, err := New(ctx, newClient(t, srv), Config{})
		if err == nil || !strings.Contains(err.Error(), "maxmemory-policy "+policy) || !strings.Contains(err.Error(), "noeviction") || !strings.Contains(err.Error(), "Config.Eviction") {
			t.Fatalf("%s: New = %v; want a refusal naming the policy, noeviction and Config.Eviction", policy, err)
		}
		f, err := New(ctx, newClient(t, srv), Config{Eviction: true})
		if err != nil {
			t.Fatalf("%s with Config.Eviction: %v", policy, err)
		}
		f.Close()
	}
	cl := redistest.StartCluster(t, 3)
	if _, err := New(ctx, newClient(t, cl), Config{}); err != nil {
		t.Fatalf("a Cluster with noeviction: %v", err)
	}
	if _, err := redistest.Do(cl.Nodes[2].Addr, "CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ctx, newClient(t, cl), Config{}); err == nil || !strings.Contains(err.Error(), cl.Nodes[2].Addr) || !strings.Contains(err.Error(), "allkeys-lfu") {
		t.Fatalf("a Cluster with one evicting master: %v; want a refusal naming it", err)
	}
}

// TestConfig: the zero Config is the defaults; New refuses a value that
// cannot act (a negative duration, a partition count out of range, an
// unknown OnRedisDown), naming the field.
func TestConfig(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	f := newFleet(t, srv, Config{})
	want := config{prefix: DefaultPrefix, callTimeout: DefaultCallTimeout, lease: DefaultLease, idleTTL: DefaultIdleTTL, partitions: DefaultPartitions}
	if got := f.cfg; got != want {
		t.Errorf("zero Config: %+v, want %+v", got, want)
	}
	ctx := context.Background()
	for _, c := range []struct {
		cfg   Config
		field string
	}{
		{Config{CallTimeout: -time.Second}, "Config.CallTimeout"},
		{Config{Lease: -1}, "Config.Lease"},
		{Config{IdleTTL: -time.Minute}, "Config.IdleTTL"},
		{Config{Partitions: -1}, "Config.Partitions"},
		{Config{Partitions: 16385}, "Config.Partitions"},
		{Config{OnRedisDown: 2}, "Config.OnRedisDown"},
	} {
		if _, err := New(ctx, newClient(t, srv), c.cfg); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("New(%+v) = %v; want an error naming %s", c.cfg, err, c.field)
		}
	}
}
