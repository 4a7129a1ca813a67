package sitemap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/politecrawl/robots/internal/retryafter"
)

// FetchError is the error of a sitemap whose fetch failed: no answer, or a
// status other than 2xx, after the retries a 5xx, 429 or network error
// gets.
type FetchError struct {
	URL      string
	Status   int   // the last answer's status; 0 when there was none
	Attempts int   // requests made
	Err      error // the last attempt's error, when there was no answer
}

func (e *FetchError) Error() string {
	s := "sitemap: fetching " + e.URL + ": "
	if e.Err != nil {
		s += e.Err.Error()
	} else {
		s += strconv.Itoa(e.Status) + " " + http.StatusText(e.Status)
	}
	if e.Attempts > 1 {
		s += " (" + strconv.Itoa(e.Attempts) + " attempts)"
	}
	return s
}
func (e *FetchError) Unwrap() error { return e.Err }

// fetch GETs loc, retrying a 5xx, 429 or network error, and returns the
// body of a 2xx answer.
func (w *Walker) fetch(ctx context.Context, loc string) (io.ReadCloser, int, error) {
	cfg := &w.cfg
	wait := cfg.RetryWait
	fe := &FetchError{URL: loc}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
		if err != nil {
			return nil, 0, fmt.Errorf("sitemap: %w", err)
		}
		if cfg.UserAgent != "" {
			req.Header.Set("User-Agent", cfg.UserAgent)
		}
		// Asked for explicitly, a gzip Content-Encoding is left to the
		// reader, which decides from the bytes and bounds what it inflates.
		req.Header.Set("Accept-Encoding", "gzip")
		fe.Attempts++
		res, err := w.client.Do(req)
		var after time.Duration
		retry := false
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, 0, ctx.Err()
			}
			fe.Err, fe.Status = err, 0
			retry = walkTransient(err)
		case res.StatusCode >= 200 && res.StatusCode < 300:
			return res.Body, res.StatusCode, nil
		default:
			io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
			res.Body.Close()
			fe.Err, fe.Status = nil, res.StatusCode
			retry = res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500
			if retry {
				var ok bool
				if after, ok = walkRetryAfter(res.Header.Get("Retry-After"), time.Now()); ok && after > cfg.MaxRetryAfter {
					fe.Err = fmt.Errorf("%d %s with Retry-After %s, longer than the %s waited out", res.StatusCode, http.StatusText(res.StatusCode), after.Round(time.Second), cfg.MaxRetryAfter)
					return nil, res.StatusCode, fe
				}
			}
		}
		if !retry || fe.Attempts > cfg.Retries {
			return nil, fe.Status, fe
		}
		if after <= 0 {
			after, wait = wait, 2*wait
		}
		t := time.NewTimer(after)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fe.Status, ctx.Err()
		case <-t.C:
		}
	}
}

// walkTransient reports whether a request error is worth a retry: a network
// error or a cut answer, not a refusal by the client (a redirect limit, a
// robots.txt stop at the transport).
func walkTransient(err error) bool {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// walkRetryAfter reads a Retry-After value (seconds, or an HTTP date: then
// the time from now), at most a day.
func walkRetryAfter(v string, now time.Time) (time.Duration, bool) {
	d, ok := retryafter.Parse(v, now)
	return min(d, 24*time.Hour), ok
}
