package fleetfrontier

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/redisfleet/internal/lua"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// TestPopReplyDecoded: frontier_pop.lua's reply read by name: a pop on a
// partition with one request hands it out (not early: the host has no
// limiter state), and the next pop finds nothing queued, with the request
// still out.
func TestPopReplyDecoded(t *testing.T) {
	f := frFleet(t, redistest.Start(t))
	q := New(f, Config{MaxWait: time.Second})
	defer q.Close()
	b := testutil.CollyRequest(t, "http://pop.example/a")
	if err := q.AddRequest(b); err != nil {
		t.Fatal(err)
	}
	req, err := frontier.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	p := q.fl.Part(req.Host)
	pop := func() popReply {
		t.Helper()
		v, err := q.run(context.Background(), p, lua.FrontierPop, q.fl.Tag(p), q.fl.Token(), q.set.Lease.Microseconds(), 1, 0, frontierScan,
			frontierBusyPoll.Microseconds(), frontierCapWait.Microseconds(), q.cfg.maxWait.Microseconds(),
			frontierReapPoll.Microseconds(), q.set.ProcID, 0, q.set.IdleTTL.Microseconds(), 0, "")
		if err != nil {
			t.Fatal(err)
		}
		return decodePop(v)
	}
	r := pop()
	if !r.Handed || r.Early || r.Granted || r.PolicyRead || !strings.Contains(r.Payload, "http://pop.example/a") || r.Now <= 0 || r.Look < r.Now {
		t.Fatalf("first pop: %+v", r)
	}
	r = pop()
	if r.Handed || r.Soonest != -1 || r.Leased != 1 {
		t.Fatalf("second pop: %+v, want nothing queued and one request out", r)
	}
}
