package hostlimit

import (
	"net/http"
	"strings"
	"time"

	"github.com/politecrawl/robots/internal/retryafter"
)

// Pause holds back every later permit for host and every Wait on it until
// d from now (or longer if a longer pause is already pending). Requests
// already granted are not affected. d ≤ 0 does nothing.
func (l *Limiter) Pause(host string, d time.Duration) {
	if d <= 0 {
		return
	}
	s, h, now := l.lockHost(host)
	l.pause(h, now, limClampDur(d))
	s.mu.Unlock()
}

func (l *Limiter) pause(h *limHost, now, d int64) {
	h.lastPause = d
	if d <= 0 {
		return
	}
	h.pauses++
	h.pauseUntil = max(h.pauseUntil, now+d)
	h.notify()
}

// Observe applies a response from host and returns the pause it started
// (0 if none). A status [BackoffStatus] reports (429, and every 5xx but 501
// and 505) pauses the host until its Retry-After (delay-seconds or an HTTP
// date, capped by MaxRetryAfter; a date in the past or "0" means no pause)
// or, without a usable Retry-After, for BackoffBase × 2^(n-1), at most
// BackoffMax, n being the number of such responses in a row, whatever
// their statuses. A 2xx or 3xx status resets n to 0 but leaves a pending
// pause in place. Other statuses (501 and 505, 1xx, 4xx but 429) change
// nothing. A pause only extends a pending one, never shortens it.
//
// The RoundTripper from [Limiter.Transport] calls Observe for every response
// it returns; call it yourself only for responses that did not go through
// that transport.
func (l *Limiter) Observe(host string, status int, header http.Header) time.Duration {
	if !limAffectsPause(status) {
		return 0
	}
	s, h, now := l.lockHost(host)
	defer s.mu.Unlock()
	return time.Duration(l.observe(h, now, status, header))
}

// BackoffStatus reports whether a response status asks the client to back
// off: 429 (Too Many Requests, RFC 6585) and every 5xx (RFC 9110 §15.6,
// server errors; the non-standard 52x of CDNs included) except 501 (Not
// Implemented) and 505 (HTTP Version Not Supported). Those two describe the
// request (its method, its HTTP version), not the server's state: the same
// request gets the same answer however long the client waits, so neither
// pausing the host nor sending it again helps. The [Limiter] pauses a host
// on these statuses, the robots plugin sends a request answered with one
// again after the pause, and the fleet's limiter (package redisfleet)
// pauses the host for the whole fleet.
func BackoffStatus(status int) bool {
	if status == http.StatusTooManyRequests {
		return true
	}
	return status >= 500 && status <= 599 &&
		status != http.StatusNotImplemented && status != http.StatusHTTPVersionNotSupported
}

func limAffectsPause(status int) bool {
	return BackoffStatus(status) || (status >= 200 && status < 400)
}

func (l *Limiter) observe(h *limHost, now int64, status int, header http.Header) int64 {
	if !BackoffStatus(status) {
		if status >= 200 && status < 400 {
			h.failures = 0
		}
		return 0
	}
	if h.failures < 1<<30 {
		h.failures++
	}
	var d int64
	if ra, ok := ParseRetryAfter(header.Get("Retry-After"), l.epoch.Add(time.Duration(now))); ok {
		d = limClampDur(ra)
		if l.maxRetryAfter >= 0 {
			d = min(d, l.maxRetryAfter)
		}
	} else {
		d = l.backoffBase
		for i := int32(1); i < h.failures && d < l.backoffMax; i++ {
			d *= 2
		}
		d = min(d, l.backoffMax)
	}
	l.pause(h, now, d)
	return d
}

// ParseRetryAfter reads a Retry-After header value (RFC 9110 §10.2.3):
// delay-seconds, or an HTTP date taken relative to now (a past date gives
// 0). Surrounding spaces are ignored; a value that is neither gives 0 and
// false. Seconds are clamped to about 73 years, so that adding the result
// to a time cannot overflow. The Limiter's Observe and the fleet's limiter
// (package redisfleet) read Retry-After with it.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	d, ok := retryafter.Parse(v, now)
	if s := strings.TrimSpace(v); s != "" && s[0] >= '0' && s[0] <= '9' {
		d = min(d, limMaxDur/time.Second*time.Second) // delay-seconds, in whole seconds
	}
	return d, ok
}
