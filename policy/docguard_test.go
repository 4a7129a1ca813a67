package policy

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHostClass(t *testing.T) {
	for host, want := range map[string]addrClass{
		"169.254.169.254":           classForbidden,
		"fe80::1":                   classForbidden,
		"fe80::1%eth0":              classForbidden,
		"fd00:ec2::254":             classForbidden,
		"100.100.100.200":           classForbidden,
		"::ffff:169.254.169.254":    classForbidden,
		"64:ff9b::a9fe:a9fe":        classForbidden,
		"0.0.0.0":                   classForbidden,
		"0.1.2.3":                   classForbidden,
		"::":                        classForbidden,
		"224.0.0.1":                 classForbidden,
		"metadata.google.internal":  classForbidden,
		"metadata.google.internal.": classForbidden,
		"metadata":                  classForbidden,
		"2852039166":                classForbidden, // 169.254.169.254 as one number
		"0x7f.1":                    classForbidden,
		"127.0.0.1":                 classLoopback,
		"127.0.0.2":                 classLoopback,
		"::1":                       classLoopback,
		"localhost":                 classLoopback,
		"a.localhost":               classLoopback,
		"10.1.2.3":                  classPrivate,
		"192.168.0.1":               classPrivate,
		"172.16.0.1":                classPrivate,
		"fc00::1":                   classPrivate,
		"100.64.0.1":                classPrivate,
		"192.0.2.10":                classPublic,
		"example.com":               classPublic,
	} {
		if got, _ := hostClass(host); got != want {
			t.Errorf("%s: %s, want %s", host, got, want)
		}
	}
}

// recorder is a transport that records the hosts asked, then sends the
// request to next.
type recorder struct {
	next  http.RoundTripper
	mu    sync.Mutex
	hosts []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.hosts = append(r.hosts, req.URL.Host)
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

func (r *recorder) asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.hosts...)
}

var textKind = &DocumentKind{Name: "text", Accept: "text/plain", MaxBytes: 1 << 10,
	Parse: func(b []byte) (any, time.Duration, error) {
		if b == nil {
			return nil, 0, nil
		}
		return string(b), 0, nil
	}}

// A document, or a redirect of one, on a link-local, metadata, filtered
// out or (for a public page) loopback host is not fetched: nothing is
// asked of that host, and the document's Err says why.
func TestDocumentRefusedHosts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		_, _ = w.Write([]byte("terms"))
	}))
	defer srv.Close()
	rec := &recorder{next: http.DefaultTransport}
	r, err := NewResolver(WithHTTPClient(&http.Client{Transport: rec}),
		WithDocumentFilter(func(u *url.URL) bool { return u.Hostname() != "filtered.example" }))
	if err != nil {
		t.Fatal(err)
	}
	loopPage := mustURL(t, srv.URL+"/page")
	publicPage := mustURL(t, "http://192.0.2.10/page")
	for _, c := range []struct {
		page   *url.URL
		target string
		why    string
		asked  int // requests made (to srv, before a refused redirect)
	}{
		{loopPage, "http://169.254.169.254/latest/meta-data/", "link-local or cloud-metadata", 0},
		{loopPage, "http://metadata.google.internal/computeMetadata/v1/", "link-local or cloud-metadata", 0},
		{loopPage, "http://[fd00:ec2::254]/", "link-local or cloud-metadata", 0},
		{loopPage, "http://filtered.example/terms", "not a host the crawler may visit", 0},
		{publicPage, srv.URL + "/terms", "is a loopback address and 192.0.2.10 is not", 0},
		{publicPage, "http://10.0.0.1/terms", "is a private address", 0},
		{loopPage, srv.URL + "/r1?to=http://169.254.169.254/", "link-local or cloud-metadata", 1},
		{loopPage, srv.URL + "/r2?to=http://metadata.google.internal/", "link-local or cloud-metadata", 1},
		{loopPage, srv.URL + "/r3?to=http://filtered.example/", "not a host the crawler may visit", 1},
	} {
		before := len(rec.asked())
		d, err := r.Document(context.Background(), c.page, c.target, textKind)
		if err != nil {
			t.Fatal(err)
		}
		if d.Value != nil || !strings.HasPrefix(d.Err, "not fetched: ") || !strings.Contains(d.Err, c.why) {
			t.Errorf("%s: value %v, Err %q, want not fetched: …%s", c.target, d.Value, d.Err, c.why)
		}
		if asked := rec.asked()[before:]; len(asked) != c.asked {
			t.Errorf("%s: asked %v, want %d requests", c.target, asked, c.asked)
		}
	}
	// No page: public hosts only.
	if d, _ := r.Document(context.Background(), nil, srv.URL+"/terms", textKind); !strings.Contains(d.Err, "is a loopback address") {
		t.Errorf("no page, loopback document: %+v", d)
	}
	// The page's own class: a loopback page reads a document on another
	// loopback port.
	d, _ := r.Document(context.Background(), mustURL(t, "http://localhost:1/page"), srv.URL+"/terms", textKind)
	if d.Value != "terms" {
		t.Errorf("loopback page, loopback document: %+v", d)
	}
}

// A name that resolves to a forbidden address is refused as it is
// dialled: the dialer's ControlContext sees the address.
func TestDocumentRefusedAtDial(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("terms"))
	}))
	defer srv.Close()
	var dials sync.Map
	// Every name resolves to the test server, on 127.0.0.1, as a
	// rebinding DNS would answer.
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Store(addr, true)
		return (&net.Dialer{ControlContext: DialControl}).DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	r, err := NewResolver(WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := r.Document(context.Background(), mustURL(t, "http://192.0.2.10/page"), "http://rebind.example/terms", textKind)
	if d.Value != nil || !strings.HasPrefix(d.Err, "not fetched: 127.0.0.1 (of rebind.example) is a loopback address") {
		t.Errorf("public page, name on loopback: %+v", d)
	}
	if _, ok := dials.Load("rebind.example:80"); !ok {
		t.Error("the dial was not attempted")
	}
	// The page's own host is always reachable, and a name on loopback is
	// for a loopback page.
	for _, page := range []string{"http://rebind.example/page", "http://127.0.0.1/page"} {
		d, _ = r.Document(context.Background(), mustURL(t, page), "http://rebind.example/terms2", textKind)
		if d.Value != "terms" {
			t.Errorf("page %s: %+v", page, d)
		}
		r.docs = newDocCache(10, 1<<20)
	}
	// Robots.txt is not a document: its fetch dials as it always has.
	p, err := r.Policy(context.Background(), mustURL(t, "http://rebind.example/"))
	if err != nil || p.Fetch().Status != http.StatusOK {
		t.Errorf("robots.txt: %+v %v", p.Fetch(), err)
	}
	if err := DialControl(context.Background(), "tcp", "169.254.169.254:80", nil); err != nil {
		t.Errorf("a dial outside a document's fetch refused: %v", err)
	}
}
