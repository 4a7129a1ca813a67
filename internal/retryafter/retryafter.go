// Package retryafter reads the value of an HTTP Retry-After header (RFC
// 9110 section 10.2.3), for the packages that honour it.
package retryafter

import (
	"net/http"
	"strings"
	"time"
)

// maxSeconds bounds a delay-seconds value: larger ones saturate here, so
// that the Duration cannot overflow.
const maxSeconds = int64((1<<63 - 1) / time.Second)

// Parse reads v, delay-seconds (ASCII digits only) or an HTTP date, and
// returns the wait it asks for from now: a date in the past gives 0, a
// number too large for a Duration saturates. ok is false for an empty or
// unreadable value (a sign, a fraction, an unknown date form).
func Parse(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		var secs int64
		for i := 0; i < len(v); i++ {
			c := v[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			secs = min(secs*10+int64(c-'0'), maxSeconds)
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}
