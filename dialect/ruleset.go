package dialect

import (
	"sort"
	"strings"
	"time"
	"unsafe"
)

// Ruleset is what one crawler obeys in one robots.txt: the rules of the
// group(s) the dialect selects for the crawler's product tokens, indexed for
// fast checks, and the crawl delay. It is immutable and safe for concurrent
// use.
type Ruleset struct {
	s          *spec
	d          *Dialect
	rules      []Rule // in precedence order: rules[0] wins over any other rule it ties with
	cr         []compiled
	root       *node
	agents     []Agent
	token      string
	crawlDelay time.Duration
	delayLine  int
}

// Reason says what decided a verdict.
type Reason uint8

const (
	ReasonNoRule    Reason = iota // no rule matched: allowed
	ReasonRule                    // Verdict.Rule decided
	ReasonRobotsTxt               // /robots.txt itself, always allowed (rfc9309)
)

// Verdict is the answer to a check: whether the path may be fetched, and why.
type Verdict struct {
	Allowed bool
	Reason  Reason
	Rule    *Rule // the deciding rule when Reason is ReasonRule; points into the Ruleset
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
// group's user-agent matches a token is the dialect's); if none has, the "*"
// group(s) apply; if there are none, no rules apply. Empty tokens are
// skipped.
//
// For does the indexing work; call it once per crawler and file and keep the
// result.
func (r *Robots) For(tokens ...string) *Ruleset {
	s := &r.d.s
	var chosen []int
	token := ""
	for _, t := range tokens {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		chosen = r.groupsFor(t)
		if len(chosen) > 0 {
			token = t
			break
		}
	}
	if len(chosen) == 0 {
		for i := range r.groups {
			for _, a := range r.groups[i].Agents {
				if a.star {
					chosen = append(chosen, i)
					break
				}
			}
		}
	}
	rs := &Ruleset{s: s, d: r.d, token: token}
	for _, gi := range chosen {
		g := &r.groups[gi]
		rs.agents = append(rs.agents, g.Agents...)
		rs.rules = append(rs.rules, g.Rules...)
		if g.CrawlDelayLine != 0 && rs.delayLine == 0 {
			rs.crawlDelay, rs.delayLine = g.CrawlDelay, g.CrawlDelayLine
		}
	}
	rs.build()
	return rs
}

// groupsFor returns the indices of the groups that match token t.
func (r *Robots) groupsFor(t string) []int {
	var out []int
	best := 0
	for i := range r.groups {
		for _, a := range r.groups[i].Agents {
			if a.star || a.token == "" {
				continue
			}
			switch r.d.s.agentMatch {
			case matchLongestPrefix:
				n := len(a.token)
				if n > len(t) || n < best || !strings.EqualFold(t[:n], a.token) {
					continue
				}
				if n > best {
					best, out = n, out[:0]
				}
			default:
				if !strings.EqualFold(a.token, t) {
					continue
				}
			}
			out = append(out, i)
			goto next
		}
	next:
	}
	return out
}

// Dialect returns the dialect the rules were read with.
func (rs *Ruleset) Dialect() *Dialect { return rs.d }

// Agents returns the user-agent entries of the group(s) in force; empty when
// no group applies.
func (rs *Ruleset) Agents() []Agent { return rs.agents }

// Token returns the crawler token whose own group(s) were selected, or ""
// when the "*" group(s) (or none) apply.
func (rs *Ruleset) Token() string { return rs.token }

// Rules returns the rules in force in file order.
func (rs *Ruleset) Rules() []Rule {
	out := append([]Rule(nil), rs.rules...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// CrawlDelay returns the crawl delay the dialect reads for this crawler, and
// false when there is none (always false in google and koster1994).
func (rs *Ruleset) CrawlDelay() (time.Duration, bool) { return rs.crawlDelay, rs.delayLine != 0 }

// CrawlDelayLine returns the line of the Crawl-delay in force, 0 if none.
func (rs *Ruleset) CrawlDelayLine() int { return rs.delayLine }

// compiled is a rule's pattern split for matching: a literal prefix (kept in
// the trie) and what follows it.
type compiled struct {
	kind     uint8 // restNone: prefix match; restEnd: prefix then end; restWild
	anchored bool
	segs     []string // restWild: the literals between '*'s after the prefix
	mask     uint64   // restWild: bytes (mod 64) the segments need
}

const (
	restNone uint8 = iota
	restEnd
	restWild
)

// node is a radix-trie node over the rules' literal prefixes.
type node struct {
	label   string  // edge label from the parent
	keys    string  // first byte of each child's label
	kids    []*node // children, in keys order
	rules   []int32 // rules whose literal prefix ends here, best first
	minRank int32   // best rule anywhere in this subtree
}

func (rs *Ruleset) build() {
	rs.root = nil
	if len(rs.rules) == 0 {
		return
	}
	// Precedence: longer pattern first; allow before disallow on a tie;
	// then file order.
	sort.SliceStable(rs.rules, func(i, j int) bool {
		a, b := &rs.rules[i], &rs.rules[j]
		if len(a.norm) != len(b.norm) {
			return len(a.norm) > len(b.norm)
		}
		if a.Allow != b.Allow {
			return a.Allow
		}
		return a.Line < b.Line
	})
	rs.cr = make([]compiled, len(rs.rules))
	rs.root = &node{}
	for i := range rs.rules {
		prefix, c := rs.s.split(rs.rules[i].norm)
		rs.cr[i] = c
		rs.root.insert(prefix, int32(i))
	}
	rs.root.setMinRank()
}

// split separates a normalised pattern into its literal prefix and the rest.
func (s *spec) split(p string) (string, compiled) {
	if !s.wildcards {
		return p, compiled{kind: restNone}
	}
	star := strings.IndexByte(p, '*')
	if star < 0 {
		if strings.HasSuffix(p, "$") {
			return p[:len(p)-1], compiled{kind: restEnd}
		}
		return p, compiled{kind: restNone}
	}
	prefix, rest := p[:star], p[star+1:]
	c := compiled{kind: restWild}
	if strings.HasSuffix(rest, "$") {
		c.anchored = true
		rest = rest[:len(rest)-1]
	}
	parts := strings.Split(rest, "*")
	for i, seg := range parts {
		if seg == "" && !(c.anchored && i == len(parts)-1) {
			continue
		}
		c.segs = append(c.segs, seg)
		for j := 0; j < len(seg); j++ {
			c.mask |= 1 << (seg[j] & 63)
		}
	}
	if len(c.segs) == 0 {
		// "prefix*": a prefix match.
		return prefix, compiled{kind: restNone}
	}
	return prefix, c
}

func (n *node) insert(prefix string, idx int32) {
	for {
		if prefix == "" {
			n.rules = append(n.rules, idx)
			return
		}
		k := strings.IndexByte(n.keys, prefix[0])
		if k < 0 {
			n.keys += prefix[:1]
			n.kids = append(n.kids, &node{label: prefix, rules: []int32{idx}})
			return
		}
		child := n.kids[k]
		c := 0
		for c < len(child.label) && c < len(prefix) && child.label[c] == prefix[c] {
			c++
		}
		if c < len(child.label) {
			mid := &node{label: child.label[:c], keys: child.label[c : c+1], kids: []*node{child}}
			child.label = child.label[c:]
			n.kids[k] = mid
			child = mid
		}
		n, prefix = child, prefix[c:]
	}
}

func (n *node) setMinRank() int32 {
	m := int32(1<<31 - 1)
	if len(n.rules) > 0 {
		m = n.rules[0]
	}
	for _, k := range n.kids {
		if r := k.setMinRank(); r < m {
			m = r
		}
	}
	n.minRank = m
	return m
}

// match reports whether the compiled rest matches p from position i.
func (c *compiled) match(p string, i int, mask *uint64) bool {
	switch c.kind {
	case restNone:
		return true
	case restEnd:
		return i == len(p)
	}
	if *mask == 0 {
		*mask = pathMask(p)
	}
	if c.mask&^*mask != 0 {
		return false
	}
	last := len(c.segs) - 1
	for k, seg := range c.segs {
		if k == last && c.anchored {
			return len(p)-i >= len(seg) && p[len(p)-len(seg):] == seg
		}
		x := strings.Index(p[i:], seg)
		if x < 0 {
			return false
		}
		i += x + len(seg)
	}
	return true
}

func pathMask(p string) uint64 {
	m := uint64(1) << 63 // never zero, so that 0 means "not computed"
	for i := 0; i < len(p); i++ {
		m |= 1 << (p[i] & 63)
	}
	return m
}

// Check reports whether the crawler may fetch path: the path of the URL and
// its query, as sent ("/a/b?c=d"; "" counts as "/"). The fragment must not
// be included. Check does not allocate for paths up to 512 bytes.
func (rs *Ruleset) Check(path string) Verdict {
	if path == "" {
		path = "/"
	}
	if rs.s.robotsTxtFree && isRobotsTxt(path) {
		return Verdict{Allowed: true, Reason: ReasonRobotsTxt}
	}
	if rs.root == nil {
		return Verdict{Allowed: true}
	}
	if rs.s.encoding == encRFC3986 && needsRFCNormal(path, true) {
		var buf [512]byte
		b := appendRFC3986(buf[:0], path, true)
		path = unsafe.String(unsafe.SliceData(b), len(b))
	}
	best := rs.lookup(path)
	if best < 0 {
		return Verdict{Allowed: true}
	}
	r := &rs.rules[best]
	return Verdict{Allowed: r.Allow, Reason: ReasonRule, Rule: r}
}

// CheckURL is [Ruleset.Check] for a URL: the path and query are taken from
// rawURL as Google's parser takes them (scheme and authority skipped,
// fragment dropped, "/" when there is no path). rawURL must be
// percent-encoded as it is sent.
func (rs *Ruleset) CheckURL(rawURL string) Verdict { return rs.Check(PathOf(rawURL)) }

func isRobotsTxt(p string) bool {
	const rt = "/robots.txt"
	return strings.HasPrefix(p, rt) && (len(p) == len(rt) || p[len(rt)] == '?')
}

// lookup returns the index of the winning rule for p, or -1.
func (rs *Ruleset) lookup(p string) int {
	best := int32(-1)
	var mask uint64
	n, i := rs.root, 0
	for {
		if best >= 0 && n.minRank >= best {
			break
		}
		for _, ri := range n.rules {
			if best >= 0 && ri >= best {
				break
			}
			if rs.cr[ri].match(p, i, &mask) {
				best = ri
				break
			}
		}
		if i >= len(p) {
			break
		}
		k := strings.IndexByte(n.keys, p[i])
		if k < 0 {
			break
		}
		child := n.kids[k]
		if !strings.HasPrefix(p[i:], child.label) {
			break
		}
		n, i = child, i+len(child.label)
	}
	return int(best)
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
	early := indexAnyFrom(rawURL, "/?;", start)
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
	ps := indexAnyFrom(rawURL, "/?;", proto)
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

func indexAnyFrom(s, chars string, from int) int {
	if from > len(s) {
		return -1
	}
	i := strings.IndexAny(s[from:], chars)
	if i < 0 {
		return -1
	}
	return i + from
}
