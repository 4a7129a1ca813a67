package policy

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/testkit/testutil"
)

// Fuzzing the readers of untrusted input in this package (issue
// "Hardening"):
//
//   - FuzzMaxAge: maxAge, the Cache-Control reader. The result is -1 or
//     ≥ 0; a no-cache or no-store directive, as a field value of its own or
//     as a list member of a value without quotes, gives 0; a single
//     well-formed max-age=N among other directives gives N seconds, clamped
//     to the largest time.Duration of whole seconds.
//   - FuzzDecodePolicy: decodePolicy, the reader of a Store value (a
//     hostile or corrupt Redis must never crash a crawler). For any bytes,
//     dialect and product token it must not panic; a decoded policy is
//     well-formed (authority set, the dialect asked for, rules exactly when
//     its action uses them, a last good copy when the action needs one), all
//     its methods work, its verdicts follow its action, and encodePolicy
//     reaches a fixed point after one round (decode, encode, decode, encode
//     gives the same bytes and the same policy).
//   - FuzzAuthority: Authority and AppendAuthority agree, errors wrap
//     ErrUnsupportedURL, and the robots.txt URL the resolver asks
//     (authority + "/robots.txt") has that same authority.
//
// A deviation already reported on the issue is not asserted (see
// knownPolicyIssue) unless FUZZ_STRICT=all (or its name) is set.

func knownPolicyIssue(name string) bool {
	strict := os.Getenv("FUZZ_STRICT")
	return strict != "all" && !strings.Contains(","+strict+",", ","+name+",")
}

// maxAgeSeconds is the clamp of maxAge: the largest whole number of seconds
// a time.Duration holds.
const maxAgeSeconds = int64(1<<63-1) / int64(time.Second)

func FuzzMaxAge(f *testing.F) {
	for _, c := range []struct {
		v1, v2 string
		n      uint64
		zeros  uint8
		other  string
	}{
		{"max-age=3600", "", 3600, 0, "public"},
		{"public, max-age=60", "must-revalidate", 60, 0, "private"},
		{"no-cache", "max-age=60", 0, 0, "no-transform"},
		{"NO-STORE", "", 1, 0, "s-maxage=5"},
		{`no-cache="Set-Cookie"`, "", 86400, 2, `community="UCI"`},
		{`max-age="120"`, "", 120, 0, "immutable"},
		{"max-age=-1", "max-age=5", 5, 0, "stale-while-revalidate=30"},
		{"max-age=abc, max-age=7", "", 9223372036, 0, "proxy-revalidate"},
		{"max-age=99999999999999999999", "", 9223372037, 0, ""},
		{"max-age=9223372036854775807", "", 1<<63 - 1, 0, "x"},
		{"max-age=+5", "", 18446744073709551615, 0, "y=z"},
		{" , ,max-age = 5 ,", ",", 0, 30, ""},
		{"s-maxage=10", "Max-Age=10", 10, 1, "MAX-AGE-ish"},
	} {
		f.Add(c.v1, c.v2, c.n, c.zeros, c.other)
	}
	f.Fuzz(func(t *testing.T, v1, v2 string, n uint64, zeros uint8, other string) {
		h := http.Header{"Cache-Control": {v1, v2}}
		got := maxAge(h)
		if got < -1 || (got < 0 && got != -1) {
			t.Fatalf("maxAge(%q) = %v", h, got)
		}
		if got >= 0 && got%time.Second != 0 {
			t.Fatalf("maxAge(%q) = %v, not whole seconds", h, got)
		}
		// Two field values and their comma-joined form are one list
		// (RFC 9110 §5.3) when no quoted string can hold the comma.
		if j := maxAge(http.Header{"Cache-Control": {v1 + ", " + v2}}); j != got && !strings.Contains(v1+v2, `"`) {
			t.Fatalf("maxAge(%q) = %v, but %v for the values joined", h, got, j)
		}

		// no-cache or no-store anywhere gives 0.
		for _, nc := range []string{"no-cache", "no-store", "No-Cache", " NO-STORE ", `no-cache="set-cookie"`} {
			for _, hh := range []http.Header{
				{"Cache-Control": {v1, v2, nc}},
				{"Cache-Control": {nc, v1, v2}},
				{"Cache-Control": {v1, nc + "," + v2}},
			} {
				if got := maxAge(hh); got != 0 {
					t.Fatalf("maxAge(%q) = %v, want 0", hh, got)
				}
			}
			if !strings.Contains(v1, `"`) {
				hh := http.Header{"Cache-Control": {v1 + "," + nc}}
				if got := maxAge(hh); got != 0 {
					t.Fatalf("maxAge(%q) = %v, want 0", hh, got)
				}
			}
		}

		// A single well-formed max-age=N among other directives.
		if !plainDirectives(v1) || !plainDirectives(other) {
			return
		}
		num := strings.Repeat("0", int(zeros%25)) + strconv.FormatUint(n, 10)
		want := time.Duration(min(n, uint64(maxAgeSeconds))) * time.Second
		for _, d := range []string{"max-age=" + num, "Max-Age=" + num, `max-age="` + num + `"`} {
			for _, v := range []string{d, v1 + "," + d, d + ", " + other, v1 + " , " + d + "," + other} {
				hh := http.Header{"Cache-Control": {v}}
				if other != "" {
					hh["Cache-Control"] = append(hh["Cache-Control"], other)
				}
				got := maxAge(hh)
				if got == want {
					continue
				}
				if got == -1 && n > 1<<63-1 && knownPolicyIssue("max-age-overflow-ignored") {
					// RFC 9111 §1.2.2: a delta-seconds too large to
					// represent must be read as the largest value, not
					// ignored. maxAge drops it (strconv.ParseInt fails).
					continue
				}
				t.Fatalf("maxAge(%q) = %v, want %v", hh, got, want)
			}
		}
	})
}

// plainDirectives reports whether v holds no directive maxAge reads
// (max-age, no-cache, no-store, in any case) and no quote, so that a
// max-age added to it is the only one.
func plainDirectives(v string) bool {
	l := strings.ToLower(v)
	return !strings.Contains(l, "max-age") && !strings.Contains(l, "no-cache") &&
		!strings.Contains(l, "no-store") && !strings.Contains(v, `"`)
}

// storedSeeds returns the Store values of policies fetched by a resolver in
// each dialect: 200 with rules, 503 the next day and the day after (a last
// good copy in force where the dialect keeps one), 503 after 40 days, 404,
// no answer.
func storedSeeds(f *testing.F) []storedSeed {
	var status atomic.Int64
	var body atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status.Load() == 0 {
			hj, _ := w.(http.Hijacker)
			if c, _, err := hj.Hijack(); err == nil {
				c.Close() // no answer
			}
			return
		}
		w.Header().Set("Cache-Control", "max-age=600")
		w.WriteHeader(int(status.Load()))
		_, _ = w.Write([]byte(body.Load().(string)))
	}))
	defer srv.Close()
	var out []storedSeed
	for di, d := range dialect.All() {
		add := func(p *Policy) {
			b, err := encodePolicy(p)
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, storedSeed{b, uint8(di)})
		}
		clock := testutil.NewStepClock()
		r := newResolver(f, WithDialect(d), WithClock(clock), WithAgents("examplebot"), WithTimeout(2*time.Second))
		get := func(st int, b string) {
			clock.Advance(24 * time.Hour) // past the expiry or retry time of the previous one
			status.Store(int64(st))
			body.Store(b)
			u, _ := url.Parse(srv.URL + "/private/x")
			p, err := r.Policy(context.Background(), u)
			if err != nil {
				f.Fatal(err)
			}
			add(p)
		}
		get(200, "User-agent: examplebot\nDisallow: /private\nAllow: /private/ok$\nCrawl-delay: 2\n\nUser-agent: *\nDisallow: /\nSitemap: https://example.com/s.xml\n")
		get(503, "")
		get(503, "")
		clock.Advance(40 * 24 * time.Hour)
		get(503, "")
		get(404, "not here")
		get(0, "")
	}
	return out
}

type storedSeed struct {
	b  []byte
	di uint8 // the dialect's index in dialect.All()
}

func FuzzDecodePolicy(f *testing.F) {
	for _, s := range storedSeeds(f) {
		f.Add(s.b, s.di, "examplebot", "/private/x")
		f.Add(s.b, s.di, "otherbot", "/")
	}
	for _, s := range []string{
		`{"v":1,"authority":"http://a","dialect":"rfc9309","action":1,"outcome":3,"expires":-9223372036854775808,"fetch_time":9223372036854775807,"bytes":-5,"redirects":-1,"max_age":-9223372036854775808,"retry":-1}`,
		`{"v":1,"authority":"http://a","dialect":"google","action":4,"outcome":5,"has_last_good":true,"last_good":"VXNlci1hZ2VudDogKgpEaXNhbGxvdzogLwo=","last_good_fetched":1,"fail_since":-1}`,
		`{"v":1,"authority":"http://a","dialect":"rfc9309","action":0,"outcome":0,"has_last_good":true,"last_good":"","truncated":true,"bytes":600000}`,
		`{"v":1,"authority":"\u0000","dialect":"cocCoc","action":3,"outcome":6,"err":"\ud800","warnings":["a",null,""]}`,
		`{"v":1,"authority":"x","dialect":"koster1994","action":2,"outcome":7,"status":-2147483648,"url":"::","final_url":"%"}`,
		`{"v":1.0,"V":1,"authority":"x","AUTHORITY":"y","dialect":"rfc9309","action":1,"outcome":0,"outcome":7}`,
		`{"v":1,"authority":"x","dialect":"rfc9309","action":5}`,
		`{"v":1,"authority":"x","dialect":"rfc9309","action":1,"outcome":8}`,
		`{"v":1,"authority":"x","dialect":"rfc9309","action":1,"outcome":255,"action":256}`,
		`[]`, `null`, `{"v":1,"authority":"x","dialect":"rfc9309","action":1,"outcome":1}   trailing`,
	} {
		for i := range dialect.All() {
			f.Add([]byte(s), uint8(i), "*", "/")
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, di uint8, agent, path string) {
		all := dialect.All()
		d := all[int(di)%len(all)]
		var tokens []string
		if agent != "" {
			tokens = []string{agent}
		}
		p, err := decodePolicy(b, d, tokens)
		if err != nil {
			if p != nil {
				t.Fatalf("decodePolicy: error %v and a policy", err)
			}
			return
		}
		checkPolicy(t, p, d, path)

		// A fixed point after one round.
		e1, err := encodePolicy(p)
		if err != nil {
			t.Fatalf("encodePolicy of a decoded policy: %v", err)
		}
		p2, err := decodePolicy(e1, d, tokens)
		if err != nil {
			t.Fatalf("decodePolicy(encodePolicy(decodePolicy(%q))) = %v\n%s", b, err, e1)
		}
		checkPolicy(t, p2, d, path)
		e2, err := encodePolicy(p2)
		if err != nil {
			t.Fatal(err)
		}
		if string(e1) != string(e2) {
			t.Fatalf("no fixed point:\n%s\n%s", e1, e2)
		}
		samePolicyFuzz(t, p, p2, path)
	})
}

// checkPolicy checks that a decoded policy is well-formed and that its
// methods work.
func checkPolicy(t *testing.T, p *Policy, d *dialect.Dialect, path string) {
	t.Helper()
	if p.Authority() == "" || p.Dialect() != d {
		t.Fatalf("authority %q, dialect %v (want %v)", p.Authority(), p.Dialect(), d)
	}
	dec := p.dialectDecision()
	if dec.Action > dialect.ActionUseLastGood || dec.Outcome > dialect.OutcomeOtherStatus ||
		dec.Outcome != p.Fetch().Outcome || dec.Action != p.Action() {
		t.Fatalf("decision %+v, fetch outcome %v", dec, p.Fetch().Outcome)
	}
	uses := dec.Action == dialect.ActionParse || dec.Action == dialect.ActionUseLastGood
	if (p.Rules() != nil) != uses || (p.Robots() != nil) != uses {
		t.Fatalf("action %v, rules %v, robots %v", dec.Action, p.Rules() != nil, p.Robots() != nil)
	}
	if _, ok := p.lastGoodAt(); uses && !ok {
		t.Fatalf("action %v without a last good copy", dec.Action)
	}
	_ = dec.String()
	_ = p.Reason()
	_ = p.String()
	fi := p.Fetch()
	_ = fi.answer()
	_, _ = p.failingSince()
	_, _ = p.CrawlDelay()
	if p.footprint() <= 0 {
		t.Fatalf("footprint %d", p.footprint())
	}
	if r := p.Robots(); r != nil {
		_ = r.Sitemaps()
	}
	for _, path := range []string{path, "/", "/robots.txt", "/private/x?y=1", ""} {
		v := p.CheckPath(path)
		if v.Policy != p {
			t.Fatalf("verdict of another policy")
		}
		_ = v.String()
		switch dec.Action {
		case dialect.ActionParse, dialect.ActionUseLastGood:
			if w := p.Rules().Check(path); v.Verdict != w {
				t.Fatalf("%q: verdict %v, rules say %v", path, v.Verdict, w)
			}
		case dialect.ActionAllowAll:
			if !v.Allowed || v.Reason != dialect.ReasonFetch {
				t.Fatalf("allow all: %q: %v", path, v)
			}
		case dialect.ActionDisallowAll:
			if v.Allowed != dialect.IsRobotsTxt(path) {
				t.Fatalf("disallow all: %q: %v", path, v)
			}
		case dialect.ActionExcludeHost:
			if v.Allowed {
				t.Fatalf("exclude host: %q: %v", path, v)
			}
		}
	}
	if u, err := url.Parse("https://example.com" + path); err == nil {
		if v := p.Check(u); v.Policy != p {
			t.Fatalf("Check: verdict of another policy")
		}
	}
}

// samePolicyFuzz compares two policies field by field through their
// methods (the fields of FetchInfo that existed when it was written; the
// fixed-point check on the encoded bytes covers the rest).
func samePolicyFuzz(t *testing.T, a, b *Policy, path string) {
	t.Helper()
	fa, fb := a.Fetch(), b.Fetch()
	la, oka := a.lastGoodAt()
	lb, okb := b.lastGoodAt()
	sa, _ := a.failingSince()
	sb, _ := b.failingSince()
	if !fa.Time.Equal(fb.Time) || !a.Expires().Equal(b.Expires()) || !sa.Equal(sb) || oka != okb || !la.Equal(lb) {
		t.Fatalf("times differ: fetch %v %v, expires %v %v, failing since %v %v, last good %v %v %v %v",
			fa.Time, fb.Time, a.Expires(), b.Expires(), sa, sb, la, oka, lb, okb)
	}
	if a.Authority() != b.Authority() || a.dialectDecision() != b.dialectDecision() ||
		fa.URL != fb.URL || fa.FinalURL != fb.FinalURL || fa.Redirects != fb.Redirects || fa.Status != fb.Status ||
		fa.Err != fb.Err || fa.Outcome != fb.Outcome || fa.Bytes != fb.Bytes || fa.Truncated != fb.Truncated || fa.MaxAge != fb.MaxAge {
		t.Fatalf("policies differ:\n%+v %+v\n%+v %+v", a.dialectDecision(), fa, b.dialectDecision(), fb)
	}
	if a.Reason() != b.Reason() {
		t.Fatalf("reasons differ: %q, %q", a.Reason(), b.Reason())
	}
	va, vb := a.CheckPath(path), b.CheckPath(path)
	if va.Allowed != vb.Allowed || va.Reason != vb.Reason || (va.Rule == (dialect.Rule{})) != (vb.Rule == (dialect.Rule{})) ||
		va.Rule != (dialect.Rule{}) && va.Rule != vb.Rule {
		t.Fatalf("%q: verdicts differ: %v, %v", path, va, vb)
	}
}

func FuzzAuthority(f *testing.F) {
	for _, s := range []string{
		"https://example.com/", "HTTP://Example.COM:080/x", "https://example.com:443",
		"https://user@Example.com:8443/", "http://[2001:DB8::1]:80/", "http://[fe80::1%25en0]/",
		"https://WWW.EXÄMPLE.COM/", "http://a%C3%A9/", "http://a\uff20b/", "http://%C2%AF/", "ftp://example.com/",
		"mailto:x@example.com", "http:///x", "/relative", "http://example.com:/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		a, err := Authority(u)
		b, berr := AppendAuthority([]byte("x"), u)
		if (err == nil) != (berr == nil) {
			t.Fatalf("%q: Authority error %v, AppendAuthority error %v", raw, err, berr)
		}
		if err != nil {
			if !errors.Is(err, ErrUnsupportedURL) || !errors.Is(berr, ErrUnsupportedURL) {
				t.Fatalf("%q: %v / %v do not wrap ErrUnsupportedURL", raw, err, berr)
			}
			return
		}
		if string(b) != "x"+a {
			t.Fatalf("%q: Authority %q, AppendAuthority %q", raw, a, b)
		}
		ru, err := url.Parse(a + "/robots.txt")
		var ra string
		if err == nil {
			ra, err = Authority(ru)
		}
		if err != nil || ra != a || ru.Path != "/robots.txt" {
			if knownAuthorityIssue(u) {
				return
			}
			t.Fatalf("%q: authority %q, but its robots.txt URL %q reads as authority %q, path %q (%v)", raw, a, a+"/robots.txt", ra, pathOf(ru), err)
		}
	})
}

func pathOf(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Path
}

// knownAuthorityIssue reports whether u hits a deviation of
// internal/authority already reported on the issue and still open (the
// fuzz targets there describe it): an IPv6 zone is written with a bare
// '%'. (Non-ASCII hosts that IDNA mapped to URL delimiters were excused
// here until ae4d522 fixed them.)
func knownAuthorityIssue(u *url.URL) bool {
	if strings.HasPrefix(u.Host, "[") && strings.Contains(u.Host, "%") {
		return knownPolicyIssue("ipv6-zone")
	}
	return false
}
