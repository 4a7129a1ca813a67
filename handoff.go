package robots

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/policy"
)

// The hand-off: how what the OnRequest hook decides reaches the
// transport, and how a stop at the transport reaches the OnError hook with
// its Colly request.
//
// Colly builds the *http.Request, with the collector's Context, before it
// runs OnRequest on the *colly.Request: no context value set in OnRequest
// reaches the transport. Both see the request's header map, which net/http
// also copies to each redirect hop. So the hand-off is a ticket in one
// header, ticketHeader, naming the collector (its slot's number) and the
// Colly request's ID, and typed entries kept under the ticket:
//
//   - A request stopped in OnRequest (stop) is reported there; its
//     *BlockedError is kept in stops, and the transport fails the request
//     with it (stopOf), so that Colly calls OnError with it and a sync
//     Visit returns it. If a later callback aborts the request, the entry
//     goes when the Colly request is collected.
//   - A request let through (pass) carries its ticket, with the authority
//     it was decided for: the transport sends it through the host's gate
//     without deciding it again. A stop there (a redirect hop; a context
//     that ended at the gate; a host paused past WithDeferWait) is kept in
//     held (hold), and the OnError hook (onError), which Colly calls for
//     every failed round trip whatever error net/http gives it, reports it
//     with its Colly request.
//   - A request handed back as Deferred carries in its ticket the answers
//     asking to back off it had, to its next round (RetryDeferred).
//
// A request without a ticket (of a clone the plugin is not attached to, or
// a sitemap document) is reported at the transport, which removes the
// header before anything is sent.
const ticketHeader = "X-Politecrawl-Robots-Ticket"

// handoff carries stops between the OnRequest hook, the transport and the
// OnError hook (see ticketHeader).
type handoff struct {
	slots atomic.Pointer[[]*collectorSlot] // the attached collectors', by number - 1; replaced, never changed
	stops sync.Map                         // ticket → *BlockedError: decided in OnRequest, for the transport
	held  sync.Map                         // ticket → *BlockedError: decided at the transport, for OnError
}

// collectorSlot is what the transport knows of one attached collector.
type collectorSlot struct {
	name   string                 // its number, in its tickets
	ctx    atomic.Pointer[ctxBox] // the collector's Context at its latest OnRequest (see)
	visits *visits                // its visited store's front (nil if unreadable)
}

// ticket names a request of an attached collector: its slot and its Colly
// request's ID; it carries the answers asking to back off the request has
// had in its earlier rounds and, on a request let through, the authority
// it was decided for. A ticket without a slot names no request.
type ticket struct {
	cs        *collectorSlot
	id        uint32
	answers   int
	authority string
}

// key is the ticket without what it carries: what entries are kept under.
func (t ticket) key() ticket { return ticket{cs: t.cs, id: t.id} }

// add returns a new collector's slot; the caller holds the plugin's lock.
func (h *handoff) add() *collectorSlot {
	var list []*collectorSlot
	if l := h.slots.Load(); l != nil {
		list = *l
	}
	cs := &collectorSlot{name: strconv.Itoa(len(list) + 1)}
	list = append(list[:len(list):len(list)], cs)
	h.slots.Store(&list)
	return cs
}

// write puts t in the header h: "SLOT ID ANSWERS AUTHORITY" (slot 0: no
// slot).
func (t ticket) write(h http.Header) {
	num := "0"
	if t.cs != nil {
		num = t.cs.name
	}
	h[ticketHeader] = []string{num + " " + strconv.FormatUint(uint64(t.id), 10) + " " + strconv.Itoa(t.answers) + " " + t.authority}
}

// ticketIn returns the ticket in hdr, and removes it from h.
func (h *handoff) ticketIn(hdr http.Header) ticket {
	v := hdr[ticketHeader]
	if len(v) == 0 {
		return ticket{}
	}
	delete(hdr, ticketHeader)
	num, rest, _ := strings.Cut(v[0], " ")
	id, rest, _ := strings.Cut(rest, " ")
	answers, authority, _ := strings.Cut(rest, " ")
	t := ticket{authority: authority}
	t.answers, _ = strconv.Atoi(answers)
	n, err := strconv.Atoi(num)
	l := h.slots.Load()
	i, err2 := strconv.ParseUint(id, 10, 32)
	if err == nil && err2 == nil && l != nil && n >= 1 && n <= len(*l) {
		t.cs, t.id = (*l)[n-1], uint32(i)
	}
	return t
}

// start takes the ticket a request brings to the OnRequest hook (a
// request retried after a hand-back) and returns the answers it carries.
func (h *handoff) start(r *colly.Request) int {
	if r.Headers == nil {
		return 0
	}
	return h.ticketIn(*r.Headers).answers
}

// pass gives r, of the collector of cs, let through for authority with
// answers from its earlier rounds, its ticket; cs learns ctx, the
// collector's Context.
func (h *handoff) pass(cs *collectorSlot, r *colly.Request, ctx context.Context, authority string, answers int) {
	if clientOffsets.ok && r.Headers != nil {
		cs.see(ctx)
		ticket{cs, r.ID, answers, authority}.write(*r.Headers)
	}
}

type ctxBox struct{ ctx context.Context }

// see records ctx as the context the collector's requests are built from
// (gateContext). It allocates only when the collector's Context changed.
func (cs *collectorSlot) see(ctx context.Context) {
	if b := cs.ctx.Load(); b != nil && sameContext(b.ctx, ctx) {
		return
	}
	cs.ctx.Store(&ctxBox{ctx})
}

// userContext is the collector's Context at its latest OnRequest, nil
// before the first.
func (cs *collectorSlot) userContext() context.Context {
	if cs == nil {
		return nil
	}
	if b := cs.ctx.Load(); b != nil {
		return b.ctx
	}
	return nil
}

// stop reports b for the Colly request r of the collector of cs and keeps
// its error for the transport, which fails r with it; answers are those of
// r's earlier rounds, which a hand-back carries on.
func (h *handoff) stop(p *core, cs *collectorSlot, r *colly.Request, b Block, pol *policy.Policy, answers int) {
	b.Request = r
	b = p.complete(b, pol, r)
	p.report(b)
	if !clientOffsets.ok || r.Headers == nil {
		r.Abort() // the transport cannot be vouched for: stop silently
		return
	}
	b.Request = nil // filled in by OnError, which has it
	t := ticket{cs: cs, id: r.ID}
	h.stops.Store(t, &BlockedError{Block: b, answers: answers})
	runtime.AddCleanup(r, func(t ticket) { h.stops.Delete(t) }, t)
	t.write(*r.Headers)
	// Colly would answer a GET from its disk cache (colly.CacheDir) without
	// reaching the transport: make it ask, so that the stop reaches OnError.
	r.Headers.Set("Cache-Control", "no-cache")
}

// stopOf returns the error of a request stopped in OnRequest, t its
// ticket, or nil.
func (h *handoff) stopOf(t ticket) *BlockedError {
	if t.authority != "" {
		return nil // let through: a stopped request's ticket names no authority
	}
	if v, ok := h.stops.LoadAndDelete(t.key()); ok {
		return v.(*BlockedError)
	}
	return nil
}

// hold is the error of req, which the transport stops with b (cause: the
// context's error of a cancellation, else nil). A request with a ticket is
// held for the OnError hook, which reports it with its Colly request; any
// other is reported now.
func (h *handoff) hold(p *core, req *http.Request, b Block, pol *policy.Policy, cause error, t ticket) *BlockedError {
	b.Sitemap = isSitemapFetch(req)
	b = p.complete(b, pol, nil)
	be := &BlockedError{Block: b, cause: cause}
	if t.cs != nil {
		h.held.Store(t.key(), be)
		return be
	}
	p.report(b)
	return be
}

// onError is the OnError hook of the collector of slot cs: it reports a
// stop the transport held for it with its Colly request, and completes a
// stop's error with its Colly request. It returns the stop's error, nil
// when err is no stop of the plugin's; the Colly request of one handed
// back as Deferred is to be kept for [Plugin.RetryDeferred] (Colly has
// marked its URL visited), and carries in its ticket the answers asking
// to back off it had, to its next round.
func (h *handoff) onError(p *core, cs *collectorSlot, r *colly.Response, err error) *BlockedError {
	if r == nil || r.Request == nil {
		return nil
	}
	t := ticket{cs: cs, id: r.Request.ID}
	var be *BlockedError
	if v, ok := h.held.LoadAndDelete(t); ok {
		// Let through in OnRequest, stopped at the transport: counted
		// under its stop instead, and reported with its request. The
		// error may not be err's (net/http replaces the error of a
		// request that ran out of Colly's request timeout).
		be = v.(*BlockedError)
		be.Block.Request = r.Request
		p.stats.record(be.Block.Authority, HostStats{Allowed: -1})
		p.report(be.Block)
	} else if !errors.As(err, &be) {
		return nil
	}
	h.stops.Delete(t) // a stop that failed before the transport took it
	if be.Block.Request == nil {
		// The transport does not know the Colly request; Colly gives it
		// here, and a sync Visit returns this same error.
		be.Block.Request = r.Request
	}
	if be.Block.Kind == Deferred && be.answers > 0 && r.Request.Headers != nil {
		ticket{answers: be.answers}.write(*r.Request.Headers)
	}
	return be
}

// complete fills in b's URL, authority and dialect. r is the Colly
// request when known.
func (p *core) complete(b Block, pol *policy.Policy, r *colly.Request) Block {
	if r != nil && b.URL == "" {
		b.URL = r.URL.String()
	}
	if pol != nil {
		b.Authority = pol.Authority()
		b.Dialect = pol.Dialect().Name()
	} else if r != nil {
		b.Authority, _ = policy.Authority(r.URL)
	}
	if b.Dialect == "" {
		if res := p.res.Load(); res != nil {
			b.Dialect = res.Dialect().Name()
		}
	}
	return b
}

// report counts b, logs it and passes it to the OnBlocked callback.
func (p *core) report(b Block) {
	p.stats.record(b.Authority, stopCount(b.Kind))
	p.log.Info("robots: request stopped", slog.String("kind", b.Kind.String()), slog.String("url", b.URL),
		slog.String("dialect", b.Dialect), slog.Bool("redirect", b.Redirect), slog.String("reason", b.Reason))
	p.logStop(b)
	if fn := p.cfg.onBlocked; fn != nil {
		fn(b)
	}
}

// sitemapFetch marks the context of a sitemap document's fetch, which no
// Colly request is behind (isSitemapFetch).
type sitemapFetch struct{}

// isSitemapFetch reports whether req is a sitemap document's fetch.
func isSitemapFetch(req *http.Request) bool { return req.Context().Value(sitemapFetch{}) != nil }

// pausedStop is the Deferred stop of req when err says its host is paused
// past maxPause; prefix says what came before (a 429 answer).
func pausedStop(req *http.Request, err error, prefix string) (Block, bool) {
	var pe *hostlimit.PausedError
	if !errors.As(err, &pe) {
		return Block{}, false
	}
	return Block{Kind: Deferred, URL: req.URL.String(), Redirect: req.Response != nil, Until: pe.Until,
		Reason: hopReason(req, prefix+"the host is paused until "+pe.Until.UTC().Format(time.RFC3339)+", longer than WithDeferWait")}, true
}

// canceledHop is the report of a request whose context ended while the
// transport held it.
func canceledHop(req *http.Request, err error) Block {
	a, _ := policy.Authority(req.URL)
	return Block{Kind: Canceled, URL: req.URL.String(), Authority: a, Redirect: req.Response != nil, Reason: hopReason(req, err.Error())}
}

// hopReason is reason, said of a redirect hop when req is one.
func hopReason(req *http.Request, reason string) string {
	if req.Response == nil {
		return reason
	}
	return "redirect from " + req.Response.Request.URL.Redacted() + " not followed: " + reason
}
