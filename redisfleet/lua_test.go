package redisfleet

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/internal/testutil"
	"github.com/politecrawl/robots/redisfleet/internal/lua"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

// TestLimiterReplyDecoded: limiter.lua's replies read by name: a grant
// carries the delay it was made under, the next caller is told to come
// back within that delay, and a pause comes back as its length.
func TestLimiterReplyDecoded(t *testing.T) {
	f := newFleet(t, redistest.Start(t))
	ctx := context.Background()
	host := "decode.example"
	p, keys := f.part(host), f.hostScriptKeys(host)
	const delay = 3 * time.Second
	r, err := f.runHost(ctx, p, keys, 0, opAcquire, "a", delay.Microseconds(), int64(time.Second/time.Microsecond), -1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != 1 || r.Delay != delay.Microseconds() || r.Fail != 0 {
		t.Fatalf("first acquire: %+v, want granted under %v", r, delay)
	}
	r, err = f.runHost(ctx, p, keys, 0, opAcquire, "b", delay.Microseconds(), int64(time.Second/time.Microsecond), -1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != 0 || r.Wait <= 0 || r.Wait > f.cfg.lease+delay {
		t.Fatalf("second acquire while the first holds the host: %+v, want a wait", r)
	}
	r, err = f.runHost(ctx, p, keys, 0, opPause, "", -1, (5 * time.Second).Microseconds())
	if err != nil {
		t.Fatal(err)
	}
	if r.Pause != 5*time.Second {
		t.Fatalf("pause: %+v, want Pause 5s", r)
	}
}

// TestPopReplyDecoded: frontier_pop.lua's reply read by name: a pop on a
// partition with one request hands it out (not early: the host has no
// limiter state), and the next pop finds nothing queued, with the request
// still out.
func TestPopReplyDecoded(t *testing.T) {
	f := newFleet(t, redistest.Start(t))
	q := f.Frontier(FrontierConfig{MaxWait: time.Second})
	defer q.Close()
	b := testutil.CollyRequest(t, "http://pop.example/a")
	if err := q.AddRequest(b); err != nil {
		t.Fatal(err)
	}
	req, err := frontier.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	p := f.part(req.Host)
	pop := func() popReply {
		t.Helper()
		v, err := q.run(context.Background(), p, lua.FrontierPop, f.tag(p), f.token(), f.cfg.lease.Microseconds(), 1, 0, frontierScan,
			frontierBusyPoll.Microseconds(), frontierCapWait.Microseconds(), q.cfg.maxWait.Microseconds(),
			frontierReapPoll.Microseconds(), f.procID, 0, f.cfg.idleTTL.Microseconds(), 0, "")
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
