package testutil

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Farm is one loopback server answering for many host names: a client on
// its Transport sends every host to it, so Host headers and robots.txt are
// real. It records every request it receives.
type Farm struct {
	Server *httptest.Server
	// Now stamps each hit (nil: time.Now): set it to a fake clock's Now,
	// before the first request, to read gaps on the clock the gate runs on.
	Now   func() time.Time
	mu    sync.Mutex
	sites map[string]*Site
	hits  []Hit
}

// Site is one host of a Farm.
type Site struct {
	Robots       string                                            // the body of /robots.txt
	RobotsStatus int                                               // its status; 0 means 200
	Handle       func(w http.ResponseWriter, r *http.Request) bool // true: handled; else a small HTML page
}

// Hit is one request the farm received.
type Hit struct {
	Host, Path string // Path is the request URI (path and query)
	At         time.Time
}

// NewFarm starts a farm serving sites (host name without port → site); an
// unknown host gets 404. The server is closed when t ends.
func NewFarm(t testing.TB, sites map[string]*Site) *Farm {
	f := &Farm{sites: sites}
	f.Server = httptest.NewServer(f)
	t.Cleanup(f.Server.Close)
	return f
}

// ServeHTTP answers as the farm does, recording the hit: for a test that
// puts a handler of its own in front.
func (f *Farm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, _, _ := net.SplitHostPort(r.Host)
	if host == "" {
		host = r.Host
	}
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	f.mu.Lock()
	f.hits = append(f.hits, Hit{Host: host, Path: r.URL.RequestURI(), At: now()})
	s := f.sites[host]
	f.mu.Unlock()
	if s == nil {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	status := s.RobotsStatus
	f.mu.Unlock()
	if r.URL.Path == "/robots.txt" {
		if status != 0 && status != 200 {
			w.WriteHeader(status)
			return
		}
		fmt.Fprint(w, s.Robots)
		return
	}
	if s.Handle != nil && s.Handle(w, r) {
		return
	}
	fmt.Fprintf(w, "<html><body>%s</body></html>", r.URL.Path)
}

// SetRobotsStatus changes the status of host's robots.txt while the farm
// runs.
func (f *Farm) SetRobotsStatus(host string, status int) {
	f.mu.Lock()
	f.sites[host].RobotsStatus = status
	f.mu.Unlock()
}

// Transport returns a transport that dials the farm whatever the host.
func (f *Farm) Transport() *http.Transport {
	return LoopbackTransport(f.Server.Listener.Addr().String())
}

// LoopbackTransport returns a transport that dials addr whatever the
// request's host, keeping up to 200 idle connections per host.
func LoopbackTransport(addr string) *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConnsPerHost: 200,
	}
}

// Pages returns the hits for host, robots.txt included or not, in arrival
// order.
func (f *Farm) Pages(host string, withRobots bool) []Hit {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Hit
	for _, h := range f.hits {
		if h.Host == host && (withRobots || h.Path != "/robots.txt") {
			out = append(out, h)
		}
	}
	return out
}

// Paths returns the paths of host's page hits, sorted.
func (f *Farm) Paths(host string) []string {
	var p []string
	for _, h := range f.Pages(host, false) {
		p = append(p, h.Path)
	}
	sort.Strings(p)
	return p
}

// MinGap returns the shortest time between two consecutive hits.
func MinGap(hs []Hit) time.Duration {
	m := time.Duration(1 << 62)
	for i := 1; i < len(hs); i++ {
		m = min(m, hs[i].At.Sub(hs[i-1].At))
	}
	return m
}

// MaxGap returns the longest time between two consecutive hits.
func MaxGap(hs []Hit) time.Duration {
	var m time.Duration
	for i := 1; i < len(hs); i++ {
		m = max(m, hs[i].At.Sub(hs[i-1].At))
	}
	return m
}

// ForwardProxy is an HTTP forward proxy for tests: it passes every request
// it gets to its transport and counts them. It is closed when the test
// ends.
type ForwardProxy struct {
	*httptest.Server
	Seen atomic.Int64 // requests passed
}

// NewForwardProxy starts a proxy that forwards to tr (a farm's transport).
func NewForwardProxy(t testing.TB, tr http.RoundTripper) *ForwardProxy {
	p := &ForwardProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.Seen.Add(1)
		out, err := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(p.Close)
	return p
}

// ProxyURL returns the proxy's URL, for http.ProxyURL.
func (p *ForwardProxy) ProxyURL() *url.URL { u, _ := url.Parse(p.Server.URL); return u }
