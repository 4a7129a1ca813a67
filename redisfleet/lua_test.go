package redisfleet

import (
	"context"
	"testing"
	"time"

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
