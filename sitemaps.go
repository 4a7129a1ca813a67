package robots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/internal/gatewait"
	"github.com/politecrawl/robots/sitemap"
)

// Keys of the values the plugin puts in the colly.Context of each request
// it makes for a sitemap's page URL. Read them with Context.GetAny
// (Context.Get panics on a value that is not a string). Colly passes a
// request's Context on to the requests made with Request.Visit, so pages
// reached by links from a sitemap's page carry them too; r.Depth is 1 for
// the sitemap's page itself.
const (
	// CtxSitemap holds the URL of the sitemap that listed the page, a string.
	CtxSitemap = "politecrawl.robots.sitemap"
	// CtxLastMod holds the page's lastmod, a time.Time, zero when the
	// sitemap gave none (or none readable); through a frontier
	// ([AttachFrontier]) the context is serialised, and it holds the time
	// as an RFC 3339 string.
	CtxLastMod = "politecrawl.robots.lastmod"
	// ctxSlot holds the in-flight slot of an Async collector's request.
	ctxSlot = "politecrawl.robots.sitemap-slot"
)

// SitemapTotals sums the reports of every sitemap document the plugin
// walked. A child sitemap that a limit kept from being fetched (nested too
// deep, or past the sitemaps-per-authority cap) has no report of its own:
// it is counted in Rejected under [sitemap.ReasonTooDeep] or
// [sitemap.ReasonSitemapCap], not in Sitemaps or Failed.
type SitemapTotals struct {
	Sitemaps int64 // documents reported
	Failed   int64 // documents whose report has an error (not fetched, cut by a limit while read, not a sitemap, ...)
	Found    int64 // entries read
	Handed   int64 // page URLs handed to the collector
	Children int64 // child sitemaps queued by indexes
	Filtered map[string]int64
	Rejected map[string]int64
}

// sitemapFeature is WithSitemaps: it walks each authority's sitemaps into
// the collector whose request loaded the authority's policy, and bounds the
// requests of an Async walk in flight (window).
type sitemapFeature struct {
	p      *core
	h      *handoff
	pages  http.RoundTripper // the collectors' transport, which sitemap documents go through
	cfg    *sitemapConfig
	walked sync.Map        // authority → struct{}: walked, or being walked
	clock  hostlimit.Clock // of the windows' hold times; nil: the system clock (tests set it)
	window int             // the Async window's size; 0: sitemapWindow (tests set it)

	mu     sync.Mutex
	totals SitemapTotals
}

// attach registers the feature's callbacks on c, after the plugin's
// OnRequest hook: a handed-over request's place in its window is armed
// once that hook is done with it (a callback after it may stop it
// silently: see window), released at once if a callback aborted it, and
// released at its OnScraped or OnError.
func (s *sitemapFeature) attach(c *colly.Collector) {
	c.OnRequest(func(r *colly.Request) {
		if sl := slotOf(r); sl != nil && r.IsAbort() {
			sl.release()
		} else if sl != nil {
			sl.arm()
		}
	})
	c.OnScraped(releaseSlot)
	c.OnError(func(r *colly.Response, _ error) { releaseSlot(r) })
}

// sums returns the sums over every sitemap report; a nil feature has
// none.
func (s *sitemapFeature) sums() SitemapTotals {
	var t SitemapTotals
	if s != nil {
		s.mu.Lock()
		t = s.totals
		t.Filtered, t.Rejected = maps.Clone(t.Filtered), maps.Clone(t.Rejected)
		s.mu.Unlock()
	}
	if t.Filtered == nil {
		t.Filtered, t.Rejected = map[string]int64{}, map[string]int64{}
	}
	return t
}

// tally sums, logs and passes on one report.
func (s *sitemapFeature) tally(r sitemap.Report) {
	s.mu.Lock()
	t := &s.totals
	if t.Filtered == nil {
		t.Filtered, t.Rejected = map[string]int64{}, map[string]int64{}
	}
	t.Sitemaps++
	if r.Err != nil {
		t.Failed++
	}
	t.Found += int64(r.Found)
	t.Handed += int64(r.Handed)
	t.Children += int64(r.Children)
	for k, v := range r.Filtered {
		t.Filtered[k] += int64(v)
	}
	for k, v := range r.Rejected {
		t.Rejected[k] += int64(v)
	}
	s.mu.Unlock()
	if r.Err != nil {
		s.p.log.Warn("robots: sitemap not read to its end", slog.String("sitemap", r.URL), slog.String("scope", r.Scope),
			slog.Int("handed", r.Handed), slog.String("error", r.Err.Error()))
	} else {
		s.p.log.Info("robots: sitemap read", slog.String("sitemap", r.URL), slog.String("format", r.Format.String()),
			slog.Int("found", r.Found), slog.Int("handed", r.Handed), slog.Int("children", r.Children))
	}
	if fn := s.cfg.settings.OnReport; fn != nil {
		fn(r)
	}
}

// walk walks the sitemaps of the authority of f's policy into f's
// collector, or into q, the frontier the collector's Colly queue runs its
// requests from (AttachFrontier), the first time its policy is seen by a
// request of it: see WithSitemaps. It is a stage of the plugin's OnRequest
// hook, which marks a request holding a place in a walk's window; a nil
// feature (no WithSitemaps) walks nothing.
func (s *sitemapFeature) walk(f *flow, q queueStorage) {
	if s == nil {
		return
	}
	f.windowed = slotOf(f.r) != nil
	p, c, pol, sc := s.p, f.c, f.pol, s.cfg
	if temporary(pol.Action()) {
		return // robots.txt unreachable for now: a later request walks it
	}
	a := pol.Authority()
	if _, done := s.walked.LoadOrStore(a, struct{}{}); done {
		return
	}
	roots := pol.Sitemaps()
	for _, w := range pol.SitemapWarnings() {
		// A relative line resolved, or a repeated one, loses nothing: that is
		// news, not a warning (policy.Policy.SitemapWarnings' wording).
		level := slog.LevelWarn
		if strings.Contains(w, " resolved to ") || strings.Contains(w, " repeats line ") {
			level = slog.LevelInfo
		}
		p.log.Log(context.Background(), level, "robots: robots.txt Sitemap line: "+w, slog.String("authority", a))
	}
	for _, x := range sc.extra[a] {
		if !slices.Contains(roots, x) {
			roots = append(roots, x)
		}
	}
	if len(roots) == 0 {
		return
	}
	ctx := f.ctx
	cfg := sc.settings
	cfg.Client = &http.Client{Transport: &sitemapTransport{s}}
	cfg.UserAgent = p.resolver().UserAgent()
	cfg.Allow = p.allowSitemap
	cfg.OnReport = s.tally
	// The host's gate holds the host while a response is open: the
	// sitemap is read whole (to a temporary file past 1 MiB) before its
	// pages, which pass that gate, are handed over.
	cfg.Spool = true
	var win *window
	if c.Async && q == nil {
		size := s.window
		if size <= 0 {
			size = sitemapWindow
		}
		delay, _ := p.delayOf(pol)
		win = newWindow(size, sitemapHoldBase+time.Duration(size)*delay, s.clock, p.log)
	}
	sitemap.NewWalker(cfg).Walk(ctx, a, roots, func(pg sitemap.Page) error {
		cctx := colly.NewContext()
		cctx.Put(CtxSitemap, pg.Sitemap)
		cctx.Put(CtxLastMod, pg.LastMod)
		if q != nil {
			return queuePage(p.log, q, pg.Loc, cctx)
		}
		var sl *slot
		if win != nil {
			var err error
			if sl, err = win.acquire(ctx, pg.Loc); err != nil {
				return err
			}
			cctx.Put(ctxSlot, sl)
		}
		err := c.Request(http.MethodGet, pg.Loc, nil, cctx, nil)
		if reason, refused := visitRefusal(err, c.Async); refused {
			sl.release()
			if reason == reasonCollyOther {
				p.log.Debug("robots: Colly refused a sitemap's page URL", slog.String("url", pg.Loc), slog.String("error", err.Error()))
			}
			return errors.New(reason)
		}
		return nil
	})
}

// queueStorage is what the walk needs of a frontier (a Colly
// queue.Storage) to queue a page.
type queueStorage interface{ AddRequest([]byte) error }

// queuePage queues the page at loc, with its context, in q, the frontier a
// Colly queue runs c's requests from (AttachFrontier): the page then waits
// its turn there like any queued request, and the frontier's seen set
// refuses it if it was queued before. The error's text is the reason it
// was filtered out.
func queuePage(log *slog.Logger, q queueStorage, loc string, ctx *colly.Context) error {
	u, err := url.Parse(loc)
	if err != nil {
		return errors.New(reasonCollyOther)
	}
	r := &colly.Request{URL: u, Method: http.MethodGet, Depth: slotDepth, Ctx: ctx}
	b, err := r.Marshal()
	if err == nil {
		err = q.AddRequest(b)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, frontier.ErrSeen):
		return errors.New("already queued")
	case errors.Is(err, frontier.ErrFull):
		return errors.New("queue full")
	}
	log.Debug("robots: the frontier refused a sitemap's page URL", slog.String("url", loc), slog.String("error", err.Error()))
	return errors.New("refused by the frontier")
}

// allowSitemap is the walker's robots.txt check of a sitemap URL.
func (p *core) allowSitemap(ctx context.Context, u *url.URL) (bool, string) {
	v, err := p.resolver().Check(ctx, u)
	if err != nil {
		return false, err.Error()
	}
	return v.Allowed, v.String()
}

// The Async window of handed-over requests (see WithSitemaps).
const (
	sitemapWindow   = 64          // requests in flight per walk
	sitemapHoldBase = time.Minute // plus sitemapWindow times the host's delay
)

// slotDepth is the colly.Request.Depth of a request the walk hands over
// (c.Request makes depth 1). Requests made with Request.Visit from a
// sitemap's page share its Context, and so its slot, at depth 2 and more:
// only the handed-over request (or Colly's retries of it, same depth)
// releases the slot. A redirect keeps the request's depth.
const slotDepth = 1

// window bounds the handed-over requests of one Async walk in flight.
// A slot is taken before a request is handed over and released at its
// OnScraped or OnError. A request that reaches neither (a user callback
// aborted it) is reclaimed once it has been out of the plugin's OnRequest
// hook for hold: every time the plugin's hook ends for a request, its slot
// is armed to expire hold later. Safe for concurrent use.
type window struct {
	size  int
	hold  time.Duration
	clock hostlimit.Clock // nil: the system clock
	log   *slog.Logger
	freed chan struct{} // signalled (non-blocking) when a slot is released

	mu    sync.Mutex
	taken map[*slot]struct{}
}

// slot is one handed-over request's place in a window.
type slot struct {
	w       *window
	url     string
	expires time.Time // zero until the plugin's hook ended for the request; guarded by w.mu
}

func newWindow(size int, hold time.Duration, clock hostlimit.Clock, log *slog.Logger) *window {
	return &window{size: size, hold: hold, clock: clock, log: log, freed: make(chan struct{}, 1), taken: map[*slot]struct{}{}}
}

func (w *window) now() time.Time {
	if w.clock != nil {
		return w.clock.Now()
	}
	return time.Now()
}

func (w *window) timer(d time.Duration) (<-chan time.Time, func()) {
	if w.clock != nil {
		return w.clock.After(d)
	}
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// acquire takes a slot for the request of u, waiting for one to be
// released or reclaimed; it fails when ctx ends.
func (w *window) acquire(ctx context.Context, u string) (*slot, error) {
	for {
		w.mu.Lock()
		now := w.now()
		var next time.Time // the earliest expiry to come
		for s := range w.taken {
			switch {
			case s.expires.IsZero():
			case !now.Before(s.expires):
				delete(w.taken, s)
				w.log.Debug("robots: a sitemap page's request reached neither OnScraped nor OnError (aborted by a callback?); its place in the window is taken back",
					slog.String("url", s.url), slog.Duration("hold", w.hold))
			case next.IsZero() || s.expires.Before(next):
				next = s.expires
			}
		}
		if len(w.taken) < w.size {
			s := &slot{w: w, url: u}
			w.taken[s] = struct{}{}
			w.mu.Unlock()
			return s, nil
		}
		w.mu.Unlock()
		var timer <-chan time.Time
		stop := func() {}
		if !next.IsZero() {
			timer, stop = w.timer(next.Sub(now))
		}
		select {
		case <-w.freed:
		case <-timer:
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		}
		stop()
	}
}

// arm starts the slot's hold time; a released slot is left alone.
func (s *slot) arm() {
	w := s.w
	w.mu.Lock()
	if _, ok := w.taken[s]; ok {
		s.expires = w.now().Add(w.hold)
	}
	w.mu.Unlock()
}

// release gives the slot back; a nil slot, or one released or reclaimed
// already, does nothing.
func (s *slot) release() {
	if s == nil {
		return
	}
	w := s.w
	w.mu.Lock()
	_, ok := w.taken[s]
	delete(w.taken, s)
	w.mu.Unlock()
	if ok {
		select {
		case w.freed <- struct{}{}:
		default:
		}
	}
}

// slotOf returns the window slot r holds when r is a request the walk
// handed over (see slotDepth), else nil.
func slotOf(r *colly.Request) *slot {
	if r == nil || r.Ctx == nil || r.Depth != slotDepth {
		return nil
	}
	s, _ := r.Ctx.GetAny(ctxSlot).(*slot)
	return s
}

// releaseSlot releases the slot of the request of r, if it holds one: the
// OnScraped and OnError hooks.
func releaseSlot(r *colly.Response) {
	if r != nil {
		slotOf(r.Request).release()
	}
}

// sitemapTransport is the transport of sitemap fetches: the host's turn is
// waited for first, as OnRequest does for a page, telling the walker's
// document timeout to stop meanwhile (gatewait), but never a 429/5xx pause
// longer than WithDeferWait (the fetch is then stopped as Deferred, in the
// request-less form: Block.Sitemap); then the collectors' transport checks
// robots.txt and passes the gate, at once, and sends the document once
// (the walker retries it: sitemap.Config.Retries).
type sitemapTransport struct{ s *sitemapFeature }

func (t *sitemapTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p := t.s.p
	req = req.WithContext(context.WithValue(req.Context(), sitemapFetch{}, true))
	if pol, err := p.resolver().Policy(req.Context(), req.URL); err == nil {
		if d, skip := p.delayOf(pol); !skip {
			hook := gatewait.From(req.Context())
			if hook != nil {
				hook.Pause()
			}
			_, err = p.lim.WaitMax(req.Context(), pol.Authority(), d, p.pauseBound())
			if hook != nil {
				hook.Resume()
			}
			if err != nil {
				closeBody(req)
				if b, ok := pausedStop(req, err, ""); ok {
					return nil, t.s.h.hold(p, req, b, pol, nil, ticket{})
				}
				return nil, fmt.Errorf("robots: gave up waiting for the host's turn: %w", err)
			}
		}
	}
	return t.s.pages.RoundTrip(req)
}
