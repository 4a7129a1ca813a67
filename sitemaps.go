package robots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/internal/gatewait"
	"github.com/politecrawl/robots/policy"
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
	// sitemap gave none (or none readable).
	CtxLastMod = "politecrawl.robots.lastmod"
	// ctxSlot holds the in-flight slot of an Async collector's request.
	ctxSlot = "politecrawl.robots.sitemap-slot"
)

// Defaults of the sitemap options.
const (
	// DefaultSitemapWindow is how many page URLs handed to an Async
	// collector may be in flight (handed over and not yet scraped or
	// failed) at once: the walk waits for one to end before handing over
	// the next.
	DefaultSitemapWindow = 64
	// DefaultSitemapReports is how many reports [Plugin.Sitemaps] keeps
	// (the most recent); [Plugin.SitemapTotals] counts them all.
	DefaultSitemapReports = 10_000
)

// SitemapOption configures [WithSitemaps].
type SitemapOption func(*sitemapConfig)

type sitemapConfig struct {
	walk   sitemap.Config      // Since, Keep, MaxURLs, StrictDirectory, limits
	extra  map[string][]string // authority → extra sitemap URLs
	bad    []string            // extra URLs that are no http(s) URL
	window int                 // in-flight page URLs of an Async collector
}

// SitemapsSince follows only what was modified at or after t: page URLs
// and index children whose lastmod is known and earlier are left out
// (counted under [sitemap.ReasonNotModified]); an unknown lastmod passes.
func SitemapsSince(t time.Time) SitemapOption {
	return func(c *sitemapConfig) { c.walk.Since = t }
}

// SitemapFilter hands over only the page URLs for which keep returns true
// (the others are counted under [sitemap.ReasonPredicate]). keep is called
// from the walk's goroutine, one page at a time per authority, and may be
// called for several authorities at once.
func SitemapFilter(keep func(sitemap.Page) bool) SitemapOption {
	return func(c *sitemapConfig) { c.walk.Keep = keep }
}

// SitemapMaxURLs hands over at most n page URLs per authority (0: no cap).
// Once n were handed over, the walk of that authority ends (see
// [sitemap.Config].MaxURLs).
func SitemapMaxURLs(n int) SitemapOption {
	return func(c *sitemapConfig) { c.walk.MaxURLs = max(n, 0) }
}

// SitemapURLs adds sitemaps to start from, besides those the robots.txt of
// their authority announces. Each is walked, with the announced ones, the
// first time its authority's policy is loaded (so Visit a URL of that
// authority to start), scoped to its own host. A URL that is not http(s)
// is logged when the plugin is made and left out.
func SitemapURLs(urls ...string) SitemapOption {
	return func(c *sitemapConfig) {
		for _, s := range urls {
			u, err := url.Parse(s)
			if err != nil {
				c.bad = append(c.bad, s)
				continue
			}
			a, err := policy.Authority(u)
			if err != nil {
				c.bad = append(c.bad, s)
				continue
			}
			if c.extra == nil {
				c.extra = map[string][]string{}
			}
			c.extra[a] = append(c.extra[a], u.String())
		}
	}
}

// SitemapStrictDirectory applies the sitemaps.org rule that a sitemap lists
// only URLs under its own directory (see [sitemap.Config].StrictDirectory).
// Without it, the scope is the host whose robots.txt announced the sitemap.
func SitemapStrictDirectory() SitemapOption {
	return func(c *sitemapConfig) { c.walk.StrictDirectory = true }
}

// SitemapLimits sets the walker's bounds: per document (decompressed bytes,
// entries, ...; zero fields keep the reader's defaults), index nesting depth
// (0: [sitemap.DefaultMaxIndexDepth]) and documents per authority (0:
// [sitemap.DefaultMaxSitemaps]).
func SitemapLimits(doc sitemap.Limits, maxIndexDepth, maxSitemaps int) SitemapOption {
	return func(c *sitemapConfig) {
		c.walk.Limits, c.walk.MaxIndexDepth, c.walk.MaxSitemaps = doc, maxIndexDepth, maxSitemaps
	}
}

// SitemapWindow sets how many page URLs handed to an Async collector may be
// in flight at once (default [DefaultSitemapWindow]; n < 1 keeps it).
func SitemapWindow(n int) SitemapOption {
	return func(c *sitemapConfig) {
		if n >= 1 {
			c.window = n
		}
	}
}

// WithSitemaps makes the plugin feed sitemap URLs back into the collector.
// The first time an authority's policy is loaded (by the first request to
// it; a robots.txt that is temporarily unreachable waits for a later
// request), the sitemaps its robots.txt announces ([policy.Policy.Sitemaps]:
// resolved against the robots.txt URL, each once) and those given with
// [SitemapURLs] are walked ([sitemap.Walker]: streaming, gzip, indexes,
// limits, scope), and each page URL is handed to the collector that made
// the request, with c.Request("GET", url, nil, ctx, nil), as Visit would:
// AllowedDomains, URL filters, MaxDepth and the visited set apply, and a
// URL they refuse is counted as filtered with Colly's reason ("already
// visited", "forbidden domain", ...). The request's Context holds
// [CtxSitemap] and [CtxLastMod]. With no options, every announced sitemap
// is followed.
//
// Sitemaps are fetched through the plugin's transport, with the crawler's
// User-Agent: checked against robots.txt (a disallowed sitemap is not
// fetched, and is reported) and spaced by the host's gate like pages;
// 5xx, 429 and network errors are retried a few times, honouring
// Retry-After. Each document is read whole before its page URLs are handed
// over (up to 1 MiB in memory, the rest in a temporary file, at most the
// reader's MaxBytes): the host's gate holds the host while a response is
// open, and the pages wait at that gate.
//
// c.Wait() does not return before every page URL was handed over. In sync
// mode the walk runs in the OnRequest hook of the request that loaded the
// policy, before that request goes on: its Visit returns after the
// sitemap's pages were visited, and callbacks stay on the caller's
// goroutine. In Async mode it runs on a goroutine of its own, holding a
// count of the collector's wait group (read from Colly's unexported field;
// if a Colly version changes that layout, the plugin logs a warning and
// walks in the OnRequest hook as in sync mode); at most [SitemapWindow]
// handed-over requests are in flight at once, each releasing its slot at
// its own OnScraped or OnError (not at those of the pages reached by links
// from it, which share its Context: they have a greater Depth). A request
// that a user callback aborts silently in OnRequest reaches neither: its
// slot is released when its Context is garbage collected; the walk asks for
// a collection when the window stays full much longer than the recent pace
// of releases explains (at least 100 ms, with a backoff), and at most once a
// minute otherwise, so no slot is lost and a crawl spaced by a crawl delay
// forces almost no collection.
//
// Every sitemap document gets a [sitemap.Report] (found, handed over,
// filtered and rejected by reason, its error): passed to [WithOnSitemap],
// kept by [Plugin.Sitemaps] and summed by [Plugin.SitemapTotals]; one that
// failed is also logged as a warning. Each authority is walked once per
// plugin, into the collector whose request loaded it (a clone or a second
// collector on the same plugin does not walk it again).
func WithSitemaps(opts ...SitemapOption) Option {
	return func(c *config) {
		sc := &sitemapConfig{window: DefaultSitemapWindow}
		for _, o := range opts {
			o(sc)
		}
		for _, b := range sc.bad {
			c.problem("SitemapURLs(%q): not an http(s) URL; left out", b)
		}
		c.sitemaps = sc
	}
}

// WithOnSitemap sets a function called with the report of every sitemap
// document the plugin walked (or refused to fetch), as soon as it is
// final. It is called from the walk's goroutine and must be safe for
// concurrent use.
func WithOnSitemap(fn func(sitemap.Report)) Option {
	return func(c *config) { c.onSitemap = fn }
}

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

// sitemapState is the plugin's sitemap bookkeeping.
type sitemapState struct {
	walked sync.Map // authority → struct{}: walked, or being walked
	active atomic.Int64

	mu      sync.Mutex
	reports []sitemap.Report // ring of the most recent
	next    int
	totals  SitemapTotals
	warned  atomic.Bool
	gcFreed atomic.Int64 // slots released by the cleanup of a collected Context
}

// Sitemaps returns the reports of the most recent sitemap documents (up to
// [DefaultSitemapReports]), oldest first.
func (p *Plugin) Sitemaps() []sitemap.Report {
	s := &p.sm
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reports) < DefaultSitemapReports {
		return append([]sitemap.Report(nil), s.reports...)
	}
	return append(append([]sitemap.Report(nil), s.reports[s.next:]...), s.reports[:s.next]...)
}

// SitemapTotals returns the sums over every sitemap report.
func (p *Plugin) SitemapTotals() SitemapTotals {
	s := &p.sm
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.totals
	t.Filtered, t.Rejected = map[string]int64{}, map[string]int64{}
	for k, v := range s.totals.Filtered {
		t.Filtered[k] = v
	}
	for k, v := range s.totals.Rejected {
		t.Rejected[k] = v
	}
	return t
}

// SitemapsWalking returns how many authorities' sitemaps are being walked.
func (p *Plugin) SitemapsWalking() int { return int(p.sm.active.Load()) }

// recordSitemap keeps, sums, logs and passes on one report.
func (p *Plugin) recordSitemap(r sitemap.Report) {
	s := &p.sm
	s.mu.Lock()
	if len(s.reports) < DefaultSitemapReports {
		s.reports = append(s.reports, r)
	} else {
		s.reports[s.next] = r
		s.next = (s.next + 1) % DefaultSitemapReports
	}
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
		p.log.Warn("robots: sitemap not read to its end", slog.String("sitemap", r.URL), slog.String("scope", r.Scope),
			slog.Int("handed", r.Handed), slog.String("error", r.Err.Error()))
	} else {
		p.log.Info("robots: sitemap read", slog.String("sitemap", r.URL), slog.String("format", r.Format.String()),
			slog.Int("found", r.Found), slog.Int("handed", r.Handed), slog.Int("children", r.Children))
	}
	if fn := p.cfg.onSitemap; fn != nil {
		fn(r)
	}
}

// startSitemaps walks the sitemaps of pol's authority the first time its
// policy is seen by a request of c (r): see WithSitemaps.
func (p *Plugin) startSitemaps(c *colly.Collector, pol *policy.Policy) {
	sc := p.cfg.sitemaps
	if sc == nil {
		return
	}
	switch pol.Action() {
	case dialect.ActionDisallowAll, dialect.ActionExcludeHost:
		return // robots.txt unreachable for now: a later request walks it
	}
	a := pol.Authority()
	if _, done := p.sm.walked.LoadOrStore(a, struct{}{}); done {
		return
	}
	roots := pol.Sitemaps()
	for _, w := range pol.SitemapWarnings() {
		p.log.Warn("robots: robots.txt Sitemap line: "+w, slog.String("authority", a))
	}
	for _, x := range sc.extra[a] {
		if !slices.Contains(roots, x) {
			roots = append(roots, x)
		}
	}
	if len(roots) == 0 {
		return
	}
	delay, _ := p.delayOf(pol)
	if c.Async {
		if wg := collyWaitGroup(c); wg != nil {
			wg.Add(1) // before OnRequest returns: Wait cannot slip in between
			p.sm.active.Add(1)
			go func() {
				defer wg.Done()
				defer p.sm.active.Add(-1)
				p.walkSitemaps(c, a, roots, true, delay)
			}()
			return
		}
		if p.sm.warned.CompareAndSwap(false, true) {
			p.log.Warn("robots: cannot read the collector's wait group (a Colly version this plugin does not know): sitemaps are walked in the OnRequest hook of the request that found them, which waits meanwhile")
		}
	}
	p.sm.active.Add(1)
	defer p.sm.active.Add(-1)
	p.walkSitemaps(c, a, roots, c.Async, delay)
}

// walkSitemaps walks the sitemaps of authority a and hands their page URLs
// to c; window bounds the requests in flight (Async); delay is a's spacing
// of requests.
func (p *Plugin) walkSitemaps(c *colly.Collector, a string, roots []string, window bool, delay time.Duration) {
	sc := p.cfg.sitemaps
	ctx := c.Context
	if ctx == nil {
		ctx = context.Background()
	}
	cfg := sc.walk
	res := p.resolver()
	cfg.Client = &http.Client{Transport: &sitemapTransport{p}}
	cfg.UserAgent = res.UserAgent()
	cfg.Allow = p.allowSitemap
	cfg.OnReport = p.recordSitemap
	// The host's gate holds the host while a response is open: the
	// sitemap is read whole (to a temporary file past 1 MiB) before its
	// pages, which pass that gate, are handed over.
	cfg.Spool = true
	var win *slots
	if window {
		win = newSlots(sc.window, delay, &p.sm.gcFreed)
	}
	sitemap.NewWalker(cfg).Walk(ctx, a, roots, func(pg sitemap.Page) error {
		cctx := colly.NewContext()
		cctx.Put(CtxSitemap, pg.Sitemap)
		cctx.Put(CtxLastMod, pg.LastMod)
		var s *slot
		if win != nil {
			var err error
			if s, err = win.acquire(ctx); err != nil {
				return err
			}
			cctx.Put(ctxSlot, s)
			// The fallback for a request that never reaches OnScraped or
			// OnError: the slot goes back when its Context is unreachable.
			runtime.AddCleanup(cctx, func(s *slot) { s.release(false) }, s)
		}
		err := c.Request(http.MethodGet, pg.Loc, nil, cctx, nil)
		if reason, refused := visitRefusal(err, c.Async); refused {
			s.release(true)
			if reason == reasonCollyOther {
				p.log.Debug("robots: Colly refused a sitemap's page URL", slog.String("url", pg.Loc), slog.String("error", err.Error()))
			}
			return errors.New(reason)
		}
		return nil
	})
}

// sitemapTransport is the transport of sitemap fetches: the host's turn is
// waited for first, as OnRequest does for a page, telling the walker's
// document timeout to stop meanwhile (gatewait); then the collectors'
// transport checks robots.txt and passes the gate, at once.
type sitemapTransport struct{ p *Plugin }

func (t *sitemapTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p := t.p
	if pol, err := p.resolver().Policy(req.Context(), req.URL); err == nil {
		if d, skip := p.delayOf(pol); !skip {
			hook := gatewait.From(req.Context())
			if hook != nil {
				hook.Pause()
			}
			err = p.lim.Wait(req.Context(), pol.Authority(), d)
			if hook != nil {
				hook.Resume()
			}
			if err != nil {
				closeBody(req)
				return nil, fmt.Errorf("robots: gave up waiting for the host's turn: %w", err)
			}
		}
	}
	return p.coll.RoundTrip(req)
}

// allowSitemap is the walker's robots.txt check of a sitemap URL.
func (p *Plugin) allowSitemap(ctx context.Context, u *url.URL) (bool, string) {
	v, err := p.resolver().Check(ctx, u)
	if err != nil {
		return false, err.Error()
	}
	return v.Allowed, v.String()
}

// visitRefusals are the errors with which Colly refuses a request before
// making it, and the reasons the reports count them under.
var visitRefusals = []struct {
	err    error
	reason string
}{
	{colly.ErrForbiddenDomain, "forbidden domain"},
	{colly.ErrForbiddenURL, "forbidden URL"},
	{colly.ErrNoURLFiltersMatch, "no URL filter matches"},
	{colly.ErrMaxDepth, "max depth"},
	{colly.ErrMaxRequests, "max requests"},
	{colly.ErrRobotsTxtBlocked, "blocked by Colly's robots.txt check"},
	{colly.ErrMissingURL, "missing URL"},
	{colly.ErrQueueFull, "queue full"},
}

// reasonCollyOther is the reason a refusal by Colly that is none of
// visitRefusals is counted under (a URL Colly's parser refuses, an error of
// the collector's storage, ...): one key, whatever the error's text, which
// may contain the URL. Each such error is logged (debug level).
const reasonCollyOther = "refused by Colly (other error)"

// visitRefusal says whether err, returned by c.Request, means Colly refused
// the URL before making a request, and why: one of a fixed set of reasons,
// never the error's text. In sync mode Request also returns the error of
// the request it made (a 404, a robots.txt stop): that URL was handed over.
func visitRefusal(err error, async bool) (string, bool) {
	if err == nil {
		return "", false
	}
	var av *colly.AlreadyVisitedError
	if errors.As(err, &av) {
		return "already visited", true
	}
	for _, v := range visitRefusals {
		if errors.Is(err, v.err) {
			return v.reason, true
		}
	}
	if async {
		// An Async Request returns before the request is made: any error
		// is a refusal.
		return reasonCollyOther, true
	}
	return "", false
}

// slots bounds the page URLs in flight in an Async collector.
//
// A slot is released at the OnScraped or OnError of the request it was
// taken for, or, for a request that reached neither (a user callback
// aborted it in OnRequest), when its Context is garbage collected. The
// walk asks for a collection (runtime.GC) only when the window is full and
// no slot was released for much longer than the recent pace of releases
// and the host's delay explain: slotGCPace times the larger (at least
// slotGCMin; before the first release, at least slotGCFirst), times a
// backoff that doubles after a collection that freed nothing; and at most
// once per slotGCMax while it waits otherwise. A crawl whose pages are
// spaced by a crawl delay (the window full nearly always) forces no
// collection per page.
type slots struct {
	sem   chan struct{}
	freed *atomic.Int64 // slots released by the garbage collector's cleanup

	mu          sync.Mutex
	lastRelease time.Time     // of the last slot released at OnScraped/OnError (at first: newSlots)
	pace        time.Duration // moving average of the time between those releases; 0: none yet
	lastGC      time.Time     // of the last collection asked for
	freedAtGC   int64         // freed at that time
	backoff     time.Duration // multiplies the wait before a collection: 1, 2, 4, ...
	delay       time.Duration // the host's spacing of requests: pages end at most that often
	filled      bool          // the window was full once
}

// slot is one page URL's place in the window. It holds no reference to the
// request or its Context, so that the Context can be collected.
type slot struct {
	w    *slots
	done atomic.Bool
}

// slotDepth is the colly.Request.Depth of a request the walk hands over
// (c.Request makes depth 1). Requests made with Request.Visit from a
// sitemap's page share its Context, and so its slot, at depth 2 and more:
// only the handed-over request (or Colly's retries of it, same depth)
// releases the slot. A redirect keeps the request's depth (Colly changes
// its URL).
const slotDepth = 1

// The bounds of the wait before the walk asks for a collection.
const (
	slotGCMin   = 100 * time.Millisecond
	slotGCFirst = time.Second // before the first release
	slotGCMax   = time.Minute
	slotGCPace  = 8 // times the recent interval between releases
)

// newSlots returns a window of n slots for pages on a host whose requests
// are spaced by delay; freed counts the slots the cleanup releases.
func newSlots(n int, delay time.Duration, freed *atomic.Int64) *slots {
	now := time.Now()
	return &slots{sem: make(chan struct{}, n), freed: freed, lastRelease: now, lastGC: now, backoff: 1, delay: max(delay, 0)}
}

// gcDue returns how long from now the walk waits before it asks for a
// collection (≤ 0: now).
func (w *slots) gcDue(now time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	base := max(slotGCFirst, slotGCPace*w.delay) // no release yet: the pace is unknown
	if w.pace > 0 {
		base = max(slotGCMin, slotGCPace*max(w.pace, w.delay))
	}
	idle := min(base*w.backoff, slotGCMax)
	return min(w.lastRelease.Add(idle).Sub(now), w.lastGC.Add(slotGCMax).Sub(now))
}

// collect asks for a collection and adjusts the backoff: doubled when the
// previous one freed nothing, back to 1 when it did.
func (w *slots) collect(now time.Time) {
	w.mu.Lock()
	if f := w.freed.Load(); f > w.freedAtGC {
		w.backoff = 1
	} else if now.Sub(w.lastGC) < slotGCMax {
		w.backoff = min(2*w.backoff, slotGCMax/slotGCMin)
	}
	w.freedAtGC = w.freed.Load()
	w.lastGC = now
	w.mu.Unlock()
	runtime.GC()
}

func (w *slots) acquire(ctx context.Context) (*slot, error) {
	select {
	case w.sem <- struct{}{}:
		return &slot{w: w}, nil
	default:
	}
	w.mu.Lock()
	if !w.filled { // the wait for a release starts now
		w.filled = true
		w.lastRelease = time.Now()
	}
	w.mu.Unlock()
	t := time.NewTimer(max(w.gcDue(time.Now()), time.Millisecond))
	defer t.Stop()
	for {
		select {
		case w.sem <- struct{}{}:
			return &slot{w: w}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		now := time.Now()
		if d := w.gcDue(now); d > 0 {
			t.Reset(d) // a slot was released meanwhile: the wait starts again
			continue
		}
		w.collect(now)
		// The cleanups run after the collection, on their own goroutine.
		t.Reset(max(w.gcDue(time.Now()), slotGCMin))
	}
}

// release gives the slot back, once; a nil slot does nothing. normal says
// it is released at the request's end (not by the cleanup).
func (s *slot) release(normal bool) {
	if s == nil || !s.done.CompareAndSwap(false, true) {
		return
	}
	w := s.w
	if normal {
		w.mu.Lock()
		now := time.Now()
		if d := now.Sub(w.lastRelease); w.pace == 0 {
			w.pace = max(d, time.Nanosecond)
		} else {
			w.pace += (d - w.pace) / 8
		}
		w.pace = min(w.pace, slotGCMax)
		w.lastRelease = now
		w.mu.Unlock()
	} else {
		w.freed.Add(1)
	}
	<-w.sem
}

// releaseSlot releases the slot the request of r holds, if any, when it is
// the request the walk handed over (see slotDepth): the OnScraped and
// OnError hooks.
func releaseSlot(r *colly.Response) {
	if r == nil || r.Request == nil || r.Request.Ctx == nil || r.Request.Depth != slotDepth {
		return
	}
	if s, ok := r.Request.Ctx.GetAny(ctxSlot).(*slot); ok {
		s.release(true)
	}
}

// Colly keeps a collector's wait group unexported. To make c.Wait() wait
// for an Async walk, the plugin adds to it; the offset is found once by
// reflection, and if Colly's layout changes so that it cannot be,
// waitGroupOffset.ok is false and the plugin walks in OnRequest instead.
var waitGroupOffset = func() (o struct {
	off uintptr
	ok  bool
}) {
	f, ok := reflect.TypeOf(colly.Collector{}).FieldByName("wg")
	if !ok || f.Type != reflect.TypeOf((*sync.WaitGroup)(nil)) {
		return o
	}
	o.off, o.ok = f.Offset, true
	return o
}()

// noWaitGroup makes collyWaitGroup fail, as with a Colly whose layout is
// unknown (tests of the fallback).
var noWaitGroup bool

// collyWaitGroup returns c's wait group, or nil when it cannot be read.
func collyWaitGroup(c *colly.Collector) *sync.WaitGroup {
	if !waitGroupOffset.ok || c == nil || noWaitGroup {
		return nil
	}
	return *(**sync.WaitGroup)(unsafe.Add(unsafe.Pointer(c), waitGroupOffset.off))
}
