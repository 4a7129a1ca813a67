package robots

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/testkit/testutil"
)

// lockstepLimiter is a second implementation of the Limiter seam, written
// from its contract alone (no hostlimit internals): one request in flight per
// host, the next one sent no earlier than the delay after the previous one
// ended, a 429 pausing the host for pause429. Its WaitMax does nothing: the
// early stage promises nothing. It counts every call, so a test can see
// that the plugin drove it and nothing else.
type lockstepLimiter struct {
	mu       sync.Mutex
	hosts    map[string]*lockstepHost
	waits    map[string][]time.Duration // delays passed to Wait, per host
	acquires map[string][]time.Duration // delays passed to Acquire, per host
	sends    int
	releases int
	inFlight int
	observed []int
}

const pause429 = 250 * time.Millisecond

type lockstepHost struct {
	turn        chan struct{} // holds a token while a permit is out
	lastEnd     time.Time
	pausedUntil time.Time
}

func newLockstepLimiter() *lockstepLimiter {
	return &lockstepLimiter{hosts: map[string]*lockstepHost{}, waits: map[string][]time.Duration{}, acquires: map[string][]time.Duration{}}
}

func (l *lockstepLimiter) host(name string) *lockstepHost {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.hosts[name]
	if h == nil {
		h = &lockstepHost{turn: make(chan struct{}, 1)}
		l.hosts[name] = h
	}
	return h
}

func (l *lockstepLimiter) WaitMax(ctx context.Context, host string, delay, _ time.Duration) (time.Duration, error) {
	l.mu.Lock()
	l.waits[host] = append(l.waits[host], delay)
	l.mu.Unlock()
	return 0, ctx.Err()
}

// Stats: this limiter keeps none.
func (l *lockstepLimiter) Stats(string) (hostlimit.Stats, bool) { return hostlimit.Stats{}, false }

func (l *lockstepLimiter) AcquireMax(ctx context.Context, host string, delay, _ time.Duration) (hostlimit.Permit, error) {
	h := l.host(host)
	select {
	case h.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	l.mu.Lock()
	at := h.lastEnd.Add(delay)
	if h.pausedUntil.After(at) {
		at = h.pausedUntil
	}
	l.mu.Unlock()
	if d := time.Until(at); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			<-h.turn
			return nil, ctx.Err()
		}
	}
	l.mu.Lock()
	l.acquires[host] = append(l.acquires[host], delay)
	l.inFlight++
	l.mu.Unlock()
	return &lockstepPermit{l: l, h: h}, nil
}

type lockstepPermit struct {
	l          *lockstepLimiter
	h          *lockstepHost
	sent, done bool // guarded by l.mu
}

func (p *lockstepPermit) Sent() {
	p.l.mu.Lock()
	defer p.l.mu.Unlock()
	if !p.sent && !p.done {
		p.sent = true
		p.l.sends++
	}
}

func (p *lockstepPermit) Observe(status int, _ http.Header) time.Duration {
	p.l.mu.Lock()
	defer p.l.mu.Unlock()
	p.l.observed = append(p.l.observed, status)
	if status != http.StatusTooManyRequests {
		return 0
	}
	p.h.pausedUntil = time.Now().Add(pause429)
	return pause429
}

func (p *lockstepPermit) Release() {
	p.l.mu.Lock()
	if p.done {
		p.l.mu.Unlock()
		return
	}
	p.done = true
	p.l.releases++
	p.l.inFlight--
	p.h.lastEnd = time.Now()
	p.l.mu.Unlock()
	<-p.h.turn
}

// TestPluginThroughLimiterSeam: with WithLimiter, the plugin spaces, pauses
// and releases through the Limiter interface alone: the other limiter gets
// every robots.txt fetch and page (each permit sent, observed and released
// once), the Crawl-delay as the delay of each call, and its 429 pause holds
// at the server; the plugin's own limiter is never made.
func TestPluginThroughLimiterSeam(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			var mu sync.Mutex
			busy := 0
			f := testutil.NewFarm(t, map[string]*testutil.Site{"seam.test": {
				Robots: "User-agent: *\nCrawl-delay: 0.1\nDisallow: /private\n",
				Handle: func(w http.ResponseWriter, r *http.Request) bool {
					if r.URL.Path != "/busy" {
						return false
					}
					mu.Lock()
					busy++
					first := busy == 1
					mu.Unlock()
					if first {
						w.WriteHeader(http.StatusTooManyRequests)
						return true
					}
					return false
				},
			}})
			lim := newLockstepLimiter()
			p := mustNew(t, WithLimiter(lim), WithTransport(f.Transport()), WithDefaultDelay(0), WithRetries(0))
			if p.Limiter() != Limiter(lim) {
				t.Fatalf("Limiter() = %T, want the given one", p.Limiter())
			}
			c := newCollector(async, p.opt(t))
			for _, path := range []string{"/a", "/busy", "/b", "/private/x", "/c"} {
				c.Visit("http://seam.test" + path)
			}
			c.Wait()

			hs := f.Pages("seam.test", true)
			var paths []string
			for _, h := range hs {
				paths = append(paths, h.Path)
			}
			slices.Sort(paths)
			if want := []string{"/a", "/b", "/busy", "/c", "/robots.txt"}; !slices.Equal(paths, want) {
				t.Fatalf("server saw %v, want %v", paths, want)
			}
			if g := testutil.MinGap(hs); g < 100*time.Millisecond {
				t.Errorf("server saw a gap of %s, below the Crawl-delay", g)
			}
			for i := 1; i < len(hs); i++ {
				if hs[i-1].Path == "/busy" && hs[i].At.Sub(hs[i-1].At) < pause429 {
					t.Errorf("request after the 429 came %s later, inside the limiter's pause", hs[i].At.Sub(hs[i-1].At))
				}
			}

			lim.mu.Lock()
			defer lim.mu.Unlock()
			const host = "http://seam.test"
			// robots.txt and the four allowed pages each went through Acquire;
			// the four pages with the Crawl-delay, robots.txt with none known yet.
			if got := lim.acquires[host]; len(got) != 5 || got[0] != 0 || slices.Index(got[1:], 0) >= 0 {
				t.Errorf("Acquire delays %v, want 0 for robots.txt then 100ms for each of 4 pages", got)
			}
			for _, d := range lim.acquires[host][1:] {
				if d != 100*time.Millisecond {
					t.Errorf("Acquire delay %s, want the Crawl-delay", d)
				}
			}
			if got := lim.waits[host]; len(got) != 4 || slices.ContainsFunc(got, func(d time.Duration) bool { return d != 100*time.Millisecond }) {
				t.Errorf("Wait delays %v, want the Crawl-delay for each of the 4 allowed pages", got)
			}
			if lim.sends != 5 || lim.releases != 5 || lim.inFlight != 0 {
				t.Errorf("sent %d, released %d, in flight %d; want 5, 5, 0", lim.sends, lim.releases, lim.inFlight)
			}
			if !slices.Contains(lim.observed, http.StatusTooManyRequests) || len(lim.observed) != 5 {
				t.Errorf("observed %v, want the 5 responses, one 429", lim.observed)
			}
			if s := p.Stats()[host]; s.Allowed != 4 || s.Disallowed != 1 || s.Limiter != (hostlimit.Stats{}) {
				t.Errorf("stats %+v", s)
			}
		})
	}
}
