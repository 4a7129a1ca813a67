package policy_test

// The hostile servers the cases of hostile_test.go run against, and the
// checks they share.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/testkit/testutil"
)

// --- servers ---

// hostileHTTP returns a serve function for a loopback HTTP server running h,
// closed when the case ends (h must return once the client has gone).
func hostileHTTP(h http.HandlerFunc) func(t *testing.T) string {
	return func(t *testing.T) string {
		srv := httptest.NewUnstartedServer(h)
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.Start()
		t.Cleanup(srv.Close)
		return srv.URL
	}
}

// plainTransport returns a transport of the case's own (no proxy), whose
// idle connections are closed when the case ends.
func plainTransport(t *testing.T) *http.Transport {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

func text(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// pace waits d, or returns false when the client has gone.
func pace(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// drip answers status, sends first, then one byte per hostileDrip for as
// long as the client reads.
func drip(status int, first string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, first)
		rc := http.NewResponseController(w)
		for {
			if _, err := io.WriteString(w, "#"); err != nil {
				return
			}
			if rc.Flush() != nil || !pace(r, hostileDrip) {
				return
			}
		}
	}
}

// stall answers status, sends first, then nothing until the client goes.
func stall(status int, first string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, first)
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}
}

// redirectTo answers status with the Location loc, written as it is.
func redirectTo(status int, loc string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Location"] = []string{loc}
		w.WriteHeader(status)
	}
}

// hops redirects /robots.txt through n hops, then answers hostileRules.
func hops(n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		i := 0
		if s, ok := strings.CutPrefix(r.URL.Path, "/hop/"); ok {
			i, _ = strconv.Atoi(s)
		}
		if i < n {
			http.Redirect(w, r, "/hop/"+strconv.Itoa(i+1), http.StatusFound)
			return
		}
		text(200, hostileRules)(w, r)
	}
}

// redirectLoop starts two servers whose robots.txt redirect to each other.
func redirectLoop(t *testing.T) string {
	var b string
	a := hostileHTTP(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, b+"/robots.txt", http.StatusFound)
	})(t)
	b = hostileHTTP(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, a+"/robots.txt", http.StatusFound)
	})(t)
	return a
}

// hugeBody streams a robots.txt of size bytes without holding it: the
// rules of hostileRules, then "Disallow: /d/NNNNNNNN" lines, and at the end
// (far past 500 KiB) "Disallow: /late".
func hugeBody(size int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", strconv.Itoa(size))
		const last = "Disallow: /late\n"
		bw := bufio.NewWriterSize(w, 32<<10)
		n, _ := bw.WriteString(hostileRules)
		line := []byte("Disallow: /d/00000000\n")
		for i := 0; n+len(line)+len(last) <= size; i++ {
			s := strconv.Itoa(i)
			copy(line[len(line)-1-len(s):], s)
			m, err := bw.Write(line)
			if err != nil {
				return // the client hung up
			}
			n += m
		}
		if pad := size - n - len(last); pad > 0 {
			_, _ = bw.WriteString(strings.Repeat("#", pad-1) + "\n")
		}
		_, _ = bw.WriteString(last)
		_ = bw.Flush()
	}
}

// gzipBomb streams, with Content-Encoding: gzip, hostileRules followed by
// size zero bytes, gzip-compressed layers times (flushed every 64 KiB of
// zeros: about 1.6 MB of gzip per GiB for one layer), compressed as it is
// sent: the server never holds the decoded body, and stops compressing once
// the client hangs up.
func gzipBomb(size int64, layers int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		pr, pw := io.Pipe()
		go func() {
			var zws []*gzip.Writer
			var dst io.Writer = pw
			for range layers {
				zw := gzip.NewWriter(dst)
				zws = append(zws, zw)
				dst = zw
			}
			_, err := io.WriteString(dst, hostileRules)
			zeros := make([]byte, 64<<10)
			for left := size; err == nil && left > 0; left -= int64(len(zeros)) {
				_, err = dst.Write(zeros[:min(left, int64(len(zeros)))])
				// Flush every layer, innermost first, so that the bytes go
				// out as they are made (an outer layer would otherwise
				// wait for a block's worth of the inner one's output).
				for i := len(zws) - 1; i >= 0 && err == nil; i-- {
					err = zws[i].Flush()
				}
			}
			for i := len(zws) - 1; i >= 0 && err == nil; i-- {
				err = zws[i].Close()
			}
			pw.CloseWithError(err)
		}()
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Encoding", "gzip")
		// Send what comes at once (the response's buffer would hold back
		// many flushed chunks), so that the client gets its 500 KiB early
		// and a hang-up is seen at the next write.
		rc := http.NewResponseController(w)
		buf := make([]byte, 32<<10)
		var err error
		for err == nil {
			var n int
			n, err = pr.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					err = werr
				} else if ferr := rc.Flush(); ferr != nil {
					err = ferr
				}
			}
		}
		pr.CloseWithError(err) // the client hung up (or the body is done): stop compressing
	}
}

// gzipLayers serves body gzip-compressed layers times, with
// Content-Encoding: gzip (once).
func gzipLayers(body string, layers int) http.HandlerFunc {
	b := []byte(body)
	for range layers {
		b = gzipBytes(b)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(b)
	}
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// binary serves 8 KiB of pseudo-random bytes, with middle in the middle.
func binary(middle []byte) http.HandlerFunc {
	rng := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 8<<10)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	copy(b[len(b)/2:], middle)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(b)
	}
}

const softNotFound = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Page not found</title>
<style>body { font-family: sans-serif; } .x:hover { color: red; }</style></head>
<body>
<h1>Sorry, this page does not exist: /robots.txt</h1>
<p>Disallowed: you may not see this page. <a href="/">Home</a></p>
<script>var user_agent = navigator.userAgent; if (a < b) { disallow = true; }</script>
</body>
</html>
`

// nulBody holds NUL bytes in rules and as a line of its own.
const nulBody = "User-agent: *\n" +
	"Disallow: /private\x00/tail\n" +
	"\x00\x00\x00\x00\n" +
	"Disallow: /a\x00b\n" +
	"Disallow: /plain\n"

// nulChecks checks whether each path is allowed.
func nulChecks(allowed map[string]bool) func(t *testing.T, p *policy.Policy) {
	return func(t *testing.T, p *policy.Policy) {
		for path, want := range allowed {
			if v := p.CheckPath(path); v.Allowed != want {
				t.Errorf("%s allowed %v, want %v: %s", path, v.Allowed, want, v)
			}
		}
	}
}

// distinctRules returns hostileRules followed by "Disallow: /d/NNNNNNNN"
// lines, size bytes in all or a little more.
func distinctRules(size int) string {
	var b strings.Builder
	b.WriteString(hostileRules)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "Disallow: /d/%08d\n", i)
	}
	return b.String()
}

// utf16Body is a robots.txt of about 260,000 characters: over 500 KiB in
// UTF-16. Its character 255,999 (where the first 512,001 bytes of its
// UTF-16 form end, after the byte-order mark) is in a "Disallow: /qqq..."
// line; "Disallow: /late" ends it.
var utf16Body = hostileRules + strings.Repeat("# "+strings.Repeat("p", 97)+"\n", 2559) +
	"Disallow: /" + strings.Repeat("q", 100) + "\nDisallow: /late\n"

// utf16LE returns s in UTF-16, little-endian, after a byte-order mark.
func utf16LE(s string) []byte {
	b := []byte{0xFF, 0xFE}
	for _, c := range utf16.Encode([]rune(s)) {
		b = append(b, byte(c), byte(c>>8))
	}
	return b
}

// rawHTTP starts a TCP server that reads one request per connection, runs
// answer on the connection, and closes it: for answers net/http's server
// would not send.
func rawHTTP(answer func(c net.Conn)) func(t *testing.T) string {
	return func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer c.Close()
					_ = c.SetDeadline(time.Now().Add(10 * time.Second))
					if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
						return
					}
					answer(c)
				}()
			}
		}()
		t.Cleanup(func() {
			l.Close()
			wg.Wait()
		})
		return "http://" + l.Addr().String()
	}
}

// selfSigned starts an HTTPS server whose certificate the client's default
// roots do not know.
func selfSigned(t *testing.T) string {
	srv := httptest.NewUnstartedServer(text(200, hostileRules))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake errors
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL
}

// --- checks ---

func cutAtLimit(t *testing.T, p *policy.Policy) {
	t.Helper()
	if f := p.Fetch(); !f.Truncated || f.Bytes != dialect.MaxBodyBytes+1 {
		t.Errorf("read %d bytes, truncated %v; want %d, true", f.Bytes, f.Truncated, dialect.MaxBodyBytes+1)
	}
	if p.Robots() == nil {
		t.Fatalf("no robots.txt parsed")
	}
	if n, cut := p.Robots().Size(); !cut || n > dialect.MaxBodyBytes {
		t.Errorf("parsed %d bytes, cut %v", n, cut)
	}
	if v := p.CheckPath("/private/x"); v.Allowed || v.Rule == (dialect.Rule{}) || v.Rule.Line != 2 {
		t.Errorf("/private/x: %s, want line 2", v)
	}
}

func wantRedirects(t *testing.T, p *policy.Policy, n int) {
	t.Helper()
	if f := p.Fetch(); f.Redirects != n {
		t.Errorf("%d redirects followed, want %d (final URL %s)", f.Redirects, n, f.FinalURL)
	}
}

// heapWatch measures the heap while a fetch runs: the peak of the heap's
// live and unswept objects, sampled every millisecond, and the bytes
// allocated, against the live heap after a collection at the start.
type heapWatch struct {
	base, allocBase uint64
	peak            atomic.Uint64
	quit, done      chan struct{}
	alloc           uint64 // bytes allocated between start and stop
	retained        int64  // live heap growth after a collection at stop
}

func watchHeap() *heapWatch {
	h := &heapWatch{quit: make(chan struct{}), done: make(chan struct{})}
	h.base = testutil.HeapInUse()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.allocBase = ms.TotalAlloc
	go func() {
		defer close(h.done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.quit:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

func (h *heapWatch) stop(t *testing.T) {
	close(h.quit)
	<-h.done
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.alloc = ms.TotalAlloc - h.allocBase
	h.retained = int64(testutil.HeapInUse()) - int64(h.base)
}

func (h *heapWatch) check(t *testing.T) {
	t.Helper()
	peak := int64(h.peak.Load()) - int64(h.base)
	t.Logf("heap: peak growth %.1f MiB, allocated %.1f MiB (client and server), retained after GC %.1f MiB (policy held)",
		mib(peak), mib(int64(h.alloc)), mib(h.retained))
	if peak > hostileMaxHeap || h.alloc > hostileMaxHeap {
		t.Errorf("heap grew by %.1f MiB at peak, %.1f MiB allocated; want under %.0f MiB",
			mib(peak), mib(int64(h.alloc)), mib(hostileMaxHeap))
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
