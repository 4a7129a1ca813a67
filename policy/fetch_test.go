package policy

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/testkit/testutil"
)

// fetchRow is one fetch outcome, served by a fresh server.
type fetchRow struct {
	name    string
	serve   func(t *testing.T) string // starts what answers; returns the base URL to ask
	outcome dialect.Outcome
	// want: the action per dialect, in the order rfc9309, google, coccoc,
	// koster1994.
	want [4]dialect.Action
	// rules: when parsed, the body holds rulesBody ("/private" disallowed
	// by line 2); otherwise nothing is disallowed.
	rules     bool
	redirects int
	check     func(t *testing.T, p *Policy, base string)
	// timeout is the fetch's total timeout (0: fetchTimeout).
	timeout time.Duration
}

// fetchTimeout is the total timeout of the rows that do not wait for it:
// far beyond what a loopback answer takes on a busy machine, so that it
// never cuts one.
const fetchTimeout = 30 * time.Second

const (
	actParse    = dialect.ActionParse
	actAllow    = dialect.ActionAllowAll
	actDisallow = dialect.ActionDisallowAll
	actExclude  = dialect.ActionExcludeHost
)

func serve(h http.HandlerFunc) func(t *testing.T) string {
	return func(t *testing.T) string { return newRobotsServer(t, h).URL }
}

// chain redirects /robots.txt through n hops (301, 302, 303, 307, 308 in
// turn) and then answers with last.
func chain(n int, last http.HandlerFunc) http.HandlerFunc {
	codes := []int{301, 302, 303, 307, 308}
	return func(w http.ResponseWriter, r *http.Request) {
		i := 0
		if strings.HasPrefix(r.URL.Path, "/hop/") {
			i, _ = strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		}
		if i < n {
			http.Redirect(w, r, "/hop/"+strconv.Itoa(i+1), codes[i%len(codes)])
			return
		}
		last(w, r)
	}
}

func gzipped(body string) http.HandlerFunc {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte(body))
	_ = zw.Close()
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			http.Error(w, "gzip expected", 400)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(b.Bytes())
	}
}

// bigBody is 5 MB: rulesBody, comment lines past 500 KiB, then a rule that
// must be ignored.
func bigBody() string {
	var b strings.Builder
	b.WriteString(rulesBody)
	line := "# " + strings.Repeat("x", 97) + "\n"
	for b.Len() < dialect.MaxBodyBytes+10*len(line) {
		b.WriteString(line)
	}
	b.WriteString("Disallow: /late\n")
	for b.Len() < 5<<20 {
		b.WriteString(line)
	}
	return b.String()
}

func fetchRows() []fetchRow {
	unreachable := [4]dialect.Action{actDisallow, actDisallow, actExclude, actDisallow}
	server := [4]dialect.Action{actDisallow, actDisallow, actAllow, actDisallow}
	allowAll := [4]dialect.Action{actAllow, actAllow, actAllow, actAllow}
	parse := [4]dialect.Action{actParse, actParse, actParse, actParse}
	rows := []fetchRow{
		{name: "200", serve: serve(text(200, rulesBody)), outcome: dialect.OutcomeOK, want: parse, rules: true},
		{name: "204", serve: serve(text(204, "")), outcome: dialect.OutcomeOther2xx, want: [4]dialect.Action{actParse, actParse, actAllow, actParse}},
		{name: "206", serve: serve(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-%d/%d", len(rulesBody)-1, len(rulesBody)))
			text(206, rulesBody)(w, r)
		}), outcome: dialect.OutcomeOther2xx, want: [4]dialect.Action{actParse, actParse, actAllow, actParse}, rules: true},
		{name: "3 redirects then 200", serve: serve(chain(3, text(200, rulesBody))), outcome: dialect.OutcomeOK, want: parse, rules: true, redirects: 3},
		{name: "5 redirects then 200", serve: serve(chain(5, text(200, rulesBody))), outcome: dialect.OutcomeOK, want: parse, rules: true, redirects: 5},
		{name: "6 redirects", serve: serve(chain(6, text(200, rulesBody))), outcome: dialect.OutcomeRedirectLimit, want: allowAll, redirects: 5,
			check: func(t *testing.T, p *Policy, base string) {
				if !strings.Contains(p.Reason(), "more than 5 redirects, no restrictions") {
					t.Errorf("reason %q", p.Reason())
				}
			}},
		{name: "redirect to another host", serve: func(t *testing.T) string {
			other := newRobotsServer(t, text(200, rulesBody))
			first := newRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/robots.txt", http.StatusMovedPermanently)
			})
			return first.URL
		}, outcome: dialect.OutcomeOK, want: parse, rules: true, redirects: 1,
			check: func(t *testing.T, p *Policy, base string) {
				if f := p.Fetch(); f.FinalURL == f.URL || !strings.HasSuffix(f.FinalURL, "/robots.txt") || p.Authority()+"/robots.txt" != f.URL {
					t.Errorf("authority %s, fetched %s, answered by %s", p.Authority(), f.URL, f.FinalURL)
				}
			}},
		{name: "301 without Location", serve: serve(text(301, "")), outcome: dialect.OutcomeOtherStatus, want: server},
		{name: "redirect to ftp", serve: serve(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "ftp://example.com/robots.txt")
			w.WriteHeader(302)
		}), outcome: dialect.OutcomeOtherStatus, want: server},
		{name: "401", serve: serve(text(401, rulesBody)), outcome: dialect.Outcome4xx, want: allowAll},
		{name: "403", serve: serve(text(403, rulesBody)), outcome: dialect.Outcome4xx, want: allowAll},
		{name: "404", serve: serve(text(404, rulesBody)), outcome: dialect.Outcome4xx, want: allowAll,
			check: func(t *testing.T, p *Policy, base string) {
				if v := check(t, p, base+"/private"); v.String() != "robots.txt: 404 Not Found, no restrictions" {
					t.Errorf("explanation %q", v)
				}
			}},
		{name: "410", serve: serve(text(410, rulesBody)), outcome: dialect.Outcome4xx, want: allowAll},
		{name: "429", serve: serve(text(429, rulesBody)), outcome: dialect.Outcome429, want: [4]dialect.Action{actAllow, actDisallow, actAllow, actDisallow}},
		{name: "500", serve: serve(text(500, rulesBody)), outcome: dialect.Outcome5xx, want: server},
		{name: "503", serve: serve(text(503, rulesBody)), outcome: dialect.Outcome5xx, want: server,
			check: func(t *testing.T, p *Policy, base string) {
				if p.Action() != actDisallow {
					return
				}
				want := "robots.txt: 503 Service Unavailable, complete disallow until 2026-11-23T12:10:00Z"
				if v := check(t, p, base+"/public"); v.String() != want {
					t.Errorf("explanation %q, want %q", v, want)
				}
			}},
		{name: "connection refused", serve: func(t *testing.T) string {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := l.Addr().String()
			l.Close()
			return "http://" + addr
		}, outcome: dialect.OutcomeNoAnswer, want: unreachable,
			check: func(t *testing.T, p *Policy, base string) {
				if !strings.Contains(p.Reason(), "no answer (connection refused)") {
					t.Errorf("reason %q", p.Reason())
				}
			}},
		{name: "connection dropped mid-body", serve: serve(func(w http.ResponseWriter, r *http.Request) {
			conn, bw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			_, _ = bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n" + rulesBody)
			_ = bw.Flush()
			conn.Close()
		}), outcome: dialect.OutcomeNoAnswer, want: unreachable,
			check: func(t *testing.T, p *Policy, base string) {
				if !strings.Contains(p.Reason(), "no answer (connection closed early)") {
					t.Errorf("reason %q", p.Reason())
				}
			}},
		{name: "never answers", serve: func(t *testing.T) string {
			stop := make(chan struct{})
			srv := newRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-stop:
				}
			})
			t.Cleanup(func() { close(stop) }) // runs before the server's Close
			return srv.URL
		}, outcome: dialect.OutcomeNoAnswer, want: unreachable,
			// Waited out: the server never answers, so a timer firing late
			// changes nothing.
			timeout: time.Second,
			check: func(t *testing.T, p *Policy, base string) {
				if !strings.Contains(p.Reason(), "no answer (timeout)") {
					t.Errorf("reason %q", p.Reason())
				}
			}},
		{name: "5 MB body", serve: serve(text(200, bigBody())), outcome: dialect.OutcomeOK, want: parse, rules: true,
			check: func(t *testing.T, p *Policy, base string) {
				f := p.Fetch()
				if !f.Truncated || f.Bytes != dialect.MaxBodyBytes+1 {
					t.Errorf("read %d bytes, truncated %v", f.Bytes, f.Truncated)
				}
				if n, cut := p.Robots().Size(); !cut || n > dialect.MaxBodyBytes {
					t.Errorf("parsed %d bytes, cut %v", n, cut)
				}
				if v := check(t, p, base+"/late"); !v.Allowed {
					t.Errorf("rule after the cut applied: %s", v)
				}
			}},
		{name: "HTML", serve: serve(text(200, "<!DOCTYPE html>\n<html><head><title>Robots</title></head>\n<body><pre>\n"+rulesBody+"</pre></body></html>\n")),
			outcome: dialect.OutcomeOK, want: parse,
			check: func(t *testing.T, p *Policy, base string) {
				if v := check(t, p, base+"/private"); v.Allowed || v.Rule.Line != 5 {
					t.Errorf("HTML body: %s", v)
				}
				if len(p.Robots().Warnings()) == 0 {
					t.Errorf("no warnings for the HTML lines")
				}
			}},
		{name: "binary", serve: serve(func(w http.ResponseWriter, r *http.Request) {
			b := make([]byte, 4096)
			for i := range b {
				b[i] = byte(i*7) | 0x80
			}
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(b)
		}), outcome: dialect.OutcomeOK, want: parse},
		{name: "empty", serve: serve(text(200, "")), outcome: dialect.OutcomeOK, want: parse},
		{name: "gzip", serve: serve(gzipped(rulesBody)), outcome: dialect.OutcomeOK, want: parse, rules: true},
		{name: "gzip 5 MB", serve: serve(gzipped(bigBody())), outcome: dialect.OutcomeOK, want: parse, rules: true,
			check: func(t *testing.T, p *Policy, base string) {
				if f := p.Fetch(); !f.Truncated || f.Bytes != dialect.MaxBodyBytes+1 {
					t.Errorf("read %d bytes, truncated %v", f.Bytes, f.Truncated)
				}
			}},
		{name: "broken gzip", serve: serve(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write([]byte(rulesBody))
		}), outcome: dialect.OutcomeNoAnswer, want: unreachable},
		{name: "gzip inside gzip", serve: serve(encoded("gzip", gzipBytes(gzipBytes([]byte(rulesBody))))), outcome: dialect.OutcomeOK, want: parse, rules: true,
			check: noWarnings},
		{name: "deflate (zlib)", serve: serve(encoded("deflate", zlibBytes([]byte(rulesBody)))), outcome: dialect.OutcomeOK, want: parse, rules: true,
			check: noWarnings},
		{name: "deflate (raw)", serve: serve(encoded("deflate", flateBytes([]byte(rulesBody)))), outcome: dialect.OutcomeOK, want: parse, rules: true,
			check: noWarnings},
		{name: "UTF-16LE with BOM", serve: serve(encoded("", utf16Bytes(rulesBody, false))), outcome: dialect.OutcomeOK, want: parse, rules: true,
			check: warns("UTF-16 body converted to UTF-8")},
		{name: "UTF-16BE with BOM", serve: serve(encoded("", utf16Bytes(rulesBody, true))), outcome: dialect.OutcomeOK, want: parse, rules: true,
			check: warns("UTF-16 body converted to UTF-8")},
		{name: "br, not asked for", serve: serve(encoded("br", []byte(rulesBody))), outcome: dialect.OutcomeOK, want: parse, rules: true,
			check: warns(`Content-Encoding "br" not decoded: the body was parsed as it came`)},
		{name: "3 layers of gzip", serve: serve(encoded("gzip", gzipBytes(gzipBytes(gzipBytes([]byte(rulesBody)))))), outcome: dialect.OutcomeOK, want: parse,
			check: warns("body still gzip-compressed after 2 layers: parsed as it came")},
		{name: "302 with a Location Go cannot parse", serve: serve(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "http://[::1")
			w.WriteHeader(http.StatusFound)
		}), outcome: dialect.OutcomeOtherStatus, want: server,
			check: func(t *testing.T, p *Policy, base string) {
				if f := p.Fetch(); !strings.Contains(p.Reason(), "302 Found without a usable Location") || f.Err != `Location "http://[::1" cannot be parsed` {
					t.Errorf("reason %q, error %q", p.Reason(), f.Err)
				}
			}},
		{name: "302 with an endless body", serve: serve(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				w.Header().Set("Location", "/moved")
				w.WriteHeader(http.StatusFound)
				trickle(w, r) // the body of an answer the fetch does not use
				return
			}
			text(200, rulesBody)(w, r)
		}), outcome: dialect.OutcomeOK, want: parse, rules: true, redirects: 1},
	}
	return rows
}

// encoded serves body with the given Content-Encoding ("" for none).
func encoded(coding string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if coding != "" {
			w.Header().Set("Content-Encoding", coding)
		}
		_, _ = w.Write(body)
	}
}

// compressed is b written through the compressor w makes.
func compressed(b []byte, w func(io.Writer) io.WriteCloser) []byte {
	var out bytes.Buffer
	zw := w(&out)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return out.Bytes()
}

func gzipBytes(b []byte) []byte {
	return compressed(b, func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })
}

func zlibBytes(b []byte) []byte {
	return compressed(b, func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) })
}

func flateBytes(b []byte) []byte {
	return compressed(b, func(w io.Writer) io.WriteCloser { zw, _ := flate.NewWriter(w, flate.BestCompression); return zw })
}

// utf16Bytes is s in UTF-16 with a byte-order mark.
func utf16Bytes(s string, bigEndian bool) []byte {
	var out []byte
	put := func(u uint16) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	put(0xFEFF)
	for _, u := range utf16.Encode([]rune(s)) {
		put(u)
	}
	return out
}

// trickle writes a byte every 20 ms until the client goes away.
func trickle(w http.ResponseWriter, r *http.Request) {
	fl := w.(http.Flusher)
	for {
		if _, err := w.Write([]byte("x")); err != nil {
			return
		}
		fl.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func noWarnings(t *testing.T, p *Policy, _ string) {
	if w := p.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
}

func warns(want string) func(t *testing.T, p *Policy, _ string) {
	return func(t *testing.T, p *Policy, _ string) {
		if w := p.Warnings(); len(w) != 1 || w[0] != want {
			t.Errorf("warnings %q, want [%q]", w, want)
		}
	}
}

// TestFetchOutcomes: every fetch-outcome row, for every dialect. The rows
// run at once, each in a goroutine of its own rather than under
// t.Parallel, whose limit (GOMAXPROCS) would queue the rows that wait out a
// timeout behind one another.
func TestFetchOutcomes(t *testing.T) {
	var wg sync.WaitGroup
	for di, d := range dialect.All() {
		for _, row := range fetchRows() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(d.Name()+"/"+row.name, func(t *testing.T) { fetchOutcome(t, d, row, row.want[di]) })
			}()
		}
	}
	wg.Wait()
}

// fetchOutcome is TestFetchOutcomes' case of row in dialect d, whose action
// there is want.
func fetchOutcome(t *testing.T, d *dialect.Dialect, row fetchRow, want dialect.Action) {
	base := row.serve(t)
	clock := testutil.NewStepClock()
	timeout := row.timeout
	if timeout == 0 {
		timeout = fetchTimeout
	}
	r := newResolver(t, WithDialect(d), WithClock(clock), WithUserAgent("ExampleBot/1.0"),
		WithTimeout(timeout))
	p := mustPolicy(t, r, base+"/private/x")
	f := p.Fetch()
	if p.Action() != want || f.Outcome != row.outcome {
		t.Fatalf("action %s outcome %s, want %s %s (%s)", p.Action(), f.Outcome, want, row.outcome, p.Reason())
	}
	if f.Redirects != row.redirects {
		t.Errorf("%d redirects, want %d", f.Redirects, row.redirects)
	}
	private, public, robots := check(t, p, base+"/private/x"), check(t, p, base+"/public"), check(t, p, base+"/robots.txt")
	switch want {
	case actParse:
		if row.rules && (private.Allowed || private.Reason != dialect.ReasonRule || private.Rule.Line != 2) {
			t.Errorf("/private/x: %+v %s", private, private)
		}
		if !row.rules && row.check == nil && !private.Allowed {
			t.Errorf("/private/x: %s", private)
		}
		if !public.Allowed || public.Reason != dialect.ReasonNoRule {
			t.Errorf("/public: %s", public)
		}
		if !p.Expires().Equal(testutil.ClockStart.Add(24 * time.Hour)) {
			t.Errorf("expires %v", p.Expires())
		}
	case actAllow:
		if !private.Allowed || !public.Allowed || private.Reason != dialect.ReasonFetch {
			t.Errorf("allow all: %s / %s", private, public)
		}
	case actDisallow, actExclude:
		if private.Allowed || public.Allowed || public.Reason != dialect.ReasonFetch {
			t.Errorf("%s: /private/x %s, /public %s", want, private, public)
		}
		if robots.Allowed != (want == actDisallow) {
			t.Errorf("%s: /robots.txt %s", want, robots)
		}
		retry := 10 * time.Minute
		what := "complete disallow until "
		if want == actExclude {
			retry, what = time.Hour, "host excluded until "
		}
		until := testutil.ClockStart.Add(retry)
		if !p.Expires().Equal(until) || !strings.HasSuffix(public.String(), what+until.Format(time.RFC3339)) {
			t.Errorf("expires %v, explanation %q", p.Expires(), public)
		}
	}
	if row.check != nil {
		row.check(t, p, base)
	}
	// Until it expires, the policy is served from memory.
	p2 := mustPolicy(t, r, base+"/other")
	if p2 != p {
		t.Errorf("second lookup fetched again")
	}
}
