package sitemap

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/robots/internal/testutil"
)

// eventBudget is a document budget that the test spends at a moment of its
// choosing, instead of after a time.
type eventBudget struct {
	cancel func()
	spent  atomic.Bool
}

func (b *eventBudget) Pause()      {}
func (b *eventBudget) Resume()     {}
func (b *eventBudget) Stop()       {}
func (b *eventBudget) Spent() bool { return b.spent.Load() }

func (b *eventBudget) spend() {
	b.spent.Store(true)
	b.cancel()
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

// A DocTimeout that runs out while the server stalls before the root
// element is the timeout's: the report wraps ErrDocTimeout and the read's
// own error, and does not call the document "not a sitemap". The budget is
// spent on an event (the read that waits on the stalled server), so no
// time window is involved.
func TestWalkDocTimeoutBeforeRoot(t *testing.T) {
	for _, tc := range []struct{ name, sent string }{
		{"nothing after the headers", ""},
		{"an XML declaration", `<?xml version="1.0" encoding="UTF-8"?>` + "\n"},
		{"the start of a text sitemap's first line", "htt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			farm := testutil.NewFarm(t, map[string]*testutil.Site{"s.test": {Handle: func(w http.ResponseWriter, r *http.Request) bool {
				io.WriteString(w, tc.sent)
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done(): // the client gave up
				case <-time.After(time.Minute):
				}
				return true
			}}})
			tr := farm.Transport()
			t.Cleanup(tr.CloseIdleConnections)
			var b *eventBudget
			cl := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
				resp, err := tr.RoundTrip(req)
				if err == nil {
					resp.Body = &stallBody{ReadCloser: resp.Body, left: len(tc.sent), spend: b.spend}
				}
				return resp, err
			})}
			w := NewWalker(Config{Client: cl, Retries: -1})
			w.budget = func(_ time.Duration, cancel func()) docBudget {
				b = &eventBudget{cancel: cancel}
				return b
			}
			reps := w.Walk(context.Background(), "", []string{"http://s.test/sitemap.xml"}, func(Page) error { return nil })
			if len(reps) != 1 {
				t.Fatalf("%d reports, want 1", len(reps))
			}
			r := reps[0]
			if r.Status != http.StatusOK || !b.Spent() {
				t.Fatalf("status %d, budget spent %v: the timeout must fire while reading", r.Status, b.Spent())
			}
			if !errors.Is(r.Err, ErrDocTimeout) || !errors.Is(r.Err, context.Canceled) || errors.Is(r.Err, ErrNotSitemap) {
				t.Errorf("error %v: want ErrDocTimeout wrapping the read's error, not ErrNotSitemap", r.Err)
			}
		})
	}
}
