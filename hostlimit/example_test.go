package hostlimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/politecrawl/robots/hostlimit"
)

// Wait early (it holds nothing), Acquire right before the send, Sent once
// the request is written, Observe the response, Release when it is done.
// Each call names the delay in force for the host (here 50 ms, say a
// Crawl-delay); the next permit comes no earlier than that after the
// release.
func Example() {
	lim := hostlimit.New(hostlimit.Config{})
	ctx := context.Background()
	const host = "https://example.com" // an authority, as policy.Authority gives it
	const delay = 50 * time.Millisecond
	var ended time.Time
	for i := range 2 {
		if err := lim.Wait(ctx, host, delay); err != nil {
			fmt.Println(err)
			return
		}
		permit, err := lim.Acquire(ctx, host, delay)
		if err != nil {
			fmt.Println(err)
			return
		}
		if i > 0 {
			fmt.Println("spaced by the delay:", time.Since(ended) >= delay)
		}
		permit.Sent()                      // the request has been written
		permit.Observe(http.StatusOK, nil) // its status and header (a 429 or 5xx would pause the host)
		// ... read the response ...
		ended = time.Now()
		permit.Release() // the response is done
	}
	s, _ := lim.Stats(host)
	fmt.Println("grants:", s.Grants, "in flight:", s.InFlight)
	// Output:
	// spaced by the delay: true
	// grants: 2 in flight: 0
}

// Transport gates an http.Client: requests to one host are spaced by its
// delay, and a 429 or 5xx response pauses the host until its Retry-After.
func ExampleLimiter_Transport() {
	arrivals := make(chan time.Time, 2)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrivals <- time.Now()
		if r.URL.Path == "/busy" {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer site.Close()

	lim := hostlimit.New(hostlimit.Config{})
	lim.SetDelay(site.URL, 50*time.Millisecond) // site.URL is its own authority
	client := &http.Client{Transport: lim.Transport(nil)}
	for _, path := range []string{"/a", "/busy"} {
		resp, err := client.Get(site.URL + path)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close() // releases the permit
	}
	first, second := <-arrivals, <-arrivals
	fmt.Println("spaced by the delay:", second.Sub(first) >= 50*time.Millisecond)
	s, _ := lim.Stats(site.URL)
	fmt.Println("paused for:", s.LastPause)
	// Output:
	// spaced by the delay: true
	// paused for: 2m0s
}

// ParseRetryAfter reads both forms of the header; anything else is not a
// Retry-After.
func ExampleParseRetryAfter() {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{"120", "Tue, 24 Nov 2026 12:00:30 GMT", "Mon, 23 Nov 2026 12:00:00 GMT", "soon"} {
		d, ok := hostlimit.ParseRetryAfter(v, now)
		fmt.Println(d, ok)
	}
	// Output:
	// 2m0s true
	// 30s true
	// 0s true
	// 0s false
}

// BackoffStatus says which answers pause a host: 429 and the 5xx that say
// the server cannot serve now, not 501 and 505, which say the request
// itself cannot be served.
func ExampleBackoffStatus() {
	for _, status := range []int{200, 404, 429, 500, 501, 502, 503, 504, 505} {
		fmt.Println(status, hostlimit.BackoffStatus(status))
	}
	// Output:
	// 200 false
	// 404 false
	// 429 true
	// 500 true
	// 501 false
	// 502 true
	// 503 true
	// 504 true
	// 505 false
}
