package policy

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/testkit/testutil"
)

// dropped answers with a connection closed before any response: no answer.
func dropped(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// staleRig is a resolver on a controllable clock and a server whose answer
// can be changed.
type staleRig struct {
	t     *testing.T
	clock *testutil.StepClock
	srv   *robotsServer
	r     *Resolver
}

func newStaleRig(t *testing.T, d *dialect.Dialect, opts ...Option) *staleRig {
	g := &staleRig{t: t, clock: testutil.NewStepClock(), srv: newRobotsServer(t, text(200, rulesBody))}
	g.r = newResolver(t, append([]Option{WithDialect(d), WithClock(g.clock)}, opts...)...)
	return g
}

// at moves the clock to start+d, asks for the policy, and checks its action
// and whether /private and /public are allowed.
func (g *staleRig) at(d time.Duration, want dialect.Action, private, public bool) *Policy {
	g.t.Helper()
	if now := g.clock.Now(); testutil.ClockStart.Add(d).Before(now) {
		g.t.Fatalf("clock cannot go back to %v", d)
	}
	g.clock.Advance(testutil.ClockStart.Add(d).Sub(g.clock.Now()))
	p := mustPolicy(g.t, g.r, g.srv.URL+"/")
	pv, pu := check(g.t, p, g.srv.URL+"/private"), check(g.t, p, g.srv.URL+"/public")
	if p.Action() != want || pv.Allowed != private || pu.Allowed != public {
		g.t.Fatalf("at +%v: %s; /private %v (%s), /public %v (%s); want %s, %v, %v",
			d, p.Reason(), pv.Allowed, pv, pu.Allowed, pu, want, private, public)
	}
	return p
}

const oneDay = 24 * time.Hour

// TestStaleGoogle: 5xx means 12 h of complete disallow, then the last good
// copy for up to 30 days, then no restrictions.
func TestStaleGoogle(t *testing.T) {
	g := newStaleRig(t, dialect.Google)
	g.at(0, actParse, false, true)
	g.srv.set(text(503, ""))
	fail := oneDay // the first failed fetch
	p := g.at(fail, actDisallow, false, false)
	if since, ok := p.failingSince(); !ok || !since.Equal(testutil.ClockStart.Add(fail)) {
		t.Errorf("failing since %v %v", since, ok)
	}
	g.at(fail+10*time.Minute, actDisallow, false, false)
	g.at(fail+11*time.Hour+59*time.Minute, actDisallow, false, false)
	p = g.at(fail+12*time.Hour+9*time.Minute, dialect.ActionUseLastGood, false, true)
	v := check(t, p, g.srv.URL+"/private")
	if v.Reason != dialect.ReasonRule || !strings.Contains(v.String(), "line 2: Disallow: /private (robots.txt: 503 Service Unavailable, last good copy of 2026-11-23T12:00:00Z") {
		t.Errorf("verdict %q", v)
	}
	if lg, ok := p.lastGoodAt(); !ok || !lg.Equal(testutil.ClockStart) {
		t.Errorf("last good %v %v", lg, ok)
	}
	// The last good copy is used while it is at most 30 days old.
	g.at(30*oneDay, dialect.ActionUseLastGood, false, true)
	p = g.at(30*oneDay+10*time.Minute, actAllow, true, true)
	if !strings.Contains(p.Reason(), "no restrictions (failing since 2026-11-24T12:00:00Z)") {
		t.Errorf("reason %q", p.Reason())
	}
	// A network failure continues the run.
	g.srv.set(dropped)
	g.at(31*oneDay, actAllow, true, true)
	// A good answer ends it.
	g.srv.set(text(200, "User-agent: *\nDisallow: /public\n"))
	p = g.at(32*oneDay, actParse, true, false)
	if _, failing := p.failingSince(); failing {
		t.Errorf("still failing after a 200")
	}
	// 429 counts as a server error in google.
	g.srv.set(text(429, ""))
	g.at(33*oneDay, actDisallow, false, false)
	g.at(33*oneDay+12*time.Hour, dialect.ActionUseLastGood, true, false)
}

// TestStaleGoogleNoCopy: with no last good copy, 12 h of disallow and then
// no restrictions.
func TestStaleGoogleNoCopy(t *testing.T) {
	g := newStaleRig(t, dialect.Google)
	g.srv.set(text(500, ""))
	g.at(0, actDisallow, false, false)
	g.at(11*time.Hour+55*time.Minute, actDisallow, false, false)
	g.at(12*time.Hour+5*time.Minute, actAllow, true, true)
	g.at(40*oneDay, actAllow, true, true)
	// After a 404 there is no copy either: the 404 dropped it.
	g.srv.set(text(200, rulesBody))
	g.at(41*oneDay, actParse, false, true)
	g.srv.set(text(404, ""))
	g.at(42*oneDay, actAllow, true, true)
	g.srv.set(text(503, ""))
	g.at(43*oneDay, actDisallow, false, false)
	g.at(43*oneDay+12*time.Hour, actAllow, true, true)
}

// TestStaleRFC9309: 5xx uses the last good copy (up to 30 days old) at once,
// else complete disallow, for as long as it lasts.
func TestStaleRFC9309(t *testing.T) {
	g := newStaleRig(t, dialect.RFC9309)
	g.at(0, actParse, false, true)
	g.srv.set(text(503, ""))
	g.at(oneDay, dialect.ActionUseLastGood, false, true)
	g.at(29*oneDay, dialect.ActionUseLastGood, false, true)
	g.at(30*oneDay, dialect.ActionUseLastGood, false, true)
	g.at(30*oneDay+10*time.Minute, actDisallow, false, false)
	g.at(90*oneDay, actDisallow, false, false)
	// Without a copy: complete disallow at once.
	h := newStaleRig(t, dialect.RFC9309)
	h.srv.set(dropped)
	h.at(0, actDisallow, false, false)
	h.at(60*oneDay, actDisallow, false, false)
	// After a 404 the copy is gone.
	k := newStaleRig(t, dialect.RFC9309)
	k.at(0, actParse, false, true)
	k.srv.set(text(404, ""))
	k.at(oneDay, actAllow, true, true)
	k.srv.set(text(503, ""))
	k.at(2*oneDay, actDisallow, false, false)
}

// TestStaleKoster1994: errors disallow, and no last good copy is used.
func TestStaleKoster1994(t *testing.T) {
	g := newStaleRig(t, dialect.Koster1994)
	g.at(0, actParse, false, true)
	g.srv.set(text(503, ""))
	g.at(oneDay, actDisallow, false, false)
	g.at(40*oneDay, actDisallow, false, false)
	g.srv.set(text(200, rulesBody))
	g.at(40*oneDay+10*time.Minute, actParse, false, true)
}

// TestStaleCocCoc: no answer excludes the host for an hour; a 5xx allows
// everything.
func TestStaleCocCoc(t *testing.T) {
	g := newStaleRig(t, dialect.CocCoc)
	g.at(0, actParse, false, true)
	g.srv.set(dropped)
	p := g.at(oneDay, actExclude, false, false)
	if !p.Expires().Equal(testutil.ClockStart.Add(oneDay + time.Hour)) {
		t.Errorf("retry at %v", p.Expires())
	}
	hits := g.srv.hits.Load()
	g.at(oneDay+59*time.Minute, actExclude, false, false)
	if g.srv.hits.Load() != hits {
		t.Errorf("fetched again before the retry time")
	}
	g.srv.set(text(503, ""))
	g.at(oneDay+time.Hour, actAllow, true, true)
	g.srv.set(text(200, rulesBody))
	g.at(2*oneDay+time.Hour, actParse, false, true)
}
