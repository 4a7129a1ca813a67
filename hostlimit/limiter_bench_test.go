package hostlimit

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/testkit/testutil"
)

// go test -run '^$' -bench Limiter -benchmem .

func BenchmarkLimiterAcquireRelease(b *testing.B) {
	for _, bc := range []struct {
		name    string
		spacing Spacing
		delay   time.Duration
		sent    bool
	}{
		{"delay=0", EndToStart, 0, false},
		{"end-to-start/delay=1ns", EndToStart, time.Nanosecond, false},
		{"start-to-start/delay=1ns/Sent", StartToStart, time.Nanosecond, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l := New(Config{Spacing: bc.spacing})
			const host = "https://example.com"
			l.SetDelay(host, bc.delay)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				p, err := l.Acquire(ctx, host, KeepDelay)
				if err != nil {
					b.Fatal(err)
				}
				if bc.sent {
					p.Sent()
				}
				p.Release()
			}
			st, _ := l.Stats(host)
			b.ReportMetric(float64(st.Waits)/float64(st.Grants), "blocked/op")
		})
	}
}

func BenchmarkLimiterWait(b *testing.B) {
	l := New(Config{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Wait(ctx, "https://example.com", KeepDelay); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLimiterParallelHosts: every goroutine on its own host, delay 0.
func BenchmarkLimiterParallelHosts(b *testing.B) {
	l := New(Config{})
	ctx := context.Background()
	var n int64
	var mu = make(chan struct{}, 1)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		mu <- struct{}{}
		n++
		host := "https://host" + strconv.FormatInt(n, 10) + ".example.com"
		<-mu
		for pb.Next() {
			p, err := l.Acquire(ctx, host, KeepDelay)
			if err != nil {
				b.Error(err)
				return
			}
			p.Release()
		}
	})
}

type limCanned struct{}

func (limCanned) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Request: req}, nil
}

// BenchmarkLimiterTransport measures the wrapper's own cost on a round trip
// that does no I/O: "bare" is the inner RoundTripper alone.
func BenchmarkLimiterTransport(b *testing.B) {
	req, _ := http.NewRequest(http.MethodGet, "https://example.com/page", nil)
	for _, bc := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"bare", limCanned{}},
		{"end-to-start/delay=0", New(Config{}).Transport(limCanned{})},
		{"end-to-start/delay=1ns", New(Config{Delay: func(string) time.Duration { return 1 }}).Transport(limCanned{})},
		{"start-to-start/delay=1ns", New(Config{Spacing: StartToStart, Delay: func(string) time.Duration { return 1 }}).Transport(limCanned{})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := bc.rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

// BenchmarkLimiterBytesPerHost reports the heap held per host state, the
// host key included.
func BenchmarkLimiterBytesPerHost(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		l := New(Config{IdleTTL: time.Hour})
		before := testutil.HeapInUse()
		for i := 0; i < n; i++ {
			l.SetDelay(fmt.Sprintf("https://host-%06d.example.com", i), time.Second)
		}
		after := testutil.HeapInUse()
		b.ReportMetric(float64(int64(after)-int64(before))/n, "B/host")
		if l.hosts() != n {
			b.Fatal(l.hosts())
		}
	}
}
