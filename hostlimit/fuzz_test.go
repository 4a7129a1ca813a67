package hostlimit

import (
	"context"
	"math/big"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Fuzzing the Retry-After reader and Limiter.Observe (issue "Hardening").
//
// FuzzParseRetryAfter checks ParseRetryAfter, besides "no panic":
//   - an ok result is ≥ 0 and ≤ limMaxDur, and comes from delay-seconds
//     (digits only) or a date http.ParseTime reads; anything else is not ok;
//   - SP and HTAB around the value change nothing;
//   - delay-seconds round-trip: the decimal of n, with any leading zeros,
//     gives n seconds, clamped to limMaxDur;
//   - an HTTP date (IMF-fixdate, RFC 850, asctime) k seconds after now
//     gives k seconds; one at or before now gives 0.
//
// FuzzObserve checks Limiter.Observe and Permit.Observe with a fuzzed
// status, Retry-After and config: the pause is never negative; a status
// other than 429 and the 5xx but 501 and 505 gives 0 and starts no pause;
// with a usable Retry-After the pause is within [0, MaxRetryAfter]
// (delay-seconds: exactly the clamped value); without one it is the
// backoff BackoffBase × 2^(n-1) capped at BackoffMax, n counting 429s and
// 503s alike; Stats agree
// (LastPause, Pauses, PausedUntil); Permit.Observe gives what
// Limiter.Observe gives.
//
// A deviation already reported on the issue is not asserted (see
// knownRetryAfterIssue) unless FUZZ_STRICT=all (or its name) is set.

// maxUnixSec is 9999-12-31T23:59:59Z, the last second http.TimeFormat can
// write.
const maxUnixSec = 253402300799

func FuzzParseRetryAfter(f *testing.F) {
	now := int64(1_790_000_000) // 2026-09-21
	for _, v := range []string{
		"0", "120", " 120 ", "\t5\t", "007", "-5", "+5", "1.5", "5s", "12 34", "",
		"99999999999999999999", "2305843009", "2305843010", "9223372036854775807",
		"Wed, 21 Oct 2015 07:28:00 GMT",
		"Sun, 06 Nov 1994 08:49:37 GMT",
		"Sunday, 06-Nov-94 08:49:37 GMT",
		"Sun Nov  6 08:49:37 1994",
		"Mon, 21 Sep 2026 00:00:00 GMT",
		"Fri, 31 Dec 9999 23:59:59 GMT",
		"Mon, 01 Jan 0001 00:00:00 GMT",
		"Wed, 21 Oct 2015 07:28:00 UTC",
		"soon", "\u00a0120\u00a0", "１２０",
	} {
		f.Add(v, now, uint64(120), uint8(0), int64(3600))
	}
	f.Add("", int64(0), uint64(0), uint8(3), int64(-1))
	f.Add("", int64(maxUnixSec), uint64(1<<63), uint8(25), int64(1<<62))
	f.Add("", now, uint64(2305843009), uint8(0), int64(-86400*365*100))
	f.Fuzz(func(t *testing.T, v string, nowSec int64, n uint64, zeros uint8, k int64) {
		now := time.Unix(int64(uint64(nowSec)%(maxUnixSec+1)), 0)

		// Any value.
		d, ok := ParseRetryAfter(v, now)
		checkRetryAfter(t, v, now, d, ok)
		for _, pad := range []string{" ", "\t", " \t \t"} {
			d2, ok2 := ParseRetryAfter(pad+v+pad, now)
			if d2 != d || ok2 != ok {
				t.Fatalf("%q: %v %v, but padded with %q: %v %v", v, d, ok, pad, d2, ok2)
			}
		}

		// Delay-seconds.
		secs := strings.Repeat("0", int(zeros%40)) + strconv.FormatUint(n, 10)
		want := time.Duration(min(n, uint64(limMaxDur/time.Second))) * time.Second
		if d, ok := ParseRetryAfter(secs, now); !ok || d != want {
			t.Fatalf("%q: %v %v, want %v true", secs, d, ok, want)
		}

		// An HTTP date k seconds from now, within the years 1 to 9999.
		if k < -maxUnixSec*2 || k > maxUnixSec*2 {
			return
		}
		at := time.Unix(now.Unix()+k, 0).UTC()
		if at.Year() < 1 || at.Year() > 9999 {
			return
		}
		want = max(at.Sub(now), 0)
		formats := []string{http.TimeFormat, time.ANSIC}
		if y := at.Year(); y >= 1969 && y < 2069 { // two-digit years
			formats = append(formats, time.RFC850)
		}
		for _, layout := range formats {
			s := at.Format(layout)
			d, ok := ParseRetryAfter(s, now)
			checkRetryAfter(t, s, now, d, ok)
			if !ok || d != want {
				t.Fatalf("%q (now %v): %v %v, want %v true", s, now.UTC(), d, ok, want)
			}
		}
	})
}

// checkRetryAfter checks the properties of any result d, ok of
// ParseRetryAfter(v, now).
func checkRetryAfter(t *testing.T, v string, now time.Time, d time.Duration, ok bool) {
	t.Helper()
	s := strings.TrimSpace(v)
	digits := s != "" && strings.Trim(s, "0123456789") == ""
	_, dateErr := http.ParseTime(s)
	if !ok {
		if d != 0 {
			t.Fatalf("%q: not ok but %v", v, d)
		}
		if digits || (s != "" && (s[0] < '0' || s[0] > '9') && dateErr == nil) {
			t.Fatalf("%q: not ok, but it is delay-seconds or a date", v)
		}
		return
	}
	if !digits && dateErr != nil {
		t.Fatalf("%q: ok (%v) but neither delay-seconds nor a date", v, d)
	}
	if d < 0 {
		t.Fatalf("%q: negative %v", v, d)
	}
	if d > limMaxDur && knownRetryAfterIssue(s, now, d) == "" {
		t.Fatalf("%q: %v, above the clamp %v", v, d, time.Duration(limMaxDur))
	}
}

// knownRetryAfterIssue names the deviation, already reported on the issue,
// that the result d of ParseRetryAfter(v, now) shows, or returns "".
func knownRetryAfterIssue(v string, now time.Time, d time.Duration) string {
	strict := os.Getenv("FUZZ_STRICT")
	const name = "retry-after-date-not-clamped"
	if strict == "all" || strings.Contains(","+strict+",", ","+name+",") {
		return ""
	}
	// A date more than limMaxDur (about 73 years) ahead is not clamped to
	// limMaxDur, and one more than 292 years ahead saturates to
	// math.MaxInt64 ns. Observe clamps it, so no pause is affected.
	if t, err := http.ParseTime(strings.TrimSpace(v)); err == nil && t.Sub(now) > limMaxDur && d > limMaxDur {
		return name
	}
	return ""
}

func FuzzObserve(f *testing.F) {
	for _, c := range []struct {
		status int
		ra     string
		hasRA  bool
	}{
		{429, "0", true}, {429, "120", true}, {503, "99999999999999999999", true},
		{503, "soon", true}, {429, "-5", true}, {429, "", false}, {503, "", true},
		{429, "Wed, 21 Oct 2015 07:28:00 GMT", true}, {503, "Fri, 31 Dec 9999 23:59:59 GMT", true},
		{200, "5", true}, {304, "", false}, {500, "5", true}, {502, "", false}, {501, "5", true},
		{505, "", false}, {599, "1", true}, {600, "1", true}, {404, "", false}, {-1, "1", true},
		{0, "", false}, {1 << 40, "5", true},
	} {
		for _, cfg := range [][3]int64{
			{0, 0, 0},
			{int64(time.Minute), int64(time.Second), int64(time.Hour)},
			{-1, int64(time.Millisecond), int64(time.Millisecond)},
			{int64(time.Hour), int64(time.Hour), int64(time.Second)},
			{1<<63 - 1, 1<<63 - 1, 1<<63 - 1},
		} {
			f.Add(c.status, c.ra, c.hasRA, cfg[0], cfg[1], cfg[2], uint8(0))
		}
		f.Add(c.status, c.ra, c.hasRA, int64(0), int64(0), int64(0), uint8(70))
	}
	f.Fuzz(func(t *testing.T, status int, ra string, hasRA bool, maxRA, base, bmax int64, before uint8) {
		cfg := Config{MaxRetryAfter: time.Duration(maxRA), BackoffBase: time.Duration(base), BackoffMax: time.Duration(bmax)}
		la, lb := New(cfg), New(cfg)
		const host = "http://o.test"
		// before earlier 429s without Retry-After, in a row.
		n := int(before % 80)
		for range n {
			la.Observe(host, http.StatusTooManyRequests, nil)
			lb.Observe(host, http.StatusServiceUnavailable, http.Header{})
		}
		var h http.Header
		if hasRA {
			h = http.Header{"Retry-After": {ra}}
		}
		st0, _ := la.Stats(host)
		start := time.Now()
		got := la.Observe(host, status, h)
		if got < 0 {
			t.Fatalf("Observe(%d, %q) = %v < 0", status, ra, got)
		}
		st, _ := la.Stats(host)

		// The same failures counted from 503s give the same pause.
		pgot := lb.Observe(host, status, h)
		// Permit.Observe on a fresh limiter: the first failure.
		lc := New(cfg)
		p, err := lc.Acquire(context.Background(), host, KeepDelay)
		if err != nil {
			t.Fatal(err)
		}
		cgot := p.Observe(status, h)
		p.Release()
		if cgot < 0 {
			t.Fatalf("Permit.Observe(%d, %q) = %v < 0", status, ra, cgot)
		}

		if backoffWanted := status == 429 || status >= 500 && status < 600 && status != 501 && status != 505; !backoffWanted {
			if got != 0 || pgot != 0 || cgot != 0 {
				t.Fatalf("status %d: pause %v / %v / %v, want 0", status, got, pgot, cgot)
			}
			if st.Pauses != st0.Pauses || st.LastPause != st0.LastPause {
				t.Fatalf("status %d changed the pause stats: %+v -> %+v", status, st0, st)
			}
			return
		}

		var raVal string
		if hasRA {
			raVal = ra
		}
		capRA := time.Duration(maxRA)
		if maxRA == 0 {
			capRA = defaultMaxRetryAfter
		}
		if d, ok := ParseRetryAfter(raVal, start); ok {
			if maxRA >= 0 && got > capRA {
				t.Fatalf("Retry-After %q: pause %v above MaxRetryAfter %v", ra, got, capRA)
			}
			if got > limMaxDur {
				t.Fatalf("Retry-After %q: pause %v above the clamp", ra, got)
			}
			if s := strings.TrimSpace(raVal); s[0] >= '0' && s[0] <= '9' {
				want := time.Duration(limClampDur(d))
				if maxRA >= 0 {
					want = min(want, capRA)
				}
				if got != want || pgot != want || cgot != want {
					t.Fatalf("Retry-After %q (cap %v): pause %v / %v / %v, want %v", ra, capRA, got, pgot, cgot, want)
				}
			}
		} else {
			want := backoff(cfg, n+1)
			if got != want || pgot != want {
				t.Fatalf("no usable Retry-After (%q), %d in a row: pause %v / %v, want %v", ra, n+1, got, pgot, want)
			}
			if want1 := backoff(cfg, 1); cgot != want1 {
				t.Fatalf("no usable Retry-After (%q), first: Permit.Observe = %v, want %v", ra, cgot, want1)
			}
		}
		if st.LastPause != got {
			t.Fatalf("LastPause %v, Observe returned %v", st.LastPause, got)
		}
		wantPauses := st0.Pauses
		if got > 0 {
			wantPauses++
			if until := start.Add(got); !st.PausedUntil.IsZero() && st.PausedUntil.Before(until.Add(-time.Second)) && got < limMaxDur {
				t.Fatalf("PausedUntil %v, before now + %v", st.PausedUntil, got)
			}
		}
		if st.Pauses != wantPauses {
			t.Fatalf("Pauses %d, want %d", st.Pauses, wantPauses)
		}
	})
}

// backoff is the pause after the n-th 429/503 in a row without a usable
// Retry-After, computed with big integers: BackoffBase × 2^(n-1), at most
// BackoffMax, the two defaulted and clamped as New does.
func backoff(cfg Config, n int) time.Duration {
	base := big.NewInt(limClampDur(time.Duration(limOrDefault(cfg.BackoffBase, defaultBackoffBase))))
	bmax := big.NewInt(limClampDur(time.Duration(limOrDefault(cfg.BackoffMax, defaultBackoffMax))))
	d := new(big.Int).Lsh(base, uint(n-1))
	if d.Cmp(bmax) > 0 {
		d = bmax
	}
	return time.Duration(d.Int64())
}
