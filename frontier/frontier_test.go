package frontier_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/testkit/testutil"
)

// urlOf decodes a handed-out request with a real collector, as Colly's
// loop does, and returns its URL and lease.
func urlOf(t testing.TB, b []byte) (string, string) {
	t.Helper()
	r, err := colly.NewCollector().UnmarshalRequest(b)
	if err != nil {
		t.Fatalf("Colly cannot read what GetRequest handed out: %v", err)
	}
	return r.URL.String(), leaseOf(r.Ctx)
}

// leaseOf returns the lease id the frontier put in a request's context.
func leaseOf(ctx *colly.Context) string {
	s, _ := ctx.GetAny(frontier.LeaseKey).(string)
	return s
}

// fakeReady is a Readiness set by hand, for the choice among hosts.
type fakeReady struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (r *fakeReady) Ready(host string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.at[host], false
}

func (r *fakeReady) set(host string, at time.Time) {
	r.mu.Lock()
	r.at[host] = at
	r.mu.Unlock()
}

func TestAddRequest(t *testing.T) {
	f := frontier.New(frontier.Config{MaxSize: 2})
	cases := []struct {
		in   []byte
		want error
	}{
		{testutil.CollyRequest(t, "http://a.example/1"), nil},
		{testutil.CollyRequest(t, "http://a.example/1"), frontier.ErrSeen},
		{[]byte(`{"URL":"http://a.example/1","Method":"POST","Body":"eA=="}`), nil}, // another method and a body: another request
		{testutil.CollyRequest(t, "http://b.example/1"), frontier.ErrFull},
		{[]byte(`not json`), frontier.ErrBadRequest},
		{[]byte(`{"URL":"/relative"}`), frontier.ErrBadRequest},
		{[]byte(`{"URL":"http://%zz"}`), frontier.ErrBadRequest},
		{make([]byte, 1<<20+1), frontier.ErrBadRequest},
	}
	for i, c := range cases {
		if err := f.AddRequest(c.in); !errors.Is(err, c.want) {
			t.Errorf("case %d: AddRequest = %v, want %v", i, err, c.want)
		}
	}
	if n, _ := f.QueueSize(); n != 2 {
		t.Fatalf("QueueSize = %d, want 2", n)
	}
	st := f.Stats()
	if st.Added != 2 || st.Seen != 1 || st.Rejected != 4 {
		t.Fatalf("stats %+v", st)
	}
}

// TestPerHostOrder: FIFO within a host, the oldest ready request across
// hosts, one request per host out at a time, and a host is free again
// once its request is done.
func TestPerHostOrder(t *testing.T) {
	f := frontier.New(frontier.Config{MaxWait: 50 * time.Millisecond})
	for _, u := range []string{"http://a.example/1", "http://a.example/2", "http://a.example/3", "http://b.example/1", "http://c.example/1", "http://b.example/2"} {
		if err := f.AddRequest(testutil.CollyRequest(t, u)); err != nil {
			t.Fatal(err)
		}
	}
	var leases []string
	for _, want := range []string{"http://a.example/1", "http://b.example/1", "http://c.example/1"} {
		b, err := f.GetRequest()
		if err != nil {
			t.Fatal(err)
		}
		got, id := urlOf(t, b)
		if got != want || id == "" {
			t.Fatalf("got %s (lease %q), want %s", got, id, want)
		}
		leases = append(leases, id)
	}
	f.Done(leases[1]) // b is free: its next comes before a's, which is still out
	if b, _ := f.GetRequest(); b == nil {
		t.Fatal("nothing handed out")
	} else if got, _ := urlOf(t, b); got != "http://b.example/2" {
		t.Fatalf("got %s, want http://b.example/2", got)
	}
	f.Done(leases[0])
	f.Done(leases[0]) // twice: ignored
	for _, want := range []string{"http://a.example/2"} {
		b, _ := f.GetRequest()
		if got, id := urlOf(t, b); got != want {
			t.Fatalf("got %s, want %s", got, want)
		} else {
			leases = append(leases, id)
		}
	}
	// Only a.example/3 is left and a is out: after MaxWait it is handed
	// out anyway (early), never nothing.
	start := time.Now()
	b, err := f.GetRequest()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := urlOf(t, b); got != "http://a.example/3" {
		t.Fatalf("got %s", got)
	}
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Fatalf("handed out after %v, before MaxWait", waited)
	}
	if _, err := f.GetRequest(); !errors.Is(err, frontier.ErrEmpty) {
		t.Fatalf("empty: %v", err)
	}
	st := f.Stats()
	if st.Handed != 6 || st.Early != 1 || st.Done != 2 || st.Leased != 4 || st.Queued != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestWaitsForSoonest: with no host ready, GetRequest waits until the
// soonest is, and wakes early when a request is done or added.
func TestWaitsForSoonest(t *testing.T) {
	r := &fakeReady{at: map[string]time.Time{}}
	f := frontier.New(frontier.Config{Ready: r, MaxWait: 5 * time.Second})
	now := time.Now()
	r.set("http://a.example", now.Add(300*time.Millisecond))
	r.set("http://b.example", now.Add(150*time.Millisecond))
	f.AddRequest(testutil.CollyRequest(t, "http://a.example/1"))
	f.AddRequest(testutil.CollyRequest(t, "http://b.example/1"))
	b, _ := f.GetRequest()
	got, _ := urlOf(t, b)
	if got != "http://b.example/1" || time.Since(now) < 150*time.Millisecond {
		t.Fatalf("got %s after %v, want b after 150ms", got, time.Since(now))
	}
	// A new host, ready now, ends the wait for a.
	go func() {
		time.Sleep(20 * time.Millisecond)
		f.AddRequest(testutil.CollyRequest(t, "http://c.example/1"))
	}()
	b, _ = f.GetRequest()
	if got, _ := urlOf(t, b); got != "http://c.example/1" {
		t.Fatalf("got %s, want the new host's", got)
	}
	if st := f.Stats(); st.Early != 0 {
		t.Fatalf("early hand-outs: %+v", st)
	}
}

// TestNotReady: nothing is out and the only host is far from ready:
// after MaxWait GetRequest returns ErrNotReady (Colly's loop asks again)
// rather than tie a thread to the wait.
func TestNotReady(t *testing.T) {
	r := &fakeReady{at: map[string]time.Time{}}
	f := frontier.New(frontier.Config{Ready: r, MaxWait: 50 * time.Millisecond})
	r.set("http://a.example", time.Now().Add(time.Hour))
	f.AddRequest(testutil.CollyRequest(t, "http://a.example/1"))
	start := time.Now()
	if _, err := f.GetRequest(); !errors.Is(err, frontier.ErrNotReady) {
		t.Fatalf("GetRequest = %v, want ErrNotReady", err)
	}
	if time.Since(start) < 50*time.Millisecond {
		t.Fatal("returned before MaxWait: Colly's loop would spin")
	}
	if st := f.Stats(); st.Handed != 0 || st.Queued != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestHold(t *testing.T) {
	f := frontier.New(frontier.Config{Hold: 30 * time.Millisecond, MaxWait: time.Second})
	f.AddRequest(testutil.CollyRequest(t, "http://a.example/1"))
	f.AddRequest(testutil.CollyRequest(t, "http://a.example/2"))
	if _, err := f.GetRequest(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	b, _ := f.GetRequest() // a/1 is never done: counted done after Hold
	if got, _ := urlOf(t, b); got != "http://a.example/2" {
		t.Fatal(got)
	}
	if d := time.Since(start); d >= time.Second {
		t.Fatalf("waited %v: Hold did not free the host", d)
	}
	if st := f.Stats(); st.Expired != 1 || st.Early != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// crawl runs a colly queue with threads over a farm's hosts through the
// plugin, with storage s (nil: Colly's InMemoryQueueStorage), and returns
// the farm.
func crawl(t testing.TB, threads int, hosts []string, pages int, delay string, s func(*robots.Plugin, *colly.Collector) queue.Storage) (*testutil.Farm, time.Duration) {
	sites := map[string]*testutil.Site{}
	for _, h := range hosts {
		sites[h] = &testutil.Site{Robots: "User-agent: *\nCrawl-delay: " + delay + "\n"}
	}
	farm := testutil.NewFarm(t, sites)
	tr := farm.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	c := colly.NewCollector()
	p, err := robots.Attach(c, robots.WithTransport(tr), robots.WithDefaultDelay(0))
	if err != nil {
		t.Fatal(err)
	}
	var st queue.Storage
	if s != nil {
		st = s(p, c)
	}
	q, err := queue.New(threads, st)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts { // host after host, as a seed list often is
		for i := range pages {
			if err := q.AddURL(fmt.Sprintf("http://%s/p%d", h, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	start := time.Now()
	if err := q.Run(c); err != nil {
		t.Fatal(err)
	}
	return farm, time.Since(start)
}

func withFrontier(cfg frontier.Config, out **frontier.Frontier) func(*robots.Plugin, *colly.Collector) queue.Storage {
	return func(p *robots.Plugin, c *colly.Collector) queue.Storage {
		cfg.Ready = p.Limiter().(*hostlimit.Limiter)
		f := frontier.New(cfg)
		robots.AttachFrontier(c, f)
		if out != nil {
			*out = f
		}
		return f
	}
}

// TestQueueSpreadsHosts runs a real Colly queue with 4 threads over 4
// hosts whose pages were queued host after host: the frontier's first 4
// page fetches go to 4 distinct hosts (Colly's in-memory storage sends all
// 4 threads to the first host), each page is fetched once, every gap
// holds the Crawl-delay, and every request is reported done.
func TestQueueSpreadsHosts(t *testing.T) {
	testutil.CheckGoroutines(t)
	hosts := []string{"a.example", "b.example", "c.example", "d.example"}
	const pages, delay = 3, 200 * time.Millisecond
	var f *frontier.Frontier
	farm, _ := crawl(t, 4, hosts, pages, "0.2", withFrontier(frontier.Config{}, &f))
	var all []testutil.Hit
	for _, h := range hosts {
		hits := farm.Pages(h, false)
		if len(hits) != pages {
			t.Errorf("%s: %d page fetches, want %d: %v", h, len(hits), pages, farm.Paths(h))
		}
		if g := testutil.MinGap(farm.Pages(h, true)); g < delay {
			t.Errorf("%s: a gap of %v, under the Crawl-delay", h, g)
		}
		all = append(all, hits...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].At.Before(all[j].At) })
	first := map[string]bool{}
	for _, h := range all[:4] {
		first[h.Host] = true
	}
	if len(first) != 4 {
		t.Errorf("the first 4 page fetches went to %d hosts, want 4: %v", len(first), all[:4])
	}
	st := f.Stats()
	if st.Done != int64(len(hosts)*pages) || st.Expired != 0 || st.Leased != 0 {
		t.Errorf("frontier stats %+v: every request should be reported done", st)
	}

	// The same crawl on Colly's own storage: the first 4 fetches all go to
	// the first host (the behaviour the frontier fixes).
	farm, _ = crawl(t, 4, hosts, pages, "0.2", nil)
	var hits []testutil.Hit
	for _, h := range hosts {
		hits = append(hits, farm.Pages(h, false)...)
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].At.Before(hits[j].At) })
	if hits[0].Host != hits[2].Host {
		t.Logf("Colly's storage: first fetches %v (expected the first host's pages first)", hits[:3])
	}
}

// TestStoppedRequestsAreDone: requests the plugin stops (disallowed) end in
// OnError and free their host at once; the crawl does not wait for Hold.
func TestStoppedRequestsAreDone(t *testing.T) {
	farm := testutil.NewFarm(t, map[string]*testutil.Site{
		"a.example": {Robots: "User-agent: *\nDisallow: /no\n"},
	})
	tr := farm.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	c := colly.NewCollector()
	p, err := robots.Attach(c, robots.WithTransport(tr), robots.WithDefaultDelay(0))
	if err != nil {
		t.Fatal(err)
	}
	f := frontier.New(frontier.Config{Ready: p.Limiter().(*hostlimit.Limiter), Hold: time.Hour, MaxWait: time.Hour})
	robots.AttachFrontier(c, f)
	q, _ := queue.New(2, f)
	for i := range 5 {
		q.AddURL(fmt.Sprintf("http://a.example/no%d", i))
		q.AddURL(fmt.Sprintf("http://a.example/yes%d", i))
	}
	done := make(chan error, 1)
	go func() { done <- q.Run(c) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the crawl did not end: a stopped request held its host")
	}
	if got := farm.Paths("a.example"); strings.Join(got, " ") != "/yes0 /yes1 /yes2 /yes3 /yes4" {
		t.Fatalf("fetched %v", got)
	}
	if st := f.Stats(); st.Done != 10 || st.Leased != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestQueueAddRequestFromCallbacks: links queued from OnHTML with
// Queue.AddRequest, whose wake-up blocks the thread until Colly's loop
// takes it, while the loop waits in GetRequest for the very host that
// thread holds. The bounded wait keeps the crawl going: it ends, with every
// page once and the Crawl-delay held.
func TestQueueAddRequestFromCallbacks(t *testing.T) {
	testutil.CheckGoroutines(t)
	const pages, delay = 6, 100 * time.Millisecond
	farm := testutil.NewFarm(t, map[string]*testutil.Site{
		"a.example": {Robots: "User-agent: *\nCrawl-delay: 0.1\n", Handle: func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>")
			for i := range pages {
				fmt.Fprintf(w, `<a href="/p%d">x</a>`, i)
			}
			fmt.Fprint(w, "</body></html>")
			return true
		}},
	})
	tr := farm.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	c := colly.NewCollector()
	p, err := robots.Attach(c, robots.WithTransport(tr), robots.WithDefaultDelay(0))
	if err != nil {
		t.Fatal(err)
	}
	f := frontier.New(frontier.Config{Ready: p.Limiter().(*hostlimit.Limiter), MaxWait: 100 * time.Millisecond})
	robots.AttachFrontier(c, f)
	q, _ := queue.New(2, f)
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		u, err := url.Parse(e.Request.AbsoluteURL(e.Attr("href")))
		if err != nil {
			return
		}
		q.AddRequest(&colly.Request{URL: u, Method: "GET", Ctx: colly.NewContext()}) // ErrSeen for the known ones
	})
	q.AddURL("http://a.example/")
	done := make(chan error, 1)
	go func() { done <- q.Run(c) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the crawl hung: a thread blocked in Queue.AddRequest and GetRequest waited on its host")
	}
	if got := farm.Paths("a.example"); len(got) != pages+1 {
		t.Fatalf("fetched %v, want / and %d pages once", got, pages)
	}
	if g := testutil.MinGap(farm.Pages("a.example", true)); g < delay {
		t.Fatalf("a gap of %v", g)
	}
	t.Logf("frontier: %+v", f.Stats())
}

// Use the plugin's limiter as the frontier's readiness, attach the
// frontier to the collector, and run a queue on it.
func Example() {
	c := colly.NewCollector()
	p, err := robots.Attach(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	ready, _ := p.Limiter().(frontier.Readiness) // the plugin's own *hostlimit.Limiter
	f := frontier.New(frontier.Config{Ready: ready})
	robots.AttachFrontier(c, f) // reports each request done (OnError, OnScraped)
	q, _ := queue.New(4, f)
	q.AddURL("https://example.com/")
	q.AddURL("https://example.org/")
	// q.Run(c) would crawl them; here the queued count only.
	fmt.Println(f.Stats().Queued)
	// Output: 2
}

// A host whose last queued request is out keeps its PerHost bound when
// more of its requests are added: another host's request comes first, and
// the host's next one only after MaxWait, early (its state used to be
// dropped with its queue, and the next request went out at once).
func TestPerHostAfterQueueEmptied(t *testing.T) {
	f := frontier.New(frontier.Config{MaxWait: 50 * time.Millisecond})
	add := func(u string) {
		if err := f.AddRequest(testutil.CollyRequest(t, u)); err != nil {
			t.Fatal(err)
		}
	}
	get := func() string {
		b, err := f.GetRequest()
		if err != nil {
			t.Fatal(err)
		}
		u, _ := urlOf(t, b)
		return u
	}
	add("http://a.example/1")
	if got := get(); got != "http://a.example/1" {
		t.Fatalf("got %s", got)
	}
	add("http://a.example/2")
	add("http://b.example/1")
	for _, want := range []string{"http://b.example/1", "http://a.example/2"} {
		if got := get(); got != want {
			t.Fatalf("got %s, want %s (a.example/1 is still out)", got, want)
		}
	}
	if st := f.Stats(); st.Early != 1 || st.Leased != 3 {
		t.Fatalf("stats %+v: a.example/2 must go out early, past its host's bound", st)
	}
}

// countingReady is the plugin's limiter, counting the frontier's Ready calls.
type countingReady struct {
	*hostlimit.Limiter
	n int
}

func (c *countingReady) Ready(host string) (time.Time, bool) {
	c.n++ // GetRequest calls Ready under the frontier's lock
	return c.Limiter.Ready(host)
}

// A host is asked Ready again only once the time it gave has come: with
// 2,000 hosts queued of which 1,990 are within an hour's delay, 3,000
// request cycles ask Ready about once per cycle plus once per waiting
// host, not once per host per cycle (6 million calls).
func TestGetRequestAsksDueHostsOnly(t *testing.T) {
	const hosts, ready, cycles = 2000, 10, 3000
	lim := hostlimit.New(hostlimit.Config{})
	r := &countingReady{Limiter: lim}
	f := frontier.New(frontier.Config{Ready: r})
	for i := range hosts {
		host := fmt.Sprintf("http://h%d.example", i)
		if i >= ready {
			p, err := lim.Acquire(t.Context(), host, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			p.Release()
		}
		f.AddRequest(testutil.CollyRequest(t, host+"/seed"))
	}
	for i := range cycles {
		f.AddRequest(testutil.CollyRequest(t, fmt.Sprintf("http://h%d.example/p%d", i%ready, i)))
		b, err := f.GetRequest()
		if err != nil {
			t.Fatal(err)
		}
		u, lease := urlOf(t, b)
		if h, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(u, ".", 2)[0], "http://h")); h >= ready {
			t.Fatalf("handed out %s, whose host is not ready", u)
		}
		f.Done(lease)
	}
	if max := 2*cycles + hosts; r.n > max {
		t.Errorf("%d Ready calls for %d cycles over %d hosts, want at most %d", r.n, cycles, hosts, max)
	}
	// Queued: the waiting hosts' seeds, and one page per ready host (each
	// cycle adds one and hands one out; the first ones handed the seeds).
	if st := f.Stats(); st.Queued != hosts || st.Hosts != hosts || st.Early != 0 {
		t.Errorf("stats %+v: want %d queued on %d hosts, nothing handed early", st, hosts, hosts)
	}
}
