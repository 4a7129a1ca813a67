package redisfleet

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/internal/redistest"
)

// newClient returns a client of srv with the options ParseURL sets.
func newClient(t testing.TB, srv *redistest.Server) *redis.Client {
	t.Helper()
	o, err := ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// newFleet returns a Fleet on a client of its own, closed when t ends.
func newFleet(t testing.TB, srv *redistest.Server, opts ...Option) *Fleet {
	t.Helper()
	f, err := New(context.Background(), newClient(t, srv), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestNewUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer c.Close()
	f, err := New(context.Background(), c, WithCallTimeout(500*time.Millisecond))
	if err == nil {
		f.Close()
		t.Fatal("New on an address nothing listens on succeeded")
	}
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("New's error %q does not wrap ErrUnavailable", err)
	}
}

func TestNewMarksEpochAndKeys(t *testing.T) {
	srv := redistest.Start(t)
	f := newFleet(t, srv, WithPrefix("t1:"))
	c := newClient(t, srv)
	v, err := c.Get(context.Background(), "t1:v1:epoch").Result()
	if err != nil || v != "0" {
		t.Fatalf("epoch after New on an empty Redis = %q, %v; want \"0\"", v, err)
	}
	h, z := f.HostKeys("https://example.com")
	if h != "t1:v1:host:{https://example.com}" || z != "t1:v1:hold:{https://example.com}" {
		t.Fatalf("HostKeys = %q, %q", h, z)
	}
	if k := f.Key("frontier", "q"); k != "t1:v1:frontier:q" {
		t.Fatalf("Key(frontier, q) = %q", k)
	}
}

func TestNotifyReachesSubscribers(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newFleet(t, srv), newFleet(t, srv)
	ch, cancel := b.Subscribe("k")
	defer cancel()
	if err := a.Notify(context.Background(), "k"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("a wake-up published by one fleet handle did not reach another's subscriber")
	}
}
