package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/politecrawl/robots/internal/gatewait"
)

// A usage document is a file the resolver fetches beside robots.txt to
// read usage terms: an origin's /.well-known/tdmrep.json, an RSL licence.
// It is fetched like robots.txt (the resolver's client, redirects
// followed up to the dialect's limit, the total timeout) and cached in
// memory, bounded in count.

// docResult is what a usage document fetch gave: the body of a 2xx
// answer, or why there is none.
type docResult struct {
	body   []byte        // nil when the fetch gave no usable body
	status int           // final HTTP status, 0 for no answer
	failed string        // why there is no body: "404 Not Found", "no answer (...)", "larger than N bytes"
	maxAge time.Duration // Cache-Control max-age, -1 for none
}

// errTooLarge is the error of a document longer than its limit.
var errTooLarge = errors.New("larger than the size limit")

// fetchDoc asks target and reads at most limit bytes of its body. It
// never fails: a failure is in docResult.failed.
func (r *Resolver) fetchDoc(ctx context.Context, target string, limit int64, accept string) docResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b := gatewait.NewBudget(r.cfg.totalTimeout, cancel)
	defer b.Stop()
	ctx = gatewait.With(ctx, b)
	res := docResult{maxAge: -1}
	for hops := 0; ; hops++ {
		next, follow := r.docHop(ctx, target, limit, accept, &res)
		if !follow {
			if b.Spent() && res.status == 0 {
				res.failed = "no answer (timeout: no complete answer within " + r.cfg.totalTimeout.String() + ")"
			}
			return res
		}
		if hops >= r.cfg.dialect.MaxRedirects() {
			res.failed = fmt.Sprintf("more than %d redirects", hops)
			return res
		}
		target = next
	}
}

// docHop asks target once; it returns the next URL of a redirect.
func (r *Resolver) docHop(ctx context.Context, target string, limit int64, accept string, res *docResult) (string, bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		res.failed = "no answer (" + shortError(err.Error()) + ")"
		return "", false
	}
	req.Header.Set("User-Agent", r.cfg.userAgent)
	req.Header.Set("Accept", accept)
	resp, err := r.client.Do(req)
	if err != nil {
		res.status, res.failed = 0, "no answer ("+shortError(err.Error())+")"
		return "", false
	}
	res.status = resp.StatusCode
	if isRedirect(resp.StatusCode) {
		next, ok := redirectTarget(resp)
		discard(resp.Body, cancel)
		if !ok {
			res.failed = statusLine(resp.StatusCode) + " without a usable Location"
		}
		return next, ok
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		discard(resp.Body, cancel)
		res.failed = statusLine(resp.StatusCode)
		return "", false
	}
	res.maxAge = maxAge(resp.Header)
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	resp.Body.Close()
	switch {
	case err != nil:
		res.status, res.failed = 0, "no answer ("+shortError(err.Error())+")"
	case int64(len(body)) > limit:
		res.failed = fmt.Sprintf("%s: %v (%d bytes)", statusLine(resp.StatusCode), errTooLarge, limit)
	default:
		res.body = body
	}
	return "", false
}

// docCache keeps usage documents in memory until they expire, at most
// capacity of them holding at most maxBytes (by the size of their bodies):
// while it holds more, an expired entry goes, else the oldest one. The
// entry just put is always kept.
type docCache[V any] struct {
	mu       sync.Mutex
	capacity int
	maxBytes int64
	bytes    int64
	m        map[string]docEntry[V]
}

type docEntry[V any] struct {
	val     V
	size    int64
	added   time.Time
	expires time.Time
}

func newDocCache[V any](capacity int, maxBytes int64) *docCache[V] {
	return &docCache[V]{capacity: capacity, maxBytes: maxBytes, m: make(map[string]docEntry[V])}
}

// get returns the value of key if it is current at now.
func (c *docCache[V]) get(key string, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.val, true
}

// put keeps val, read from a body of size bytes, under key until expires.
func (c *docCache[V]) put(key string, val V, size int, now, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[key]; ok {
		c.bytes -= old.size
		delete(c.m, key)
	}
	for len(c.m) > 0 && (len(c.m) >= c.capacity || c.bytes+int64(size) > c.maxBytes) {
		var victim string
		var at time.Time
		for k, e := range c.m {
			if !now.Before(e.expires) {
				victim = k
				break
			}
			if victim == "" || e.added.Before(at) {
				victim, at = k, e.added
			}
		}
		c.bytes -= c.m[victim].size
		delete(c.m, victim)
	}
	c.m[key] = docEntry[V]{val: val, size: int64(size), added: now, expires: expires}
	c.bytes += int64(size)
}
