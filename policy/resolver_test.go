package policy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/testkit/testutil"
)

// robotsServer is an httptest server whose handler can be swapped and which
// counts the requests it sees.
type robotsServer struct {
	*httptest.Server
	hits atomic.Int64
	mu   sync.Mutex
	h    http.Handler
	uas  []string
}

func newRobotsServer(t testing.TB, h http.HandlerFunc) *robotsServer {
	s := &robotsServer{h: h}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mu.Lock()
		s.uas = append(s.uas, r.Header.Get("User-Agent"))
		h := s.h
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *robotsServer) set(h http.HandlerFunc) {
	s.mu.Lock()
	s.h = h
	s.mu.Unlock()
}

func (s *robotsServer) userAgents() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.uas...)
}

func text(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// newResolver is NewResolver for options that are valid: an error fails
// the test.
func newResolver(tb testing.TB, opts ...Option) *Resolver {
	tb.Helper()
	r, err := NewResolver(opts...)
	if err != nil {
		tb.Fatalf("NewResolver: %v", err)
	}
	return r
}

func mustPolicy(t testing.TB, r *Resolver, rawURL string) *Policy {
	t.Helper()
	p, err := r.Policy(context.Background(), mustURL(t, rawURL))
	if err != nil {
		t.Fatalf("Policy(%s): %v", rawURL, err)
	}
	return p
}

func check(t testing.TB, p *Policy, rawURL string) Verdict {
	t.Helper()
	return p.Check(mustURL(t, rawURL))
}

const rulesBody = "User-agent: *\nDisallow: /private\n"

func TestPolicyUserAgentAndTokens(t *testing.T) {
	srv := newRobotsServer(t, text(200, "User-agent: *\nDisallow: /\n\nUser-agent: examplebot\nDisallow: /private\nCrawl-delay: 2\n"))
	r := newResolver(t, WithUserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"))
	if got := r.Agents(); len(got) != 1 || got[0] != "ExampleBot" {
		t.Fatalf("derived tokens %q", got)
	}
	p := mustPolicy(t, r, srv.URL+"/")
	if v := check(t, p, srv.URL+"/public"); !v.Allowed || v.Reason != dialect.ReasonNoRule {
		t.Errorf("/public: %+v %s", v, v)
	}
	if v := check(t, p, srv.URL+"/private/a?b=c"); v.Allowed || v.Reason != dialect.ReasonRule || v.Rule.Line != 5 {
		t.Errorf("/private/a?b=c: %+v %s", v, v)
	}
	if d, ok := p.CrawlDelay(); !ok || d != 2*time.Second {
		t.Errorf("crawl delay %v %v", d, ok)
	}
	if uas := srv.userAgents(); len(uas) != 1 || uas[0] != "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)" {
		t.Errorf("server saw User-Agent %q", uas)
	}
	// The same authority written differently shares the policy.
	u := mustURL(t, srv.URL)
	if p2 := mustPolicy(t, r, "HTTP://"+strings.ToUpper(u.Host)+"/x"); p2 != p {
		t.Errorf("same authority, another policy")
	}
	if srv.hits.Load() != 1 {
		t.Errorf("%d fetches, want 1", srv.hits.Load())
	}
	// Explicit tokens win over the User-Agent.
	r2 := newResolver(t, WithUserAgent("ExampleBot/1.0"), WithAgents("otherbot"))
	if v := check(t, mustPolicy(t, r2, srv.URL+"/"), srv.URL+"/public"); v.Allowed {
		t.Errorf("otherbot gets the * group: %s", v)
	}
}

func TestPolicyErrors(t *testing.T) {
	r := newResolver(t)
	if _, err := r.Policy(context.Background(), mustURL(t, "ftp://example.com/x")); !errors.Is(err, ErrUnsupportedURL) {
		t.Errorf("ftp: %v", err)
	}
	if _, err := r.Check(context.Background(), mustURL(t, "mailto:x@example.com")); !errors.Is(err, ErrUnsupportedURL) {
		t.Errorf("mailto: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Policy(ctx, mustURL(t, "http://127.0.0.1:1/")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// TestWaitersGiveUp: a caller whose context ends stops waiting; the fetch
// goes on and serves the others.
func TestWaitersGiveUp(t *testing.T) {
	release := make(chan struct{})
	srv := newRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		text(200, rulesBody)(w, r)
	})
	r := newResolver(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan *Policy)
	go func() { done <- mustPolicy(t, r, srv.URL+"/") }()
	if _, err := r.Policy(ctx, mustURL(t, srv.URL+"/")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("impatient caller: %v", err)
	}
	close(release)
	p := <-done
	if p.Action() != dialect.ActionParse || srv.hits.Load() != 1 {
		t.Errorf("patient caller: %s after %d fetches", p, srv.hits.Load())
	}
}

// TestSingleFlight: 1,000 goroutines ask for the policy of one new
// authority; the server sees one request.
func TestSingleFlight(t *testing.T) {
	srv := newRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(50 * time.Millisecond) // let the callers pile up
		text(200, rulesBody)(w, r)
	})
	r := newResolver(t)
	u := mustURL(t, srv.URL+"/private/x")
	var wg sync.WaitGroup
	start := make(chan struct{})
	var disallowed atomic.Int64
	errs := make(chan error, 1000)
	for i := 0; i < 1000; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			v, err := r.Check(context.Background(), u)
			if err != nil {
				errs <- err
				return
			}
			if !v.Allowed {
				disallowed.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
	if disallowed.Load() != 1000 {
		t.Errorf("%d of 1000 disallowed", disallowed.Load())
	}
}

// TestLRU: a capacity of 2 authorities evicts the least recently used.
func TestLRU(t *testing.T) {
	a := newRobotsServer(t, text(200, rulesBody))
	b := newRobotsServer(t, text(404, ""))
	c := newRobotsServer(t, text(200, ""))
	r := newResolver(t, WithCapacity(2))
	mustPolicy(t, r, a.URL+"/")
	mustPolicy(t, r, b.URL+"/")
	mustPolicy(t, r, a.URL+"/") // a is now the most recently used
	mustPolicy(t, r, c.URL+"/") // evicts b
	if r.Len() != 2 {
		t.Errorf("Len = %d, want 2", r.Len())
	}
	mustPolicy(t, r, a.URL+"/")
	mustPolicy(t, r, c.URL+"/")
	if a.hits.Load() != 1 || c.hits.Load() != 1 {
		t.Errorf("a fetched %d times, c %d; want 1 and 1", a.hits.Load(), c.hits.Load())
	}
	mustPolicy(t, r, b.URL+"/") // evicted: fetched again, evicts a
	if b.hits.Load() != 2 {
		t.Errorf("b fetched %d times, want 2", b.hits.Load())
	}
	mustPolicy(t, r, a.URL+"/")
	if a.hits.Load() != 2 {
		t.Errorf("a fetched %d times, want 2", a.hits.Load())
	}
}

func TestCacheShardedCapacity(t *testing.T) {
	c := newCache(5000, defaultCacheBytes)
	p := &Policy{expires: testutil.ClockStart.Add(time.Hour)}
	for i := 0; i < 20000; i++ {
		c.put("http://h"+strconv.Itoa(i)+".test", p)
	}
	if n := c.len(); n != 5000 {
		t.Errorf("len %d after 20000 puts into capacity 5000", n)
	}
	if c.get([]byte("http://h19999.test"), testutil.ClockStart) != p {
		t.Errorf("most recent entry evicted")
	}
	if c.get([]byte("http://h0.test"), testutil.ClockStart) != nil {
		t.Errorf("oldest entry kept")
	}
}

// TestMaxAge: Cache-Control max-age moves the lifetime within the bounds.
func TestMaxAge(t *testing.T) {
	cases := []struct {
		header string
		want   time.Duration
	}{
		{"", 24 * time.Hour},
		{"max-age=3600", time.Hour},
		{"public, max-age=\"7200\"", 2 * time.Hour},
		{"max-age=60", 5 * time.Minute},     // raised to the lower bound
		{"no-cache", 5 * time.Minute},       // as max-age=0
		{"max-age=1000000", 48 * time.Hour}, // cut to the upper bound
		{"max-age=99999999999999999", 48 * time.Hour},
		{"max-age=junk", 24 * time.Hour},
	}
	for _, c := range cases {
		srv := newRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
			if c.header != "" {
				w.Header().Set("Cache-Control", c.header)
			}
			text(200, rulesBody)(w, r)
		})
		clock := testutil.NewStepClock()
		r := newResolver(t, WithClock(clock), WithMaxAgeBounds(5*time.Minute, 48*time.Hour))
		p := mustPolicy(t, r, srv.URL+"/")
		if got := p.Expires().Sub(testutil.ClockStart); got != c.want {
			t.Errorf("Cache-Control %q: lifetime %v, want %v", c.header, got, c.want)
		}
		clock.Advance(c.want - time.Second)
		mustPolicy(t, r, srv.URL+"/")
		clock.Advance(time.Second)
		mustPolicy(t, r, srv.URL+"/")
		if srv.hits.Load() != 2 {
			t.Errorf("Cache-Control %q: %d fetches, want 2", c.header, srv.hits.Load())
		}
	}
	// Default bounds: max-age shortens, does not lengthen.
	srv := newRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=604800")
		text(200, rulesBody)(w, r)
	})
	r := newResolver(t, WithClock(testutil.NewStepClock()))
	if got := mustPolicy(t, r, srv.URL+"/").Expires().Sub(testutil.ClockStart); got != 24*time.Hour {
		t.Errorf("default bounds: lifetime %v", got)
	}
}

// TestHTTPClientOption: fetches go through the user's client (here a
// transport that sends every request to the test server, as a proxy would).
func TestHTTPClientOption(t *testing.T) {
	srv := newRobotsServer(t, text(200, rulesBody))
	var seen atomic.Int64
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			seen.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
		},
	}, CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("never called") }}
	r := newResolver(t, WithHTTPClient(client))
	p := mustPolicy(t, r, "http://crawl.example/page")
	if p.Authority() != "http://crawl.example" || p.Action() != dialect.ActionParse || seen.Load() != 1 {
		t.Errorf("%s; %d dials", p, seen.Load())
	}
	if v := check(t, p, "http://crawl.example/private"); v.Allowed {
		t.Errorf("%s", v)
	}
}

// The cache holds about WithCacheBytes of policies: big robots.txt files
// evict the least recently used authorities, never the one just fetched,
// and a single policy larger than the budget is still kept.
func TestCacheBytesBudget(t *testing.T) {
	var big strings.Builder
	big.WriteString("User-agent: *\n")
	for i := 0; big.Len() < 100_000; i++ {
		fmt.Fprintf(&big, "Disallow: /section-%d/*.pdf$\n", i)
	}
	for _, capacity := range []int{100, shardMin} { // one LRU, and 16 shards
		r, _ := loopbackResolver(t, text(200, big.String()), WithCapacity(capacity), WithCacheBytes(4<<20))
		one := mustPolicyURL(t, r, "http://h0.test/")
		per := one.footprint()
		if per < 400_000 {
			t.Fatalf("a 100 KB robots.txt holds %d bytes by estimate", per)
		}
		for i := 1; i < 40; i++ {
			mustPolicyURL(t, r, fmt.Sprintf("http://h%d.test/", i))
			if r.Bytes() > 4<<20 {
				t.Fatalf("capacity %d: %d bytes held after %d authorities, budget %d", capacity, r.Bytes(), i+1, 4<<20)
			}
		}
		if n := r.Len(); n >= 40 || int64(n) < (4<<20)/per-2 {
			t.Errorf("capacity %d: %d policies of about %d bytes kept under a 4 MiB budget", capacity, n, per)
		}
		// The latest is kept; in one LRU (not sharded) the oldest is gone.
		if r.cache.peek("http://h39.test") == nil {
			t.Errorf("capacity %d: the policy just fetched was evicted", capacity)
		}
		if capacity < shardMin && r.cache.peek("http://h0.test") != nil {
			t.Errorf("capacity %d: eviction is not least recently used first", capacity)
		}
	}
	r, _ := loopbackResolver(t, text(200, big.String()), WithCacheBytes(1000))
	mustPolicyURL(t, r, "http://h0.test/")
	if r.Len() != 1 {
		t.Errorf("a policy larger than the budget was not kept: Len %d", r.Len())
	}
}

func mustPolicyURL(t *testing.T, r *Resolver, raw string) *Policy {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Policy(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A token the dialect does not compare whole is warned about once, at
// construction, with what is compared instead.
func TestAgentTokenWarning(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	newResolver(t, WithLogger(log), WithAgents("examplebot", "USpider/1.0"))
	out := buf.String()
	if strings.Count(out, "read as its product token") != 1 || !strings.Contains(out, "agent=USpider/1.0 token=USpider") {
		t.Errorf("log %q: want one warning for USpider/1.0, read as USpider", out)
	}
	if got := newResolver(t, WithLogger(log), WithAgents("examplebot", "USpider/1.0")).Agents(); got[1] != "USpider" {
		t.Errorf("agents %q: USpider/1.0 not reduced", got)
	}
	buf.Reset()
	newResolver(t, WithLogger(log), WithAgents("Foo Bar"))
	if strings.Count(buf.String(), "does not compare this agent token whole") != 1 {
		t.Errorf("log %q: want one warning for a name with a space", buf.String())
	}
	buf.Reset()
	newResolver(t, WithLogger(log), WithAgents("examplebot", "MJ12bot"))
	if buf.Len() != 0 {
		t.Errorf("warned for whole tokens: %q", buf.String())
	}
}

// An out-of-range option value is an error naming the option and the
// value, and no resolver; 0 means the default and is accepted; several bad
// values are joined, each named once.
func TestOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		opt  Option
		want string // "" for a valid value
	}{
		{WithTimeout(-1), "policy: WithTimeout(-1ns): a timeout cannot be negative"},
		{WithTimeout(0), ""},
		{WithTTL(-time.Hour), "policy: WithTTL(-1h0m0s): cannot be negative"},
		{WithTTL(0), ""},
		{WithMaxAgeBounds(-1, 0), "policy: WithMaxAgeBounds(-1ns, 0s): a bound cannot be negative"},
		{WithMaxAgeBounds(0, -time.Second), "policy: WithMaxAgeBounds(0s, -1s): a bound cannot be negative"},
		{WithMaxAgeBounds(0, 0), ""},
		{WithCapacity(-5), "policy: WithCapacity(-5): cannot be negative"},
		{WithCapacity(0), ""},
		{WithCacheBytes(-1), "policy: WithCacheBytes(-1): cannot be negative"},
		{WithCacheBytes(0), ""},
		{WithStoreTimeout(-time.Second), "policy: WithStoreTimeout(-1s): cannot be negative"},
		{WithStoreTimeout(0), ""},
		{nil, ""},
	} {
		r, err := NewResolver(tc.opt)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("a valid value: %v", err)
		case tc.want == "" && r == nil:
			t.Errorf("a valid value: no resolver")
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("error %v, want %q", err, tc.want)
		case tc.want != "" && r != nil:
			t.Errorf("%q: a resolver returned with the error", tc.want)
		}
	}
	// 0 means the default.
	r := newResolver(t, WithTimeout(0), WithTTL(0), WithMaxAgeBounds(0, 0), WithCapacity(0), WithCacheBytes(0), WithStoreTimeout(0))
	if r.cfg.totalTimeout != defaultTotalTimeout || r.cfg.ttl != r.cfg.dialect.CacheTTL() || r.cfg.minAge != defaultMinMaxAge ||
		r.cfg.maxAge != r.cfg.ttl || r.cfg.capacity != defaultCapacity || r.cfg.cacheBytes != defaultCacheBytes || r.cfg.storeTimeout != defaultStoreTimeout {
		t.Errorf("0 did not give the defaults: %+v", r.cfg)
	}

	r, err := NewResolver(WithCapacity(-5), WithTTL(-time.Hour), WithTimeout(-1), WithStoreTimeout(-time.Second),
		WithCacheBytes(-1), WithMaxAgeBounds(-1, -1), WithAgents("examplebot"))
	if err == nil || r != nil {
		t.Fatalf("NewResolver = %v, %v; want an error and no resolver", r, err)
	}
	for _, want := range []string{"WithCapacity(-5)", "WithTTL(-1h0m0s)", "WithTimeout(-1ns)", "WithStoreTimeout(-1s)", "WithCacheBytes(-1)", "WithMaxAgeBounds(-1ns, -1ns)"} {
		if strings.Count(err.Error(), want) != 1 {
			t.Errorf("error does not name %q once: %v", want, err)
		}
	}
	if j, ok := err.(interface{ Unwrap() []error }); !ok || len(j.Unwrap()) != 6 {
		t.Errorf("error %v: want the 6 errors joined", err)
	}
}
