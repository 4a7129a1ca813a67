package dialect

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// parser turns lines into groups, as the dialect's table says.
type parser struct {
	s     *spec
	r     *Robots
	open  bool // a group is open
	ended bool // the open group has seen a line that ends its user-agent list
	skip  bool // koster1994: the current record did not start with User-agent
	// The tables so far (sized from the lines).
	rules    []rule
	groups   []group
	agents   []agent
	sitemaps []sitemapRec
	esc      []byte // the normalised patterns that are not in the body
}

func (p *parser) startGroup() {
	p.endGroup()
	p.groups = append(p.groups, group{a0: int32(len(p.agents)), r0: int32(len(p.rules)), u0: int32(len(p.r.usage))})
	p.open, p.ended = true, false
}

func (p *parser) endGroup() {
	if !p.open {
		return
	}
	g := &p.groups[len(p.groups)-1]
	g.a1, g.r1, g.u1 = int32(len(p.agents)), int32(len(p.rules)), int32(len(p.r.usage))
	p.open = false
}

func (p *parser) line(l *line) {
	s, r := p.s, p.r
	if l.prob != problemNone {
		r.warn(int(l.num), warnLong+warnKind(l.prob-problemLong))
	}
	if s.blankLineRecords && l.blank {
		p.endGroup()
		p.skip = false
		return
	}
	if l.key == "" {
		return
	}
	if p.open && s.endsAgents.has(l.kind) {
		p.ended = true // a User-agent line now opens a new group
	}
	switch l.kind {
	case keyUserAgent:
		if p.skip {
			return
		}
		if !p.open || p.ended {
			p.startGroup()
		}
		p.addAgents(l)
	case keyAllow, keyDisallow, keyContentUsage, keyContentSignal:
		switch {
		case p.skip:
		case !p.open:
			r.warnArgs(l, warnBeforeAgent)
			p.skip = s.blankLineRecords // with blank-line records, the rest of the record goes too
		case l.kind == keyAllow || l.kind == keyDisallow:
			p.addRule(l)
		default:
			p.addUsage(l)
		}
	case keyCrawlDelay:
		p.crawlDelay(l)
	case keyLicense:
		if l.value != "" && !p.skip {
			r.licenses = append(r.licenses, licenseRec{line: l.num, group: int32(len(p.groups)) - 1, u0: l.v0, u1: l.v1})
		}
	case keySitemap:
		if s.sitemaps && l.value != "" {
			p.sitemaps = append(p.sitemaps, sitemapRec{line: l.num, u0: l.v0, u1: l.v1})
		}
	case keyUnused:
		// Recognised, without effect in this dialect.
	default:
		r.warnArgs(l, warnUnknownKey)
	}
}

func (p *parser) addAgents(l *line) {
	v := l.value
	if p.s.agentMatch == matchNames {
		// Each name an entry, found again in v for its offsets.
		off := 0
		for _, name := range strings.Fields(v) {
			i := off + strings.Index(v[off:], name)
			off = i + len(name)
			v0, v1 := l.v0+int32(i), l.v0+int32(off)
			p.agents = append(p.agents, agent{line: l.num, v0: v0, v1: v1, t1: v1, star: name == "*"})
		}
		return
	}
	a := agent{line: l.num, v0: l.v0, v1: l.v1, t1: l.v0}
	if len(v) > 0 && v[0] == '*' && (len(v) == 1 || isSpace(v[1])) {
		a.star = true
	} else {
		a.t1 = l.v0 + int32(p.s.agentChars.prefixLen(v))
		if a.t1 == a.v0 {
			p.r.warnValue(l, warnNoToken)
		}
	}
	p.agents = append(p.agents, a)
}

func (p *parser) addRule(l *line) {
	s := p.s
	allow := l.kind == keyAllow
	if allow && !s.allowLines {
		return
	}
	if l.value == "" {
		if !allow && s.emptyDisallow == emptyDisallowAllowsAll {
			p.addRuleOf(l, ruleAllow|ruleNoteEmpty, l.v0, l.v0, l.v0)
		}
		return // an empty rule matches nothing
	}
	var flags uint32
	if allow {
		flags = ruleAllow
	}
	n0, n1 := l.v0, l.v1
	norm := l.value // the pattern as compared (esc is p.esc[n0:n1])
	if !l.plain {
		if e0, e1, esc := p.normalize(l.value); esc {
			flags |= ruleEsc
			n0, n1 = e0, e1
			norm = bytesString(p.esc[n0:n1]) // until p.esc next grows
		}
	}
	p.addRuleOf(l, flags, l.v1, n0, n1)
	// (strings.Contains first: LastIndexByte is a byte loop, and few
	// patterns have the name at all.)
	if allow && s.indexHTML && strings.Contains(norm, "/index.htm") {
		// Google: an allowed ".../index.htm(l)..." also allows ".../" exactly.
		if i := strings.LastIndexByte(norm, '/'); i >= 0 && strings.HasPrefix(norm[i:], "/index.htm") {
			e0 := int32(len(p.esc))
			p.esc = append(p.esc, norm[:i+1]...)
			p.esc = append(p.esc, '$')
			p.addRuleOf(l, ruleAllow|ruleEsc|ruleNoteIndex, l.v1, e0, int32(len(p.esc)))
		}
	}
}

// escRoom returns p.esc, with room for the longest escaped form of v (a
// byte is at most "%XX") when it has none yet: the append of byte after
// byte would grow it several times for the one escaped pattern of a small
// file. (Later patterns grow it as append does, so that a file of many
// escaped patterns keeps little unused room.)
func (p *parser) escRoom(v string) []byte {
	if cap(p.esc) == 0 {
		return make([]byte, 0, 3*len(v))
	}
	return p.esc
}

// normalize appends the pattern v as compared (normalizePattern) to p.esc,
// with nothing allocated but p.esc's growth, and returns where it is; esc
// is false (and p.esc unchanged) when v is compared as written.
func (p *parser) normalize(v string) (n0, n1 int32, esc bool) {
	start := len(p.esc)
	switch p.s.encoding {
	case encRFC3986:
		if !needsRFCNormal(v, false) {
			return 0, 0, false
		}
		p.esc = appendRFC3986(p.escRoom(v), v, false)
	case encGoogle:
		if !googleNeedsEscape(v) {
			return 0, 0, false
		}
		p.esc = appendGoogleEscape(p.escRoom(v), v)
	default:
		return 0, 0, false
	}
	if string(p.esc[start:]) == v {
		p.esc = p.esc[:start] // nothing to change after all
		return 0, 0, false
	}
	return int32(start), int32(len(p.esc)), true
}

// addUsage adds a Content-Usage or Content-Signal line to the open group.
// A Content-Usage value that starts with '/' starts with a path, which ends
// at the first space or tab; the rest is the preference.
func (p *parser) addUsage(l *line) {
	u := UsageRule{Key: l.key, Value: l.value, Line: int(l.num), Group: len(p.groups) - 1, norm: "/"}
	if l.kind == keyContentSignal {
		u.Usage = ParseContentSignal(l.value)
	} else {
		if strings.HasPrefix(l.value, "/") {
			path, pref := l.value, ""
			if i := strings.IndexAny(path, " \t"); i >= 0 {
				path, pref = path[:i], trimSpace(path[i:])
			}
			u.Path, u.Value, u.norm = path, pref, p.s.normalizePattern(path)
		}
		u.Usage = ParseUsage(u.Value)
	}
	if u.Usage == 0 {
		p.r.warnArgs(l, warnNoPreference)
	}
	p.r.usage = append(p.r.usage, u)
}

// addRuleOf adds a rule of line l to the open group: its flags
// (ruleAllow...), its pattern src[l.v0:p1] and its norm [n0:n1] (of src or
// esc as the flags say).
func (p *parser) addRuleOf(l *line, flags uint32, p1, n0, n1 int32) {
	n := len(p.rules)
	if n == cap(p.rules) {
		p.rules = slices.Grow(p.rules, 1) // an index.html rule is two
	}
	p.rules = p.rules[:n+1]
	x := &p.rules[n] // filled in place
	x.line, x.gf = l.num, uint32(len(p.groups)-1)<<4|flags
	x.k0, x.k1, x.p0, x.p1, x.n0, x.n1 = l.k0, l.k1, l.v0, p1, n0, n1
}

func (p *parser) crawlDelay(l *line) {
	s, r := p.s, p.r
	if s.crawlDelay == crawlDelayNone {
		return
	}
	d, ok := s.parseCrawlDelay(l.value)
	if !ok {
		r.warnValue(l, warnBadCrawlDelay)
		return
	}
	if len(p.groups) == 0 && !p.skip {
		// Before the first User-agent line: the file's, for the crawlers
		// whose user-agent lines give them none.
		if r.delayLine == 0 {
			r.delay, r.delayLine = d, l.num
		}
		return
	}
	if !p.open || p.skip {
		r.warn(int(l.num), warnDelayOutside)
		return
	}
	// The delay belongs to the user-agent lines above it in the group that
	// have none yet: the group's user-agent lines may go on after it.
	g := &p.groups[len(p.groups)-1]
	for i := int(g.a0); i < len(p.agents); i++ {
		if a := &p.agents[i]; a.delayLine == 0 {
			a.delay, a.delayLine = d, l.num
		}
	}
	if g.delayLine == 0 {
		g.delay, g.delayLine = d, l.num
	}
}

// maxCrawlDelay bounds what is read so that the duration cannot overflow.
const maxCrawlDelay = 365 * 24 * time.Hour

func (s *spec) parseCrawlDelay(v string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, false
	}
	if s.crawlDelay == crawlDelayInteger {
		f = math.Ceil(f)
	}
	d := maxCrawlDelay
	if f < maxCrawlDelay.Seconds() {
		d = time.Duration(f * float64(time.Second))
	}
	if s.crawlDelayCap > 0 && d > s.crawlDelayCap {
		d = s.crawlDelayCap
	}
	return d, true
}
