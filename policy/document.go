package policy

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/politecrawl/robots/dialect"
)

// DocumentKind says how the resolver fetches and reads one kind of
// document a site names beside robots.txt: an origin's
// /.well-known/tdmrep.json, an RSL licence.
type DocumentKind struct {
	// Name names the kind in logs and keeps the flights of two kinds apart
	// ("tdmrep.json", "license").
	Name string
	// Accept is the Accept header of the request.
	Accept string
	// MaxBytes bounds the body read; a longer one is no document.
	MaxBytes int64
	// Parse reads a body of a 2xx answer into the value kept with the
	// document, and the lifetime the document asks for (0: the answer's
	// Cache-Control max-age decides). An error makes the document one
	// that could not be read, kept for the shortest lifetime. Parse is
	// called with a nil body when no body came (a 4xx): an error then
	// keeps that answer for the shortest lifetime too, else for the
	// answer's.
	Parse func(body []byte) (value any, lifetime time.Duration, err error)
}

// Document is a document of a site as the resolver fetched it, with the
// value its kind's Parse read, or why there is none.
type Document struct {
	URL      string // asked
	FinalURL string // answered, after redirects
	Status   int    // final HTTP status, 0 for no answer
	// Err says why Value is nil: the answer ("404 Not Found", "no answer
	// (timeout)", "more than 5 redirects", "larger than 1024 bytes") or
	// the Parse error.
	Err     string
	SHA256  [sha256.Size]byte // of the body, when one came
	Fetched time.Time
	Expires time.Time
	Value   any
	body    []byte      // the bytes SHA256 is of (Body)
	robots  *robotsCopy // robots.txt's bytes, for a Policy's Document
}

// maxDocumentLifetime bounds how long a document is kept, whatever
// lifetime its kind's Parse asks for.
const maxDocumentLifetime = 365 * 24 * time.Hour

// Document returns the document at target (an absolute http(s) URL),
// named by the page at from (the URL being checked), read as kind: from
// memory while it is current, else from the [Store] (under "dialect URL",
// with its fetch lock when it is a [FetchLocker]), else fetched as
// robots.txt is (the resolver's client and User-Agent, redirects up to the
// dialect's limit, the total timeout), once however many goroutines ask.
// A failed fetch is not an error: it is in the document's Err. It lives
// for its Cache-Control max-age within [WithMaxAgeBounds] (or the lifetime
// Parse gives, at most a year); an answer of 5xx or none, or a body Parse
// refuses, for the shortest max-age. The only errors are ctx's.
//
// A site names documents anywhere, so target and each redirect are
// fetched only from hosts [WithDocumentFilter] accepts, never from a
// link-local or cloud-metadata host (169.254.0.0/16, fe80::/10,
// metadata.google.internal, fd00:ec2::254, 100.100.100.200, ...), and
// from a loopback or private host only when from's host is that host or
// of the same class (a crawl of 127.0.0.1 may read documents on another
// loopback port; a public site's may not). The address a name resolves to
// is checked as it is dialled ([DialControl]). A document refused so has
// an Err that starts "not fetched: " and says why; a refusal of target
// itself is neither kept nor shared with callers whose page may reach it.
func (r *Resolver) Document(ctx context.Context, from *url.URL, target string, kind *DocumentKind) (*Document, error) {
	dk := docKey{kind.Name, target}
	if sameOrigin(from, target) {
		// A copy in memory passed the same filter, and a document of the
		// page's own origin is of the page's address class: no check left.
		if d := r.docs.get(dk, r.clock.Now()); d != nil {
			return d, nil
		}
	}
	g := newDocGuard(r.cfg.docFilter, from)
	tu, err := url.Parse(target)
	if err == nil {
		err = g.checkURL(ctx, tu)
	}
	if err != nil {
		return &Document{URL: bound(target), Err: err.Error(), Fetched: r.clock.Now()}, nil
	}
	if d := r.docs.get(dk, r.clock.Now()); d != nil {
		return d, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	key := storeKey(r.cfg.dialect, target)
	ch := r.flight.DoChan(kind.Name+" "+key, func() (any, error) {
		return r.loadDocument(context.WithoutCancel(ctx), target, key, kind, g), nil
	})
	select {
	case res := <-ch:
		return res.Val.(*Document), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// storedDoc is the serialised form of a document.
type storedDoc struct {
	Body     []byte `json:"body,omitempty"`
	Err      string `json:"why,omitempty"`
	FinalURL string `json:"final_url,omitempty"`
	Status   int    `json:"status,omitempty"`
	Fetched  int64  `json:"fetched,omitempty"`
	Expires  int64  `json:"expires"`
}

func (r *Resolver) loadDocument(ctx context.Context, target, key string, kind *DocumentKind, g *docGuard) *Document {
	if d := r.docs.get(docKey{kind.Name, target}, r.clock.Now()); d != nil {
		return d // a flight that just ended loaded it
	}
	if r.cfg.store != nil {
		if d := r.storedDocument(ctx, target, key, kind); d != nil {
			return d
		}
		if fl, ok := r.cfg.store.(FetchLocker); ok {
			var d *Document
			done, unlock := r.lockFetch(ctx, fl, key, func() bool {
				d = r.storedDocument(ctx, target, key, kind)
				return d != nil
			})
			if done {
				return d
			}
			if unlock != nil {
				defer unlock()
			}
		}
	}
	res := r.fetch(ctx, target, kind.Accept, kind.MaxBytes, g)
	sd := storedDoc{FinalURL: res.FinalURL, Status: res.Status, Fetched: res.Time.UnixNano()}
	switch {
	case res.refused:
		sd.Err = res.Err
	case res.Outcome != dialect.OutcomeOK && res.Outcome != dialect.OutcomeOther2xx:
		sd.Err = res.answer()
	case res.Truncated:
		sd.Err = "larger than " + strconv.FormatInt(kind.MaxBytes, 10) + " bytes"
	default:
		sd.Body = res.body
	}
	d := r.readDocument(target, kind, sd, res.MaxAge)
	r.log.LogAttrs(ctx, slog.LevelDebug, kind.Name+" fetched", slog.String("url", target),
		slog.Bool("read", d.Value != nil), slog.String("why", d.Err), slog.Time("expires", d.Expires))
	if r.cfg.store != nil && !res.refused {
		sd.Err, sd.Expires = d.Err, d.Expires.UnixNano()
		b, _ := json.Marshal(sd)
		sctx, cancel := context.WithTimeout(ctx, r.cfg.storeTimeout)
		if err := r.cfg.store.Put(sctx, key, b, d.Expires.Sub(r.clock.Now())); err != nil {
			r.log.LogAttrs(ctx, slog.LevelWarn, "robots: store put failed", slog.String("key", key), slog.Any("error", err))
		}
		cancel()
	}
	return d
}

// readDocument makes the document of a fetch (maxAge >= -1) or of a
// stored copy (maxAge < -1: sd.Expires holds), parses its body and caches
// it.
func (r *Resolver) readDocument(target string, kind *DocumentKind, sd storedDoc, maxAge time.Duration) *Document {
	d := &Document{URL: target, FinalURL: sd.FinalURL, Status: sd.Status, Err: sd.Err, Fetched: time.Unix(0, sd.Fetched)}
	life := r.cfg.minAge
	if sd.Body != nil {
		d.SHA256, d.body = sha256.Sum256(sd.Body), sd.Body
		v, l, err := kind.Parse(sd.Body)
		switch {
		case err != nil:
			d.Err = err.Error()
		case l > 0:
			d.Value, life = v, min(l, maxDocumentLifetime)
		default:
			d.Value, life = v, r.lifetime(maxAge)
		}
	} else if _, _, err := kind.Parse(nil); err == nil && sd.Status != 0 && sd.Status < 500 {
		life = r.lifetime(maxAge)
	}
	now := r.clock.Now()
	d.Expires = now.Add(life)
	if maxAge < -1 {
		d.Expires = time.Unix(0, sd.Expires)
	}
	r.docs.put(docKey{kind.Name, target}, d, len(sd.Body), now)
	return d
}

// storedDocument returns the Store's copy of the document under key when
// it is current, read and cached; else nil.
func (r *Resolver) storedDocument(ctx context.Context, target, key string, kind *DocumentKind) *Document {
	sctx, cancel := context.WithTimeout(ctx, r.cfg.storeTimeout)
	b, ok, err := r.cfg.store.Get(sctx, key)
	cancel()
	if err != nil {
		r.log.LogAttrs(ctx, slog.LevelWarn, "robots: store get failed", slog.String("key", key), slog.Any("error", err))
		return nil
	}
	var sd storedDoc
	if !ok || json.Unmarshal(b, &sd) != nil || !r.clock.Now().Before(time.Unix(0, sd.Expires)) {
		return nil
	}
	return r.readDocument(target, kind, sd, -2)
}

// docCache keeps documents in memory until they expire, at most capacity
// of them holding at most maxBytes (by the size of their bodies): while it
// holds more, an expired entry goes, else the oldest one. The entry just
// put is always kept.
type docCache struct {
	mu       sync.Mutex
	capacity int
	maxBytes int64
	bytes    int64
	m        map[docKey]docEntry
}

// docKey is a document's key in memory: its kind's Name and its URL (the
// resolver's dialect, in its Store key, is that of every entry).
type docKey struct{ kind, key string }

type docEntry struct {
	doc   *Document
	size  int64
	added time.Time
}

func newDocCache(capacity int, maxBytes int64) *docCache {
	return &docCache{capacity: capacity, maxBytes: maxBytes, m: make(map[docKey]docEntry)}
}

// get returns the document under key if it is current at now, else nil.
func (c *docCache) get(key docKey, now time.Time) *Document {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok && now.Before(e.doc.Expires) {
		return e.doc
	}
	return nil
}

// put keeps d, read from a body of size bytes, under key.
func (c *docCache) put(key docKey, d *Document, size int, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[key]; ok {
		c.bytes -= old.size
		delete(c.m, key)
	}
	for len(c.m) > 0 && (len(c.m) >= c.capacity || c.bytes+int64(size) > c.maxBytes) {
		var victim docKey
		var at time.Time
		for k, e := range c.m {
			if !now.Before(e.doc.Expires) {
				victim = k
				break
			}
			if victim == (docKey{}) || e.added.Before(at) {
				victim, at = k, e.added
			}
		}
		c.bytes -= c.m[victim].size
		delete(c.m, victim)
	}
	c.m[key] = docEntry{doc: d, size: int64(size), added: now}
	c.bytes += int64(size)
}
