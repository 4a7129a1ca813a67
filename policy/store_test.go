package policy

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/testkit/testutil"
)

// TestStoreRoundTrip: a policy fetched by one resolver is served to another
// from the Store, without a fetch.
func TestStoreRoundTrip(t *testing.T) {
	clock := testutil.NewStepClock()
	store := NewMemoryStore(clock)
	srv := newRobotsServer(t, text(200, rulesBody+"Crawl-delay: 3\nSitemap: https://example.com/s.xml\n"))
	a := newResolver(t, WithStore(store), WithClock(clock), WithAgents("examplebot"))
	pa := mustPolicy(t, a, srv.URL+"/")
	if store.Len() != 1 {
		t.Fatalf("store holds %d items", store.Len())
	}
	b := newResolver(t, WithStore(store), WithClock(clock), WithAgents("examplebot"))
	pb := mustPolicy(t, b, srv.URL+"/x")
	if srv.hits.Load() != 1 {
		t.Fatalf("second resolver fetched: %d requests", srv.hits.Load())
	}
	samePolicy(t, pa, pb)
	if v := check(t, pb, srv.URL+"/private/1"); v.Allowed || v.Rule.Line != 2 {
		t.Errorf("from the store: %s", v)
	}
	if d, ok := pb.CrawlDelay(); !ok || d != 3*time.Second {
		t.Errorf("crawl delay %v", d)
	}
	if s := pb.Robots().Sitemaps(); len(s) != 1 {
		t.Errorf("sitemaps %v", s)
	}
	// Another dialect does not share the entry.
	c := newResolver(t, WithStore(store), WithClock(clock), WithDialect(dialect.Google))
	mustPolicy(t, c, srv.URL+"/")
	if srv.hits.Load() != 2 {
		t.Errorf("google resolver used the rfc9309 entry")
	}
	// Expired in the store: fetched again.
	clock.Advance(oneDay)
	d := newResolver(t, WithStore(store), WithClock(clock))
	mustPolicy(t, d, srv.URL+"/")
	if srv.hits.Load() != 3 {
		t.Errorf("expired entry not fetched again: %d requests", srv.hits.Load())
	}
}

// TestStoreKeepsLastGood: a restarted crawler finds the last good copy and
// the failure run in the Store.
func TestStoreKeepsLastGood(t *testing.T) {
	clock := testutil.NewStepClock()
	store := NewMemoryStore(clock)
	srv := newRobotsServer(t, text(200, rulesBody))
	a := newResolver(t, WithStore(store), WithClock(clock), WithDialect(dialect.Google))
	mustPolicy(t, a, srv.URL+"/")
	srv.set(text(503, ""))
	clock.Advance(oneDay)
	p := mustPolicy(t, a, srv.URL+"/")
	if p.Action() != actDisallow {
		t.Fatalf("%s", p)
	}
	// A new process, 12 hours into the failure.
	clock.Advance(12 * time.Hour)
	b := newResolver(t, WithStore(store), WithClock(clock), WithDialect(dialect.Google))
	p = mustPolicy(t, b, srv.URL+"/")
	if p.Action() != dialect.ActionUseLastGood {
		t.Fatalf("restarted: %s", p)
	}
	if since, _ := p.failingSince(); !since.Equal(testutil.ClockStart.Add(oneDay)) {
		t.Errorf("failing since %v", since)
	}
	if v := check(t, p, srv.URL+"/private"); v.Allowed {
		t.Errorf("%s", v)
	}
	// And a third one is served that policy from the Store.
	hits := srv.hits.Load()
	c := newResolver(t, WithStore(store), WithClock(clock), WithDialect(dialect.Google))
	samePolicy(t, p, mustPolicy(t, c, srv.URL+"/"))
	if srv.hits.Load() != hits {
		t.Errorf("fetched although the Store had a current policy")
	}
}

func samePolicy(t *testing.T, a, b *Policy) {
	t.Helper()
	fa, fb := a.Fetch(), b.Fetch()
	if !fa.Time.Equal(fb.Time) {
		t.Errorf("fetch time %v != %v", fa.Time, fb.Time)
	}
	fa.Time, fb.Time = time.Time{}, time.Time{}
	if a.Authority() != b.Authority() || a.dialectDecision() != b.dialectDecision() || !a.Expires().Equal(b.Expires()) || !reflect.DeepEqual(fa, fb) {
		t.Errorf("policies differ:\n%s %+v %+v\n%s %+v %+v", a, a.dialectDecision(), fa, b, b.dialectDecision(), fb)
	}
	if a.Reason() != b.Reason() {
		t.Errorf("reasons differ: %q, %q", a.Reason(), b.Reason())
	}
	la, oka := a.lastGoodAt()
	lb, okb := b.lastGoodAt()
	if oka != okb || !la.Equal(lb) {
		t.Errorf("last good %v %v, %v %v", la, oka, lb, okb)
	}
	if (a.Rules() == nil) != (b.Rules() == nil) {
		t.Errorf("rules in force differ")
	}
	if a.Rules() != nil && !reflect.DeepEqual(a.Rules().Rules(), b.Rules().Rules()) {
		t.Errorf("rules differ")
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, s := range []string{"", "{", `{"v":2}`, `{"v":1,"authority":"http://a","dialect":"google"}`,
		`{"v":1,"authority":"http://a","dialect":"rfc9309","action":0}`, // parse without a copy
		`{"v":1,"authority":"http://a","dialect":"rfc9309","action":9}`} {
		if _, err := decodePolicy([]byte(s), dialect.RFC9309, nil); err == nil {
			t.Errorf("decoded %q", s)
		}
	}
}

// brokenStore fails every call.
type brokenStore struct{}

func (brokenStore) Get(context.Context, string) ([]byte, bool, error) {
	return nil, false, errors.New("store down")
}

func (brokenStore) Put(context.Context, string, []byte, time.Duration) error {
	return errors.New("store down")
}

// TestStoreErrors: a failing Store does not stop the resolver.
func TestStoreErrors(t *testing.T) {
	srv := newRobotsServer(t, text(200, rulesBody))
	r := newResolver(t, WithStore(brokenStore{}))
	if p := mustPolicy(t, r, srv.URL+"/"); p.Action() != actParse {
		t.Errorf("%s", p)
	}
	mustPolicy(t, r, srv.URL+"/")
	if srv.hits.Load() != 1 {
		t.Errorf("%d fetches", srv.hits.Load())
	}
}

func TestMemoryStore(t *testing.T) {
	clock := testutil.NewStepClock()
	s := NewMemoryStore(clock)
	ctx := context.Background()
	if err := s.Put(ctx, "k", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.Get(ctx, "k"); string(v) != "v" || !ok || err != nil {
		t.Errorf("Get = %q %v %v", v, ok, err)
	}
	clock.Advance(time.Minute)
	if _, ok, _ := s.Get(ctx, "k"); ok || s.Len() != 0 {
		t.Errorf("expired item returned or kept")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := s.Get(cctx, "k"); err == nil {
		t.Errorf("Get ignores its context")
	}
}

// hungStore never answers until its context ends.
type hungStore struct{ calls atomic.Int64 }

func (s *hungStore) Get(ctx context.Context, _ string) ([]byte, bool, error) {
	s.calls.Add(1)
	<-ctx.Done()
	return nil, false, ctx.Err()
}

func (s *hungStore) Put(ctx context.Context, _ string, _ []byte, _ time.Duration) error {
	s.calls.Add(1)
	<-ctx.Done()
	return ctx.Err()
}

// A Store that hangs costs each load at most the store timeout (twice: get,
// put); the policy is fetched and cached as without a Store.
func TestStoreHungIsBounded(t *testing.T) {
	srv := newRobotsServer(t, text(200, rulesBody))
	st := &hungStore{}
	r := newResolver(t, WithStore(st), WithStoreTimeout(50*time.Millisecond))
	if p := mustPolicy(t, r, srv.URL+"/"); p.Action() != actParse {
		t.Errorf("%s", p)
	}
	if st.calls.Load() != 2 || srv.hits.Load() != 1 {
		t.Errorf("store calls %d, fetches %d: want 2 and 1", st.calls.Load(), srv.hits.Load())
	}
}
