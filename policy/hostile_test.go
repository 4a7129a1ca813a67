package policy_test

// Hostile servers (issue "Hardening"): what the resolver decides when
// robots.txt is served slowly, endlessly, hugely, compressed into a bomb,
// through redirect loops, broken connections, a certificate it cannot
// check or a body that is not robots.txt at all; how long it takes to
// decide; and that memory stays bounded where the case is about size.
//
// Every fetch here is bounded by hostileTotal (WithTimeout's, 2 s),
// or sizeTotal for the cases about size. The time bounds are generous on
// purpose (other tests and fuzzers share the machine): "decided by the
// timeout" means at least hostileTotal and well under the default 30 s;
// "fast" means under 1.5 s, where only an event (not the timeout) can have
// decided. Cases waiting for a fix have a skip field: delete that line
// once the fix is in.

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/testkit/testutil"
)

const (
	// hostileTotal is the total timeout of every fetch in this file.
	hostileTotal = 2 * time.Second
	// hostileFast bounds the time to decide where the answer must not wait
	// for the timeout.
	hostileFast = 1500 * time.Millisecond
	// hostileSlack is what a decision cut by the timeout may take past it.
	hostileSlack = 5 * time.Second
	// hostileMaxHeap bounds the heap growth (peak, and total allocated)
	// of one fetch in the cases about size.
	hostileMaxHeap = 64 << 20
	// sizeTotal is the total timeout of the cases about size.
	sizeTotal = 10 * time.Second
	// hostileDrip is the pace of a drip-fed body: one byte per tick.
	hostileDrip = 50 * time.Millisecond
	// hostileRules is the robots.txt of the cases that need rules: /private
	// is disallowed by line 2.
	hostileRules = "User-agent: *\nDisallow: /private\n"
	// rulesParsed is the Reason of a policy that parsed hostileRules.
	rulesParsed = "200 OK, 33 bytes parsed"
)

// hostileRow is one hostile server and what the resolver must decide.
type hostileRow struct {
	name string
	// skip, when set, is the t.Skip reason of a case whose fix has not
	// landed yet ("waiting for a fix: ..."): remove the line with the fix.
	skip    string
	dialect *dialect.Dialect // nil: rfc9309
	// serve starts what answers (closed when the case ends) and returns
	// the base URL to ask, "scheme://host:port".
	serve func(t *testing.T) string
	// client, when set, returns the client robots.txt is fetched with; by
	// default a plain transport of the case's own.
	client func(t *testing.T, base string) *http.Client

	action  dialect.Action
	outcome dialect.Outcome
	reason  string // Reason() contains it
	// private: whether /private/x is allowed (a served hostileRules
	// disallows it).
	private bool
	// total is the fetch's total timeout (0: hostileTotal). The cases about
	// size, and TLS, whose time is not the point, get sizeTotal, so that a
	// loaded machine or the race detector cannot turn them into "no answer".
	total time.Duration
	// within bounds the time to decide; atLeast is a lower bound (0: none).
	within, atLeast time.Duration
	// memory: the case is about size. It runs alone (not in parallel), and
	// its peak heap growth and total allocation are measured, logged and
	// bounded by hostileMaxHeap.
	memory bool
	check  func(t *testing.T, p *policy.Policy)
}

func hostileRows() []hostileRow {
	const (
		parse    = dialect.ActionParse
		allowAll = dialect.ActionAllowAll
		disallow = dialect.ActionDisallowAll
	)
	timedOut := hostileTotal + hostileSlack
	rows := []hostileRow{
		// Slow bodies: the total timeout cuts them; no answer.
		{name: "200 drip-fed 1 byte per 50ms, endless", serve: hostileHTTP(drip(200, "")),
			action: disallow, outcome: dialect.OutcomeNoAnswer, reason: "no answer (timeout), complete disallow",
			within: timedOut, atLeast: hostileTotal},
		{name: "200 stalls after the headers", serve: hostileHTTP(stall(200, "")),
			action: disallow, outcome: dialect.OutcomeNoAnswer, reason: "no answer (timeout), complete disallow",
			within: timedOut, atLeast: hostileTotal},
		{name: "200 stalls after half a body", serve: hostileHTTP(stall(200, hostileRules)),
			action: disallow, outcome: dialect.OutcomeNoAnswer, reason: "no answer (timeout), complete disallow",
			within: timedOut, atLeast: hostileTotal},

		// Unused bodies that trickle: at most a small bound of them is read,
		// for a short time.
		{name: "302 to a good robots.txt with a trickling body",
			serve: func(t *testing.T) string {
				target := hostileHTTP(text(200, hostileRules))(t)
				return hostileHTTP(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Location", target+"/robots.txt")
					drip(http.StatusFound, "")(w, r)
				})(t)
			},
			action: parse, outcome: dialect.OutcomeOK, reason: rulesParsed, within: hostileFast,
			check: func(t *testing.T, p *policy.Policy) {
				if f := p.Fetch(); f.Redirects != 1 {
					t.Errorf("%d redirects, want 1", f.Redirects)
				}
			}},
		{name: "404 with a trickling body",
			serve:  hostileHTTP(drip(http.StatusNotFound, "")),
			action: allowAll, outcome: dialect.Outcome4xx, reason: "404 Not Found, no restrictions", private: true, within: hostileFast},
		{name: "503 with a trickling body",
			serve:  hostileHTTP(drip(http.StatusServiceUnavailable, "")),
			action: disallow, outcome: dialect.Outcome5xx, reason: "503 Service Unavailable, complete disallow", within: hostileFast},

		// A Location Go cannot parse is a 3xx without a usable Location, not
		// "no answer".
		{name: "302 to http://[::1",
			serve:  hostileHTTP(redirectTo(http.StatusFound, "http://[::1")),
			action: disallow, outcome: dialect.OutcomeOtherStatus, reason: "302 Found without a usable Location, complete disallow", within: hostileFast},
		{name: "302 to http://%zz/",
			serve:  hostileHTTP(redirectTo(http.StatusFound, "http://%zz/")),
			action: disallow, outcome: dialect.OutcomeOtherStatus, reason: "302 Found without a usable Location, complete disallow", within: hostileFast},
		{name: "301 to http://exa mple.com/",
			serve:  hostileHTTP(redirectTo(http.StatusMovedPermanently, "http://exa mple.com/")),
			action: disallow, outcome: dialect.OutcomeOtherStatus, reason: "301 Moved Permanently without a usable Location, complete disallow", within: hostileFast},
		{name: "coccoc: 302 to http://[::1", dialect: dialect.CocCoc,
			serve:  hostileHTTP(redirectTo(http.StatusFound, "http://[::1")),
			action: allowAll, outcome: dialect.OutcomeOtherStatus, reason: "302 Found without a usable Location, no restrictions", private: true, within: hostileFast},
		{name: "coccoc: 302 to http://%zz/", dialect: dialect.CocCoc,
			serve:  hostileHTTP(redirectTo(http.StatusFound, "http://%zz/")),
			action: allowAll, outcome: dialect.OutcomeOtherStatus, reason: "302 Found without a usable Location, no restrictions", private: true, within: hostileFast},
		{name: "coccoc: 301 to http://exa mple.com/", dialect: dialect.CocCoc,
			serve:  hostileHTTP(redirectTo(http.StatusMovedPermanently, "http://exa mple.com/")),
			action: allowAll, outcome: dialect.OutcomeOtherStatus, reason: "301 Moved Permanently without a usable Location, no restrictions", private: true, within: hostileFast},

		// Huge bodies: cut at 500 KiB, memory bounded.
		{name: "100 MB body", serve: hostileHTTP(hugeBody(100 << 20)), memory: true,
			action: parse, outcome: dialect.OutcomeOK, reason: "bytes parsed (cut at 512000)", total: sizeTotal, within: sizeTotal,
			check: func(t *testing.T, p *policy.Policy) {
				cutAtLimit(t, p)
				// The rules before the cut apply, the one after it does not.
				if v := p.CheckPath("/d/00000100"); v.Allowed {
					t.Errorf("/d/00000100 allowed, though a rule before the cut disallows it: %s", v)
				}
				if v := p.CheckPath("/late"); !v.Allowed {
					t.Errorf("/late disallowed by a rule after the cut: %s", v)
				}
			}},
		{name: "1 GiB gzip bomb", serve: hostileHTTP(gzipBomb(1<<30, 1)), memory: true,
			action: parse, outcome: dialect.OutcomeOK, reason: "bytes parsed (cut at 512000)", total: sizeTotal, within: sizeTotal,
			check: cutAtLimit},
		{name: "1 GiB gzip bomb inside gzip", serve: hostileHTTP(gzipBomb(1<<30, 2)), memory: true,
			action: parse, outcome: dialect.OutcomeOK, reason: "bytes parsed (cut at 512000)", total: sizeTotal, within: sizeTotal,
			check: cutAtLimit},
		{name: "gzip inside gzip: both layers decoded", serve: hostileHTTP(gzipLayers(hostileRules, 2)),
			action: parse, outcome: dialect.OutcomeOK, reason: rulesParsed, within: hostileTotal,
			check: func(t *testing.T, p *policy.Policy) {
				if ws := p.Warnings(); len(ws) != 0 {
					t.Errorf("warnings %q, want none", ws)
				}
			}},
		{name: "gzip inside gzip inside gzip: parsed as it came, with a warning", serve: hostileHTTP(gzipLayers(hostileRules, 3)),
			action: parse, outcome: dialect.OutcomeOK, reason: "200 OK", private: true, within: hostileTotal,
			check: func(t *testing.T, p *policy.Policy) {
				ws := p.Warnings()
				if len(ws) != 1 || !strings.Contains(ws[0], "gzip") {
					t.Errorf("warnings %q, want one about the gzip layer left", ws)
				}
			}},

		// Redirects.
		{name: "redirect loop a→b→a", serve: redirectLoop,
			action: allowAll, outcome: dialect.OutcomeRedirectLimit, reason: "more than 5 redirects, no restrictions", private: true, within: hostileTotal,
			check: func(t *testing.T, p *policy.Policy) { wantRedirects(t, p, 5) }},
		{name: "redirect to itself", serve: hostileHTTP(redirectTo(http.StatusMovedPermanently, "/robots.txt")),
			action: allowAll, outcome: dialect.OutcomeRedirectLimit, reason: "more than 5 redirects, no restrictions", private: true, within: hostileTotal,
			check: func(t *testing.T, p *policy.Policy) { wantRedirects(t, p, 5) }},
		{name: "6 hops", serve: hostileHTTP(hops(6)),
			action: allowAll, outcome: dialect.OutcomeRedirectLimit, reason: "more than 5 redirects, no restrictions", private: true, within: hostileTotal,
			check: func(t *testing.T, p *policy.Policy) { wantRedirects(t, p, 5) }},
		{name: "5 hops then rules", serve: hostileHTTP(hops(5)),
			action: parse, outcome: dialect.OutcomeOK, reason: rulesParsed, within: hostileTotal,
			check: func(t *testing.T, p *policy.Policy) { wantRedirects(t, p, 5) }},
		{name: "302 to ftp://", serve: hostileHTTP(redirectTo(http.StatusFound, "ftp://example.com/robots.txt")),
			action: disallow, outcome: dialect.OutcomeOtherStatus, reason: "302 Found without a usable Location, complete disallow", within: hostileTotal},

		// Connections that break.
		{name: "closed before the status line", serve: rawHTTP(func(c net.Conn) {}),
			action: disallow, outcome: dialect.OutcomeNoAnswer, reason: "no answer (connection closed early), complete disallow", within: hostileTotal},
		{name: "closed after the headers", serve: rawHTTP(func(c net.Conn) {
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n")
		}), action: disallow, outcome: dialect.OutcomeNoAnswer, reason: "no answer (connection closed early), complete disallow", within: hostileTotal},
		{name: "closed mid-body (Content-Length 1000, 10 bytes sent)", serve: rawHTTP(func(c net.Conn) {
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\nUser-agent")
		}), action: disallow, outcome: dialect.OutcomeNoAnswer, reason: "no answer (connection closed early), complete disallow", within: hostileTotal},
		{name: "closed mid-chunk", serve: rawHTTP(func(c net.Conn) {
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n22\r\nUser-agent: *\r\n")
		}), action: disallow, outcome: dialect.OutcomeNoAnswer, reason: "no answer (connection closed early), complete disallow", within: hostileTotal},
		{name: "reset (RST) mid-body", serve: rawHTTP(func(c net.Conn) {
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\nUser-agent")
			time.Sleep(20 * time.Millisecond) // let the headers and bytes be read before the reset
			_ = c.(*net.TCPConn).SetLinger(0)
		}), action: disallow, outcome: dialect.OutcomeNoAnswer, reason: "no answer (", within: hostileTotal},

		// TLS.
		// A TLS handshake under the race detector on a loaded machine has
		// taken 1 s: the longer timeout keeps the error the certificate's.
		{name: "self-signed certificate, default client", serve: selfSigned,
			action: disallow, outcome: dialect.OutcomeNoAnswer, reason: "certificate", total: sizeTotal, within: sizeTotal},

		// Bodies that are not robots.txt: parsed leniently.
		{name: "binary garbage", serve: hostileHTTP(binary(nil)),
			action: parse, outcome: dialect.OutcomeOK, reason: "200 OK, 8192 bytes parsed", private: true, within: hostileTotal},
		{name: "binary garbage around a group", serve: hostileHTTP(binary([]byte("\n" + hostileRules + "\n"))),
			action: parse, outcome: dialect.OutcomeOK, reason: "200 OK", within: hostileTotal},
		{name: "HTML page (soft 404)", serve: hostileHTTP(text(200, softNotFound)),
			action: parse, outcome: dialect.OutcomeOK, reason: "200 OK", private: true, within: hostileTotal,
			check: func(t *testing.T, p *policy.Policy) {
				if p.Robots() == nil || len(p.Robots().Warnings()) == 0 {
					t.Errorf("no parser warnings for an HTML page")
				}
			}},
		{name: "one 600 KiB line", serve: hostileHTTP(text(200, "User-agent: * Disallow: /"+strings.Repeat("x", 600<<10))),
			action: parse, outcome: dialect.OutcomeOK, reason: "200 OK, 0 bytes parsed (cut at 512000)", private: true, total: sizeTotal, within: sizeTotal,
			check: func(t *testing.T, p *policy.Policy) {
				if f := p.Fetch(); !f.Truncated || f.Bytes != dialect.MaxBodyBytes+1 {
					t.Errorf("read %d bytes, truncated %v", f.Bytes, f.Truncated)
				}
				// The line cut at 500 KiB is dropped whole: nothing is used.
				if n, cut := p.Robots().Size(); n != 0 || !cut {
					t.Errorf("robots.txt used %d bytes, cut %v; want 0, true", n, cut)
				}
			}},
		{name: "a 600 KiB line after a group", serve: hostileHTTP(text(200, hostileRules+"Disallow: /"+strings.Repeat("x", 600<<10)+"\n")),
			action: parse, outcome: dialect.OutcomeOK, reason: "200 OK, 33 bytes parsed (cut at 512000)", total: sizeTotal, within: sizeTotal,
			check: func(t *testing.T, p *policy.Policy) {
				// The cut line is dropped whole, not applied cut.
				if n, cut := p.Robots().Size(); n != len(hostileRules) || !cut {
					t.Errorf("robots.txt used %d bytes, cut %v; want %d, true", n, cut, len(hostileRules))
				}
				if v := p.CheckPath("/" + strings.Repeat("x", 500<<10)); !v.Allowed {
					t.Errorf("the line cut at 500 KiB applied: %s", v)
				}
			}},
		// NUL bytes in rules and as lines of their own: rfc9309 keeps a NUL
		// as an octet of the path ("/private\x00/tail" is not "/private"),
		// google ends the line's content at it.
		{name: "NUL bytes", serve: hostileHTTP(text(200, nulBody)),
			action: parse, outcome: dialect.OutcomeOK, reason: "200 OK", private: true, within: hostileTotal,
			check: nulChecks(map[string]bool{"/plain": false, "/public": true, "/a": true, "/a%00b": false})},
		{name: "google: NUL bytes", dialect: dialect.Google, serve: hostileHTTP(text(200, nulBody)),
			action: parse, outcome: dialect.OutcomeOK, reason: "200 OK", within: hostileTotal,
			check: nulChecks(map[string]bool{"/plain": false, "/public": true, "/a": false})},
		// A NUL in "User-agent: *\x00junk": rfc9309 reads the value whole,
		// which is not "*", so the group applies to nobody; google cuts it
		// to "*".
		{name: "NUL in the user-agent line", serve: hostileHTTP(text(200, "User-agent: *\x00junk\nDisallow: /private\n")),
			action: parse, outcome: dialect.OutcomeOK, reason: "200 OK", private: true, within: hostileTotal},
		{name: "google: NUL in the user-agent line", dialect: dialect.Google, serve: hostileHTTP(text(200, "User-agent: *\x00junk\nDisallow: /private\n")),
			action: parse, outcome: dialect.OutcomeOK, reason: "200 OK", within: hostileTotal},

		// Found while writing this suite (see the skip reasons).
		{name: "binary garbage that starts like gzip (1f 8b)",
			serve:  hostileHTTP(text(200, "\x1f\x8b"+strings.Repeat("garbage\n", 100)+hostileRules)),
			action: parse, outcome: dialect.OutcomeOK, reason: "200 OK", within: hostileTotal},
		{name: "UTF-16 body longer than 500 KiB",
			serve:  hostileHTTP(text(200, string(utf16LE(utf16Body)))),
			action: parse, outcome: dialect.OutcomeOK, reason: "200 OK", within: hostileTotal,
			check: func(t *testing.T, p *policy.Policy) {
				// Cut on the raw bytes (at 255,999.5 characters, in the
				// /qqq... line) or on the converted ones (then 260 KB are
				// not cut): either is fine, a silent cut is not.
				f := p.Fetch()
				_, cut := p.Robots().Size()
				late := p.CheckPath("/late")
				t.Logf("truncated %v, cut %v, /late %s", f.Truncated, cut, late)
				switch {
				case f.Truncated:
					if !cut || !strings.Contains(p.Reason(), "(cut at 512000)") {
						t.Errorf("cut not reported: Robots().Size() cut %v, reason %q", cut, p.Reason())
					}
					if v := p.CheckPath("/" + strings.Repeat("q", 55) + "%EF%BF%BD"); !v.Allowed {
						t.Errorf("the line cut in the middle applied: %s", v)
					}
				case late.Allowed:
					t.Errorf("/late, after the cut, is allowed, but the body is not reported as cut")
				}
			}},

		// A host's gate (package hostlimit) holds robots.txt past the total
		// timeout: the wait there is not counted.
		{name: "200 behind a gate paused past the total timeout", serve: hostileHTTP(text(200, hostileRules)),
			client: func(t *testing.T, base string) *http.Client {
				lim := hostlimit.New(hostlimit.Config{})
				lim.Pause(base, hostileTotal+300*time.Millisecond)
				return &http.Client{Transport: lim.Transport(plainTransport(t))}
			},
			action: parse, outcome: dialect.OutcomeOK, reason: rulesParsed,
			// The pause starts before the clock of the case: the lower bound
			// is the total timeout, which a counted wait would have hit.
			within: hostileTotal + 300*time.Millisecond + hostileSlack, atLeast: hostileTotal},
	}
	for i := range rows {
		if rows[i].dialect == nil {
			rows[i].dialect = dialect.RFC9309
		}
		if rows[i].total == 0 {
			rows[i].total = hostileTotal
		}
	}
	return rows
}

// TestHostileFetch runs every hostile row: the cases about size one at a
// time (their heap figures are the process's), then all the others at once,
// each in a goroutine of its own rather than under t.Parallel, whose limit
// (GOMAXPROCS) would queue the rows that wait out the total timeout behind
// one another.
func TestHostileFetch(t *testing.T) {
	testutil.CheckGoroutines(t)
	rows := hostileRows()
	for _, row := range rows {
		if row.memory {
			t.Run(row.name, func(t *testing.T) { hostileFetch(t, row) })
		}
	}
	var wg sync.WaitGroup
	for _, row := range rows {
		if !row.memory {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(row.name, func(t *testing.T) { hostileFetch(t, row) })
			}()
		}
	}
	wg.Wait()
}

// hostileFetch is TestHostileFetch's case of row.
func hostileFetch(t *testing.T, row hostileRow) {
	if row.skip != "" {
		t.Skip(row.skip)
	}
	base := row.serve(t)
	var client *http.Client
	if row.client != nil {
		client = row.client(t, base)
	} else {
		client = &http.Client{Transport: plainTransport(t)}
	}
	r, err := policy.NewResolver(policy.WithHTTPClient(client), policy.WithDialect(row.dialect),
		policy.WithTimeout(row.total), policy.WithUserAgent("ExampleBot/1.0"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(base + "/private/x")
	if err != nil {
		t.Fatal(err)
	}

	var mem *heapWatch
	if row.memory {
		mem = watchHeap()
	}
	start := time.Now()
	p, err := r.Policy(context.Background(), u)
	took := time.Since(start)
	if mem != nil {
		mem.stop(t)
	}
	if err != nil {
		t.Fatalf("Policy: %v", err)
	}
	t.Logf("decided in %s: %s", took.Round(time.Millisecond), p.Reason())

	f := p.Fetch()
	if p.Action() != row.action || f.Outcome != row.outcome {
		t.Errorf("action %s, outcome %s; want %s, %s (%s)", p.Action(), f.Outcome, row.action, row.outcome, p.Reason())
	}
	if !strings.Contains(p.Reason(), row.reason) {
		t.Errorf("reason %q, want it to contain %q", p.Reason(), row.reason)
	}
	if v := p.Check(u); v.Allowed != row.private {
		t.Errorf("/private/x allowed %v, want %v: %s", v.Allowed, row.private, v)
	}
	if took > row.within {
		t.Errorf("decided in %s, want under %s", took, row.within)
	}
	if took < row.atLeast {
		t.Errorf("decided in %s, want at least %s", took, row.atLeast)
	}
	if mem != nil {
		runtime.KeepAlive(p)
		mem.check(t)
	}
	if row.check != nil {
		row.check(t, p)
	}
}

// TestHostileCacheBytes: what a policy of a big robots.txt holds in memory
// is what the resolver counts against WithCacheBytes (Resolver.Bytes),
// within half again (it is an estimate): the cache's memory bound holds
// against hosts that serve 500 KiB of anything.
func TestHostileCacheBytes(t *testing.T) {
	testutil.CheckGoroutines(t)
	long := strings.Repeat("x", 600<<10)
	for _, tc := range []struct {
		name, skip string
		serve      http.HandlerFunc
	}{
		{name: "600 KiB of rules", serve: text(200, distinctRules(600<<10))},
		{name: "600 KiB of one rule repeated", serve: text(200, hostileRules+strings.Repeat("Disallow: /d/0123456789\n", 600<<10/24))},
		{name: "600 KiB of comments", serve: text(200, hostileRules+strings.Repeat("# "+strings.Repeat("c", 97)+"\n", 600<<10/100))},
		{name: "one 600 KiB line",
			serve: text(200, hostileRules+"Disallow: /"+long)},
		{name: "gzip of 600 KiB of zeros",
			serve: gzipLayers(hostileRules+strings.Repeat("\x00", 600<<10), 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			base := hostileHTTP(tc.serve)(t)
			r, err := policy.NewResolver(policy.WithHTTPClient(&http.Client{Transport: plainTransport(t)}),
				policy.WithTimeout(sizeTotal))
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(base + "/private/x")
			if err != nil {
				t.Fatal(err)
			}
			before := testutil.HeapInUse()
			p, err := r.Policy(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			held := int64(testutil.HeapInUse()) - int64(before)
			counted := r.Bytes()
			t.Logf("%s: holds %.2f MiB, counted %.2f MiB", p.Reason(), mib(held), mib(counted))
			if held > counted+counted/2+64<<10 {
				t.Errorf("the policy holds %d bytes, the resolver counts %d", held, counted)
			}
			runtime.KeepAlive(p)
			runtime.KeepAlive(r)
		})
	}
}

// TestHostileConcurrentFirstRequests: 1,000 goroutines ask for the policy
// of one authority at once, before anything is cached: robots.txt is
// fetched once and they all get the same *Policy, whatever it says and
// whether or not a host gate (package hostlimit) is in the way.
func TestHostileConcurrentFirstRequests(t *testing.T) {
	testutil.CheckGoroutines(t)
	const callers = 1000
	for _, tc := range []struct {
		name   string
		status int
		gate   bool
		action dialect.Action
	}{
		{"200", 200, false, dialect.ActionParse},
		{"503", 503, false, dialect.ActionDisallowAll},
		{"200 through a hostlimit gate", 200, true, dialect.ActionParse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fetches atomic.Int64
			base := hostileHTTP(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					fetches.Add(1)
				}
				time.Sleep(200 * time.Millisecond) // every caller arrives while the fetch is in flight
				text(tc.status, hostileRules)(w, r)
			})(t)
			var rt http.RoundTripper = plainTransport(t)
			if tc.gate {
				rt = hostlimit.New(hostlimit.Config{Delay: func(string) time.Duration { return 50 * time.Millisecond }}).Transport(rt)
			}
			r, err := policy.NewResolver(policy.WithHTTPClient(&http.Client{Transport: rt}), policy.WithTimeout(hostileTotal))
			if err != nil {
				t.Fatal(err)
			}

			got := make([]*policy.Policy, callers)
			errs := make([]error, callers)
			begin := make(chan struct{})
			var wg sync.WaitGroup
			for i := range callers {
				u, err := url.Parse(base + "/page/" + strconv.Itoa(i))
				if err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-begin
					got[i], errs[i] = r.Policy(context.Background(), u)
				}()
			}
			start := time.Now()
			close(begin)
			wg.Wait()
			t.Logf("%d callers answered in %s; robots.txt fetched %d time(s)", callers, time.Since(start).Round(time.Millisecond), fetches.Load())
			if n := fetches.Load(); n != 1 {
				t.Errorf("robots.txt fetched %d times, want 1", n)
			}
			for i := range callers {
				if errs[i] != nil {
					t.Fatalf("caller %d: %v", i, errs[i])
				}
				if got[i] != got[0] {
					t.Fatalf("caller %d got another *Policy (%s) than caller 0 (%s)", i, got[i], got[0])
				}
			}
			if got[0].Action() != tc.action {
				t.Errorf("action %s, want %s (%s)", got[0].Action(), tc.action, got[0].Reason())
			}
		})
	}
}

// TestHostileCancellation: a caller whose context ends while robots.txt is
// being fetched gets ctx.Err() at once; the fetch goes on and its policy
// serves the callers still waiting and the later ones.
func TestHostileCancellation(t *testing.T) {
	testutil.CheckGoroutines(t)
	var fetches atomic.Int64
	arrived, release := make(chan struct{}), make(chan struct{})
	base := hostileHTTP(func(w http.ResponseWriter, r *http.Request) {
		if fetches.Add(1) == 1 {
			close(arrived)
		}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		text(200, hostileRules)(w, r)
	})(t)
	released := sync.OnceFunc(func() { close(release) })
	t.Cleanup(released) // before the server closes, whatever happens
	r, err := policy.NewResolver(policy.WithHTTPClient(&http.Client{Transport: plainTransport(t)}),
		policy.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(base + "/private/x")
	if err != nil {
		t.Fatal(err)
	}

	// Already done: no fetch is started for it.
	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	if _, err := r.Policy(done, u); !errors.Is(err, context.Canceled) {
		t.Fatalf("ctx done before the call: err %v, want context.Canceled", err)
	}
	if n := fetches.Load(); n != 0 {
		t.Fatalf("a caller whose ctx was done started a fetch")
	}

	type answer struct {
		p   *policy.Policy
		err error
		at  time.Time // when Policy returned
	}
	ask := func(ctx context.Context) <-chan answer {
		ch := make(chan answer, 1)
		go func() {
			p, err := r.Policy(ctx, u)
			ch <- answer{p, err, time.Now()}
		}()
		return ch
	}
	patient := ask(context.Background())
	<-arrived // the fetch is in flight

	ctx, cancel := context.WithCancel(context.Background())
	canceled := ask(ctx)
	deadline, cancelDeadline := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelDeadline()
	dl, _ := deadline.Deadline()
	timedOut := ask(deadline)

	time.Sleep(50 * time.Millisecond)
	cancelAt := time.Now()
	cancel()
	a := <-canceled
	if !errors.Is(a.err, context.Canceled) || a.p != nil {
		t.Errorf("canceled caller: policy %v, err %v; want context.Canceled", a.p, a.err)
	}
	if d := a.at.Sub(cancelAt); d > hostileFast {
		t.Errorf("canceled caller returned %s after its cancel, want under %s", d, hostileFast)
	}
	b := <-timedOut
	if !errors.Is(b.err, context.DeadlineExceeded) {
		t.Errorf("caller with a 100ms deadline: err %v, want context.DeadlineExceeded", b.err)
	}
	if late := b.at.Sub(dl); late < 0 || late > hostileFast {
		t.Errorf("caller with a 100ms deadline returned %s after it", late)
	}
	t.Logf("canceled caller out %s after its cancel; 100ms-deadline caller out %s after its deadline",
		a.at.Sub(cancelAt).Round(time.Millisecond), b.at.Sub(dl).Round(time.Millisecond))

	select {
	case c := <-patient:
		t.Fatalf("the patient caller returned before robots.txt was answered: %v %v", c.p, c.err)
	case <-time.After(100 * time.Millisecond):
	}
	released()
	c := <-patient
	if c.err != nil || c.p.Action() != dialect.ActionParse {
		t.Fatalf("patient caller: %v %v", c.p, c.err)
	}
	later, err := r.Policy(context.Background(), u)
	if err != nil || later != c.p {
		t.Errorf("later caller: %v %v; want the cached policy", later, err)
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1", n)
	}
}
