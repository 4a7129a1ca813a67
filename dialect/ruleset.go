package dialect

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Ruleset is what one crawler obeys in one robots.txt: the rules of the
// group(s) the dialect selects for the crawler's product tokens, indexed for
// fast checks, and the crawl delay. It is immutable and safe for concurrent
// use.
type Ruleset struct {
	r *Robots // the file: its dialect, and the text its rules and agents point into
	// The rules and user-agent entries, in file order: windows of the
	// Robots' tables when one group applies, else tables of rs's own (own).
	rules  []rule
	agents []agent
	own    bool
	usage  *usageIndex // nil without usage rules
	lic    []License   // the License lines that apply
	token  string
	// The crawl delay in force, and its line (0: none).
	crawlDelay time.Duration
	delayLine  int32
	// idx is the index of rules: nil until it is built, under once, after
	// the first checks (see Ruleset.Check); then read without locks.
	checks atomic.Int32 // checks answered without the index
	once   sync.Once
	idx    atomic.Pointer[matcher]
}

// usageIndex is a Ruleset's usage rules, in file order, and their index
// (ranks: longer pattern first, then file order).
type usageIndex struct {
	rules []UsageRule
	m     matcher
}

// Reason says what decided a verdict.
type Reason uint8

const (
	ReasonNoRule    Reason = iota // no rule matched: allowed
	ReasonRule                    // Verdict.Rule decided
	ReasonRobotsTxt               // /robots.txt itself, always allowed (rfc9309)
	// ReasonFetch: the outcome of the robots.txt fetch decided (no
	// restrictions, complete disallow, host excluded; see [Dialect.Decide]).
	// A Ruleset never gives it; a fetcher does (package policy).
	ReasonFetch
)

// String names the reason: "no rule", "rule", "robots.txt", "fetch outcome".
func (r Reason) String() string {
	if r <= ReasonFetch {
		return [...]string{"no rule", "rule", "robots.txt", "fetch outcome"}[r]
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}

// Verdict is the answer to a check: whether the path may be fetched, and why.
type Verdict struct {
	Allowed bool
	Reason  Reason
	// Rule is the deciding rule when Reason is ReasonRule, else the zero
	// Rule. Its strings share the memory of the parsed file.
	Rule Rule
}

// String explains the verdict: "line 4: Disallow: /private", "no matching
// rule" or "/robots.txt is always allowed".
func (v Verdict) String() string {
	switch v.Reason {
	case ReasonRule:
		s := "line " + strconv.Itoa(v.Rule.Line) + ": " + v.Rule.String()
		if v.Rule.Note != "" {
			s += " (" + v.Rule.Note + ")"
		}
		return s
	case ReasonRobotsTxt:
		return "/robots.txt is always allowed"
	case ReasonFetch:
		return "fetch outcome"
	}
	return "no matching rule"
}

// For returns the rules in force for a crawler that names itself with the
// given product tokens, most specific first ("examplebot-news",
// "examplebot"). The first token that has a group of its own decides (how a
// group's user-agent matches a token is the dialect's, and of each token the
// dialect compares what [Dialect.AgentToken] returns); if none has, the "*"
// group(s) apply; if there are none, no rules apply. A token of which
// AgentToken compares nothing (an empty one, "*") is skipped.
//
// The crawl delay is that of the user-agent lines that selected the groups
// (the token's, or the "*" lines): the first in file order of their
// Crawl-delays ([Agent.CrawlDelay]); when they have none, the first valid
// Crawl-delay before any User-agent line, if there is one.
//
// For does not index the rules: it costs a pass over the groups' user-agent
// lines, the Ruleset (shared by all for an empty file) and, when several
// groups apply, copies of their rules and user-agent entries. The Ruleset
// indexes its rules after its first checks ([Ruleset.Check]): call For once
// per crawler and file and keep the result.
func (r *Robots) For(tokens ...string) *Ruleset {
	if r == &r.d.empty {
		// An empty file: nothing applies, whoever asks.
		return &r.d.emptyRules
	}
	s := &r.d.s
	groups := r.groups
	var buf [4]int32 // the chosen groups, when they are few
	var chosen []int32
	token, best := "", -1
	compared := ""
	if len(groups) > 0 {
		// (When no user-agent entry names a crawler, no token can select a
		// group of its own: only the "*" groups can apply.)
		for _, t := range tokens {
			if !r.named {
				break
			}
			c, _ := r.d.AgentToken(t)
			if c == "" {
				continue
			}
			chosen, best = r.groupsFor(c, buf[:0])
			if len(chosen) > 0 {
				token, compared = strings.TrimSpace(t), c
				break
			}
		}
		if len(chosen) == 0 {
			chosen = buf[:0]
			for i, g := range groups {
				if slices.ContainsFunc(r.agents[g.a0:g.a1], func(a agent) bool { return a.star }) {
					chosen = append(chosen, int32(i))
				}
			}
		}
	}
	rs := &Ruleset{r: r, token: token}
	if len(chosen) == 1 {
		// One group: its rules and user-agent entries are used in place
		// (they are immutable).
		g := &groups[chosen[0]]
		rs.agents = r.agents[g.a0:g.a1:g.a1]
		rs.rules = r.rules[g.r0:g.r1:g.r1]
	} else if len(chosen) > 1 {
		rs.own = true
		for _, gi := range chosen {
			// Groups are in file order, so the rules stay in file order.
			g := &groups[gi]
			rs.agents = append(rs.agents, r.agents[g.a0:g.a1]...)
			rs.rules = append(rs.rules, r.rules[g.r0:g.r1]...)
		}
	}
	for _, gi := range chosen {
		g := &groups[gi]
		for i := g.a0; i < g.a1; i++ {
			a := &r.agents[i]
			if a.delayLine == 0 || rs.delayLine != 0 && a.delayLine >= rs.delayLine {
				continue
			}
			if token == "" && a.star || token != "" && s.matchAgent(a, r.src, compared) == best {
				rs.crawlDelay, rs.delayLine = a.delay, a.delayLine
			}
		}
	}
	if rs.delayLine == 0 && r.delayLine != 0 {
		rs.crawlDelay, rs.delayLine = r.delay, r.delayLine
	}
	// The chosen groups' License lines, or when they have none the global
	// ones (group -1).
	for pass := 0; pass < 2 && rs.lic == nil; pass++ {
		for _, x := range r.licenses {
			if pass == 0 && slices.Contains(chosen, x.group) || pass == 1 && x.group < 0 {
				rs.lic = append(rs.lic, License{Line: int(x.line), URL: r.src[x.u0:x.u1]})
			}
		}
	}
	if len(r.usage) == 0 {
		return rs
	}
	nu := 0
	for _, gi := range chosen {
		nu += int(groups[gi].u1 - groups[gi].u0)
	}
	if nu > 0 {
		u := new(usageIndex)
		u.rules = make([]UsageRule, 0, nu)
		for _, gi := range chosen {
			u.rules = append(u.rules, r.usage[groups[gi].u0:groups[gi].u1]...)
		}
		// The matcher ranks Rules; usage rules rank by pattern length, then
		// file order (none is an allow).
		keys := make([]ruleKey, nu)
		for i := range u.rules {
			keys[i].norm = u.rules[i].norm
		}
		u.m.build(s, keys)
		rs.usage = u
	}
	return rs
}

// matchAgent returns how closely the user-agent entry a (of the text src)
// names the crawler token t: -1 when it does not; else 0, or in
// matchLongestPrefix the length of a's token (the longest wins).
func (s *spec) matchAgent(a *agent, src, t string) int {
	if a.star || a.t1 == a.v0 {
		return -1
	}
	tok := src[a.v0:a.t1]
	switch s.agentMatch {
	case matchLongestPrefix:
		n := len(tok)
		if n > len(t) || !strings.EqualFold(t[:n], tok) {
			return -1
		}
		return n
	default:
		// Outside matchNames both are ASCII (agentChars): equal only if
		// as long.
		if s.agentMatch != matchNames && len(tok) != len(t) || !strings.EqualFold(tok, t) {
			return -1
		}
		return 0
	}
}

// groupsFor appends to out the indices of the groups that match token t
// best, and returns them and how closely they match (see matchAgent).
func (r *Robots) groupsFor(t string, out []int32) ([]int32, int) {
	s := &r.d.s
	best := -1
	for i, g := range r.groups {
		m := -1
		for j := g.a0; j < g.a1; j++ {
			m = max(m, s.matchAgent(&r.agents[j], r.src, t))
		}
		if m < 0 || m < best {
			continue
		}
		if m > best {
			best, out = m, out[:0]
		}
		out = append(out, int32(i))
	}
	return out, best
}

// Dialect returns the dialect the rules were read with.
func (rs *Ruleset) Dialect() *Dialect { return rs.r.d }

// Footprint returns about how many bytes of memory rs holds beyond the
// [Robots] it was made from (its index, and its rules when several groups
// were merged): for caches that budget bytes. An estimate.
//
// The index of the rules counts whether it is built yet or not (an estimate
// from the rules until it is), so that the figure does not change as the
// Ruleset is used.
func (rs *Ruleset) Footprint() int {
	if rs == &rs.r.d.emptyRules {
		return 0 // shared by all empty files
	}
	n := sizeOf[Ruleset]()
	if rs.own {
		n += sizeOf[agent]()*cap(rs.agents) + sizeOf[rule]()*cap(rs.rules)
	}
	if m := rs.idx.Load(); m != nil {
		n += m.footprint()
	} else {
		n += indexEstimate(rs.r, rs.rules)
	}
	if rs.usage != nil {
		n += sizeOf[usageIndex]() + sizeOf[UsageRule]()*cap(rs.usage.rules) + rs.usage.m.footprint() - sizeOf[matcher]()
	}
	n += sizeOf[License]() * cap(rs.lic)
	return n
}

// Agents returns the user-agent entries of the group(s) in force, in file
// order and in a new slice; empty when no group applies.
func (rs *Ruleset) Agents() []Agent { return publicAgents(rs.agents, rs.r.src) }

// Token returns the crawler token whose own group(s) were selected, or ""
// when the "*" group(s) (or none) apply.
func (rs *Ruleset) Token() string { return rs.token }

// Rules returns the rules in force in file order, in a new slice.
func (rs *Ruleset) Rules() []Rule {
	return rs.r.ruleValues(rs.rules)
}

// CrawlDelay returns the crawl delay the dialect reads for this crawler, and
// false when there is none (always false in google and koster1994).
func (rs *Ruleset) CrawlDelay() (time.Duration, bool) { return rs.crawlDelay, rs.delayLine != 0 }

// CrawlDelayLine returns the line of the Crawl-delay in force, 0 if none.
func (rs *Ruleset) CrawlDelayLine() int { return int(rs.delayLine) }

// Check reports whether the crawler may fetch path: the path of the URL and
// its query, as sent ("/a/b?c=d"; "" counts as "/"). The fragment must not
// be included. Check is safe for concurrent use.
//
// The first 32 checks of a Ruleset go over its rules one by one, as
// Google's parser does; the next builds an index of the rules (once:
// concurrent checks wait), in about the time of 20 to 60 such checks, and
// every check after it walks the index, in about the time of a map lookup.
//
// Check does not allocate when the path, in the form the dialect compares
// it, is at most 512 bytes long, except for the one check that builds the
// index. google and koster1994 compare the path as given; rfc9309 and
// coccoc percent-normalise it first, and a normalised path longer than 512
// bytes costs one allocation of its exact length.
func (rs *Ruleset) Check(path string) Verdict {
	if path == "" {
		path = "/"
	}
	if rs.r.d.s.robotsTxtFree && IsRobotsTxt(path) {
		return Verdict{Allowed: true, Reason: ReasonRobotsTxt}
	}
	m := rs.idx.Load()
	if m == nil {
		if len(rs.rules) == 0 {
			return Verdict{Allowed: true}
		}
		if rs.checks.Add(1) > indexAfter {
			m = rs.index()
		}
	}
	ri := -1
	if m != nil && m.fixed != pathDependent {
		if m.fixed != noRule {
			ri = int(m.order[m.fixed])
		}
	} else {
		ri = rs.lookup(m, path)
	}
	if ri < 0 {
		return Verdict{Allowed: true}
	}
	x := &rs.rules[ri]
	return Verdict{Allowed: x.allow(), Reason: ReasonRule, Rule: rs.r.rule(x)}
}

// indexAfter is how many checks a Ruleset answers by going over its rules
// before it builds its index, which costs about 20 to 60 such passes
// (docs.oracle.com: 7 ms against 120 µs; BenchmarkParse): one checked more
// often pays at worst about twice what the index built at once would cost.
const indexAfter = 32

// index returns the index of rs's rules, building it on the first call
// (concurrent calls wait for it).
func (rs *Ruleset) index() *matcher {
	rs.once.Do(func() {
		m := new(matcher)
		keys := make([]ruleKey, len(rs.rules))
		for i := range rs.rules {
			keys[i] = ruleKey{rs.r.norm(&rs.rules[i]), rs.rules[i].allow()}
		}
		m.build(&rs.r.d.s, keys)
		rs.idx.Store(m)
	})
	return rs.idx.Load()
}

// scan returns the index in rs.rules of the rule that decides the
// normalised path p, or -1, going over the rules in order: the rule that
// ranks first (longest pattern, then allow before disallow, then file
// order) among those that match, as the index would give.
func (rs *Ruleset) scan(p string) int {
	r := rs.r
	s := &r.d.s
	best, bestLen, bestAllow := -1, -1, false
	rules := rs.rules
	for i := range rules {
		x := &rules[i]
		if int(x.n1-x.n0) < bestLen || int(x.n1-x.n0) == bestLen && (bestAllow || !x.allow()) {
			continue
		}
		norm := r.norm(x)
		// Compare the literal bytes first: most rules differ from the path
		// within a few of them.
		k := 0
		for k < len(norm) && k < len(p) && norm[k] == p[k] && (!s.wildcards || norm[k] != '*' && norm[k] != '$') {
			k++
		}
		if k < len(norm) && (!s.wildcards || norm[k] != '*' && norm[k] != '$' || !s.matchNorm(norm, p)) {
			continue
		}
		best, bestLen, bestAllow = i, len(norm), x.allow()
	}
	return best
}

// indexEstimate returns about how many bytes the index of rules takes once
// built (see Ruleset.Footprint).
func indexEstimate(r *Robots, rules []rule) int {
	// Per rule: its rank, about 1.2 trie nodes (a leaf and some of the
	// inner nodes) and half its pattern in labels; a wildcard rule also
	// its segments. (Within a third on the corpus.)
	if len(rules) == 0 {
		return 0
	}
	node := sizeOf[tnode]() + 1
	n := sizeOf[matcher]() + len(rules)*(4+node*6/5)
	for i := range rules {
		norm := r.norm(&rules[i])
		n += len(norm) / 2
		if r.d.s.wildcards {
			n += 8 * strings.Count(norm, "*")
		}
	}
	return n
}

// maxStackPath is the longest normalised path Check handles without
// allocating; shortPath bounds the common case, whose buffer is cheaper to
// set up.
const (
	shortPath    = 128
	maxStackPath = 512
)

// lookup returns the index in rs.rules of the rule that decides path, or
// -1: through the index m, or going over the rules when m is nil.
func (rs *Ruleset) lookup(m *matcher, path string) int {
	if rs.r.d.s.encoding != encRFC3986 {
		return rs.ruleAt(m, path)
	}
	i := rfcURLSpecial(path)
	if i < 0 {
		return rs.ruleAt(m, path) // already in normal form
	}
	// The normalised path is path[:i] and then at most three bytes for
	// each byte of path[i:].
	if i+3*(len(path)-i) <= shortPath {
		var buf [shortPath]byte
		return rs.ruleAt(m, bytesString(appendRFC3986URL(buf[:0], path, i)))
	}
	n := rfcURLLen(path, i)
	if n <= maxStackPath {
		var buf [maxStackPath]byte
		return rs.ruleAt(m, bytesString(appendRFC3986URL(buf[:0], path, i)))
	}
	return rs.ruleAt(m, bytesString(appendRFC3986URL(make([]byte, 0, n), path, i)))
}

// ruleAt is lookup of a path in normal form.
func (rs *Ruleset) ruleAt(m *matcher, p string) int {
	if m == nil {
		return rs.scan(p)
	}
	if rank := m.lookup(p); rank != noRule {
		return int(m.order[rank])
	}
	return -1
}

// CheckURL is [Ruleset.Check] for a URL: the path and query are taken from
// rawURL as Google's parser takes them (scheme and authority skipped,
// fragment dropped, "/" when there is no path). rawURL must be
// percent-encoded as it is sent.
func (rs *Ruleset) CheckURL(rawURL string) Verdict { return rs.Check(PathOf(rawURL)) }

// IsRobotsTxt reports whether path, a path and query as sent, names
// /robots.txt itself ("/robots.txt" or "/robots.txt?..."), which rfc9309
// always allows and which a fetch outcome of "complete disallow" leaves
// allowed in every dialect.
func IsRobotsTxt(p string) bool {
	const rt = "/robots.txt"
	return len(p) >= len(rt) && p[:len(rt)] == rt && (len(p) == len(rt) || p[len(rt)] == '?')
}

// PathOf returns the path, parameters and query of rawURL, as Google's
// robots.txt parser extracts them: an optional scheme and authority are
// skipped, the fragment is dropped, and "/" is returned when there is no
// path; a result that would start with '?' or ';' gets a leading '/'.
func PathOf(rawURL string) string {
	start := 0
	if strings.HasPrefix(rawURL, "//") {
		start = 2
	}
	early := indexPathStart(rawURL, start)
	from := start // after the scheme, when a "://" comes before the path
	if p := strings.Index(rawURL[start:], "://"); p >= 0 && (early < 0 || early > start+p) {
		from = start + p + 3
	}
	ps := indexPathStart(rawURL, from)
	if ps < 0 {
		return "/"
	}
	end := len(rawURL)
	if h := strings.IndexByte(rawURL[start:], '#'); h >= 0 {
		if end = start + h; end < ps {
			return "/"
		}
	}
	if rawURL[ps] != '/' {
		return "/" + rawURL[ps:end]
	}
	return rawURL[ps:end]
}

// indexPathStart returns the index of the first '/', '?' or ';' of s at or
// after from, or -1.
func indexPathStart(s string, from int) int {
	for i := from; i < len(s); i++ {
		if c := s[i]; c == '/' || c == '?' || c == ';' {
			return i
		}
	}
	return -1
}
