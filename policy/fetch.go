package policy

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/internal/gatewait"
)

// FetchInfo describes the latest robots.txt fetch of an authority: what was
// asked, what came back, and how the dialect classified it.
type FetchInfo struct {
	URL       string          // the robots.txt URL asked first
	FinalURL  string          // the URL that answered, after redirects
	Redirects int             // redirect hops followed
	Status    int             // final HTTP status; 0 when there was no answer
	Err       string          // the error when there was no (complete) answer
	Outcome   dialect.Outcome // the dialect's classification
	Time      time.Time       // when the fetch ended
	Bytes     int             // body bytes read (after gzip decoding), at most dialect.MaxBodyBytes+1
	Truncated bool            // the body was longer than dialect.MaxBodyBytes and was cut
	// MaxAge is the Cache-Control max-age of the answer, -1 when it had none
	// (no-cache and no-store read as 0).
	MaxAge time.Duration
}

// Answer describes what robots.txt answered, briefly: "503 Service
// Unavailable", "no answer (connection refused)", "more than 5 redirects".
func (f *FetchInfo) Answer() string {
	switch f.Outcome {
	case dialect.OutcomeNoAnswer:
		if f.Err == "" {
			return "no answer"
		}
		return "no answer (" + shortError(f.Err) + ")"
	case dialect.OutcomeRedirectLimit:
		return "more than " + strconv.Itoa(f.Redirects) + " redirects"
	}
	s := statusLine(f.Status)
	if f.Outcome == dialect.OutcomeOtherStatus && f.Status >= 300 && f.Status < 400 {
		s += " without a usable Location"
	}
	return s
}

func statusLine(code int) string {
	if t := http.StatusText(code); t != "" {
		return strconv.Itoa(code) + " " + t
	}
	return "status " + strconv.Itoa(code)
}

// fetchResult is a FetchInfo and the body that came with it.
type fetchResult struct {
	FetchInfo
	body []byte
}

// fetch asks scheme://authority/robots.txt, following at most
// maxRedirects redirects (to any http(s) authority), and classifies the
// answer. It never fails: a failure is an outcome.
//
// The total timeout counts the time the fetch spends outside a host's gate
// (see [fetchBudget]): a robots.txt fetch that waits behind the host's own
// Crawl-delay or Retry-After pause is not read as "no answer".
func (r *Resolver) fetch(ctx context.Context, authority string) fetchResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b := newFetchBudget(r.cfg.totalTimeout, cancel)
	defer b.stop()
	ctx = gatewait.With(ctx, b)
	res := fetchResult{FetchInfo: FetchInfo{URL: authority + "/robots.txt", MaxAge: -1}}
	r.fetchInto(ctx, &res)
	if b.spent() && res.Outcome == dialect.OutcomeNoAnswer {
		res.Err = "timeout: no complete answer within " + r.cfg.totalTimeout.String()
	}
	res.Time = r.clock.Now()
	return res
}

// fetchBudget bounds the time a robots.txt fetch spends on the network: it
// cancels the fetch once total has passed, not counting the time the fetch
// waits at a host's gate (a gate of package hostlimit, or the plugin's,
// calls Pause and Resume around that wait: [gatewait.Hook]). Safe for
// concurrent use.
type fetchBudget struct {
	mu      sync.Mutex
	left    time.Duration // budget left when the timer was last (re)started
	started time.Time
	timer   *time.Timer
	paused  int // nested pauses (redirect hops go through the gate one by one)
	fired   bool
}

func newFetchBudget(total time.Duration, cancel func()) *fetchBudget {
	b := &fetchBudget{left: total, started: time.Now()}
	b.timer = time.AfterFunc(total, func() {
		b.mu.Lock()
		b.fired = true
		b.mu.Unlock()
		cancel()
	})
	return b
}

// Pause stops the clock (unless the budget is spent already).
func (b *fetchBudget) Pause() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.paused++
	if b.paused == 1 && !b.fired && b.timer.Stop() {
		b.left -= time.Since(b.started)
	}
}

// Resume starts the clock again with what is left.
func (b *fetchBudget) Resume() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.paused--
	if b.paused == 0 && !b.fired {
		b.started = time.Now()
		b.timer.Reset(max(b.left, 0))
	}
}

func (b *fetchBudget) stop() { b.timer.Stop() }

// spent reports whether the budget ran out and cancelled the fetch.
func (b *fetchBudget) spent() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fired
}

func (r *Resolver) fetchInto(ctx context.Context, res *fetchResult) {
	target := res.URL
	for {
		res.FinalURL = target
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err != nil {
			res.Outcome, res.Err = dialect.OutcomeNoAnswer, err.Error()
			return
		}
		req.Header.Set("User-Agent", r.cfg.userAgent)
		req.Header.Set("Accept", "text/plain, */*;q=0.8")
		// Asking for gzip ourselves turns off the transport's transparent
		// decoding, so that the size limit applies to decoded bytes whatever
		// the transport.
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := r.client.Do(req)
		if err != nil {
			res.Outcome, res.Err = dialect.OutcomeNoAnswer, err.Error()
			return
		}
		res.Status = resp.StatusCode
		if isRedirect(resp.StatusCode) {
			next, ok := redirectTarget(resp)
			discard(resp.Body)
			if !ok {
				res.Outcome = dialect.ClassifyStatus(resp.StatusCode)
				return
			}
			if res.Redirects >= r.cfg.dialect.MaxRedirects() {
				res.Outcome = dialect.OutcomeRedirectLimit
				return
			}
			res.Redirects++
			target = next
			continue
		}
		res.Outcome = dialect.ClassifyStatus(resp.StatusCode)
		res.MaxAge = maxAge(resp.Header)
		if res.Outcome != dialect.OutcomeOK && res.Outcome != dialect.OutcomeOther2xx {
			discard(resp.Body)
			return
		}
		body, err := readBody(resp)
		resp.Body.Close()
		if err != nil {
			res.Outcome, res.Err = dialect.OutcomeNoAnswer, err.Error()
			return
		}
		res.body = body
		res.Bytes = len(body)
		res.Truncated = len(body) > dialect.MaxBodyBytes
		return
	}
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// redirectTarget returns the absolute http(s) URL a redirect points to.
func redirectTarget(resp *http.Response) (string, bool) {
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "", false
	}
	u, err := resp.Request.URL.Parse(loc)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), true
}

// readBody reads at most dialect.MaxBodyBytes+1 bytes of the body (one more
// than is parsed, so that the parser sees the cut), decoding gzip.
func readBody(resp *http.Response) ([]byte, error) {
	var rd io.Reader = resp.Body
	switch strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))) {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, errors.New("invalid gzip body: " + err.Error())
		}
		defer zr.Close()
		rd = zr
	}
	return io.ReadAll(io.LimitReader(rd, dialect.MaxBodyBytes+1))
}

// discard reads a little of an unused body, so that the connection can be
// reused, and closes it.
func discard(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 4<<10))
	body.Close()
}

// maxAge returns the Cache-Control max-age of a response, -1 if none; a
// no-cache or no-store directive counts as 0.
func maxAge(h http.Header) time.Duration {
	age := time.Duration(-1)
	for _, v := range h.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			d = strings.TrimSpace(d)
			name, val, _ := strings.Cut(d, "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-cache", "no-store":
				return 0
			case "max-age":
				val = strings.Trim(strings.TrimSpace(val), `"`)
				n, err := strconv.ParseInt(val, 10, 64)
				if err != nil || n < 0 {
					continue
				}
				const maxSeconds = int64(1<<63-1) / int64(time.Second)
				if n > maxSeconds {
					n = maxSeconds
				}
				if age < 0 {
					age = time.Duration(n) * time.Second
				}
			}
		}
	}
	return age
}

// shortError names a network error in a few words.
func shortError(s string) string {
	switch {
	case strings.Contains(s, "connection refused"):
		return "connection refused"
	case strings.Contains(s, "connection reset"):
		return "connection reset"
	case strings.Contains(s, "deadline exceeded"), strings.Contains(s, "Timeout"), strings.Contains(s, "timeout"):
		return "timeout"
	case strings.Contains(s, "unexpected EOF"), strings.HasSuffix(s, ": EOF"):
		return "connection closed early"
	case strings.Contains(s, "no such host"):
		return "no such host"
	case strings.Contains(s, "invalid gzip"):
		return "invalid gzip body"
	}
	return s
}

// defaultClient is the client used when the user gives none: connect,
// response-header and TLS handshake timeouts; the total timeout is applied
// per fetch by the resolver.
func defaultClient(connect, header time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   connect,
		ResponseHeaderTimeout: header,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   1,
		IdleConnTimeout:       30 * time.Second,
	}
	return &http.Client{Transport: tr}
}

// noFollow returns a copy of c that hands redirects back to the caller, so
// that the resolver counts the hops itself. The user's transport, jar and
// timeout are kept.
func noFollow(c *http.Client) *http.Client {
	cc := *c
	cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cc
}
