package dialect

import (
	"fmt"
	"time"
)

// Outcome classifies how a robots.txt fetch ended, as the dialects' fetch
// rules distinguish it.
type Outcome uint8

const (
	OutcomeOK            Outcome = iota // 200 OK
	OutcomeOther2xx                     // a 2xx status other than 200 (e.g. 204, 206)
	OutcomeRedirectLimit                // more redirects than the dialect follows
	Outcome4xx                          // 4xx other than 429
	Outcome429                          // 429 Too Many Requests
	Outcome5xx                          // 5xx
	OutcomeNoAnswer                     // DNS failure, refused, timeout, broken or cut body
	OutcomeOtherStatus                  // 1xx, 3xx without a usable Location, or a code outside 100-599
	numOutcomes
)

func (o Outcome) String() string {
	return [...]string{"200", "other 2xx", "too many redirects", "4xx", "429", "5xx", "no answer", "other status"}[o]
}

// ClassifyStatus returns the outcome of a completed HTTP exchange whose final
// status code is code. Redirects are the fetcher's to follow; a 3xx here means
// one that could not be followed.
func ClassifyStatus(code int) Outcome {
	switch {
	case code == 200:
		return OutcomeOK
	case code >= 200 && code < 300:
		return OutcomeOther2xx
	case code == 429:
		return Outcome429
	case code >= 400 && code < 500:
		return Outcome4xx
	case code >= 500 && code < 600:
		return Outcome5xx
	default:
		return OutcomeOtherStatus
	}
}

// Action is what a crawler concludes from a robots.txt fetch.
type Action uint8

const (
	// ActionParse: the body is robots.txt; parse it and obey it.
	ActionParse Action = iota
	// ActionAllowAll: act as if there were no robots.txt.
	ActionAllowAll
	// ActionDisallowAll: fetch nothing from the authority but robots.txt
	// until the retry time.
	ActionDisallowAll
	// ActionExcludeHost: the host is left out of the crawl until the retry
	// time (Coc Coc, when robots.txt gets no answer at all).
	ActionExcludeHost
	// ActionUseLastGood: obey the last robots.txt that was fetched and
	// parsed successfully.
	ActionUseLastGood
)

func (a Action) String() string {
	return [...]string{"parse", "allow all", "disallow all", "exclude host", "use last good copy"}[a]
}

// fetchRule is one cell of the fetch-outcome table.
type fetchRule struct {
	action Action // what the outcome means, unless a later phase or a last good copy applies
	// A last good copy no older than lastGoodMaxAge is used once the outcome
	// has lasted lastGoodFrom; lastGoodMaxAge 0 means never.
	lastGoodFrom, lastGoodMaxAge time.Duration
	// Once the outcome has lasted thenAfter (>0), then replaces action.
	thenAfter time.Duration
	then      Action
	// retry: how soon robots.txt is fetched again; 0 = the cache lifetime.
	retry time.Duration
}

const (
	maxRedirects = 5   // redirect hops followed, in every dialect
	cacheTTL     = day // default lifetime of a parsed copy, in every dialect
	day          = 24 * time.Hour
	serverRetry  = 10 * time.Minute
	excludeRetry = time.Hour
)

var (
	parse    = fetchRule{action: ActionParse}
	allowAll = fetchRule{action: ActionAllowAll}
)

// RFC 9309 §2.3.1: 2xx parse; more than five redirects MAY be unavailable;
// 4xx unavailable (allow); 5xx and other/undefined unreachable (complete
// disallow). §2.4 lets a cached copy be used beyond 24 h while unreachable:
// the last good copy (up to 30 days old) is used instead of the complete
// disallow when there is one. After 30 days we keep disallowing (the RFC's
// "MAY assume unavailable" is not taken).
var rfc9309Fetch = [numOutcomes]fetchRule{
	OutcomeOK:            parse,
	OutcomeOther2xx:      parse,
	OutcomeRedirectLimit: allowAll,
	Outcome4xx:           allowAll,
	Outcome429:           allowAll,
	Outcome5xx:           {action: ActionDisallowAll, lastGoodMaxAge: 30 * day, retry: serverRetry},
	OutcomeNoAnswer:      {action: ActionDisallowAll, lastGoodMaxAge: 30 * day, retry: serverRetry},
	OutcomeOtherStatus:   {action: ActionDisallowAll, lastGoodMaxAge: 30 * day, retry: serverRetry},
}

// Google: 2xx parse; after five hops a redirect is a 404; 4xx but 429 allow;
// 429, 5xx and network errors: disallow for 12 h while retrying, then the last
// good copy for up to 30 days, with none no restrictions.
var googleServerError = fetchRule{
	action:       ActionDisallowAll,
	lastGoodFrom: 12 * time.Hour, lastGoodMaxAge: 30 * day,
	thenAfter: 12 * time.Hour, then: ActionAllowAll,
	retry: serverRetry,
}

var googleFetch = [numOutcomes]fetchRule{
	OutcomeOK:            parse,
	OutcomeOther2xx:      parse,
	OutcomeRedirectLimit: allowAll,
	Outcome4xx:           allowAll,
	Outcome429:           googleServerError,
	Outcome5xx:           googleServerError,
	OutcomeNoAnswer:      googleServerError,
	OutcomeOtherStatus:   googleServerError,
}

// Coc Coc: only 200 is parsed; any other answer means no restrictions; no
// answer at all excludes the host for a while (we retry after an hour).
var coccocFetch = [numOutcomes]fetchRule{
	OutcomeOK:            parse,
	OutcomeOther2xx:      allowAll,
	OutcomeRedirectLimit: allowAll,
	Outcome4xx:           allowAll,
	Outcome429:           allowAll,
	Outcome5xx:           allowAll,
	OutcomeNoAnswer:      {action: ActionExcludeHost, retry: excludeRetry},
	OutcomeOtherStatus:   allowAll,
}

// Koster 1994 is silent on HTTP; we read an error as temporarily unreachable
// (disallow, retry later) and a missing file as no restrictions. No last good
// copy is used.
var koster1994Fetch = [numOutcomes]fetchRule{
	OutcomeOK:            parse,
	OutcomeOther2xx:      parse,
	OutcomeRedirectLimit: allowAll,
	Outcome4xx:           allowAll,
	Outcome429:           {action: ActionDisallowAll, retry: serverRetry},
	Outcome5xx:           {action: ActionDisallowAll, retry: serverRetry},
	OutcomeNoAnswer:      {action: ActionDisallowAll, retry: serverRetry},
	OutcomeOtherStatus:   {action: ActionDisallowAll, retry: serverRetry},
}

// MaxRedirects returns how many redirect hops the dialect follows when
// fetching robots.txt (five in every dialect).
func (d *Dialect) MaxRedirects() int { return maxRedirects }

// CacheTTL returns how long a fetched robots.txt is used before it is fetched
// again, unless HTTP cache headers say otherwise (24 h in every dialect).
func (d *Dialect) CacheTTL() time.Duration { return cacheTTL }

// LastGoodMaxAge returns the longest the dialect uses a last good copy of
// robots.txt while fetches fail (30 days in rfc9309 and google; 0 in the
// others, which never use one). A fetcher keeps copies at least this long.
func (d *Dialect) LastGoodMaxAge() time.Duration {
	var m time.Duration
	for _, r := range d.s.fetch {
		m = max(m, r.lastGoodMaxAge)
	}
	return m
}

// FetchState is what the fetcher knows when it asks what an outcome means.
type FetchState struct {
	// Lasted is how long the failure has lasted: the time since the first
	// failed fetch of the current unbroken run of failed fetches (0 for a
	// first failure). A change of failing outcome (503, then a timeout) does
	// not start a new run; a clean answer (parse or allow all) ends it.
	Lasted time.Duration
	// LastGoodAge is the age of the last copy that was fetched and parsed
	// successfully; HaveLastGood says whether there is one.
	LastGoodAge  time.Duration
	HaveLastGood bool
}

// Decision is what the dialect concludes from a fetch outcome.
type Decision struct {
	Outcome Outcome
	Action  Action
	// Retry is how soon robots.txt should be fetched again; 0 means the
	// normal cache lifetime.
	Retry time.Duration
}

func (d Decision) String() string {
	if d.Retry > 0 {
		return fmt.Sprintf("%s: %s, retry in %s", d.Outcome, d.Action, d.Retry)
	}
	return fmt.Sprintf("%s: %s", d.Outcome, d.Action)
}

// Decide returns what the dialect concludes from a fetch that ended with
// outcome o, given the fetcher's state. It is a pure function of its
// arguments.
func (d *Dialect) Decide(o Outcome, st FetchState) Decision {
	if o >= numOutcomes {
		o = OutcomeOtherStatus
	}
	r := d.s.fetch[o] // a parse or allow-all cell has no retry, last good copy or later phase
	dec := Decision{Outcome: o, Action: r.action, Retry: r.retry}
	switch {
	case r.lastGoodMaxAge > 0 && st.HaveLastGood && st.Lasted >= r.lastGoodFrom && st.LastGoodAge <= r.lastGoodMaxAge:
		dec.Action = ActionUseLastGood
	case r.thenAfter > 0 && st.Lasted >= r.thenAfter:
		dec.Action = r.then
	}
	return dec
}
