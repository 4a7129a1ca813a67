package usage

import (
	"encoding/hex"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
)

// Decision is what a crawler decided for one URL, for [NewLogRecord].
type Decision struct {
	URL     *url.URL
	Outcome string // Fetched, Refused, Stopped or Failed
	Status  int    // the HTTP status of a fetched URL
	Reason  string // why it was stopped or refused
	// Purposes and Use are what the crawler declared.
	Purposes []dialect.Category
	Use      dialect.UseLevel
	// Report is what the site states of the URL; nil for a URL robots.txt
	// stopped.
	Report *Report
}

// NewLogRecord returns the log record of d at t: the declared purposes
// with the preference d.Report states for each, its signals, and the
// documents that decided as r holds them in memory (nothing is fetched):
// robots.txt, and with a purpose declared and a report the origin's
// tdmrep.json and each RSL licence a signal reads (a licence link that is
// not RSL's is among the signals only: it was not fetched).
func NewLogRecord(r *policy.Resolver, t time.Time, d Decision) LogRecord {
	rec := LogRecord{Time: t, URL: d.URL.String(), Outcome: d.Outcome, Status: d.Status, Reason: d.Reason}
	if n := len(d.Purposes); n > 0 || d.Use != dialect.UseUnknown {
		rec.Purposes = make([]string, n)
		rec.Verdicts = make(map[string]string, n+1)
		for i, c := range d.Purposes {
			rec.Purposes[i] = c.String()
			v := "n/a"
			if d.Report != nil {
				v = d.Report.Usage.Pref(c).String()
			}
			rec.Verdicts[c.String()] = v
		}
		if d.Use != dialect.UseUnknown {
			rec.Use = d.Use.String()
			if d.Report != nil {
				rec.Verdicts["use"] = d.Report.Usage.Use().String()
			}
		}
	}
	if d.Report != nil {
		rec.Signals = d.Report.Signals
	}
	authority, err := policy.Authority(d.URL)
	if err != nil {
		return rec
	}
	if pol := r.Cached(authority); pol != nil {
		rec.Documents = append(rec.Documents, document("robots.txt", pol.Document()))
	}
	if len(d.Purposes) == 0 || d.Report == nil {
		return rec
	}
	tdm := authority + "/.well-known/tdmrep.json"
	rec.Documents = append(rec.Documents, cachedDocument(r, "tdmrep.json", tdm, tdmrepKind))
	var seen []string
	for _, s := range d.Report.Signals {
		if s.License == nil || !s.License.read() || slices.Contains(seen, s.License.URL) {
			continue
		}
		seen = append(seen, s.License.URL)
		rec.Documents = append(rec.Documents, cachedDocument(r, "license", s.License.URL, rslKind))
	}
	return rec
}

// cachedDocument is the record of the document at target as r holds it;
// one it no longer holds is named without its hash.
func cachedDocument(r *policy.Resolver, kind, target string, dk *policy.DocumentKind) Document {
	if d := r.CachedDocument(target, dk); d != nil {
		return document(kind, d)
	}
	return Document{Kind: kind, URL: target, Err: "not in memory when recorded"}
}

func document(kind string, d *policy.Document) Document {
	doc := Document{Kind: kind, URL: d.URL, Status: d.Status, Fetched: d.Fetched, Err: d.Err, src: d}
	if d.FinalURL != d.URL {
		doc.FinalURL = d.FinalURL
	}
	if d.SHA256 != ([32]byte{}) {
		doc.SHA256 = hex.EncodeToString(d.SHA256[:])
	}
	return doc
}

// read reports whether the licence lt names was fetched: one that a
// robots.txt License line or a link typed as RSL points to. Any other
// licence link is recorded, never fetched.
func (lt *LicenseTerms) read() bool {
	return strings.HasPrefix(lt.From, "robots.txt ") || newPointer(lt.URL, lt.From, lt.Type).rsl
}
