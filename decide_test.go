package robots

import (
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/testkit/testutil"
	"github.com/politecrawl/robots/usage"
)

// One decision per request: a request the OnRequest hook let through is
// not decided again at the transport. A callback after the plugin's hook
// moves the resolver's clock past the lifetime of robots.txt and
// tdmrep.json: a second decision would fetch both again (the rules and the
// usage check of WithUsage each read them) before sending the page;
// each is fetched once before it. (The response's own usage check, after
// the fetch, may read them again.)
func TestDecidedOnce(t *testing.T) {
	for _, async := range []bool{false, true} {
		f := testutil.NewFarm(t, map[string]*testutil.Site{"once.test": {Robots: "User-agent: *\nAllow: /\n"}})
		clock := testutil.NewStepClock()
		p := mustNew(t, WithTransport(f.Transport()), WithDefaultDelay(0), withClock(clock), WithUsage(usage.Config{Purposes: []string{"train-ai"}}))
		c := newCollector(async, p.opt(t))
		c.OnRequest(func(*colly.Request) { clock.Advance(48 * time.Hour) })
		var mu sync.Mutex
		var errs []error
		c.OnError(func(_ *colly.Response, err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() })
		c.Visit("http://once.test/page")
		c.Wait()
		count := map[string]int{} // the farm's hits up to the page
		for _, h := range f.Pages("once.test", true) {
			count[h.Path]++
			if h.Path == "/page" {
				break
			}
		}
		if count["/robots.txt"] != 1 || count["/.well-known/tdmrep.json"] != 1 || count["/page"] != 1 || len(errs) != 0 {
			t.Errorf("async=%v: up to the page the farm saw %v, OnError %v; want robots.txt, tdmrep.json and the page once each, no error", async, count, errs)
		}
	}
}
