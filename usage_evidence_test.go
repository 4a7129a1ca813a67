package robots

import (
	"encoding/json"
	"testing"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/testkit/testutil"
	"github.com/politecrawl/robots/usage"
)

// UsageOf gives a response's usage in an OnResponse callback registered
// before the plugin was attached as well as after it.
func TestUsageOfCallbackOrder(t *testing.T) {
	for _, before := range []bool{true, false} {
		f := testutil.NewFarm(t, usageSite())
		p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0),
			WithUsage(usage.Config{Purposes: []string{"ai-train"}}))
		c := newCollector(false)
		got := map[string]ResponseUsage{}
		user := func(r *colly.Response) {
			u, ok := UsageOf(r)
			if !ok {
				t.Errorf("before=%v: %s: no usage", before, r.Request.URL.Path)
			}
			got[r.Request.URL.Path] = u
		}
		if before {
			c.OnResponse(user)
		}
		if err := p.Attach(c); err != nil {
			t.Fatal(err)
		}
		if !before {
			c.OnResponse(user)
		}
		for _, path := range []string{"/ai-ok/hdr", "/ai-ok/a"} {
			_ = c.Visit("http://ai.test" + path)
		}
		if u := got["/ai-ok/hdr"]; u.Refused != "train-ai=n: Content-Usage header: search=y, train-ai=n" {
			t.Errorf("before=%v: /ai-ok/hdr refused %q", before, u.Refused)
		}
		if u := got["/ai-ok/a"]; u.Refused != "" || u.Usage.Pref(dialect.TrainAI) != dialect.PrefAllow {
			t.Errorf("before=%v: /ai-ok/a %+v", before, u)
		}
		if n := p.Totals().UsageMarked; n != 1 {
			t.Errorf("before=%v: %d responses marked refused, want 1", before, n)
		}
	}
}

// A URL stopped before the fetch carries the evidence a response does.
func TestUsageStopEvidence(t *testing.T) {
	f := testutil.NewFarm(t, usageSite())
	var blocks blockLog
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add),
		WithUsage(usage.Config{Purposes: []string{"train-ai"}}))
	c := newCollector(false, p.opt(t))
	_ = c.Visit("http://ai.test/test")
	bs := blocks.all()
	if len(bs) != 1 || bs[0].Kind != UsageDisallowed || bs[0].Usage == nil {
		t.Fatalf("blocks %+v", bs)
	}
	rep := bs[0].Usage
	if len(rep.Signals) != 1 || rep.Signals[0].Carrier != usage.RobotsTxt || rep.Signals[0].Where != "line 4" ||
		rep.Usage.Pref(dialect.TrainAI) != dialect.PrefDisallow || bs[0].Reason != rep.Signals[0].String() {
		t.Errorf("stop %q with evidence %+v", bs[0].Reason, rep)
	}
}

// A stop's kind marshals to its name.
func TestBlockKindJSON(t *testing.T) {
	b, err := json.Marshal(map[string]BlockKind{"kind": UsageDisallowed})
	if err != nil || string(b) != `{"kind":"usage-disallowed"}` {
		t.Errorf("%s %v", b, err)
	}
}
