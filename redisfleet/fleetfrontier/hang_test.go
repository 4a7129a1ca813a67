package fleetfrontier

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/lua"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// TestFrontierRedisHang: Redis hangs (SIGSTOP) while two processes pop
// requests, and resumes (SIGCONT) after 3 s. The pop scripts that timed out
// on the client still run when Redis resumes; they must not keep a host
// leased to nobody for a lease: every host would stall for the lease, with a
// warning blaming a dead process. After the resume every request is
// handed out within a few call timeouts (the lease is 10 s), each to one
// process once, none lost, and no lease is reaped.
func TestFrontierRedisHang(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, be redistest.Backend) {
		srv := be.(redistest.Pausable)
		const (
			callTimeout = time.Second
			lease       = 10 * time.Second
			hosts       = 4
		)
		var logs testutil.Buffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		var fs []*Frontier
		for range 2 {
			f := frFleet(t, srv, redisfleet.Config{CallTimeout: callTimeout, Lease: lease, Logger: log})
			fs = append(fs, frOpen(t, f, Config{MaxWait: 200 * time.Millisecond}))
		}
		// A host in every partition, so that whichever partition a pop that
		// times out goes to, it has a request to lease when it runs late.
		want := map[string]bool{}
		covered := map[int]bool{}
		for h := 0; len(covered) < fs[0].set.Partitions; h++ {
			p := fs[0].fl.Part(fmt.Sprintf("http://h%d.example", h))
			if covered[p] {
				continue
			}
			covered[p] = true
			for i := range 2 {
				u := fmt.Sprintf("http://h%d.example/%d", h, i)
				want[u] = true
				if err := fs[0].AddRequest(testutil.CollyRequest(t, u)); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Warm both clients' pools, so that pops go out on open connections
		// while Redis hangs (a new connection's handshake would time out
		// before the script is written), with the pop script loaded, as in a
		// fleet that has been crawling.
		for _, q := range fs {
			if err := lua.FrontierPop.Load(context.Background(), q.rdb).Err(); err != nil {
				t.Fatal(err)
			}
			for range 4 {
				if _, err := q.QueueSize(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := srv.Pause(); err != nil {
			t.Fatal(err)
		}
		var (
			mu      sync.Mutex
			handed  = map[string]int{}
			last    time.Time
			resumed time.Time
		)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for _, q := range fs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					b, err := q.GetRequest()
					if err != nil {
						continue
					}
					r, err := colly.NewCollector().UnmarshalRequest(b)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					handed[r.URL.String()]++
					last = time.Now()
					mu.Unlock()
					q.Done(leaseOf(r.Ctx))
				}
			}()
		}
		time.Sleep(3 * time.Second)
		mu.Lock()
		resumed = time.Now()
		mu.Unlock()
		if err := srv.Resume(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			n := len(handed)
			mu.Unlock()
			if n == len(want) || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		close(stop)
		wg.Wait()
		for u := range want {
			if handed[u] != 1 {
				t.Errorf("%s handed out %d times, want once", u, handed[u])
			}
		}
		after := last.Sub(resumed)
		t.Logf("every request handed out %v after Redis resumed (call timeout %v, lease %v)", after.Round(time.Millisecond), callTimeout, lease)
		if after > 4*callTimeout {
			t.Errorf("the last request was handed out %v after Redis resumed: a late pop held its host (lease %v); want within a few call timeouts", after, lease)
		}
		for i, q := range fs {
			if st := q.Stats(); st.Reaped != 0 || st.Leased != 0 {
				t.Errorf("process %d: %+v: leases reaped or left", i, st)
			}
		}
		if strings.Contains(logs.String(), "stopped renewing") {
			t.Errorf("a live process's late pop was reported as a dead process's lease:\n%s", logs.String())
		}
	})
}
