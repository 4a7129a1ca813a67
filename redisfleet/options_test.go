package redisfleet

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/internal/redistest"
)

// TestLeaseAtLeastThreeCallTimeouts: a lease that a renewal taking a whole
// call timeout could miss is raised, with a warning.
func TestLeaseAtLeastThreeCallTimeouts(t *testing.T) {
	srv := redistest.Start(t)
	var logs syncBuffer
	f := newFleet(t, srv, WithLease(time.Second), WithCallTimeout(2*time.Second),
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if got := f.Lease(); got != 6*time.Second {
		t.Fatalf("lease %v with a 2s call timeout, want 6s", got)
	}
	if !strings.Contains(logs.String(), "shorter than 3 call timeouts") {
		t.Fatalf("no warning: %q", logs.String())
	}
	if got := newFleet(t, srv, WithLease(time.Second), WithCallTimeout(300*time.Millisecond)).Lease(); got != time.Second {
		t.Fatalf("lease %v, want the 1s asked for", got)
	}
}
