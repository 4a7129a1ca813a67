package fleetfrontier

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/testkit/testutil"
)

// TestPostponeAfterRobots: one queue thread, four new hosts whose
// robots.txt says Crawl-delay 2. The first request of each host brings its
// robots.txt fetch, after which the host may not be asked for 2 s; the
// plugin hands that request back to the frontier (Postpone) and the thread
// goes on to the next host, so every robots.txt is fetched before any page
// (without it, the thread waits 2 s after each robots.txt: 6 s of waiting
// before the last one). Every page is fetched once, none is missed, and
// no host sees two requests (robots.txt included) closer than the delay.
func TestPostponeAfterRobots(t *testing.T) {
	t.Parallel()
	redistest.OnServer(t, func(t *testing.T, srv redistest.Backend) {
		const hosts, delay = 4, 2 * time.Second
		sites := map[string]*testutil.Site{}
		var names []string
		for i := range hosts {
			h := fmt.Sprintf("h%d.example", i)
			names = append(names, h)
			sites[h] = testutil.LinkSite("2", 1, nil)
		}
		farm := testutil.NewFarm(t, sites)
		f := newFleet(t, srv)
		q := New(f, Config{})
		t.Cleanup(func() { q.Close() })
		c := colly.NewCollector()
		p, err := robots.Attach(c,
			robots.WithPolicy(policy.WithStore(f.Store())),
			robots.WithLimiter(f.Limiter(redisfleet.LimiterConfig{})),
			robots.WithTransport(farm.Transport()),
		)
		if err != nil {
			t.Fatal(err)
		}
		robots.AttachFrontier(c, q)
		c.OnHTML("a[href]", func(e *colly.HTMLElement) {
			b, err := (&colly.Request{URL: mustParse(t, e.Request.AbsoluteURL(e.Attr("href"))), Method: "GET", Depth: e.Request.Depth + 1, Ctx: colly.NewContext()}).Marshal()
			if err == nil {
				err = q.AddRequest(b)
			}
			if err != nil && !errors.Is(err, frontier.ErrSeen) {
				t.Error(err)
			}
		})
		qq, err := queue.New(1, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range names {
			if err := qq.AddURL("http://" + h + "/"); err != nil {
				t.Fatal(err)
			}
		}
		if err := qq.Run(c); err != nil {
			t.Fatal(err)
		}

		var lastRobots, firstPage time.Time
		for _, h := range names {
			all := farm.Pages(h, true)
			if len(all) != 3 || all[0].Path != "/robots.txt" {
				t.Errorf("%s: hits %v, want robots.txt then / and /p1 once each", h, all)
				continue
			}
			if paths := farm.Paths(h); fmt.Sprint(paths) != "[/ /p1]" {
				t.Errorf("%s: pages %v, want [/ /p1]", h, paths)
			}
			if g := testutil.MinGap(all); g < delay {
				t.Errorf("%s: two requests %v apart, under the Crawl-delay %v", h, g, delay)
			}
			if all[0].At.After(lastRobots) {
				lastRobots = all[0].At
			}
			if firstPage.IsZero() || all[1].At.Before(firstPage) {
				firstPage = all[1].At
			}
		}
		if !lastRobots.Before(firstPage) {
			t.Errorf("the last robots.txt came %v after the first page: the thread waited out a host's delay instead of taking the next host",
				lastRobots.Sub(firstPage))
		}
		st, tot := q.Stats(), p.Totals()
		if st.Postponed != hosts || tot.Postponed != hosts {
			t.Errorf("postponed: frontier %d, plugin %d; want %d (each host's first request)", st.Postponed, tot.Postponed, hosts)
		}
		if st.Leased != 0 || tot.Allowed != 2*hosts {
			t.Errorf("leased %d, allowed %d; want 0 and %d (a postponed request counted once allowed, when it comes back)", st.Leased, tot.Allowed, 2*hosts)
		}
	})
}
