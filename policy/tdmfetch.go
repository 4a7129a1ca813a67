package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/politecrawl/robots/internal/rsl"
	"github.com/politecrawl/robots/internal/tdmrep"
)

// tdmState is what an origin's /.well-known/tdmrep.json says: its rules,
// or, when file is nil, why the origin does not implement the protocol
// (missing, broken, unreachable).
type tdmState struct {
	file *tdmrep.File
	why  string
}

// licenseState is an RSL licence document, or, when doc is nil, why it
// could not be obtained.
type licenseState struct {
	doc *rsl.Document
	why string
}

// tdmStoreKey is the Store key of an origin's tdmrep.json, "dialect URL":
// distinct from the key of the origin's policy ("dialect authority"), and
// with the same part before the last space, so that a Store that reads
// that part as the policies' prefix (the Redis fleet's) sees one prefix.
func (r *Resolver) tdmStoreKey(authority string) string {
	return storeKey(r.cfg.dialect, authority) + tdmrepPath
}

const tdmrepPath = "/.well-known/tdmrep.json"

// once returns what load gives for key, from the cache when it is
// current, else from one load however many goroutines ask (a caller whose
// ctx ends stops waiting; the load goes on for the others). kind tells
// the flight's key from the other kinds' (robots.txt's is the authority).
func once[V any](ctx context.Context, r *Resolver, c *docCache[V], kind, key string, load func(context.Context) V) (V, error) {
	if v, ok := c.get(key, r.clock.Now()); ok {
		return v, nil
	}
	var zero V
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	ch := r.flight.DoChan(kind+" "+key, func() (any, error) {
		if v, ok := c.get(key, r.clock.Now()); ok {
			return v, nil // a flight that just ended loaded it
		}
		return load(context.WithoutCancel(ctx)), nil
	})
	select {
	case res := <-ch:
		return res.Val.(V), nil
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// tdmFile returns the tdmrep.json state of authority: from memory, from
// the Store, or fetched once.
func (r *Resolver) tdmFile(ctx context.Context, authority string) (tdmState, error) {
	if s, ok := r.tdm.get(authority, r.clock.Now()); ok {
		return s, nil // before the load's closure is made: no allocation
	}
	return once(ctx, r, r.tdm, "tdmrep.json", authority, func(ctx context.Context) tdmState {
		return r.loadTDM(ctx, authority)
	})
}

// storedDoc is the serialised form of a usage document's fetch.
type storedDoc struct {
	Body    []byte `json:"body,omitempty"`
	Why     string `json:"why,omitempty"`
	Expires int64  `json:"expires"`
}

func (r *Resolver) loadTDM(ctx context.Context, authority string) tdmState {
	key := r.tdmStoreKey(authority)
	if r.cfg.store != nil {
		if s, ok := r.storedTDM(ctx, key, authority); ok {
			return s
		}
		if fl, ok := r.cfg.store.(FetchLocker); ok {
			s, ok, unlock := r.lockDoc(ctx, fl, key, authority)
			if ok {
				return s
			}
			defer unlock()
		}
	}
	res := r.fetchDoc(ctx, authority+tdmrepPath, tdmrep.MaxFileSize, "application/json")
	now := r.clock.Now()
	s, expires := readTDM(res.body, res.failed), now.Add(r.lifetime(res.maxAge))
	if res.body == nil && (res.status == 0 || res.status >= 500) {
		expires = now.Add(r.cfg.minAge) // unreachable for now: asked again sooner
	}
	r.tdm.put(authority, s, len(res.body), now, expires)
	r.log.LogAttrs(ctx, slog.LevelDebug, "tdmrep.json fetched", slog.String("authority", authority),
		slog.Bool("implemented", s.file != nil), slog.String("why", s.why), slog.Time("expires", expires))
	if r.cfg.store != nil {
		b, _ := json.Marshal(storedDoc{Body: res.body, Why: res.failed, Expires: expires.UnixNano()})
		sctx, cancel := context.WithTimeout(ctx, r.cfg.storeTimeout)
		if err := r.cfg.store.Put(sctx, key, b, expires.Sub(now)); err != nil {
			r.log.LogAttrs(ctx, slog.LevelWarn, "robots: store put failed", slog.String("key", key), slog.Any("error", err))
		}
		cancel()
	}
	return s
}

// readTDM parses a tdmrep.json body; a nil body is a file the origin does
// not serve, for the reason why.
func readTDM(body []byte, why string) tdmState {
	if body == nil {
		return tdmState{why: why}
	}
	f, err := tdmrep.ParseFile(bytes.NewReader(body))
	if err != nil {
		return tdmState{why: err.Error()}
	}
	return tdmState{file: f}
}

// storedTDM returns the Store's tdmrep.json state of authority, under
// key, when it is current, and caches it.
func (r *Resolver) storedTDM(ctx context.Context, key, authority string) (tdmState, bool) {
	sctx, cancel := context.WithTimeout(ctx, r.cfg.storeTimeout)
	b, ok, err := r.cfg.store.Get(sctx, key)
	cancel()
	if err != nil {
		r.log.LogAttrs(ctx, slog.LevelWarn, "robots: store get failed", slog.String("key", key), slog.Any("error", err))
		return tdmState{}, false
	}
	var sd storedDoc
	if !ok || json.Unmarshal(b, &sd) != nil {
		return tdmState{}, false
	}
	now, expires := r.clock.Now(), time.Unix(0, sd.Expires)
	if !now.Before(expires) {
		return tdmState{}, false
	}
	s := readTDM(sd.Body, sd.Why)
	r.tdm.put(authority, s, len(sd.Body), now, expires)
	return s, true
}

// lockDoc takes the Store's fetch lock of key, or waits for the holder and
// reads what it stored. It returns the stored state (true), or false and
// the unlock func of the lock now held (a no-op when the lock failed or
// the wait ended without a stored state: the caller fetches all the same).
func (r *Resolver) lockDoc(ctx context.Context, fl FetchLocker, key, authority string) (tdmState, bool, func()) {
	noop := func() {}
	sctx, cancel := context.WithTimeout(ctx, r.cfg.storeTimeout)
	unlock, acquired, err := fl.LockFetch(sctx, key, r.fetchLease())
	cancel()
	switch {
	case err != nil:
		r.log.LogAttrs(ctx, slog.LevelWarn, "robots: store fetch lock failed; fetching without it", slog.String("key", key), slog.Any("error", err))
		return tdmState{}, false, noop
	case acquired:
		if s, ok := r.storedTDM(ctx, key, authority); ok {
			unlock()
			return s, true, noop
		}
		return tdmState{}, false, unlock
	}
	wctx, cancel := context.WithTimeout(ctx, 2*r.fetchLease())
	_ = fl.WaitFetch(wctx, key)
	cancel()
	if s, ok := r.storedTDM(ctx, key, authority); ok {
		return s, true, noop
	}
	return tdmState{}, false, noop
}

// maxLicenseAge bounds how long a licence document is kept, whatever its
// max-age says.
const maxLicenseAge = 365 * 24 * time.Hour

// licenseDoc returns the RSL document at licenseURL: from memory (for its
// max-age), or fetched once.
func (r *Resolver) licenseDoc(ctx context.Context, licenseURL string) (licenseState, error) {
	return once(ctx, r, r.licenses, "license", licenseURL, func(ctx context.Context) licenseState {
		res := r.fetchDoc(ctx, licenseURL, rsl.MaxDocSize, rsl.MediaType+", application/xml;q=0.9, */*;q=0.5")
		now := r.clock.Now()
		s, life := licenseState{why: res.failed}, r.cfg.minAge
		if res.body != nil {
			doc, err := rsl.Parse(bytes.NewReader(res.body))
			if err != nil {
				s.why = err.Error()
			} else {
				s, life = licenseState{doc: doc}, min(doc.MaxAge, maxLicenseAge)
			}
		}
		r.licenses.put(licenseURL, s, len(res.body), now, now.Add(life))
		r.log.LogAttrs(ctx, slog.LevelDebug, "licence fetched", slog.String("url", licenseURL),
			slog.Bool("obtained", s.doc != nil), slog.String("why", s.why))
		return s
	})
}
