package robots

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
)

// farm is one loopback server answering for many host names: the client's
// dialer sends every host to it, so Host headers and robots.txt are real.
type farm struct {
	srv   *httptest.Server
	mu    sync.Mutex
	sites map[string]*farmSite
	hits  []hit
}

type farmSite struct {
	robots       string
	robotsStatus int                                               // 0: 200
	handle       func(w http.ResponseWriter, r *http.Request) bool // true: handled
}

type hit struct {
	host, path string
	at         time.Time
}

func newFarm(t testing.TB, sites map[string]*farmSite) *farm {
	f := &farm{sites: sites}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *farm) serve(w http.ResponseWriter, r *http.Request) {
	host, _, _ := net.SplitHostPort(r.Host)
	if host == "" {
		host = r.Host
	}
	f.mu.Lock()
	f.hits = append(f.hits, hit{host: host, path: r.URL.RequestURI(), at: time.Now()})
	s := f.sites[host]
	f.mu.Unlock()
	if s == nil {
		http.NotFound(w, r)
		return
	}
	if r.URL.Path == "/robots.txt" {
		if s.robotsStatus != 0 && s.robotsStatus != 200 {
			w.WriteHeader(s.robotsStatus)
			return
		}
		fmt.Fprint(w, s.robots)
		return
	}
	if s.handle != nil && s.handle(w, r) {
		return
	}
	fmt.Fprintf(w, "<html><body>%s</body></html>", r.URL.Path)
}

// transport dials the farm whatever the host.
func (f *farm) transport() *http.Transport {
	addr := f.srv.Listener.Addr().String()
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConnsPerHost: 100,
	}
}

// pages returns the hits for host, robots.txt included or not, in arrival order.
func (f *farm) pages(host string, withRobots bool) []hit {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []hit
	for _, h := range f.hits {
		if h.host == host && (withRobots || h.path != "/robots.txt") {
			out = append(out, h)
		}
	}
	return out
}

func (f *farm) paths(host string) []string {
	var p []string
	for _, h := range f.pages(host, false) {
		p = append(p, h.path)
	}
	sort.Strings(p)
	return p
}

func minGap(hs []hit) time.Duration {
	m := time.Duration(1 << 62)
	for i := 1; i < len(hs); i++ {
		if g := hs[i].at.Sub(hs[i-1].at); g < m {
			m = g
		}
	}
	return m
}

type blockLog struct {
	mu sync.Mutex
	bs []Block
}

func (l *blockLog) add(b Block) { l.mu.Lock(); l.bs = append(l.bs, b); l.mu.Unlock() }

func (l *blockLog) all() []Block {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Block(nil), l.bs...)
}

func newCollector(async bool, opts ...colly.CollectorOption) *colly.Collector {
	o := append([]colly.CollectorOption{colly.UserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)")}, opts...)
	if async {
		o = append(o, colly.Async(true))
	}
	c := colly.NewCollector(o...)
	c.AllowURLRevisit = true
	return c
}

func TestPluginEnforcesRulesSyncAndAsync(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			f := newFarm(t, map[string]*farmSite{
				"a.test": {robots: "User-agent: *\nDisallow: /private\n\nUser-agent: examplebot\nDisallow: /bot-only\nAllow: /private/press\nDisallow: /private\n"},
			})
			var blocks blockLog
			c := newCollector(async, WithRobots(WithTransport(f.transport()), WithOnBlocked(blocks.add)))
			var fetched sync.Map
			c.OnResponse(func(r *colly.Response) { fetched.Store(r.Request.URL.Path, true) })
			for _, p := range []string{"/", "/private/x", "/private/press/1", "/bot-only", "/public"} {
				if err := c.Visit("http://a.test" + p); err != nil {
					t.Fatal(err)
				}
			}
			c.Wait()
			if got := strings.Join(f.paths("a.test"), " "); got != "/ /private/press/1 /public" {
				t.Errorf("server saw %q", got)
			}
			bs := blocks.all()
			sort.Slice(bs, func(i, j int) bool { return bs[i].URL < bs[j].URL })
			if len(bs) != 2 || bs[0].URL != "http://a.test/bot-only" || bs[0].Verdict.Rule == nil || bs[0].Verdict.Rule.Line != 5 ||
				bs[1].Reason != "line 7: Disallow: /private" || bs[1].Kind != Disallowed || bs[1].Request == nil || bs[1].Dialect != "rfc9309" {
				t.Errorf("blocks: %v", bs)
			}
			if _, ok := fetched.Load("/private/x"); ok {
				t.Error("a disallowed page reached OnResponse")
			}
		})
	}
}

func TestPluginSpacingEndToStart(t *testing.T) {
	cases := []struct {
		name    string
		d       *dialect.Dialect
		robots  string
		n       int
		want    time.Duration
		workers int
	}{
		{"rfc9309 0.2s", dialect.RFC9309, "User-agent: *\nCrawl-delay: 0.2\n", 6, 200 * time.Millisecond, 8},
		{"coccoc 100s read as 10s", dialect.CocCoc, "User-agent: *\nCrawl-delay: 100\n", 1, 10 * time.Second, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.want > time.Second {
				t.Skip("slow")
			}
			f := newFarm(t, map[string]*farmSite{"d.test": {robots: tc.robots}})
			c := newCollector(true, WithRobots(WithTransport(f.transport()), WithDialect(tc.d)))
			c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: tc.workers})
			for i := 0; i < tc.n; i++ {
				c.Visit(fmt.Sprintf("http://d.test/p%d", i))
			}
			c.Wait()
			hs := f.pages("d.test", true)
			if len(hs) != tc.n+1 {
				t.Fatalf("server saw %d requests, want %d", len(hs), tc.n+1)
			}
			if g := minGap(hs); g < tc.want {
				t.Errorf("shortest gap the server saw: %s, want at least %s", g, tc.want)
			}
			t.Logf("shortest server-observed gap %s (delay %s)", minGap(hs), tc.want)
		})
	}
}

// sendLog is a RoundTripper that timestamps each send right before it goes
// to the network.
type sendLog struct {
	next http.RoundTripper
	mu   sync.Mutex
	at   map[string][]time.Time
}

func (s *sendLog) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.at[r.URL.Hostname()] = append(s.at[r.URL.Hostname()], time.Now())
	s.mu.Unlock()
	return s.next.RoundTrip(r)
}

func TestPluginSpacingStartToStart(t *testing.T) {
	for _, goroutines := range []int{1, 10, 100} {
		t.Run(fmt.Sprint(goroutines), func(t *testing.T) {
			f := newFarm(t, map[string]*farmSite{"s.test": {robots: "User-agent: *\nCrawl-delay: 0.05\n",
				handle: func(w http.ResponseWriter, r *http.Request) bool { time.Sleep(30 * time.Millisecond); return false }}})
			sl := &sendLog{next: f.transport(), at: map[string][]time.Time{}}
			c := newCollector(true, WithRobots(WithTransport(sl), WithSpacing(StartToStart)))
			c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: goroutines})
			for i := 0; i < 12; i++ {
				c.Visit(fmt.Sprintf("http://s.test/p%d", i))
			}
			c.Wait()
			sends := sl.at["s.test"]
			if len(sends) != 13 {
				t.Fatalf("%d sends", len(sends))
			}
			for i := 1; i < len(sends); i++ {
				if g := sends[i].Sub(sends[i-1]); g < 50*time.Millisecond {
					t.Errorf("gap %d between sends: %s, want at least 50ms", i, g)
				}
			}
		})
	}
}

func TestPluginHostsProceedSideBySide(t *testing.T) {
	sites := map[string]*farmSite{}
	for i := 0; i < 20; i++ {
		sites[fmt.Sprintf("h%d.test", i)] = &farmSite{robots: "User-agent: *\nCrawl-delay: 0.2\n"}
	}
	f := newFarm(t, sites)
	c := newCollector(true, WithRobots(WithTransport(f.transport())))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4})
	start := time.Now()
	for j := 0; j < 10; j++ {
		for i := 0; i < 20; i++ {
			c.Visit(fmt.Sprintf("http://h%d.test/p%d", i, j))
		}
	}
	c.Wait()
	took := time.Since(start)
	share := 9 * 200 * time.Millisecond // one host's 10 requests need 9 gaps
	for i := 0; i < 20; i++ {
		h := fmt.Sprintf("h%d.test", i)
		if n := len(f.pages(h, false)); n != 10 {
			t.Fatalf("%s: %d pages", h, n)
		}
		if g := minGap(f.pages(h, true)); g < 200*time.Millisecond {
			t.Errorf("%s: gap %s", h, g)
		}
	}
	if took > 3*share {
		t.Errorf("20 hosts took %s; one host's share is %s (serialised: %s)", took, share, 20*share)
	}
	t.Logf("20 hosts x 10 requests: %s (one host's share %s, efficiency %.2f)", took, share, float64(share)/float64(took))
}

func TestPluginRobots503(t *testing.T) {
	for _, tc := range []struct {
		d         *dialect.Dialect
		wantPages int
	}{{dialect.RFC9309, 0}, {dialect.CocCoc, 3}, {dialect.Google, 0}} {
		t.Run(tc.d.Name(), func(t *testing.T) {
			f := newFarm(t, map[string]*farmSite{"e.test": {robotsStatus: 503}})
			var blocks blockLog
			p := New(WithTransport(f.transport()), WithDialect(tc.d), WithOnBlocked(blocks.add), WithDeferWait(0),
				WithRetryAfter(0, time.Millisecond, time.Millisecond))
			c := newCollector(false, p.Option())
			for i := 0; i < 3; i++ {
				c.Visit(fmt.Sprintf("http://e.test/p%d", i))
			}
			c.Wait()
			if n := len(f.pages("e.test", false)); n != tc.wantPages {
				t.Errorf("server saw %d pages, want %d", n, tc.wantPages)
			}
			bs := blocks.all()
			if len(bs)+tc.wantPages != 3 {
				t.Fatalf("blocks %v", bs)
			}
			for _, b := range bs {
				if b.Kind != Deferred || !strings.Contains(b.Reason, "503") || !strings.Contains(b.Reason, "complete disallow until") {
					t.Errorf("block %v", b)
				}
			}
			if len(bs) > 0 {
				if d := p.Deferred(); len(d) != 3 {
					t.Errorf("%d deferred requests kept", len(d))
				}
				if s := p.Stats()["http://e.test"]; s.Deferred != 3 {
					t.Errorf("stats %+v", s)
				}
			}
		})
	}
}

func TestPluginDeferredRequestsAreRetried(t *testing.T) {
	site := &farmSite{robotsStatus: 503, robots: "User-agent: *\nDisallow: /no\n"}
	f := newFarm(t, map[string]*farmSite{"r.test": site})
	clock := newStepClock()
	p := New(WithTransport(f.transport()), WithDeferWait(0), WithClock(clock), WithRetryAfter(0, time.Millisecond, time.Millisecond))
	c := newCollector(false, p.Option())
	c.Visit("http://r.test/yes")
	c.Visit("http://r.test/no")
	c.Wait()
	if n := len(f.pages("r.test", false)); n != 0 {
		t.Fatalf("pages fetched while robots.txt was 503: %d", n)
	}
	f.mu.Lock()
	site.robotsStatus = 200
	f.mu.Unlock()
	clock.Advance(time.Hour) // past the retry time
	if n := p.RetryDeferred(); n != 2 {
		t.Fatalf("retried %d", n)
	}
	c.Wait()
	if got := strings.Join(f.paths("r.test"), " "); got != "/yes" {
		t.Errorf("after the retry the server saw %q, want /yes only", got)
	}
}

func TestPluginDeferWaitsForRetry(t *testing.T) {
	var mu sync.Mutex
	fails := 1
	site := &farmSite{robots: "User-agent: *\nDisallow: /no\n"}
	f := newFarm(t, map[string]*farmSite{"w.test": site})
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fail := r.URL.Path == "/robots.txt" && fails > 0
		if fail {
			fails--
		}
		mu.Unlock()
		if fail {
			w.WriteHeader(503)
			return
		}
		f.serve(w, r)
	})
	clock := newStepClock()
	p := New(WithTransport(f.transport()), WithDeferWait(time.Hour), WithClock(clock), WithRetryAfter(0, time.Millisecond, time.Millisecond))
	c := newCollector(true, p.Option())
	go func() {
		time.Sleep(50 * time.Millisecond)
		clock.Advance(11 * time.Minute) // the rfc9309 retry time after a 5xx is 10 minutes
	}()
	c.Visit("http://w.test/yes")
	c.Wait()
	if got := strings.Join(f.paths("w.test"), " "); got != "/yes" {
		t.Errorf("server saw %q", got)
	}
}

func TestPluginRetryAfter(t *testing.T) {
	var mu sync.Mutex
	served := 0
	site := &farmSite{robots: "User-agent: *\nAllow: /\n", handle: func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		served++
		if served == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
		return false
	}}
	f := newFarm(t, map[string]*farmSite{"ra.test": site})
	c := newCollector(false, WithRobots(WithTransport(f.transport())))
	c.Visit("http://ra.test/a")
	c.Visit("http://ra.test/b")
	c.Wait()
	hs := f.pages("ra.test", false)
	if len(hs) != 2 {
		t.Fatalf("%d pages", len(hs))
	}
	if g := hs[1].at.Sub(hs[0].at); g < time.Second {
		t.Errorf("request after a 429 with Retry-After: 1 came %s later", g)
	}
}

func TestPluginRedirectIntoDisallowedPath(t *testing.T) {
	site := &farmSite{robots: "User-agent: *\nDisallow: /secret\n", handle: func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/go" {
			http.Redirect(w, r, "/secret/page", http.StatusFound)
			return true
		}
		if r.URL.Path == "/elsewhere" {
			http.Redirect(w, r, "http://other.test/private", http.StatusFound)
			return true
		}
		return false
	}}
	f := newFarm(t, map[string]*farmSite{"rd.test": site, "other.test": {robots: "User-agent: *\nDisallow: /private\n"}})
	var blocks blockLog
	c := newCollector(false, WithRobots(WithTransport(f.transport()), WithOnBlocked(blocks.add)))
	var errs []error
	c.OnError(func(_ *colly.Response, err error) { errs = append(errs, err) })
	c.Visit("http://rd.test/go")
	c.Visit("http://rd.test/elsewhere")
	c.Wait()
	if got := strings.Join(f.paths("rd.test"), " "); got != "/elsewhere /go" {
		t.Errorf("rd.test saw %q", got)
	}
	if got := f.paths("other.test"); len(got) != 0 {
		t.Errorf("other.test saw %q", got)
	}
	bs := blocks.all()
	if len(bs) != 2 || !bs[0].Redirect || bs[0].URL != "http://rd.test/secret/page" || !strings.Contains(bs[0].Reason, "redirect from http://rd.test/go not followed: line 2: Disallow: /secret") ||
		bs[1].URL != "http://other.test/private" {
		t.Errorf("blocks %v", bs)
	}
	if len(errs) != 2 || !errors.Is(errs[0], ErrBlocked) {
		t.Errorf("OnError got %v", errs)
	}
}

func TestPluginCrawlDelayAboveMax(t *testing.T) {
	f := newFarm(t, map[string]*farmSite{"slow.test": {robots: "User-agent: *\nCrawl-delay: 120\n"}})
	var blocks blockLog
	c := newCollector(false, WithRobots(WithTransport(f.transport()), WithMaxCrawlDelay(time.Minute, SkipHost), WithOnBlocked(blocks.add)))
	c.Visit("http://slow.test/a")
	c.Visit("http://slow.test/b")
	c.Wait()
	if n := len(f.pages("slow.test", false)); n != 0 {
		t.Errorf("%d pages fetched from a skipped host", n)
	}
	bs := blocks.all()
	if len(bs) != 2 || bs[0].Kind != Skipped || !strings.Contains(bs[0].Reason, "2m0s") {
		t.Errorf("blocks %v", bs)
	}
	// Capped: the limiter gets the largest honoured delay.
	p := New(WithMaxCrawlDelay(50*time.Millisecond, CapDelay), WithMinDelay(10*time.Millisecond), WithTransport(f.transport()))
	c2 := newCollector(false, p.Option())
	c2.Visit("http://slow.test/c")
	c2.Wait()
	if d := p.Limiter().Delay("http://slow.test"); d != 50*time.Millisecond {
		t.Errorf("capped delay %s", d)
	}
}

func TestPluginMinDelayNeverLowered(t *testing.T) {
	f := newFarm(t, map[string]*farmSite{"m.test": {robots: "User-agent: *\nCrawl-delay: 0.01\n"}})
	p := New(WithMinDelay(150*time.Millisecond), WithTransport(f.transport()))
	c := newCollector(false, p.Option())
	for i := 0; i < 3; i++ {
		c.Visit(fmt.Sprintf("http://m.test/%d", i))
	}
	c.Wait()
	if g := minGap(f.pages("m.test", true)); g < 150*time.Millisecond {
		t.Errorf("gap %s below the user's minimum", g)
	}
}

func TestPluginCloneAndAttach(t *testing.T) {
	f := newFarm(t, map[string]*farmSite{"cl.test": {robots: "User-agent: *\nDisallow: /private\n"}})
	var blocks blockLog
	c := colly.NewCollector(colly.UserAgent("ExampleBot/1.0"))
	p := Attach(c, WithTransport(f.transport()), WithOnBlocked(blocks.add))
	clone := c.Clone()
	var cloneErr error
	clone.OnError(func(_ *colly.Response, err error) { cloneErr = err })
	clone.Visit("http://cl.test/private/1") // not attached: stopped at the transport
	attached := c.Clone()
	p.Attach(attached)
	attached.Visit("http://cl.test/private/2") // attached: aborted in OnRequest
	attached.Visit("http://cl.test/ok")
	if got := strings.Join(f.paths("cl.test"), " "); got != "/ok" {
		t.Errorf("server saw %q", got)
	}
	if !errors.Is(cloneErr, ErrBlocked) {
		t.Errorf("clone's request error: %v", cloneErr)
	}
	bs := blocks.all()
	if len(bs) != 2 || bs[0].Request != nil || bs[1].Request == nil {
		t.Errorf("blocks %v", bs)
	}
	st := p.Stats()["http://cl.test"]
	if st.Allowed != 1 || st.Disallowed != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestPluginTokensFromUserAgent(t *testing.T) {
	f := newFarm(t, map[string]*farmSite{"ua.test": {robots: "User-agent: examplebot\nDisallow: /\n"}})
	c := newCollector(false, WithRobots(WithTransport(f.transport())))
	c.Visit("http://ua.test/x")
	c2 := colly.NewCollector(colly.UserAgent("otherbot/2"), WithRobots(WithTransport(f.transport())))
	c2.Visit("http://ua.test/y")
	if got := strings.Join(f.paths("ua.test"), " "); got != "/y" {
		t.Errorf("server saw %q", got)
	}
}

func TestPluginContextCancelWhileWaiting(t *testing.T) {
	f := newFarm(t, map[string]*farmSite{"cc.test": {robots: "User-agent: *\nCrawl-delay: 10\n"}})
	var blocks blockLog
	ctx, cancel := context.WithCancel(context.Background())
	c := newCollector(true, colly.StdlibContext(ctx), WithRobots(WithTransport(f.transport()), WithOnBlocked(blocks.add)))
	c.Visit("http://cc.test/1")
	c.Visit("http://cc.test/2")
	time.AfterFunc(300*time.Millisecond, cancel)
	c.Wait()
	// robots.txt itself is a request to the host: both pages owe it 10 s.
	if n := len(f.pages("cc.test", false)); n != 0 {
		t.Errorf("%d pages", n)
	}
	if bs := blocks.all(); len(bs) != 2 || bs[0].Kind != Canceled || bs[1].Kind != Canceled {
		t.Errorf("blocks %v", bs)
	}
}

func TestPluginStatsCapacity(t *testing.T) {
	sites := map[string]*farmSite{}
	for i := 0; i < 50; i++ {
		sites[fmt.Sprintf("s%d.test", i)] = &farmSite{robots: "User-agent: *\nDisallow: /private\n"}
	}
	f := newFarm(t, sites)
	for _, async := range []bool{false, true} {
		p := New(WithTransport(f.transport()), WithStatsCapacity(10))
		c := newCollector(async, p.Option())
		c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
		for i := 0; i < 50; i++ {
			c.Visit(fmt.Sprintf("http://s%d.test/a", i))
			c.Visit(fmt.Sprintf("http://s%d.test/private/x", i))
		}
		c.Wait()
		st := p.Stats()
		limit := 10
		if async {
			limit += 8 // updates may run beside a fold: a few over
		}
		if len(st) > limit || len(st) == 0 {
			t.Errorf("async=%v: %d authorities in Stats, capacity 10", async, len(st))
		}
		if !async {
			if s := st["http://s49.test"]; s.Allowed != 1 || s.Disallowed != 1 {
				t.Errorf("the latest authority: %+v", s)
			}
		}
		if tot := p.Totals(); tot.Allowed != 50 || tot.Disallowed != 50 {
			t.Errorf("async=%v: totals %+v, want 50 allowed and 50 disallowed", async, tot)
		}
	}
}
