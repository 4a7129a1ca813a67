package sitemap

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/testkit/testutil"
)

// eventBudget stands in for a document's DocTimeout budget: time passes
// for it only through elapse, and counts only while it is not paused (as
// the walker pauses it around the callbacks, and a gate around its wait);
// spend runs it out at once.
type eventBudget struct {
	total  time.Duration
	cancel func()

	mu     sync.Mutex
	used   time.Duration
	paused int
	spent  bool
}

func (b *eventBudget) Pause()  { b.mu.Lock(); b.paused++; b.mu.Unlock() }
func (b *eventBudget) Resume() { b.mu.Lock(); b.paused--; b.mu.Unlock() }
func (b *eventBudget) Stop()   {}

func (b *eventBudget) Spent() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent
}

func (b *eventBudget) isPaused() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.paused > 0
}

// elapse lets d pass: it counts unless the budget is paused, and runs the
// budget out once total has been counted.
func (b *eventBudget) elapse(d time.Duration) {
	b.mu.Lock()
	fire := false
	if b.paused == 0 && !b.spent {
		b.used += d
		fire = b.used >= b.total
		b.spent = fire
	}
	b.mu.Unlock()
	if fire {
		b.cancel()
	}
}

func (b *eventBudget) spend() {
	b.mu.Lock()
	b.spent = true
	b.mu.Unlock()
	b.cancel()
}

// eventBudgets gives a walker an eventBudget for each document, and keeps
// them in the order the documents started.
type eventBudgets struct {
	mu  sync.Mutex
	all []*eventBudget
}

func newEventBudgets(w *Walker) *eventBudgets {
	bs := &eventBudgets{}
	w.budget = func(total time.Duration, cancel func()) docBudget {
		b := &eventBudget{total: total, cancel: cancel}
		bs.mu.Lock()
		bs.all = append(bs.all, b)
		bs.mu.Unlock()
		return b
	}
	return bs
}

// last is the budget of the document started last.
func (bs *eventBudgets) last() *eventBudget {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	return bs.all[len(bs.all)-1]
}

// stallBody spends the budget when it is asked for more than the server
// sent (left bytes): the read then waits on a server that stalls, until
// the budget's cancel ends it.
type stallBody struct {
	io.ReadCloser
	left  int
	spend func()
}

func (s *stallBody) Read(p []byte) (int, error) {
	if s.left <= 0 {
		s.spend()
	}
	n, err := s.ReadCloser.Read(p)
	s.left -= n
	return n, err
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// stallFarm serves documents on s.test: /stall*.xml sends what stalls
// holds for its path, then stalls until the client gives up; any other
// path a urlset of three pages. cl's /stall*.xml bodies spend the budget
// of their document when read past what was sent.
func stallFarm(t *testing.T, stalls map[string]string, bs func() *eventBudgets) (cl *http.Client) {
	farm := testutil.NewFarm(t, map[string]*testutil.Site{"s.test": {Handle: func(w http.ResponseWriter, r *http.Request) bool {
		sent, ok := stalls[r.URL.Path]
		if !ok {
			io.WriteString(w, testutil.URLSet("http://s.test/1", "http://s.test/2", "http://s.test/3"))
			return true
		}
		io.WriteString(w, sent)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done(): // the client gave up
		case <-time.After(time.Minute):
		}
		return true
	}}})
	tr := farm.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := tr.RoundTrip(req)
		if sent, ok := stalls[req.URL.Path]; ok && err == nil {
			resp.Body = &stallBody{ReadCloser: resp.Body, left: len(sent), spend: bs().last().spend}
		}
		return resp, err
	})}
}

// DocTimeout ends a document that takes too long, keeping what was handed
// over, and the walk goes on.
func TestWalkDocTimeout(t *testing.T) {
	doc := testutil.URLSet("http://s.test/1", "http://s.test/2", "http://s.test/3")
	var bs *eventBudgets
	cl := stallFarm(t, map[string]string{"/stall.xml": doc[:strings.Index(doc, "http://s.test/3")]}, func() *eventBudgets { return bs })
	w := NewWalker(Config{Client: cl})
	bs = newEventBudgets(w)
	var got int
	reps := w.Walk(context.Background(), "", []string{"http://s.test/a.xml", "http://s.test/stall.xml", "http://s.test/b.xml"},
		func(Page) error { got++; return nil })
	if r := wkReport(reps, "http://s.test/a.xml"); r.Err != nil || r.Handed != 3 {
		t.Errorf("a: %+v", r)
	}
	if r := wkReport(reps, "http://s.test/stall.xml"); !errors.Is(r.Err, ErrDocTimeout) || r.Handed != 2 || !errors.Is(r.Err, context.Canceled) {
		t.Errorf("stall: %+v: want ErrDocTimeout wrapping the read's own error", r)
	}
	if r := wkReport(reps, "http://s.test/b.xml"); r.Err != nil || r.Handed != 3 {
		t.Errorf("b (after the stalled document): %+v", r)
	}
	if got != 8 {
		t.Errorf("%d pages, want 8", got)
	}
}

// The time a request waits at a host's gate does not count against
// DocTimeout: hostlimit's Transport pauses the document's budget while it
// waits (here 2 s, on a fake clock, for a DocTimeout of 1 s).
func TestWalkDocTimeoutNotGateWait(t *testing.T) {
	clk := testutil.NewFakeClock()
	lim := hostlimit.New(hostlimit.Config{Clock: clk, Delay: func(string) time.Duration { return 2 * time.Second }})
	var bs *eventBudgets
	cl := stallFarm(t, nil, func() *eventBudgets { return bs })
	cl.Transport = lim.Transport(cl.Transport)
	w := NewWalker(Config{Client: cl, DocTimeout: time.Second})
	bs = newEventBudgets(w)
	done := make(chan []Report)
	go func() {
		done <- w.Walk(context.Background(), "", []string{"http://s.test/a.xml", "http://s.test/b.xml"}, func(Page) error { return nil })
	}()
	clk.WaitTimers(t, 1) // b.xml waits for its turn
	if b := bs.last(); !b.isPaused() {
		t.Error("the budget runs while the request waits at the gate")
	}
	bs.last().elapse(2 * time.Second)
	clk.Advance(2 * time.Second)
	reps := <-done
	for _, u := range []string{"http://s.test/a.xml", "http://s.test/b.xml"} {
		if r := wkReport(reps, u); r.Err != nil || r.Handed != 3 {
			t.Errorf("%s: %+v", u, r)
		}
	}
	for i, b := range bs.all {
		if b.Spent() || b.isPaused() {
			t.Errorf("budget %d: spent %v, paused %v after the walk", i, b.Spent(), b.isPaused())
		}
	}
}

// The time the callbacks take (a plugin waiting for a free slot, a sync
// crawl visiting each page) does not count against DocTimeout: four
// callbacks of 400 ms each leave a budget of 1 s unspent, and the entries
// limit the document reached is its error.
func TestWalkDocTimeoutNotCallbacks(t *testing.T) {
	_, cl, _ := wkFarm(t, map[string]wkDocs{"a.test": {
		"/s.xml": testutil.URLSet("http://a.test/1", "http://a.test/2", "http://a.test/3", "http://a.test/4", "http://a.test/5"),
	}})
	for _, spool := range []bool{false, true} {
		w := NewWalker(Config{Client: cl, Spool: spool, DocTimeout: time.Second, Limits: Limits{MaxEntries: 4}})
		bs := newEventBudgets(w)
		n := 0
		reps := w.Walk(context.Background(), "", []string{"http://a.test/s.xml"}, func(Page) error {
			n++
			bs.last().elapse(400 * time.Millisecond)
			return nil
		})
		var le *LimitError
		if r := reps[0]; !errors.As(r.Err, &le) || le.Limit != LimitEntries || errors.Is(r.Err, ErrDocTimeout) || r.Handed != 4 || n != 4 {
			t.Errorf("spool=%v: %v, handed %d: want the entries limit after 4, not a timeout", spool, r.Err, r.Handed)
		}
		if bs.last().Spent() {
			t.Errorf("spool=%v: the callbacks' time was counted", spool)
		}
	}
}

// A DocTimeout that runs out while the server stalls before the root
// element is the timeout's: the report wraps ErrDocTimeout and the read's
// own error, and does not call the document "not a sitemap".
func TestWalkDocTimeoutBeforeRoot(t *testing.T) {
	for _, tc := range []struct{ name, sent string }{
		{"nothing after the headers", ""},
		{"an XML declaration", `<?xml version="1.0" encoding="UTF-8"?>` + "\n"},
		{"the start of a text sitemap's first line", "htt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bs *eventBudgets
			cl := stallFarm(t, map[string]string{"/stall.xml": tc.sent}, func() *eventBudgets { return bs })
			w := NewWalker(Config{Client: cl, Retries: -1})
			bs = newEventBudgets(w)
			reps := w.Walk(context.Background(), "", []string{"http://s.test/stall.xml"}, func(Page) error { return nil })
			if len(reps) != 1 {
				t.Fatalf("%d reports, want 1", len(reps))
			}
			r := reps[0]
			if r.Status != http.StatusOK || !bs.last().Spent() {
				t.Fatalf("status %d, budget spent %v: the timeout must fire while reading", r.Status, bs.last().Spent())
			}
			if !errors.Is(r.Err, ErrDocTimeout) || !errors.Is(r.Err, context.Canceled) || errors.Is(r.Err, ErrNotSitemap) {
				t.Errorf("error %v: want ErrDocTimeout wrapping the read's error, not ErrNotSitemap", r.Err)
			}
		})
	}
}
