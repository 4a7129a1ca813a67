package robots

import (
	"testing"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/testkit/testutil"
)

// mustNew is New, failing the test on an error.
func mustNew(t testing.TB, opts ...Option) *Plugin {
	t.Helper()
	p, err := New(opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// opt is a Colly option attaching p, failing the test on an error.
func (p *Plugin) opt(t testing.TB) colly.CollectorOption {
	return func(c *colly.Collector) {
		if err := p.Attach(c); err != nil {
			t.Errorf("Attach: %v", err)
		}
	}
}

// withLimiterConfig is WithLimiter(hostlimit.New(cfg)).
func withLimiterConfig(cfg hostlimit.Config) Option { return WithLimiter(hostlimit.New(cfg)) }

// withClock is WithPolicy(policy.WithClock(clock)).
func withClock(clock policy.Clock) Option { return WithPolicy(policy.WithClock(clock)) }

// mustAttach is Attach, failing the test on an error.
func mustAttach(t testing.TB, c *colly.Collector, opts ...Option) *Plugin {
	t.Helper()
	p, err := Attach(c, opts...)
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	return p
}

// jumpingClock returns a fake clock that jumps to its next timer
// (FakeClock.Jump) until the test ends.
func jumpingClock(t testing.TB) *testutil.FakeClock {
	c := testutil.NewFakeClock()
	t.Cleanup(c.Jump())
	return c
}

// fakeLimiter is WithLimiter of a default limiter on a jumping clock.
func fakeLimiter(t testing.TB) Option {
	return WithLimiter(hostlimit.New(hostlimit.Config{Clock: jumpingClock(t)}))
}
