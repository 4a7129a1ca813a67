package dialect

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// Robots is a parsed robots.txt body. It is immutable and safe for
// concurrent use.
type Robots struct {
	d        *Dialect
	groups   []Group
	rules    []Rule      // all rules; each group holds a window of it
	usage    []UsageRule // all usage rules; each group holds a window of it
	agents   []Agent
	sitemaps []Sitemap
	warnings []warning // written out by Warnings
	src      string    // the text the warnings point into
	held     int       // bytes of the body this Robots holds (Footprint)
	bytes    int
	cut      bool
	// The first valid Crawl-delay before any User-agent line (delayLine 0:
	// none): for the crawlers whose user-agent lines give them none.
	delay     time.Duration
	delayLine int
	// Room for the first group and its user-agent line, so that a small
	// file costs fewer allocations.
	group1 [1]Group
	agent1 [1]Agent
}

// Group is one group (record) of the file: user-agent lines and the rules
// that follow them.
type Group struct {
	Agents []Agent // the user-agent lines, in file order
	Rules  []Rule  // the rules, in file order
	// Usage holds the group's Content-Usage and Content-Signal lines, in
	// file order (none in koster1994).
	Usage []UsageRule
	// CrawlDelay is the first valid Crawl-delay of the group, as the dialect
	// reads it; CrawlDelayLine is 0 when there is none. What a crawler obeys
	// is the delay of the user-agent lines that name it: Agent.CrawlDelay.
	CrawlDelay     time.Duration
	CrawlDelayLine int
}

// Agent is one crawler name of a user-agent line.
type Agent struct {
	Value string // as written (one of several names in koster1994)
	Line  int
	// CrawlDelay is the first valid Crawl-delay that follows this
	// user-agent line in its group, as the dialect reads it;
	// CrawlDelayLine is 0 when there is none.
	CrawlDelay     time.Duration
	CrawlDelayLine int
	token          string // what is compared with the crawler's token
	star           bool
}

// Rule is one allow or disallow line.
type Rule struct {
	Allow   bool   // an allow rule (an empty Disallow read as "allow everything" is one too)
	Key     string // the key as written in the file ("Disallow", "disallow", "Dissallow")
	Pattern string // the value as written in the file
	Line    int    // 1-based line number
	Group   int    // index of the rule's group in Robots.Groups()
	// Note says when the rule is not an ordinary reading of its line: Google's
	// index.html rule, or an empty Disallow kept as "allow everything".
	Note string

	norm string // the pattern as compared
}

// String returns the rule as written in the file, key and value
// ("Disallow: /private").
func (r *Rule) String() string {
	if r.Pattern == "" {
		return r.Key + ":"
	}
	return r.Key + ": " + r.Pattern
}

const (
	noteEmptyDisallow = "empty Disallow: allows everything"
	noteIndexHTML     = "Google: an allowed index.htm(l) also allows its directory"
)

// Sitemap is the value of a Sitemap line.
type Sitemap struct {
	URL  string
	Line int
}

// Warning is a line the parser could not (fully) use, and why.
type Warning struct {
	Line    int
	Message string
}

func (w Warning) String() string { return "line " + strconv.Itoa(w.Line) + ": " + w.Message }

// warning is a Warning as the parser keeps it: the message's kind and its
// arguments as offsets into Robots.src, so that a parse writes no message
// and the table holds no pointers.
type warning struct {
	line   int32
	kind   warnKind
	a0, a1 int32 // first argument: src[a0:a1]
	b0, b1 int32 // second argument
}

type warnKind uint8

const (
	warnLong          warnKind = iota // problemLong
	warnNoColon                       // problemNoColon
	warnEmptyKey                      // problemEmptyKey
	warnBeforeAgent                   // a: key
	warnUnknownKey                    // a: key
	warnNoToken                       // a: value
	warnNoPreference                  // a: key, b: value
	warnBadCrawlDelay                 // a: value
	warnDelayOutside
	warnCut
)

func (w *warning) message(src string) string {
	a, b := src[w.a0:w.a1], src[w.b0:w.b1]
	switch w.kind {
	case warnLong:
		return problemText[problemLong]
	case warnNoColon:
		return problemText[problemNoColon]
	case warnEmptyKey:
		return problemText[problemEmptyKey]
	case warnBeforeAgent:
		return a + " before any User-agent line: ignored"
	case warnUnknownKey:
		return "unknown key " + strconv.Quote(a) + ": ignored"
	case warnNoToken:
		return "user-agent " + strconv.Quote(a) + " has no product token"
	case warnNoPreference:
		return a + " " + strconv.Quote(b) + " states no preference the dialect knows"
	case warnBadCrawlDelay:
		return "Crawl-delay " + strconv.Quote(a) + " is not a number of seconds: ignored"
	case warnDelayOutside:
		return "Crawl-delay outside a group: ignored"
	}
	return "robots.txt longer than " + strconv.Itoa(MaxBodyBytes) + " bytes: the rest is ignored"
}

// Dialect returns the dialect the file was parsed with.
func (r *Robots) Dialect() *Dialect { return r.d }

// Footprint returns about how many bytes of memory r holds, the body it
// read included: for caches that budget bytes. It is an estimate (within
// about a quarter on real files), not a measurement.
func (r *Robots) Footprint() int {
	n := 256 + r.held + int(unsafe.Sizeof(Sitemap{}))*cap(r.sitemaps) + int(unsafe.Sizeof(warning{}))*cap(r.warnings)
	n += int(unsafe.Sizeof(UsageRule{}))*cap(r.usage) + int(unsafe.Sizeof(Rule{}))*cap(r.rules) + int(unsafe.Sizeof(Group{}))*cap(r.groups) + int(unsafe.Sizeof(Agent{}))*cap(r.agents)
	return n
}

// Groups returns the groups in file order. The caller must not modify them.
func (r *Robots) Groups() []Group { return r.groups }

// Sitemaps returns the Sitemap lines in file order (none in koster1994).
func (r *Robots) Sitemaps() []Sitemap { return r.sitemaps }

// Warnings returns what the parser could not use, in line order. The
// messages are written on each call, into a new slice.
func (r *Robots) Warnings() []Warning {
	if len(r.warnings) == 0 {
		return nil
	}
	out := make([]Warning, len(r.warnings))
	for i := range r.warnings {
		out[i] = Warning{Line: int(r.warnings[i].line), Message: r.warnings[i].message(r.src)}
	}
	return out
}

// Size returns how many bytes of the body were read, and whether the body
// was cut at MaxBodyBytes.
func (r *Robots) Size() (bytes int, cut bool) { return r.bytes, r.cut }

// Parse reads a robots.txt body. It never fails: lines it cannot read are
// reported by [Robots.Warnings] and the rest is used. body may be any bytes;
// only the first MaxBodyBytes are read. The result does not refer to body.
//
// An empty body always gives the same (empty) *Robots.
func (d *Dialect) Parse(body []byte) *Robots {
	if len(body) == 0 {
		return &d.empty
	}
	if len(body) > MaxBodyBytes {
		// Keep one extra byte so that scan sees the cut.
		body = body[:MaxBodyBytes+1]
	}
	// Read in place; parse copies what the result keeps.
	return d.parse(unsafe.String(&body[0], len(body)), true)
}

// ParseString is [Dialect.Parse] for a string; the result may share memory
// with body.
//
// The body is read once, line by line, into a table of the lines that
// matter (offsets, reused from parse to parse); the parser then sizes its
// slices from the table and fills them, allocating nothing per line. A
// rule's value is copied only when a byte of it must be escaped.
func (d *Dialect) ParseString(body string) *Robots {
	if body == "" {
		return &d.empty
	}
	return d.parse(body, false)
}

// parse parses body; when clone is set, body is memory the result must not
// refer to, and parse copies the parts of it that the result keeps.
func (d *Dialect) parse(body string, clone bool) *Robots {
	p := parser{s: &d.s, r: &Robots{d: d}}
	sc := scratchPool.Get().(*scratch)
	recs, n, used, cut, last := p.s.scan(body, sc.recs[:0])
	r := p.r
	r.held = used
	if clone {
		body = keep(body[:used], recs)
		r.held = len(body)
	}
	r.src = body
	r.groups, r.agents, p.spans = r.group1[:0], r.agent1[:0], sc.spans[:0]
	if n.agents > 1 {
		r.groups, r.agents = make([]Group, 0, n.agents), make([]Agent, 0, n.agents)
	}
	p.ruleCap = n.rules
	if n.warnings > 0 {
		r.warnings = make([]warning, 0, n.warnings+1)
	}
	if n.sitemaps > 0 && p.s.sitemaps {
		r.sitemaps = make([]Sitemap, 0, n.sitemaps)
	}
	if n.usage > 0 {
		r.usage = make([]UsageRule, 0, n.usage)
	}
	var l line
	for i := range recs {
		l.lineRec = recs[i]
		l.key, l.value = body[l.k0:l.k1], body[l.v0:l.v1]
		p.line(&l)
	}
	p.endGroup()
	if cap(r.rules) > 2*len(r.rules)+16 {
		// Many rule lines were not used (before any User-agent line):
		// keep only what is.
		r.rules = slices.Clone(r.rules)
	}
	r.bytes, r.cut = used, cut
	if cut {
		r.warn(last+1, warnCut)
	}
	if len(r.groups) == 0 {
		r.groups = nil // as when they are not preallocated
	}
	if len(r.agents) == 0 {
		r.agents = nil
	}
	// Give each group its windows of the shared slices.
	for i := range r.groups {
		g := &r.groups[i]
		g.Agents = r.agents[p.spans[i].a0:p.spans[i].a1:p.spans[i].a1]
		g.Rules = r.rules[p.spans[i].r0:p.spans[i].r1:p.spans[i].r1]
		if sp := p.spans[i]; sp.u1 > sp.u0 {
			g.Usage = r.usage[sp.u0:sp.u1:sp.u1]
		}
	}
	sc.recs, sc.spans = recs, p.spans
	scratchPool.Put(sc)
	return r
}

// keep returns a copy of what the lines recs of body refer to, their keys
// and values, and points recs into it: all of body when they are most of
// it (one copy costs less than many small ones), else only them, so that a
// page of HTML read as robots.txt does not stay in memory.
func keep(body string, recs []lineRec) string {
	need := 0
	for i := range recs {
		need += int(recs[i].k1-recs[i].k0) + int(recs[i].v1-recs[i].v0)
	}
	if need >= len(body)/2 {
		return strings.Clone(body)
	}
	b := make([]byte, 0, need)
	for i := range recs {
		rec := &recs[i]
		if rec.k1 == rec.k0 {
			continue
		}
		k, v := body[rec.k0:rec.k1], body[rec.v0:rec.v1]
		rec.k0 = int32(len(b))
		b = append(b, k...)
		rec.k1, rec.v0 = int32(len(b)), int32(len(b))
		b = append(b, v...)
		rec.v1 = int32(len(b))
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// warn adds a warning of the given kind about line num.
func (r *Robots) warn(num int, kind warnKind) {
	r.warnings = append(r.warnings, warning{line: int32(num), kind: kind})
}

// warnArgs adds a warning about line l whose arguments are l's key (a) and
// value (b), as kind uses them.
func (r *Robots) warnArgs(l *line, kind warnKind) {
	r.warnings = append(r.warnings, warning{line: int32(l.num), kind: kind, a0: l.k0, a1: l.k1, b0: l.v0, b1: l.v1})
}

// warnValue adds a warning about line l whose argument is l's value.
func (r *Robots) warnValue(l *line, kind warnKind) {
	r.warnings = append(r.warnings, warning{line: int32(l.num), kind: kind, a0: l.v0, a1: l.v1})
}

type span struct{ a0, a1, r0, r1, u0, u1 int }

// parser turns lines into groups, as the dialect's table says.
type parser struct {
	s     *spec
	r     *Robots
	spans []span
	open  bool // a group is open
	rules bool // the open group has seen a line that ends its user-agent list
	skip  bool // koster1994: the current record did not start with User-agent
	// ruleCap is how many rules the body may hold (countKeyLines).
	ruleCap int
}

func (p *parser) startGroup() {
	p.endGroup()
	p.r.groups = append(p.r.groups, Group{})
	p.spans = append(p.spans, span{a0: len(p.r.agents), r0: len(p.r.rules), u0: len(p.r.usage)})
	p.open, p.rules = true, false
}

func (p *parser) endGroup() {
	if !p.open {
		return
	}
	sp := &p.spans[len(p.spans)-1]
	sp.a1, sp.r1, sp.u1 = len(p.r.agents), len(p.r.rules), len(p.r.usage)
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
		p.rules = true // a User-agent line now opens a new group
	}
	switch l.kind {
	case keyUserAgent:
		if p.skip {
			return
		}
		if !p.open || p.rules {
			p.startGroup()
		}
		p.addAgents(l)
	case keyAllow, keyDisallow:
		if p.skip {
			return
		}
		if !p.open {
			r.warnArgs(l, warnBeforeAgent)
			if s.blankLineRecords {
				p.skip = true
			}
			return
		}
		p.addRule(l)
	case keyContentUsage, keyContentSignal:
		if p.skip {
			return
		}
		if !p.open {
			r.warnArgs(l, warnBeforeAgent)
			return
		}
		p.addUsage(l)
	case keyCrawlDelay:
		p.crawlDelay(l)
	case keySitemap:
		if s.sitemaps && l.value != "" {
			r.sitemaps = append(r.sitemaps, Sitemap{URL: l.value, Line: int(l.num)})
		}
	case keyUnused:
		// Recognised, without effect in this dialect.
	default:
		r.warnArgs(l, warnUnknownKey)
	}
}

func (p *parser) addAgents(l *line) {
	if p.s.agentMatch == matchNames {
		for _, name := range strings.Fields(l.value) {
			p.r.agents = append(p.r.agents, Agent{Value: name, Line: int(l.num), token: name, star: name == "*"})
		}
		return
	}
	v := l.value
	a := Agent{Value: v, Line: int(l.num)}
	if len(v) > 0 && v[0] == '*' && (len(v) == 1 || isSpace(v[1])) {
		a.star = true
	} else {
		a.token = v[:p.s.agentChars.prefixLen(v)]
		if a.token == "" {
			p.r.warnValue(l, warnNoToken)
		}
	}
	p.r.agents = append(p.r.agents, a)
}

func (p *parser) addRule(l *line) {
	s := p.s
	allow := l.kind == keyAllow
	g := len(p.r.groups) - 1
	if allow && !s.allowLines {
		return
	}
	if l.value == "" {
		if !allow && s.emptyDisallow == emptyDisallowAllowsAll {
			r := p.newRule(l, g)
			r.Allow, r.Note = true, noteEmptyDisallow
		}
		return // an empty rule matches nothing
	}
	norm := l.value
	if !l.plain {
		norm = s.normalizePattern(l.value)
	}
	r := p.newRule(l, g)
	r.Allow, r.Pattern, r.norm = allow, l.value, norm
	if allow && s.indexHTML {
		// Google: an allowed ".../index.htm(l)..." also allows ".../" exactly.
		if i := strings.LastIndexByte(norm, '/'); i >= 0 && strings.HasPrefix(norm[i:], "/index.htm") {
			r := p.newRule(l, g)
			r.Allow, r.Pattern, r.Note, r.norm = true, l.value, noteIndexHTML, norm[:i+1]+"$"
		}
	}
}

// addUsage adds a Content-Usage or Content-Signal line to the open group.
// A Content-Usage value that starts with '/' starts with a path, which ends
// at the first space or tab; the rest is the preference.
func (p *parser) addUsage(l *line) {
	u := UsageRule{Key: l.key, Value: l.value, Line: int(l.num), Group: len(p.r.groups) - 1, norm: "/"}
	if l.kind == keyContentSignal {
		u.Usage = parseSignal(l.value)
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

// newRule adds a rule of line l and group g to the rules of the file and
// returns it, to be filled in place (a Rule is large: building one and
// copying it in cost more).
func (p *parser) newRule(l *line, g int) *Rule {
	rules := p.r.rules
	if rules == nil {
		// Room for every rule line, so that the rules are not copied as
		// they grow.
		rules = make([]Rule, 0, p.ruleCap+1)
	}
	n := len(rules)
	if n < cap(rules) {
		rules = rules[:n+1]
	} else {
		rules = append(rules, Rule{})
	}
	p.r.rules = rules
	r := &rules[n]
	r.Key, r.Line, r.Group = l.key, int(l.num), g
	return r
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
	if len(r.groups) == 0 && !p.skip {
		// Before the first User-agent line: the file's, for the crawlers
		// whose user-agent lines give them none.
		if r.delayLine == 0 {
			r.delay, r.delayLine = d, int(l.num)
		}
		return
	}
	if !p.open || p.skip {
		r.warn(int(l.num), warnDelayOutside)
		return
	}
	// The delay belongs to the user-agent lines above it in the group that
	// have none yet: the group's user-agent lines may go on after it.
	for i := p.spans[len(p.spans)-1].a0; i < len(r.agents); i++ {
		if a := &r.agents[i]; a.CrawlDelayLine == 0 {
			a.CrawlDelay, a.CrawlDelayLine = d, int(l.num)
		}
	}
	g := &r.groups[len(r.groups)-1]
	if g.CrawlDelayLine == 0 {
		g.CrawlDelay, g.CrawlDelayLine = d, int(l.num)
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
