package policy

import (
	"crypto/sha256"
	"net/url"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/politecrawl/robots/dialect"
)

// Policy is what an authority's robots.txt means for the crawler: the
// outcome of the latest fetch, what the dialect concluded from it, and the
// rules in force when there are some. A Policy is immutable and safe for
// concurrent use; a new fetch makes a new Policy.
type Policy struct {
	authority string
	dialect   *dialect.Dialect
	fetch     FetchInfo
	decision  dialect.Decision
	expires   time.Time // robots.txt is fetched again at or after this time
	failSince time.Time // start of the current run of failed fetches; zero if the latest fetch was clean
	lastGood  *robotsCopy
	rules     *dialect.Ruleset // lastGood's rules for the resolver's tokens, when the action uses them
}

// robotsCopy is a robots.txt body that was fetched and parsed.
type robotsCopy struct {
	body    string // the parsed body; robots shares its memory
	robots  *dialect.Robots
	fetched time.Time
	sumOnce sync.Once // sum is computed when first asked (Policy.Document)
	sum     [sha256.Size]byte
}

// footprint returns about how many bytes p holds, for the cache's budget:
// the policy, its last good copy (body and parsed file) and its index of
// the rules in force.
func (p *Policy) footprint() int64 {
	n := int(unsafe.Sizeof(*p)) + len(p.authority) + len(p.fetch.URL) + len(p.fetch.FinalURL) + len(p.fetch.Err)
	if lg := p.lastGood; lg != nil {
		// The copy holds the whole body read, which can be longer than what
		// the parser used (a long last line cut at the limit).
		used, _ := lg.robots.Size()
		n += int(unsafe.Sizeof(*lg)) + lg.robots.Footprint() - used + len(lg.body)
	}
	if p.rules != nil {
		n += p.rules.Footprint()
	}
	return int64(n)
}

// Authority returns "scheme://host[:port]", the authority the policy is for.
func (p *Policy) Authority() string { return p.authority }

// Dialect returns the dialect that read the robots.txt and its fetch.
func (p *Policy) Dialect() *dialect.Dialect { return p.dialect }

// Fetch returns what the latest robots.txt fetch gave.
func (p *Policy) Fetch() FetchInfo { return p.fetch }

// Warnings returns what the latest fetch could not decode, or converted,
// before parsing (Fetch().Warnings): nil for an ordinary body.
func (p *Policy) Warnings() []string { return p.fetch.Warnings }

// dialectDecision returns what the dialect concluded from the latest fetch.
func (p *Policy) dialectDecision() dialect.Decision { return p.decision }

// Action returns what the dialect decided to do with the latest fetch
// (the Action of its [dialect.Dialect.Decide]).
func (p *Policy) Action() dialect.Action { return p.decision.Action }

// Expires returns when robots.txt is fetched again: the end of the cache
// lifetime after a clean answer, the retry time after a failure.
func (p *Policy) Expires() time.Time { return p.expires }

// failingSince returns the time of the first fetch of the current run of
// failed fetches (5xx, no answer, ...), and false when the latest fetch did
// not fail.
func (p *Policy) failingSince() (time.Time, bool) { return p.failSince, !p.failSince.IsZero() }

// lastGoodAt returns when the last good copy of robots.txt (the latest body
// fetched with a status the dialect parses) was fetched, and false when
// there is none.
func (p *Policy) lastGoodAt() (time.Time, bool) {
	if p.lastGood == nil {
		return time.Time{}, false
	}
	return p.lastGood.fetched, true
}

// Robots returns the parsed robots.txt in force (the fresh copy, or the last
// good copy when the action is [dialect.ActionUseLastGood]), or nil when the
// fetch outcome decides every URL.
func (p *Policy) Robots() *dialect.Robots {
	if p.rules == nil {
		return nil
	}
	return p.lastGood.robots
}

// Rules returns the rules in force for the resolver's product tokens, or
// nil when the fetch outcome decides every URL.
func (p *Policy) Rules() *dialect.Ruleset { return p.rules }

// CrawlDelay returns the crawl delay in force for the resolver's product
// tokens, and false when there is none.
func (p *Policy) CrawlDelay() (time.Duration, bool) {
	if p.rules == nil {
		return 0, false
	}
	return p.rules.CrawlDelay()
}

// Verdict says whether a URL may be fetched, and why: the dialect's verdict
// (Allowed, Reason, Rule), where Reason is [dialect.ReasonFetch] when the
// outcome of the robots.txt fetch decided rather than a rule, and the policy
// that answered.
type Verdict struct {
	dialect.Verdict
	Policy *Policy // the policy that answered
}

// String explains the verdict as the CLI's -explain does: "line 4:
// Disallow: /private", "no matching rule", or for a fetch outcome
// "robots.txt: 503 Service Unavailable, complete disallow until
// 2026-11-23T14:05:00Z". Rules of a last good copy say so.
func (v Verdict) String() string {
	if v.Policy == nil {
		return v.Verdict.String()
	}
	if v.Reason == dialect.ReasonFetch {
		return v.Policy.Reason()
	}
	s := v.Verdict.String()
	if v.Policy.decision.Action == dialect.ActionUseLastGood {
		s += " (" + v.Policy.Reason() + ")"
	}
	return s
}

// Reason explains the policy: what robots.txt answered and what follows
// from it, e.g. "robots.txt: 200 OK, 1234 bytes parsed", "robots.txt: 404
// Not Found, no restrictions", "robots.txt: 503 Service Unavailable,
// complete disallow until 2026-11-23T14:05:00Z", "robots.txt: no answer
// (connection refused), host excluded until ...", "robots.txt: 503 Service
// Unavailable, last good copy of 2026-11-20T08:00:00Z in force until ...".
func (p *Policy) Reason() string {
	s := "robots.txt: " + p.fetch.answer()
	until := p.expires.UTC().Format(time.RFC3339)
	switch p.decision.Action {
	case dialect.ActionParse:
		used, _ := p.lastGood.robots.Size()
		s += ", " + strconv.Itoa(used) + " bytes parsed"
		if p.fetch.Truncated {
			s += " (cut at " + strconv.Itoa(dialect.MaxBodyBytes) + ")"
		}
	case dialect.ActionAllowAll:
		s += ", no restrictions"
		if !p.failSince.IsZero() {
			s += " (failing since " + p.failSince.UTC().Format(time.RFC3339) + ") until " + until
		}
	case dialect.ActionDisallowAll:
		s += ", complete disallow until " + until
	case dialect.ActionExcludeHost:
		s += ", host excluded until " + until
	case dialect.ActionUseLastGood:
		s += ", last good copy of " + p.lastGood.fetched.UTC().Format(time.RFC3339) + " in force until " + until
	}
	return s
}

// String is Reason prefixed with the authority.
func (p *Policy) String() string { return p.authority + ": " + p.Reason() }

// Check says whether the crawler may fetch u, which must be a URL of the
// policy's authority, percent-encoded as it is sent. It does not allocate
// for ordinary URLs.
func (p *Policy) Check(u *url.URL) Verdict {
	var buf [256]byte
	return p.CheckPath(asSent(u, &buf))
}

// asSent returns u's path and query as sent, joined in buf when they fit,
// so that an ordinary URL costs no allocation.
func asSent(u *url.URL, buf *[256]byte) string {
	if u.Opaque != "" {
		return u.RequestURI()
	}
	path := u.EscapedPath()
	if u.RawQuery == "" && !u.ForceQuery {
		return path
	}
	b := append(append(append(buf[:0], path...), '?'), u.RawQuery...)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// CheckPath is [Policy.Check] for a path and query as sent ("/a/b?c=d";
// "" counts as "/"), without the fragment.
func (p *Policy) CheckPath(path string) Verdict {
	switch p.decision.Action {
	case dialect.ActionParse, dialect.ActionUseLastGood:
		return Verdict{Verdict: p.rules.Check(path), Policy: p}
	case dialect.ActionAllowAll:
		return Verdict{Verdict: dialect.Verdict{Allowed: true, Reason: dialect.ReasonFetch}, Policy: p}
	case dialect.ActionDisallowAll:
		if dialect.IsRobotsTxt(path) {
			return Verdict{Verdict: dialect.Verdict{Allowed: true, Reason: dialect.ReasonRobotsTxt}, Policy: p}
		}
	}
	return Verdict{Verdict: dialect.Verdict{Reason: dialect.ReasonFetch}, Policy: p}
}
