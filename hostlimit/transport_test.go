package hostlimit

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/robots/testkit/testutil"
)

// arrivals is a loopback server that records the path of each request it
// gets, and runs an optional script for it.
type arrivals struct {
	mu    sync.Mutex
	paths []string
}

func (a *arrivals) seen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.paths...)
}

func newArrivals(t *testing.T, script func(w http.ResponseWriter, r *http.Request)) (*arrivals, *httptest.Server) {
	a := &arrivals{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.paths = append(a.paths, r.URL.Path)
		a.mu.Unlock()
		if script != nil {
			script(w, r)
		}
		io.WriteString(w, "ok\n")
	}))
	t.Cleanup(srv.Close)
	return a, srv
}

func goGet(ctx context.Context, c *http.Client, url string) <-chan error {
	ch := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err == nil {
			var resp *http.Response
			if resp, err = c.Do(req); err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		ch <- err
	}()
	return ch
}

// TestTransport checks the gate the RoundTripper puts in front of each
// round trip, on a fake clock: the host is keyed by the URL's authority,
// redirect hops are spaced, a 429's Retry-After pauses the host, a
// cancelled request takes nothing, and the send mark comes from net/http.
func TestTransport(t *testing.T) {
	const d = 300 * time.Millisecond
	t.Run("redirect hop", func(t *testing.T) {
		t.Parallel()
		a, srv := newArrivals(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/r" {
				http.Redirect(w, r, "/final", http.StatusFound)
			}
		})
		l, clk := newFake(Config{})
		l.SetDelay(srv.URL, d)
		get := goGet(context.Background(), &http.Client{Transport: l.Transport(nil)}, srv.URL+"/r")
		testutil.WaitUntil(t, func() bool { next, _ := clk.Next(); return next.Equal(at(d)) })
		if got := a.seen(); len(got) != 1 {
			t.Fatalf("server saw %v before the delay", got)
		}
		clk.AdvanceTo(at(d))
		if err := <-get; err != nil {
			t.Fatal(err)
		}
		if got := a.seen(); len(got) != 2 || got[1] != "/final" {
			t.Fatalf("server saw %v", got)
		}
		if st, _ := l.Stats(srv.URL); st.Grants != 2 || st.InFlight != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
	t.Run("Retry-After pauses the host", func(t *testing.T) {
		t.Parallel()
		a, srv := newArrivals(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/busy" {
				w.Header().Set("Retry-After", "120")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		l, clk := newFake(Config{})
		c := &http.Client{Transport: l.Transport(nil)}
		if err := <-goGet(context.Background(), c, srv.URL+"/busy"); err != nil {
			t.Fatal(err)
		}
		if st, _ := l.Stats(srv.URL); st.LastPause != 2*time.Minute || !st.PausedUntil.Equal(at(2*time.Minute)) {
			t.Fatalf("stats %+v", st)
		}
		get := goGet(context.Background(), c, srv.URL+"/a")
		clk.WaitTimers(t, 1)
		clk.AdvanceTo(at(2*time.Minute - time.Nanosecond))
		if got := a.seen(); len(got) != 1 {
			t.Fatalf("server saw %v during the pause", got)
		}
		clk.AdvanceTo(at(2 * time.Minute))
		if err := <-get; err != nil || len(a.seen()) != 2 {
			t.Fatalf("after the pause: %v, server saw %v", err, a.seen())
		}
	})
	t.Run("cancelled while waiting", func(t *testing.T) {
		t.Parallel()
		a, srv := newArrivals(t, nil)
		l, clk := newFake(Config{})
		l.SetDelay(srv.URL, d)
		c := &http.Client{Transport: l.Transport(nil)}
		if err := <-goGet(context.Background(), c, srv.URL+"/1"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		get := goGet(ctx, c, srv.URL+"/2")
		clk.WaitTimers(t, 1)
		cancel()
		if err := <-get; !errors.Is(err, context.Canceled) {
			t.Fatalf("GET = %v; want context.Canceled", err)
		}
		if n := len(a.seen()); n != 1 {
			t.Errorf("server saw %d requests, want 1", n)
		}
		if st, _ := l.Stats(srv.URL); st.InFlight != 0 || st.Queued != 0 {
			t.Errorf("after cancellation: %+v", st)
		}
	})
	t.Run("start-to-start: net/http marks the send", func(t *testing.T) {
		t.Parallel()
		hold := make(chan struct{})
		a, srv := newArrivals(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				<-hold
			}
		})
		defer close(hold)
		l, clk := newFake(Config{Spacing: StartToStart})
		l.SetDelay(srv.URL, d)
		c := &http.Client{Transport: l.Transport(nil)}
		slow := goGet(context.Background(), c, srv.URL+"/slow")
		testutil.WaitUntil(t, func() bool { return len(a.seen()) == 1 })
		clk.Advance(10 * time.Millisecond)
		// Without the send mark the next request would wait for the
		// release (no timer): it sleeps until the delay after the send.
		get := goGet(context.Background(), c, srv.URL+"/2")
		testutil.WaitUntil(t, func() bool { next, _ := clk.Next(); return next.Equal(at(d)) })
		clk.AdvanceTo(at(d))
		if err := <-get; err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-slow:
			t.Fatalf("the slow request ended first: %v", err)
		default:
		}
		if st, _ := l.Stats(srv.URL); st.InFlight != 1 {
			t.Fatalf("stats %+v, want the slow request in flight", st)
		}
	})
}
