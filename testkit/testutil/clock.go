package testutil

import (
	"sync"
	"time"
)

// ClockStart is when a StepClock starts.
var ClockStart = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// StepClock is a controllable clock (policy.Clock): it moves only when
// told to.
type StepClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewStepClock returns a StepClock at ClockStart.
func NewStepClock() *StepClock { return &StepClock{now: ClockStart} }

// Now returns the clock's time.
func (c *StepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock by d.
func (c *StepClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TypicalRobots is a robots.txt of a common size (about 600 bytes, 16
// rules, two groups, a sitemap).
const TypicalRobots = `# robots.txt
User-agent: *
Disallow: /admin/
Disallow: /cart
Disallow: /checkout
Disallow: /account/
Disallow: /search
Disallow: /*?sort=
Disallow: /*?filter=
Disallow: /*.pdf$
Allow: /account/help
Allow: /search/about
Crawl-delay: 1

User-agent: badbot
Disallow: /

User-agent: examplebot
Disallow: /private/
Allow: /private/press/
Disallow: /tmp/
Disallow: /*?session=

Sitemap: https://example.com/sitemap.xml
`
