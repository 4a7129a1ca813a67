package policy

import (
	"net/url"

	"github.com/politecrawl/robots/dialect"
)

// UsageVerdict is the usage preference robots.txt states for a URL under a
// policy (see [dialect.Ruleset.Usage]): per category allow, disallow or
// unknown, with the line that decided, and the crawl verdict.
type UsageVerdict struct {
	dialect.UsageVerdict
	Policy *Policy // the policy that answered
}

// Explain says what decided category c: the deciding line, "no usage
// rule", or for a URL the crawler may not fetch "disallowed (...)" with the
// crawl verdict's explanation (a rule, or the fetch outcome).
func (v UsageVerdict) Explain(c dialect.Category) string {
	if !v.Crawl.Allowed && v.Policy != nil {
		return "disallowed (" + Verdict{Verdict: v.Crawl, Policy: v.Policy}.String() + ")"
	}
	return v.UsageVerdict.Explain(c)
}

// Usage returns the usage preference robots.txt states for u, a URL of the
// policy's authority percent-encoded as it is sent. When the fetch outcome
// decides every URL (no robots.txt, an error), nothing is stated; a URL the
// crawler may not fetch has no preference. It does not allocate for
// ordinary URLs.
func (p *Policy) Usage(u *url.URL) UsageVerdict {
	var buf [256]byte
	return p.UsagePath(asSent(u, &buf))
}

// UsagePath is [Policy.Usage] for a path and query as sent.
func (p *Policy) UsagePath(path string) UsageVerdict {
	switch p.decision.Action {
	case dialect.ActionParse, dialect.ActionUseLastGood:
		return UsageVerdict{UsageVerdict: p.rules.Usage(path), Policy: p}
	}
	return UsageVerdict{UsageVerdict: dialect.UsageVerdict{Crawl: p.CheckPath(path).Verdict}, Policy: p}
}
