package dialect

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Ruleset is what one crawler obeys in one robots.txt: the rules of the
// group(s) the dialect selects for the crawler's product tokens, indexed for
// fast checks, and the crawl delay. It is immutable and safe for concurrent
// use.
type Ruleset struct {
	r *Robots // the file (its dialect, and what rules and agents point into: Robots.text)
	// The rules, in file order: a window of the Robots' (one group) or a
	// table of rs's own; a pointer and a count, not slices, so that a
	// Ruleset fits in 80 bytes (see Robots.newRuleset). Whether they are a
	// window (shares) and whether rs is in the Robots' allocation (spare)
	// are told by the addresses, not kept.
	rules  *rule
	agents *agent // the user-agent entries, in file order, as rules
	// idx is the index of rules, nil until built (see Ruleset.Check):
	// published once, under one of indexLocks, and read without locks.
	idx        atomic.Pointer[matcher]
	usage      *usageIndex // nil without usage rules
	token      string
	crawlDelay time.Duration
	nrules     int32
	nagents    int32
	checks     atomic.Int32 // checks answered without the index
	delayLine  int32
}

// shares reports whether rs's rules and user-agent entries are windows of
// its Robots' tables (one group), not tables of its own.
func (rs *Ruleset) shares() bool {
	r := rs.r
	return within(unsafe.Pointer(rs.agents), unsafe.Pointer(r.agents), int(r.nagents)*int(unsafe.Sizeof(agent{}))) ||
		within(unsafe.Pointer(rs.rules), unsafe.Pointer(r.rules), int(r.nrules)*int(unsafe.Sizeof(rule{})))
}

// spare reports whether rs is no allocation of its own: the room in its
// Robots' allocation (Robots.Footprint counts it), or its dialect's shared
// Ruleset of the empty file.
func (rs *Ruleset) spare() bool {
	r := rs.r
	return rs == &r.d.emptyRules || r.flags&robotsSpare != 0 && rs == &(*robotsSpareRoom)(unsafe.Pointer(r)).rs
}

// within reports whether p is one of the n bytes at base.
func within(p, base unsafe.Pointer, n int) bool {
	return p != nil && uintptr(p) >= uintptr(base) && uintptr(p) < uintptr(base)+uintptr(n)
}

// ruleTab returns rs's rules.
func (rs *Ruleset) ruleTab() []rule { return unsafe.Slice(rs.rules, rs.nrules) }

// agentTab returns rs's user-agent entries.
func (rs *Ruleset) agentTab() []agent { return unsafe.Slice(rs.agents, rs.nagents) }

// setRules and setAgents make xs rs's rules, or its user-agent entries.
func (rs *Ruleset) setRules(xs []rule) {
	rs.rules, rs.nrules = unsafe.SliceData(xs), int32(len(xs))
	if len(xs) == 0 {
		rs.rules = nil
	}
}

func (rs *Ruleset) setAgents(xs []agent) {
	rs.agents, rs.nagents = unsafe.SliceData(xs), int32(len(xs))
	if len(xs) == 0 {
		rs.agents = nil
	}
}

// indexLocks serialise the building of an index (Ruleset.index), by a hash
// of the Ruleset's address: a sync.Once per Ruleset would make it 16 bytes
// larger; two Rulesets that share a lock only wait for each other while one
// builds its index, once in its life.
var indexLocks [64]sync.Mutex

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
	switch r {
	case ReasonNoRule:
		return "no rule"
	case ReasonRule:
		return "rule"
	case ReasonRobotsTxt:
		return "robots.txt"
	case ReasonFetch:
		return "fetch outcome"
	}
	return "Reason(" + itoa(int(r)) + ")"
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
		s := "line " + itoa(v.Rule.Line) + ": " + v.Rule.String()
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

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
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
// lines, an allocation of the Ruleset (none for the first For of a small
// file: the Robots' own allocation has room for it; none for an empty file,
// whose Rulesets are one shared value) and, only when several
// groups apply, one of their rules and user-agent entries. The returned
// Ruleset indexes its rules on its own, after its first checks (see
// [Ruleset.Check]); call For once per crawler and file and keep the result,
// so that the index is built once.
func (r *Robots) For(tokens ...string) *Ruleset {
	if r == &r.d.empty {
		// An empty file: nothing applies, whoever asks.
		return &r.d.emptyRules
	}
	s := &r.d.s
	groups, allAgents, allRules := r.groupTab(), r.agentTab(), r.ruleTab()
	var buf [4]int32 // the chosen groups, when they are few
	var chosen []int32
	token, best := "", -1
	compared := ""
	if len(groups) > 0 {
		// (When no user-agent entry names a crawler, no token can select a
		// group of its own: only the "*" groups can apply.)
		for _, t := range tokens {
			if r.flags&robotsNamed == 0 {
				break
			}
			c, _ := r.d.AgentToken(t)
			if c == "" {
				continue
			}
			chosen, best = r.groupsFor(c, buf[:0])
			if len(chosen) > 0 {
				token, compared = trimToken(t), c
				break
			}
		}
		if len(chosen) == 0 {
			chosen = buf[:0]
			for i := range groups {
				a0, a1 := agentsOf(groups, i)
				for j := a0; j < a1; j++ {
					if allAgents[j].star {
						chosen = append(chosen, int32(i))
						break
					}
				}
			}
		}
	}
	rs := r.newRuleset()
	rs.r, rs.token = r, token
	if len(chosen) == 1 {
		// One group: its rules and user-agent entries are used in place
		// (they are immutable).
		a0, a1 := agentsOf(groups, int(chosen[0]))
		r0, r1 := rulesOf(groups, int(chosen[0]))
		rs.setAgents(allAgents[a0:a1:a1])
		rs.setRules(allRules[r0:r1:r1])
	} else if len(chosen) > 1 {
		nr, na := 0, 0
		for _, gi := range chosen {
			a0, a1 := agentsOf(groups, int(gi))
			r0, r1 := rulesOf(groups, int(gi))
			nr += int(r1 - r0)
			na += int(a1 - a0)
		}
		// Both tables in one allocation (neither holds pointers).
		a := newArena(make([]uint64, words(na*int(unsafe.Sizeof(agent{})))+words(nr*int(unsafe.Sizeof(rule{})))))
		agents := carve[agent](&a, na)
		rules := carve[rule](&a, nr)
		for _, gi := range chosen {
			a0, a1 := agentsOf(groups, int(gi))
			r0, r1 := rulesOf(groups, int(gi))
			agents = append(agents, allAgents[a0:a1]...)
			// Groups are in file order, so the rules stay in file order.
			rules = append(rules, allRules[r0:r1]...)
		}
		rs.setAgents(agents)
		rs.setRules(rules)
	}
	for _, gi := range chosen {
		a0, a1 := agentsOf(groups, int(gi))
		for i := a0; i < a1; i++ {
			a := &allAgents[i]
			if a.delayLine == 0 || rs.delayLine != 0 && a.delayLine >= rs.delayLine {
				continue
			}
			if token == "" && a.star || token != "" && s.matchAgent(a, r.src, compared) == best {
				rs.crawlDelay, rs.delayLine = a.delay, a.delayLine
			}
		}
	}
	if d, line := r.fileDelay(); rs.delayLine == 0 && line != 0 {
		rs.crawlDelay, rs.delayLine = d, line
	}
	if len(r.usage()) == 0 {
		return rs
	}
	nu := 0
	for _, gi := range chosen {
		g := r.window(int(gi))
		nu += int(g.u1 - g.u0)
	}
	if nu > 0 {
		u := new(usageIndex)
		u.rules = make([]UsageRule, 0, nu)
		for _, gi := range chosen {
			g := r.window(int(gi))
			u.rules = append(u.rules, r.more.usage[g.u0:g.u1]...)
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
	groups, agents := r.groupTab(), r.agentTab()
	best := -1
	for i := range groups {
		a0, a1 := agentsOf(groups, i)
		m := -1
		for j := a0; j < a1; j++ {
			m = max(m, s.matchAgent(&agents[j], r.src, t))
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
	n := 0
	if !rs.spare() {
		n = 192
	}
	shares := rs.shares()
	if !shares {
		n += int(unsafe.Sizeof(agent{})) * int(rs.nagents)
	}
	if m := rs.idx.Load(); m != nil {
		n += int(unsafe.Sizeof(matcher{})) + 4*len(m.order) + int(unsafe.Sizeof(tnode{}))*len(m.nodes) + len(m.kidKey) + len(m.labels) +
			int(unsafe.Sizeof(wildRule{}))*len(m.wild) + 16*len(m.segs)
		for i := range m.grams {
			n += 64 + 4*len(m.grams[i].start) + int(unsafe.Sizeof(gramEntry{}))*len(m.grams[i].entries) + 4*len(m.grams[i].loose)
		}
	} else {
		t := rs.r.text()
		n += indexEstimate(&rs.r.d.s, rs.ruleTab(), &t)
	}
	if rs.usage != nil {
		u := &rs.usage.m
		n += int(unsafe.Sizeof(usageIndex{})) + int(unsafe.Sizeof(UsageRule{}))*cap(rs.usage.rules) + 4*len(u.order) + int(unsafe.Sizeof(tnode{}))*len(u.nodes) +
			len(u.kidKey) + len(u.labels) + int(unsafe.Sizeof(wildRule{}))*len(u.wild) + 16*len(u.segs)
	}
	if !shares {
		n += int(unsafe.Sizeof(rule{})) * int(rs.nrules)
	}
	return n
}

// Agents returns the user-agent entries of the group(s) in force, in file
// order and in a new slice; empty when no group applies.
func (rs *Ruleset) Agents() []Agent { return publicAgents(rs.agentTab(), rs.r.src) }

// Token returns the crawler token whose own group(s) were selected, or ""
// when the "*" group(s) (or none) apply.
func (rs *Ruleset) Token() string { return rs.token }

// Rules returns the rules in force in file order, in a new slice.
func (rs *Ruleset) Rules() []Rule {
	t := rs.r.text()
	return t.rules(rs.ruleTab())
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
// Google's parser does for each URL, in time linear in the number of rules;
// the next one builds an index of the rules (once: concurrent checks wait
// for it), in about the time of 20 to 60 such checks, and every check after
// it walks the index, in about the time of a map lookup. A Ruleset that
// answers a few checks never pays for an index.
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
		if rs.nrules == 0 {
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
	x := &rs.ruleTab()[ri]
	t := rs.r.text()
	return Verdict{Allowed: x.allow(), Reason: ReasonRule, Rule: t.rule(x)}
}

// indexAfter is how many checks a Ruleset answers by going over its rules
// before it builds its index. Building the index costs about as much as
// 20 to 60 passes over the rules (docs.oracle.com: 7 ms against 120 µs;
// BenchmarkParse, impl=ours-google+index): a Ruleset that is checked less
// often than that would not recover the cost, and one checked more often
// pays about twice what it would have with the index built at once, at
// worst.
const indexAfter = 32

// index returns the index of rs's rules, building it on the first call.
func (rs *Ruleset) index() *matcher {
	if m := rs.idx.Load(); m != nil {
		return m
	}
	mu := &indexLocks[uintptr(unsafe.Pointer(rs))/unsafe.Sizeof(Ruleset{})%uintptr(len(indexLocks))]
	mu.Lock()
	defer mu.Unlock()
	if m := rs.idx.Load(); m != nil {
		return m // built while this call waited
	}
	m := new(matcher)
	rules := rs.ruleTab()
	keys := make([]ruleKey, len(rules))
	t := rs.r.text()
	for i := range rules {
		keys[i] = ruleKey{t.norm(&rules[i]), rules[i].allow()}
	}
	m.build(&rs.r.d.s, keys)
	rs.idx.Store(m)
	return m
}

// scan returns the index in rs.rules of the rule that decides the
// normalised path p, or -1, going over the rules in order: the rule that
// ranks first (longest pattern, then allow before disallow, then file
// order) among those that match, as the index would give.
func (rs *Ruleset) scan(p string) int {
	s := &rs.r.d.s
	t := rs.r.text()
	best, bestLen, bestAllow := -1, -1, false
	rules := rs.ruleTab()
	for i := range rules {
		x := &rules[i]
		if int(x.n1-x.n0) < bestLen || int(x.n1-x.n0) == bestLen && (bestAllow || !x.allow()) {
			continue
		}
		norm := t.norm(x)
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
func indexEstimate(s *spec, rules []rule, t *ruleText) int {
	// Per rule: its rank, about 1.2 trie nodes (a leaf and some of the
	// inner nodes) and half its pattern in labels; a wildcard rule also
	// its segments. (Within a third on the corpus.)
	if len(rules) == 0 {
		return 0
	}
	const node = int(unsafe.Sizeof(tnode{})) + 1
	n := int(unsafe.Sizeof(matcher{})) + len(rules)*(4+node*6/5)
	for i := range rules {
		norm := t.norm(&rules[i])
		n += len(norm) / 2
		if s.wildcards {
			if k := strings.IndexByte(norm, '*'); k >= 0 {
				n += 8 * strings.Count(norm[k:], "*")
			}
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

// bytesString returns b as a string without copying; b must not change
// while the string is in use.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

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
	proto := strings.Index(rawURL[start:], "://")
	if proto >= 0 {
		proto += start
	}
	if early >= 0 && (proto < 0 || early < proto) {
		proto = -1
	}
	if proto < 0 {
		proto = start
	} else {
		proto += 3
	}
	ps := indexPathStart(rawURL, proto)
	if ps < 0 {
		return "/"
	}
	hash := strings.IndexByte(rawURL[start:], '#')
	if hash >= 0 {
		hash += start
	}
	if hash >= 0 && hash < ps {
		return "/"
	}
	end := len(rawURL)
	if hash >= 0 {
		end = hash
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
