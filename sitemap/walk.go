package sitemap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/politecrawl/robots/internal/authority"
	"github.com/politecrawl/robots/internal/gatewait"
)

// Defaults of the walker's [Config] (each field's doc states its value).
const (
	defaultMaxIndexDepth = 5               // index nesting: a root index is depth 0, its children depth 1, ...
	defaultMaxSitemaps   = 1000            // sitemap documents fetched per walk (per announcing host)
	defaultRetries       = 2               // retries of a 5xx, 429 or network error, after the first attempt
	defaultRetryWait     = time.Second     // first wait before a retry without Retry-After; doubled each time
	defaultMaxRetryAfter = time.Minute     // the longest Retry-After waited out; a longer one ends the document
	defaultMaxRedirects  = 5               // redirect hops followed per fetch
	defaultDocTimeout    = 5 * time.Minute // one document: fetching (retries included) and reading; waiting at a host's gate and the callbacks' time not
)

// Filter and rejection reasons a [Report] counts entries under.
const (
	// Filtered: the caller's choices.
	ReasonNotModified = "not modified since"       // Config.Since, by a known lastmod
	ReasonPredicate   = "refused by the predicate" // Config.Keep said false
	ReasonURLCap      = "URL cap reached"          // Config.MaxURLs page URLs were handed over already
	// Rejected: the sitemap's fault.
	ReasonOtherHost   = "other host"                      // not on the host whose robots.txt announced the sitemap
	ReasonOutsideDir  = "outside the sitemap's directory" // Config.StrictDirectory
	ReasonAlreadyRead = "sitemap already read"            // an index listing itself, A→B→A, or the same child twice
	ReasonSitemapCap  = "sitemaps per host cap"           // Config.MaxSitemaps documents were fetched already
	ReasonTooDeep     = "index nesting too deep"          // Config.MaxIndexDepth
	ReasonNoURL       = "unreadable URL"                  // a loc that does not parse as a URL, or names no usable host
)

// ErrDocTimeout is wrapped by the error of a document that took longer
// than Config.DocTimeout.
var ErrDocTimeout = errors.New("sitemap: document timeout")

// ErrDisallowed is wrapped by the error of a sitemap the walker did not
// fetch because Config.Allow refused it (robots.txt disallows it).
var ErrDisallowed = errors.New("sitemap: disallowed")

// DisallowedError is the error of a sitemap that Config.Allow refused.
type DisallowedError struct {
	URL    string
	Reason string // Allow's reason, e.g. "line 4: Disallow: /private"
}

func (e *DisallowedError) Error() string {
	return "sitemap: " + e.URL + " not fetched: disallowed: " + e.Reason
}
func (e *DisallowedError) Unwrap() error { return ErrDisallowed }

// Config configures a [Walker]. The zero value is usable: every zero field
// means its default.
type Config struct {
	// Client fetches the sitemaps (default http.DefaultClient). The walker
	// makes its own shallow copy whose CheckRedirect counts hops (at most
	// MaxRedirects), then asks Client's CheckRedirect, if any.
	Client *http.Client
	// UserAgent is the User-Agent header of the sitemap requests (default:
	// the client's transport's, Go's "Go-http-client/1.1").
	UserAgent string
	// Allow, when set, is asked before each sitemap fetch: false stops the
	// fetch, and the sitemap's report has a *DisallowedError with reason. It
	// is called from the walking goroutine and may block (e.g. fetch
	// robots.txt) until ctx ends.
	Allow func(ctx context.Context, u *url.URL) (ok bool, reason string)
	// Limits bound each document as it is read ([NewReader]).
	Limits Limits
	// MaxIndexDepth bounds index nesting (default 5): a root index is depth
	// 0, its children depth 1, ...; a child deeper is not fetched and has no
	// report of its own; its index counts it under ReasonTooDeep in
	// Rejected.
	MaxIndexDepth int
	// MaxSitemaps bounds the documents one Walk fetches (default 1,000). A child past it is not fetched and has no report
	// of its own: its index counts it under ReasonSitemapCap in Rejected
	// (whether it was listed past the bound or queued before it and found
	// it spent). A root past it has a report with a *LimitError
	// ("sitemaps").
	MaxSitemaps int
	// MaxURLs bounds the page URLs one Walk hands over (0: no bound). When
	// it is reached the walk ends: the document stops being read (its
	// report's Cut says so) and the child sitemaps not yet read are counted
	// under ReasonURLCap in their index's Filtered.
	MaxURLs int
	// Since, when set, filters out page URLs and index children whose
	// lastmod is known and before Since (an unknown lastmod passes).
	Since time.Time
	// Keep, when set, is asked for each page URL in scope and not filtered
	// by Since; false filters it out (ReasonPredicate).
	Keep func(Page) bool
	// StrictDirectory applies the sitemaps.org rule that a sitemap lists
	// only URLs under its own directory (scheme, host and path up to the
	// last '/'), to page URLs and index children alike. Without it the
	// scope is the host whose robots.txt announced the walk's sitemaps
	// (sitemaps.org cross-submission, at host level).
	StrictDirectory bool
	// Retries is how many times a 5xx, 429 or network error is retried
	// (default 2; negative: none). A retry waits the answer's Retry-After
	// (a longer one than MaxRetryAfter, default 1 minute, ends the document
	// with its error), else RetryWait (default 1 s), doubled each time.
	Retries       int
	RetryWait     time.Duration
	MaxRetryAfter time.Duration
	// MaxRedirects bounds the redirect hops of one fetch (default 5).
	MaxRedirects int
	// DocTimeout bounds the time each document takes to fetch and read,
	// from the first attempt to the end of reading it, retries included
	// (default 5 minutes). Two waits do not count: the time a
	// request waits at a per-host gate that reports it through the request
	// context's gate hook (package hostlimit's Transport, the robots
	// plugin's sitemap client), and the time the walk's callbacks (fn,
	// Keep) take. A document that takes longer ends with an error wrapping
	// ErrDocTimeout and, when the timeout made a fetch or a read fail, that
	// error too; an error that is not the timeout's doing (a *LimitError,
	// a syntax error) is reported as it is, even after the timeout.
	DocTimeout time.Duration
	// Spool makes the walker read each document's body whole before
	// handing over any of its URLs: up to 1 MiB in memory, the rest in a
	// temporary file in SpoolDir (default os.TempDir()), at most
	// Limits.MaxBytes bytes as sent (a longer body is cut there, with a
	// *LimitError "bytes" after the entries read). The response is closed
	// first, so that a per-host gate that holds a host while a response is
	// open (one request in flight per host) lets fn's own requests to that
	// host through. Without Spool the document is read from the connection
	// as fn takes its URLs.
	Spool    bool
	SpoolDir string
	// OnReport, when set, is called with each document's report as soon as
	// it is final, from the walking goroutine.
	OnReport func(Report)
}

// Page is one page URL a sitemap listed, as handed to the walk's callback.
type Page struct {
	Entry
	Sitemap string // the URL of the sitemap that listed it
}

// Report says what became of one sitemap document. For a urlset (or text,
// RSS, Atom) Found = Handed + the Filtered counts + the Rejected counts of
// the walker (the reader's rejections are of entries never found); for an
// index Found = Children + Filtered + Rejected.
type Report struct {
	URL    string // as listed (or given)
	Parent string // the index that listed it; "" for a root
	Scope  string // the authority whose robots.txt announced the walk's sitemaps
	Depth  int    // 0 for a root
	Format Format
	Status int   // HTTP status of the last answer; 0 when none
	Bytes  int64 // decompressed bytes read
	// Found counts the entries read; Handed the page URLs the callback
	// took; Children the child sitemaps of an index queued for reading.
	Found, Handed, Children int
	// Filtered counts entries left out by the caller's choices, by reason
	// (ReasonNotModified, ReasonPredicate, ReasonURLCap, or the reason the
	// callback returned); Rejected those the sitemap should not have
	// listed, by reason (ReasonOtherHost, ..., and the reader's own).
	Filtered, Rejected map[string]int
	Warnings           []string // the reader's lenient readings
	// Cut is why reading stopped early without an error: ReasonURLCap when
	// MaxURLs was reached in this document (the entries after it were not
	// read, the children not yet read are counted in their parent's
	// Filtered); "" otherwise.
	Cut string
	// Err is nil when the document was read to its end. Otherwise: a
	// *DisallowedError, a *FetchError, a *LimitError (the reader's limits,
	// and "sitemaps" for a root past Config.MaxSitemaps), ErrNotSitemap,
	// ErrDocTimeout, a syntax error, or the context's error. The entries
	// read before it were handed over. (A child sitemap that a limit kept
	// from being fetched has no report: its index counts it in Rejected.)
	Err error
}

// Walker fetches sitemaps and hands their page URLs over as they are read.
// A Walker holds only its configuration: it is safe for concurrent use, and
// each Walk keeps its own visited set and counts.
type Walker struct {
	cfg    Config
	client *http.Client
	budget func(total time.Duration, cancel func()) docBudget // starts a document's DocTimeout
}

// docBudget is the time budget of one document: a *gatewait.Budget, or a
// test's stand-in spent on an event rather than after a time.
type docBudget interface {
	gatewait.Hook
	Stop()
	Spent() bool
}

func newDocBudget(total time.Duration, cancel func()) docBudget {
	return gatewait.NewBudget(total, cancel)
}

// NewWalker returns a walker configured by cfg.
func NewWalker(cfg Config) *Walker {
	cfg.MaxIndexDepth = orDefault(cfg.MaxIndexDepth, defaultMaxIndexDepth)
	cfg.MaxSitemaps = orDefault(cfg.MaxSitemaps, defaultMaxSitemaps)
	switch {
	case cfg.Retries == 0:
		cfg.Retries = defaultRetries
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	cfg.RetryWait = orDefault(cfg.RetryWait, defaultRetryWait)
	cfg.MaxRetryAfter = orDefault(cfg.MaxRetryAfter, defaultMaxRetryAfter)
	cfg.MaxRedirects = orDefault(cfg.MaxRedirects, defaultMaxRedirects)
	cfg.DocTimeout = orDefault(cfg.DocTimeout, defaultDocTimeout)
	base := cfg.Client
	if base == nil {
		base = http.DefaultClient
	}
	cl := *base
	user, max := base.CheckRedirect, cfg.MaxRedirects
	cl.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > max {
			return fmt.Errorf("more than %d redirects", max)
		}
		if user != nil {
			return user(req, via)
		}
		return nil
	}
	return &Walker{cfg: cfg, client: &cl, budget: newDocBudget}
}

// Walk reads the sitemaps at roots, announced by the robots.txt of scope
// ("scheme://host[:port]"; "" takes each root's own authority), and their
// children, depth first in document order, one document at a time. It calls
// fn with each page URL in scope, as it is read: fn returns nil when it took
// the URL (counted as handed over), or an error whose text is the reason it
// filtered it out. fn is called from Walk's goroutine. Walk returns the
// reports in the order the documents were finished (a child's before its
// parent's), at most about MaxSitemaps plus the roots.
//
// Scope: a page URL must be on scope's host (host name and port as
// robots.txt's authority names them: case-insensitive, an internationalised
// name and its punycode alike, a scheme's default port counting as none;
// http and https alike), an index child on scope's host or its root's, else it is
// rejected (ReasonOtherHost); with StrictDirectory each must also be under
// the directory of the sitemap that lists it. A root is fetched whatever
// its host (cross-submission). Each sitemap URL is read once per Walk (a
// root read already as a child is skipped). Walk ends early when ctx ends: the document being read reports the
// context's error.
func (w *Walker) Walk(ctx context.Context, scope string, roots []string, fn func(Page) error) []Report {
	ws := &walkState{w: w, fn: fn, visited: map[string]bool{}}
	for _, root := range roots {
		if ws.visited[root] {
			continue // read already, as a root or a child
		}
		sc := scope
		if sc == "" {
			if u, err := url.Parse(root); err == nil {
				sc, _ = authority.String(u)
			}
		}
		ws.scope, ws.scopeHost, ws.rootHost = sc, walkHostKeyOf(sc), walkHostKeyOf(root)
		ws.doc(ctx, root, "", 0)
	}
	return ws.reports
}

// walk is one Walk's state.
type walkState struct {
	w         *Walker
	fn        func(Page) error
	scope     string
	scopeHost string
	rootHost  string          // of the root being walked
	visited   map[string]bool // sitemap URLs fetched or refused
	fetched   int
	handed    int
	capped    bool // MaxURLs reached: nothing more is fetched
	reports   []Report
}

func (ws *walkState) report(r Report) {
	if r.Err == nil && len(r.Filtered) == 0 {
		r.Filtered = nil
	}
	ws.reports = append(ws.reports, r)
	if ws.w.cfg.OnReport != nil {
		ws.w.cfg.OnReport(r)
	}
}

// child is a child sitemap of an index, kept while the index is read.
type walkChild struct {
	loc     string
	lastmod time.Time
}

// doc reads the sitemap at loc and, for an index, its children.
func (ws *walkState) doc(ctx context.Context, loc, parent string, depth int) {
	cfg := &ws.w.cfg
	r := Report{URL: loc, Parent: parent, Scope: ws.scope, Depth: depth, Filtered: map[string]int{}, Rejected: map[string]int{}}
	ws.visited[loc] = true
	u, err := url.Parse(loc)
	switch {
	case err != nil:
		r.Err = fmt.Errorf("sitemap: %q is no URL: %w", loc, err)
	case ws.fetched >= cfg.MaxSitemaps: // a root: a child is checked by its index
		r.Err = &LimitError{Limit: "sitemaps", Max: int64(cfg.MaxSitemaps)}
	case ctx.Err() != nil:
		r.Err = ctx.Err()
	case ws.capped:
		r.Cut = ReasonURLCap // a root after the cap was reached: not fetched
		ws.report(r)
		return
	}
	if r.Err == nil && cfg.Allow != nil {
		if ok, why := cfg.Allow(ctx, u); !ok {
			r.Err = &DisallowedError{URL: loc, Reason: why}
		}
	}
	if r.Err != nil {
		ws.report(r)
		return
	}
	ws.fetched++
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	budget := ws.w.budget(cfg.DocTimeout, cancel)
	defer budget.Stop()
	dctx = gatewait.With(dctx, budget)
	body, status, err := ws.w.fetch(dctx, loc)
	r.Status = status
	if err != nil {
		r.Err = ws.timedOut(ctx, budget, loc, "fetching", err)
		ws.report(r)
		return
	}
	defer body.Close()
	var src io.Reader = body
	if cfg.Spool {
		sp, err := spool(body, cfg.Limits.MaxBytes, cfg.SpoolDir)
		body.Close() // the connection, and the host's gate, are free
		defer sp.Close()
		if err != nil && sp.size == 0 {
			r.Err = ws.timedOut(ctx, budget, loc, "fetching", fmt.Errorf("sitemap: %s: %w", loc, err))
			ws.report(r)
			return
		}
		src = sp.reader(err)
	}
	rd := NewReader(src, loc, cfg.Limits)
	var children []walkChild
	dir := walkDir(u)
	for {
		if err := ctx.Err(); err != nil {
			r.Err = err // nothing more is handed over
			break
		}
		e, err := rd.Next()
		if err != nil {
			if err != io.EOF {
				r.Err = ws.timedOut(ctx, budget, loc, "reading", err)
			}
			break
		}
		r.Found++
		isIndex := rd.Format() == FormatIndex
		if why := ws.scopeCheck(e.Loc, dir, isIndex); why != "" {
			r.Rejected[why]++
			continue
		}
		if !cfg.Since.IsZero() && !e.LastMod.IsZero() && e.LastMod.Before(cfg.Since) {
			r.Filtered[ReasonNotModified]++
			continue
		}
		if isIndex {
			if ws.visited[e.Loc] {
				r.Rejected[ReasonAlreadyRead]++
				continue
			}
			if depth+1 > cfg.MaxIndexDepth {
				r.Rejected[ReasonTooDeep]++
				continue
			}
			if len(children) >= cfg.MaxSitemaps-ws.fetched {
				r.Rejected[ReasonSitemapCap]++ // not kept: the list stays bounded
				continue
			}
			ws.visited[e.Loc] = true // listed twice in one index: read once
			r.Children++
			children = append(children, walkChild{e.Loc, e.LastMod})
			continue
		}
		p := Page{Entry: e, Sitemap: loc}
		// The callbacks' time is not the document's: the clock stops.
		budget.Pause()
		keep := cfg.Keep == nil || cfg.Keep(p)
		var ferr error
		if keep {
			ferr = ws.fn(p)
		}
		budget.Resume()
		if !keep {
			r.Filtered[ReasonPredicate]++
			continue
		}
		if ferr != nil {
			r.Filtered[ferr.Error()]++
			continue
		}
		r.Handed++
		ws.handed++
		if cfg.MaxURLs > 0 && ws.handed >= cfg.MaxURLs {
			ws.capped = true
			r.Cut = ReasonURLCap
			break
		}
	}
	r.Format, r.Bytes, r.Warnings = rd.Format(), rd.Bytes(), rd.Warnings()
	for k, n := range rd.Rejected() {
		r.Rejected[k] += n
	}
	body.Close()
	cancel()
	for _, c := range children {
		switch {
		case ws.capped:
			r.Filtered[ReasonURLCap]++
			r.Children--
			continue
		case ws.fetched >= cfg.MaxSitemaps && ctx.Err() == nil:
			r.Rejected[ReasonSitemapCap]++ // queued before the cap was spent
			r.Children--
			continue
		}
		ws.doc(ctx, c.loc, loc, depth+1)
	}
	ws.report(r)
}

// timedOut is the error of a document whose fetch or read failed with err.
// When the document timeout fired (and not ctx), an error that the
// document's content decided (a limit, not a sitemap, a DOCTYPE) is
// reported as it is, and any other (what the timeout's cancel made of the
// fetch or read) is wrapped with ErrDocTimeout: both match errors.Is.
func (ws *walkState) timedOut(ctx context.Context, b docBudget, loc, what string, err error) error {
	if !b.Spent() || ctx.Err() != nil || errors.Is(err, ErrLimit) || errors.Is(err, ErrNotSitemap) || errors.Is(err, ErrDoctype) {
		return err
	}
	return fmt.Errorf("sitemap: %s: %w: %s took longer than %s: %w", loc, ErrDocTimeout, what, ws.w.cfg.DocTimeout, err)
}

// scopeCheck says why loc, listed by the sitemap in directory dir, is out
// of the walk's scope, or "" when it is in. An index child may also be on
// the host of the root sitemap (an index kept on a CDN listing its
// siblings there); a page URL must be on the scope's host.
func (ws *walkState) scopeCheck(loc, dir string, isChild bool) string {
	u, err := url.Parse(loc)
	if err != nil {
		return ReasonNoURL
	}
	var buf [128]byte
	h := walkHostKey(buf[:0], u)
	if h == nil {
		return ReasonNoURL
	}
	if string(h) != ws.scopeHost && (!isChild || string(h) != ws.rootHost) {
		return ReasonOtherHost
	}
	if ws.w.cfg.StrictDirectory && !strings.HasPrefix(loc, dir) {
		return ReasonOutsideDir
	}
	return ""
}

// walkDir is the sitemaps.org directory of a sitemap URL: scheme, host and
// path up to its last '/'.
func walkDir(u *url.URL) string {
	p := u.EscapedPath()
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[:i+1]
	} else {
		p = "/"
	}
	return u.Scheme + "://" + u.Host + p
}

// walkHostKeyOf is walkHostKey of an authority or URL string; "" when it
// has none.
func walkHostKeyOf(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	var buf [128]byte
	return string(walkHostKey(buf[:0], u))
}

// walkHostKey appends u's authority (internal/authority: the one robots.txt
// and the host's gate use, an internationalised host in punycode) without
// its scheme, http and https alike, to b; nil when u has none.
func walkHostKey(b []byte, u *url.URL) []byte {
	a, err := authority.Append(b, u)
	if err != nil {
		return nil
	}
	_, host, _ := bytes.Cut(a, []byte("://"))
	return host
}
