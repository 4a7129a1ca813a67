package policy

import "crypto/sha256"

// Document returns robots.txt as a [Document] whose Value is its
// *dialect.Robots: when rules are in force, with the SHA-256 of the copy
// they were parsed from and the time it was fetched (the last good copy,
// when the latest fetch failed: Status and FinalURL are then the latest
// fetch's, and Err says which copy is in force); when the fetch outcome
// decides every URL, that fetch, with no body and Err saying what it
// gave.
func (p *Policy) Document() *Document {
	d := &Document{URL: p.fetch.URL, FinalURL: p.fetch.FinalURL, Status: p.fetch.Status, Fetched: p.fetch.Time, Expires: p.expires}
	lg := p.lastGood
	if lg == nil || !usesRules(p.decision.Action) {
		d.Err = p.Reason()
		return d
	}
	lg.sumOnce.Do(func() { lg.sum = sha256.Sum256([]byte(lg.body)) })
	d.SHA256, d.Value, d.robots = lg.sum, lg.robots, lg
	if !lg.fetched.Equal(p.fetch.Time) {
		d.Fetched = lg.fetched
		d.Err = p.Reason()
	}
	return d
}

// Body returns the bytes d's SHA256 is of, nil when no body came. The
// caller must not change them.
func (d *Document) Body() []byte {
	if d.robots != nil {
		return []byte(d.robots.body)
	}
	return d.body
}

// CachedDocument returns the document at target read as kind when the
// resolver holds it in memory, expired or not, and nil when it does not:
// it never fetches.
func (r *Resolver) CachedDocument(target string, kind *DocumentKind) *Document {
	r.docs.mu.Lock()
	defer r.docs.mu.Unlock()
	if e, ok := r.docs.m[docKey{kind.Name, target}]; ok {
		return e.doc
	}
	return nil
}
