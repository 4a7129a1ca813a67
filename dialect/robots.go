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
//
// The parser keeps what it read in pointer-free tables of offsets into the
// text it kept (src) and the patterns it had to write (esc), which the
// garbage collector does not look into; the exported values (Group, Rule,
// ...) are made from them when they are asked for.
type Robots struct {
	d   *Dialect
	src string // the text the tables point into
	esc string // the normalised patterns that are not in src

	rules    []rule // all rules; each group holds a window of them
	groups   []group
	agents   []agent // all user-agent entries; each group holds a window
	sitemaps []sitemapRec
	warnings []warning   // written out by Warnings
	usage    []UsageRule // all usage rules; each group holds a window
	licenses []licenseRec
	delay    time.Duration // the first valid Crawl-delay before any User-agent line
	// delayLine is the line of delay (0: none).
	delayLine int32
	bytes     int32 // of the body read
	cut       bool  // the body was cut at MaxBodyBytes
	named     bool  // some user-agent entry names a crawler (not "*", not empty)
	ownsText  bool  // src is a copy of the body's parts, not the body (Footprint)
}

// sitemapRec is a Sitemap as the parser keeps it: its line and its URL as
// offsets into Robots.src, without pointers.
type sitemapRec struct{ line, u0, u1 int32 }

// licenseRec is a License line: its group (-1: before any) and URL src[u0:u1].
type licenseRec struct{ line, group, u0, u1 int32 }

// group is a Group as the parser keeps it: its windows of Robots' tables,
// agents[a0:a1], rules[r0:r1] and usage[u0:u1], and its Crawl-delay.
type group struct {
	a0, a1, r0, r1, u0, u1 int32
	delayLine              int32
	delay                  time.Duration
}

// agent is an Agent as the parser keeps it: offsets into Robots.src.
type agent struct {
	line      int32
	v0, v1    int32 // Value: src[v0:v1]
	t1        int32 // the token compared with a crawler's: src[v0:t1]
	delayLine int32
	star      bool
	delay     time.Duration
}

// public returns x as an Agent of the text src.
func (x *agent) public(src string) Agent {
	return Agent{Value: src[x.v0:x.v1], Line: int(x.line), CrawlDelay: x.delay, CrawlDelayLine: int(x.delayLine)}
}

// publicAgents returns xs as Agents of the text src, in a new slice (nil
// when xs is empty).
func publicAgents(xs []agent, src string) []Agent {
	if len(xs) == 0 {
		return nil
	}
	out := make([]Agent, len(xs))
	for i := range xs {
		out[i] = xs[i].public(src)
	}
	return out
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

// rule is a Rule as the parser keeps it: offsets into the text the rules
// were read from (src) and into the patterns the parser had to write (esc),
// and no pointers, so that a file of many rules costs one allocation the
// garbage collector does not look into. Rule values are made from it when
// they are asked for (Robots.rule).
type rule struct {
	line   int32
	gf     uint32 // the group's index << 4 | the flags (ruleAllow...): 32 bytes a rule
	k0, k1 int32  // Key: src[k0:k1]
	p0, p1 int32  // Pattern: src[p0:p1]
	n0, n1 int32  // norm: src[n0:n1], or esc[n0:n1] when ruleEsc is set
}

const (
	ruleAllow     = 1 << iota
	ruleEsc       // norm is in esc
	ruleNoteEmpty // Note: noteEmptyDisallow
	ruleNoteIndex // Note: noteIndexHTML
)

func (x *rule) allow() bool { return x.gf&ruleAllow != 0 }

// group returns the index of x's group.
func (x *rule) group() int { return int(x.gf >> 4) }

// norm returns the pattern of x, one of r's rules, as compared.
func (r *Robots) norm(x *rule) string {
	if x.gf&ruleEsc != 0 {
		return r.esc[x.n0:x.n1]
	}
	return r.src[x.n0:x.n1]
}

// rule returns x, one of r's rules, as a Rule.
func (r *Robots) rule(x *rule) Rule {
	return Rule{
		Allow:   x.gf&ruleAllow != 0,
		Key:     r.src[x.k0:x.k1],
		Pattern: r.src[x.p0:x.p1],
		Line:    int(x.line),
		Group:   x.group(),
		Note:    ruleNotes[x.gf>>2&3],
		norm:    r.norm(x),
	}
}

// ruleNotes is Rule.Note by the flags ruleNoteEmpty and ruleNoteIndex.
var ruleNotes = [4]string{ruleNoteEmpty >> 2: noteEmptyDisallow, ruleNoteIndex >> 2: noteIndexHTML}

// ruleValues returns xs, rules of r, as Rules, in a new slice.
func (r *Robots) ruleValues(xs []rule) []Rule {
	if len(xs) == 0 {
		return nil
	}
	out := make([]Rule, len(xs))
	for i := range xs {
		out[i] = r.rule(&xs[i])
	}
	return out
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
// arguments as offsets into Robots.src (no message written, no pointers). A
// line the scanner could not read (warnLong...warnEmptyKey) has no arguments,
// and a run of such lines is one warning whose next more lines have it too
// (an HTML page read as robots.txt is mostly such lines).
type warning struct {
	line   int32
	kind   warnKind
	more   uint16
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
	case warnLong, warnNoColon, warnEmptyKey:
		return problemText[problemLong+problem(w.kind-warnLong)]
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
	n := sizeOf[Robots]() + len(r.esc) + len(r.src) +
		sizeOf[rule]()*cap(r.rules) + sizeOf[group]()*cap(r.groups) + sizeOf[agent]()*cap(r.agents) +
		sizeOf[sitemapRec]()*cap(r.sitemaps) + sizeOf[warning]()*cap(r.warnings) + sizeOf[UsageRule]()*cap(r.usage) + sizeOf[licenseRec]()*cap(r.licenses)
	if !r.ownsText {
		n += int(r.bytes) - len(r.src) // src is the body read (or a part of it)
	}
	return n
}

// sizeOf returns the size in bytes of a T.
func sizeOf[T any]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// Groups returns the groups in file order, in a new slice. The parser keeps
// the groups in a compact form of its own, from which each call makes the
// [Group] values (a few allocations); their Usage slices are shared, and
// the caller must not modify them.
func (r *Robots) Groups() []Group {
	if len(r.groups) == 0 {
		return nil
	}
	pub := make([]Group, len(r.groups))
	agents := publicAgents(r.agents, r.src)
	rules := r.ruleValues(r.rules)
	for i := range pub {
		g, x := &pub[i], &r.groups[i]
		g.Agents = agents[x.a0:x.a1:x.a1]
		if x.r1 > x.r0 {
			g.Rules = rules[x.r0:x.r1:x.r1]
		}
		if x.u1 > x.u0 {
			g.Usage = r.usage[x.u0:x.u1:x.u1]
		}
		g.CrawlDelay, g.CrawlDelayLine = x.delay, int(x.delayLine)
	}
	return pub
}

// Sitemaps returns the Sitemap lines in file order (none in koster1994), in
// a new slice.
func (r *Robots) Sitemaps() []Sitemap {
	if len(r.sitemaps) == 0 {
		return nil
	}
	out := make([]Sitemap, len(r.sitemaps))
	for i, x := range r.sitemaps {
		out[i] = Sitemap{URL: r.src[x.u0:x.u1], Line: int(x.line)}
	}
	return out
}

// Warnings returns what the parser could not use, in line order. The
// messages are written on each call, into a new slice.
func (r *Robots) Warnings() []Warning {
	if len(r.warnings) == 0 {
		return nil
	}
	n := 0
	for i := range r.warnings {
		n += 1 + int(r.warnings[i].more)
	}
	out := make([]Warning, 0, n)
	for i := range r.warnings {
		w := &r.warnings[i]
		m := w.message(r.src)
		for k := range 1 + int(w.more) {
			out = append(out, Warning{Line: int(w.line) + k, Message: m})
		}
	}
	return out
}

// Size returns how many bytes of the body were read, and whether the body
// was cut at MaxBodyBytes.
func (r *Robots) Size() (bytes int, cut bool) { return int(r.bytes), r.cut }

// Parse reads a robots.txt body. It never fails: lines it cannot read are
// reported by [Robots.Warnings] and the rest is used. body may be any bytes;
// only the first MaxBodyBytes are read. The result does not refer to body.
//
// An empty body always gives the same (empty) *Robots.
func (d *Dialect) Parse(body []byte) *Robots {
	if len(body) == 0 {
		return &d.empty
	}
	// Read in place; parse copies what the result keeps.
	return d.parse(bytesString(body), true)
}

// ParseString is [Dialect.Parse] for a string; the result may share memory
// with body.
//
// The body is read once into a table of the lines that matter, from which
// the parser sizes its tables and fills them, allocating nothing per line; a
// rule's value is copied only when a byte of it must be escaped.
func (d *Dialect) ParseString(body string) *Robots {
	if body == "" {
		return &d.empty
	}
	return d.parse(body, false)
}

// A body of up to tinyBody bytes is parsed with its table of lines on the
// stack (room for tinyRecs lines, grown on the heap past them), rather than
// with one from scratchPool, which costs more than it saves on so short a
// body.
const (
	tinyBody = 512
	tinyRecs = 32
)

// parse parses body; when clone is set, body is memory the result must not
// refer to, and parse copies the parts of it that the result keeps.
func (d *Dialect) parse(body string, clone bool) *Robots {
	if len(body) <= tinyBody {
		var recs [tinyRecs]lineRec
		r, _ := d.parseLines(body, clone, recs[:0])
		return r
	}
	sc := scratchPool.Get().(*scratch)
	r, recs := d.parseLines(body, clone, sc.recs[:0])
	sc.recs = recs
	scratchPool.Put(sc)
	return r
}

// smallRobots is a Robots with its tables, for a file of one user-agent line
// and at most two rules: one allocation of the size of the four it replaces.
type smallRobots struct {
	Robots
	rules  [2]rule
	groups [1]group
	agents [1]agent
}

// parseLines is parse with recs as the table of lines (empty, with room);
// it returns the table for reuse.
func (d *Dialect) parseLines(body string, clone bool, recs []lineRec) (*Robots, []lineRec) {
	var n lineCounts
	recs, used, cut, last := d.s.scan(body, recs, &n)
	body = body[:used]
	if clone {
		body = keep(body, recs)
	}
	p := parser{s: &d.s}
	if n.agents == 1 && n.rules <= len(smallRobots{}.rules) {
		sr := new(smallRobots)
		p.r, p.rules, p.groups, p.agents = &sr.Robots, sr.rules[:0], sr.groups[:0], sr.agents[:0]
	} else {
		// Each table is allocated once, at the size the scanner counted.
		p.r, p.rules, p.groups = new(Robots), make([]rule, 0, n.rules), make([]group, 0, n.groups)
		p.agents = make([]agent, 0, n.agents)
	}
	r := p.r
	r.d, r.src, r.bytes, r.cut, r.ownsText = d, body, int32(used), cut, clone
	if n.warnings > 0 || cut {
		r.warnings = make([]warning, 0, n.warnings+1)
	}
	if n.sitemaps > 0 && d.s.sitemaps {
		p.sitemaps = make([]sitemapRec, 0, n.sitemaps)
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
	if cap(p.rules) > 2*len(p.rules)+16 {
		// Many rule lines were not used: keep only what is.
		p.rules = slices.Clone(p.rules)
	}
	r.rules, r.groups, r.agents, r.sitemaps = p.rules, p.groups, p.agents, p.sitemaps
	r.esc = bytesString(p.esc)
	if cut {
		r.warn(last+1, warnCut)
	}
	r.named = slices.ContainsFunc(r.agents, func(a agent) bool { return !a.star && a.t1 > a.v0 })
	return r, recs
}

// keep returns a copy of what the lines recs of body refer to, their keys
// and values (the key alone of an unknown key, which a warning names), and
// points recs into it: all of body when they are most of it (one copy costs
// less than many small ones), else only them, so that a page of HTML read
// as robots.txt does not stay in memory.
func keep(body string, recs []lineRec) string {
	need := 0
	for i := range recs {
		need += int(recs[i].k1 - recs[i].k0)
		if recs[i].kind != keyUnknown {
			need += int(recs[i].v1 - recs[i].v0)
		}
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
		if rec.kind == keyUnknown {
			v = "" // only the key is used (warnUnknownKey)
		}
		rec.k0 = int32(len(b))
		b = append(b, k...)
		rec.k1, rec.v0 = int32(len(b)), int32(len(b))
		b = append(b, v...)
		rec.v1 = int32(len(b))
	}
	return bytesString(b)
}

// bytesString returns b as a string without copying; b must not change
// while the string is in use.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// warn adds a warning of the given kind about line num.
func (r *Robots) warn(num int, kind warnKind) {
	if kind <= warnEmptyKey && len(r.warnings) > 0 {
		// The next line of a run of lines with this problem.
		if w := &r.warnings[len(r.warnings)-1]; w.kind == kind && int(w.line)+int(w.more)+1 == num && w.more < math.MaxUint16 {
			w.more++
			return
		}
	}
	r.warnings = append(r.warnings, warning{line: int32(num), kind: kind})
}

// warnArgs adds a warning about line l whose arguments are l's key (a) and
// value (b), as kind uses them.
func (r *Robots) warnArgs(l *line, kind warnKind) {
	r.warnings = append(r.warnings, warning{line: l.num, kind: kind, a0: l.k0, a1: l.k1, b0: l.v0, b1: l.v1})
}

// warnValue adds a warning about line l whose argument is l's value.
func (r *Robots) warnValue(l *line, kind warnKind) {
	r.warnings = append(r.warnings, warning{line: l.num, kind: kind, a0: l.v0, a1: l.v1})
}
