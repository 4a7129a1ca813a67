package dialect

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"
)

// Robots is a parsed robots.txt body. It is immutable and safe for
// concurrent use.
//
// The parser keeps what it read in tables of offsets without pointers
// (rules, groups, user-agent entries) into the text it kept (src) and the
// patterns it had to write (esc); the exported values (Group, Agent, Rule)
// are made from them when they are asked for.
type Robots struct {
	d   *Dialect
	src string // the text the tables point into
	esc string // the normalised patterns that are not in src
	// The tables, each a pointer and a count (ruleTab, groupTab, agentTab),
	// not slices, so that a small file's Robots takes a smaller size class:
	// all rules (each group holds a window of them), groups and user-agent
	// entries.
	rules                    *rule
	groups                   *group
	agents                   *agent
	more                     *robotsMore // nil when the file has none of it
	nrules, ngroups, nagents int32
	bytes                    int32
	// flags are set by the parse and not changed after it (robotsCut,
	// robotsSpare, robotsNamed, robotsOwnsText, the size class): no
	// atomic store while the parse writes them.
	flags uint32
	// spareTaken is 1 once For has used the room for a Ruleset.
	spareTaken atomic.Uint32
}

// ruleTab returns r's rules.
func (r *Robots) ruleTab() []rule { return unsafe.Slice(r.rules, r.nrules) }

// groupTab returns r's groups.
func (r *Robots) groupTab() []group { return unsafe.Slice(r.groups, r.ngroups) }

// agentTab returns r's user-agent entries.
func (r *Robots) agentTab() []agent { return unsafe.Slice(r.agents, r.nagents) }

const (
	robotsCut      = 1 << iota // the body was cut at MaxBodyBytes
	robotsSpare                // the allocation has room for a Ruleset (robotsSpareRoom)
	robotsNamed                // some user-agent entry names a crawler (not "*", not empty)
	robotsOwnsText             // src is a copy of the body's parts, not the body (Footprint)
)

// robotsMore is what fewer files have: kept apart so that a Robots
// without it is smaller.
type robotsMore struct {
	usage    []UsageRule // all usage rules; each group holds a window of them
	warnings []warning   // written out by Warnings
	// The Sitemap lines (written out by Sitemaps): a pointer and a count
	// into the tables' allocation.
	sitemaps  *sitemapRec
	nsitemaps int32
	// The first valid Crawl-delay before any User-agent line (delayLine 0:
	// none): for the crawlers whose user-agent lines give them none.
	delayLine int32
	delay     time.Duration
}

// sitemapRec is a Sitemap as the parser keeps it: its line and its URL as
// offsets into Robots.src, without pointers.
type sitemapRec struct{ line, u0, u1 int32 }

// fileDelay returns the file's Crawl-delay before any User-agent line,
// and its line (0: none).
func (r *Robots) fileDelay() (time.Duration, int32) {
	if r.more == nil {
		return 0, 0
	}
	return r.more.delay, r.more.delayLine
}

// group is a Group as the parser keeps it: the ends of its windows of
// Robots' tables, each of which starts where the previous group's ends
// (see Robots.window).
type group struct {
	a1, r1, u1 int32 // agents, rules, usage
	delayLine  int32
	delay      time.Duration
}

// window is where a group's entries are in Robots' tables: agents[a0:a1],
// rules[r0:r1], more.usage[u0:u1].
type window struct{ a0, a1, r0, r1, u0, u1 int32 }

// window returns group i's window.
func (r *Robots) window(i int) (w window) {
	groups := r.groupTab()
	if i > 0 {
		p := &groups[i-1]
		w.a0, w.r0, w.u0 = p.a1, p.r1, p.u1
	}
	g := &groups[i]
	w.a1, w.r1, w.u1 = g.a1, g.r1, g.u1
	return w
}

// agentsOf returns where group i of groups has its user-agent entries:
// agents[a0:a1]. (window's fields one by one: a window built field by field
// and then copied as a whole stalls the CPU on the copy.)
func agentsOf(groups []group, i int) (a0, a1 int32) {
	if i > 0 {
		a0 = groups[i-1].a1
	}
	return a0, groups[i].a1
}

// rulesOf returns where group i of groups has its rules: rules[r0:r1].
func rulesOf(groups []group, i int) (r0, r1 int32) {
	if i > 0 {
		r0 = groups[i-1].r1
	}
	return r0, groups[i].r1
}

// usage returns the usage rules of the file.
func (r *Robots) usage() []UsageRule {
	if r.more == nil {
		return nil
	}
	return r.more.usage
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
// they are asked for (ruleText.rule).
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

// setFlags sets x's flags (ruleAllow...) to f.
func (x *rule) setFlags(f uint32) { x.gf = x.gf&^0xF | f }

// ruleText is what the offsets of rules point into.
type ruleText struct{ src, esc string }

// norm returns x's pattern as compared.
func (t *ruleText) norm(x *rule) string {
	if x.gf&ruleEsc != 0 {
		return t.esc[x.n0:x.n1]
	}
	return t.src[x.n0:x.n1]
}

// rule returns x as a Rule.
func (t *ruleText) rule(x *rule) Rule {
	return Rule{
		Allow:   x.gf&ruleAllow != 0,
		Key:     t.src[x.k0:x.k1],
		Pattern: t.src[x.p0:x.p1],
		Line:    int(x.line),
		Group:   x.group(),
		Note:    ruleNotes[x.gf>>2&3],
		norm:    t.norm(x),
	}
}

// ruleNotes is Rule.Note by the flags ruleNoteEmpty and ruleNoteIndex.
var ruleNotes = [4]string{ruleNoteEmpty >> 2: noteEmptyDisallow, ruleNoteIndex >> 2: noteIndexHTML}

// rules returns xs as Rules, in a new slice.
func (t *ruleText) rules(xs []rule) []Rule {
	if len(xs) == 0 {
		return nil
	}
	out := make([]Rule, len(xs))
	for i := range xs {
		out[i] = t.rule(&xs[i])
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
// arguments as offsets into Robots.src, so that a parse writes no message
// and the table holds no pointers.
//
// A line the scanner could not read (warnLong, warnNoColon, warnEmptyKey)
// has no arguments, and a run of such lines with the same problem is one
// warning: the following more lines have it too (an HTML page read as
// robots.txt is mostly such lines).
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
	f := r.flags
	n := len(r.esc)
	if f&robotsOwnsText == 0 {
		n += int(r.bytes) // the body, which src is
	}
	size := 0 // of r's allocation, when small
	if f&robotsSpare != 0 {
		// One allocation of size bytes holds the Robots, the room for a
		// Ruleset (used or not), the tables, the text kept and, in the
		// types with one, the robotsMore.
		size = int(f>>robotsClassShift) * robotsClassUnit
		n += size
	} else {
		n += int(unsafe.Sizeof(Robots{})) + int(unsafe.Sizeof(rule{}))*int(r.nrules) +
			int(unsafe.Sizeof(group{}))*int(r.ngroups) + int(unsafe.Sizeof(agent{}))*int(r.nagents)
		if f&robotsOwnsText != 0 {
			n += len(r.src)
		}
	}
	inside := func(p unsafe.Pointer) bool { return within(p, unsafe.Pointer(r), size) }
	if m := r.more; m != nil {
		if !inside(unsafe.Pointer(m)) {
			n += int(unsafe.Sizeof(robotsMore{}))
		}
		if !inside(unsafe.Pointer(unsafe.SliceData(m.warnings))) {
			n += int(unsafe.Sizeof(warning{})) * cap(m.warnings)
		}
		if !inside(unsafe.Pointer(m.sitemaps)) {
			n += int(unsafe.Sizeof(sitemapRec{})) * int(m.nsitemaps)
		}
		n += int(unsafe.Sizeof(UsageRule{})) * cap(m.usage)
	}
	return n
}

// Groups returns the groups in file order, in a new slice. The parser keeps
// the groups in a compact form of its own, from which each call makes the
// [Group] values (a few allocations); their Usage slices are shared, and
// the caller must not modify them.
func (r *Robots) Groups() []Group {
	if r.ngroups == 0 {
		return nil
	}
	groups := r.groupTab()
	pub := make([]Group, len(groups))
	agents := publicAgents(r.agentTab(), r.src)
	t := r.text()
	rules := t.rules(r.ruleTab())
	for i := range pub {
		g, x, w := &pub[i], &groups[i], r.window(i)
		g.Agents = agents[w.a0:w.a1:w.a1]
		if w.r1 > w.r0 {
			g.Rules = rules[w.r0:w.r1:w.r1]
		}
		if w.u1 > w.u0 {
			g.Usage = r.more.usage[w.u0:w.u1:w.u1]
		}
		g.CrawlDelay, g.CrawlDelayLine = x.delay, int(x.delayLine)
	}
	return pub
}

// text returns what r's rules point into.
func (r *Robots) text() ruleText { return ruleText{r.src, r.esc} }

// Sitemaps returns the Sitemap lines in file order (none in koster1994), in
// a new slice.
func (r *Robots) Sitemaps() []Sitemap {
	if r.more == nil || r.more.nsitemaps == 0 {
		return nil
	}
	recs := unsafe.Slice(r.more.sitemaps, r.more.nsitemaps)
	out := make([]Sitemap, len(recs))
	for i, x := range recs {
		out[i] = Sitemap{URL: r.src[x.u0:x.u1], Line: int(x.line)}
	}
	return out
}

// Warnings returns what the parser could not use, in line order. The
// messages are written on each call, into a new slice.
func (r *Robots) Warnings() []Warning {
	if r.more == nil || len(r.more.warnings) == 0 {
		return nil
	}
	ws := r.more.warnings
	n := 0
	for i := range ws {
		n += 1 + int(ws[i].more)
	}
	out := make([]Warning, 0, n)
	for i := range ws {
		w := &ws[i]
		m := w.message(r.src)
		for k := range 1 + int(w.more) {
			out = append(out, Warning{Line: int(w.line) + k, Message: m})
		}
	}
	return out
}

// Size returns how many bytes of the body were read, and whether the body
// was cut at MaxBodyBytes.
func (r *Robots) Size() (bytes int, cut bool) { return int(r.bytes), r.flags&robotsCut != 0 }

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
// matter (offsets, reused from parse to parse, or on the stack for a short
// body); the parser then sizes its tables of rules, groups and user-agent
// entries from it, allocates them at once (with the Robots itself when
// they are small) and fills them, allocating nothing per line. A rule's
// value is copied only when a byte of it must be escaped.
func (d *Dialect) ParseString(body string) *Robots {
	if body == "" {
		return &d.empty
	}
	return d.parse(body, false)
}

// tinyBody is the length up to which a body is parsed with its table of
// lines on the stack (room for tinyRecs lines, grown on the heap past
// them: a line of 16 bytes on average) rather than one from scratchPool,
// which costs more than it saves on so short a body.
const (
	tinyBody = 512
	tinyRecs = 32
)

// parse parses body; when clone is set, body is memory the result must not
// refer to, and parse copies the parts of it that the result keeps.
func (d *Dialect) parse(body string, clone bool) *Robots {
	if len(body) <= tinyBody/4 {
		// (A smaller table on the stack: Go zeroes it first.)
		var recs [tinyRecs / 4]lineRec
		r, _ := d.parseLines(body, clone, recs[:0])
		return r
	}
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

// A small file's tables and the text it keeps share one allocation with its
// Robots and with room for the Ruleset of its first For (which then
// allocates nothing): the first of smallTypes (from 256 to 1,024 bytes,
// each as large as a size class of the allocator) that they fit in;
// smallMoreTypes are the same with the file's robotsMore (sitemaps,
// warnings, usage rules), from 288 to 1,152 bytes. The allocation costs about
// in proportion to its size (most of a tiny file's Parse): hence the many
// classes, and the small Robots and Ruleset.
const (
	spareSize = int(unsafe.Sizeof(robotsSpareRoom{}))
	moreSize  = int(unsafe.Sizeof(robotsMore{}))
)

type (
	// robotsSpareRoom is how each of the small types starts.
	robotsSpareRoom struct {
		r  Robots
		rs Ruleset
	}
	// smallRoom is a small type: A is an array of words for tables and
	// text that makes it as large as a size class of the allocator.
	smallRoom[A any] struct {
		robotsSpareRoom
		a A
	}
	// smallMoreRoom is a small type with the file's robotsMore.
	smallMoreRoom[A any] struct {
		robotsSpareRoom
		m robotsMore
		a A
	}
	// A larger file's Robots with its robotsMore.
	robotsBig struct {
		r Robots
		m robotsMore
	}
)

// spareWords and moreWords are the words a small type takes before its
// words for tables and text, without and with a robotsMore: one of N bytes
// has N/8 - spareWords (N/8 - moreWords) of them.
const (
	spareWords = spareSize / 8
	moreWords  = (spareSize + moreSize) / 8
)

// smallType is one of the small types: its size (a size class of the
// allocator), the words of tables and text it holds, and alloc, which
// allocates one and returns its Robots (with its robotsMore in the types
// that have one) and those words.
type smallType struct {
	size, words int
	alloc       func() (*Robots, []uint64)
}

// small returns the smallType of smallRoom[A].
func small[A any]() smallType {
	var z smallRoom[A]
	return smallType{size: int(unsafe.Sizeof(z)), words: int(unsafe.Sizeof(z.a)) / 8, alloc: func() (*Robots, []uint64) {
		x := new(smallRoom[A])
		return &x.r, unsafe.Slice((*uint64)(unsafe.Pointer(&x.a)), unsafe.Sizeof(x.a)/8)
	}}
}

// smallMore returns the smallType of smallMoreRoom[A].
func smallMore[A any]() smallType {
	var z smallMoreRoom[A]
	return smallType{size: int(unsafe.Sizeof(z)), words: int(unsafe.Sizeof(z.a)) / 8, alloc: func() (*Robots, []uint64) {
		x := new(smallMoreRoom[A])
		x.r.more = &x.m
		return &x.r, unsafe.Slice((*uint64)(unsafe.Pointer(&x.a)), unsafe.Sizeof(x.a)/8)
	}}
}

// smallTypes and smallMoreTypes are the small types without and with a
// robotsMore, smallest first.
var (
	smallTypes = [...]smallType{
		small[[256/8 - spareWords]uint64](),
		small[[288/8 - spareWords]uint64](),
		small[[320/8 - spareWords]uint64](),
		small[[352/8 - spareWords]uint64](),
		small[[384/8 - spareWords]uint64](),
		small[[448/8 - spareWords]uint64](),
		small[[512/8 - spareWords]uint64](),
		small[[576/8 - spareWords]uint64](),
		small[[640/8 - spareWords]uint64](),
		small[[704/8 - spareWords]uint64](),
		small[[768/8 - spareWords]uint64](),
		small[[896/8 - spareWords]uint64](),
		small[[1024/8 - spareWords]uint64](),
	}
	smallMoreTypes = [...]smallType{
		smallMore[[288/8 - moreWords]uint64](),
		smallMore[[320/8 - moreWords]uint64](),
		smallMore[[352/8 - moreWords]uint64](),
		smallMore[[384/8 - moreWords]uint64](),
		smallMore[[448/8 - moreWords]uint64](),
		smallMore[[512/8 - moreWords]uint64](),
		smallMore[[576/8 - moreWords]uint64](),
		smallMore[[640/8 - moreWords]uint64](),
		smallMore[[704/8 - moreWords]uint64](),
		smallMore[[768/8 - moreWords]uint64](),
		smallMore[[896/8 - moreWords]uint64](),
		smallMore[[1024/8 - moreWords]uint64](),
		smallMore[[1152/8 - moreWords]uint64](),
	}
)

// maxSmall and maxSmallMore are the most words of tables and text a small
// type holds, without and with a robotsMore; maxTables and maxTablesMore
// the most words of tables alone (the text not in the allocation) that
// parseLines puts in one: above 640 and 768 bytes, the size class's unused
// room and the Ruleset room cost a cached policy more than separate
// allocations do.
const (
	maxSmall      = 1024/8 - spareWords
	maxSmallMore  = 1152/8 - moreWords
	maxTables     = 640/8 - spareWords
	maxTablesMore = 768/8 - moreWords
)

// newRobots returns a new Robots, with its robotsMore if more is set, and
// an arena of at least n words for its tables: in the same allocation, with
// room for a Ruleset, when n is small (at most most words, which is at most
// maxSmall or maxSmallMore), else in one of its own.
func newRobots(n int, more bool, most int) (*Robots, arena) {
	types := smallTypes[:]
	if more {
		types = smallMoreTypes[:]
	}
	if n <= most {
		for i := range types {
			if t := &types[i]; n <= t.words {
				r, a := t.alloc()
				// (parseLines adds to the flags: r is not yet shared.)
				r.flags = robotsSpare | uint32(t.size/robotsClassUnit)<<robotsClassShift
				return r, newArena(a)
			}
		}
	}
	if more {
		x := new(robotsBig)
		x.r.more = &x.m
		return &x.r, newArena(make([]uint64, n))
	}
	return new(Robots), newArena(make([]uint64, n))
}

// A small Robots' flags hold the size of its allocation, in units of
// robotsClassUnit bytes from bit robotsClassShift (Footprint).
const (
	robotsClassShift = 8
	robotsClassUnit  = 32
)

// newRuleset returns a zero Ruleset for r: the room in r's allocation the
// first time it is asked for, else a new one.
func (r *Robots) newRuleset() *Ruleset {
	if r.flags&robotsSpare != 0 && r.spareTaken.Load() == 0 && r.spareTaken.CompareAndSwap(0, 1) {
		// r is the first field of a type that starts as robotsSpareRoom.
		return &(*robotsSpareRoom)(unsafe.Pointer(r)).rs
	}
	return new(Ruleset)
}

// arena is memory, without pointers, that tables are carved from: words
// [off, n) of the allocation at base are left.
type arena struct {
	base   unsafe.Pointer
	off, n int
}

// newArena returns an arena of the words of a.
func newArena(a []uint64) arena { return arena{base: unsafe.Pointer(unsafe.SliceData(a)), n: len(a)} }

// take returns the next n bytes of a (n > 0), rounded up to whole words.
func (a *arena) take(n int) unsafe.Pointer {
	w := words(n)
	if a.off+w > a.n {
		panic("dialect: arena too small")
	}
	p := unsafe.Add(a.base, a.off*8)
	a.off += w
	return p
}

// words returns how many words n bytes (n >= 0) take in an arena.
func words(n int) int { return (n + 7) >> 3 }

// carve returns an empty slice of capacity n of a's memory; T must hold no
// pointers and need no more than 8-byte alignment.
func carve[T any](a *arena, n int) []T {
	if n == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*T)(a.take(n*int(unsafe.Sizeof(z)))), n)[:0]
}

// parseLines is parse with recs as the table of lines (empty, with room);
// it returns the table for reuse.
func (d *Dialect) parseLines(body string, clone bool, recs []lineRec) (*Robots, []lineRec) {
	var n lineCounts
	recs, used, cut, last := d.s.scan(body, recs, &n)
	body = body[:used]
	keepAll, keepN := false, 0
	if clone {
		keepAll, keepN = keepSize(body, recs)
	}
	// The rules, groups, user-agent entries and warnings take one
	// allocation without pointers, and share that of the Robots (and of the
	// text kept) when they are few.
	tw := words(n.rules*int(unsafe.Sizeof(rule{}))) + words(n.groups*int(unsafe.Sizeof(group{}))) +
		words(n.agents*int(unsafe.Sizeof(agent{})))
	nw := 0
	if n.warnings > 0 {
		nw = n.warnings + 1 // and the cut
	}
	tw += words(nw * int(unsafe.Sizeof(warning{})))
	ns := 0
	if d.s.sitemaps {
		ns = n.sitemaps
		tw += words(ns * int(unsafe.Sizeof(sitemapRec{})))
	}
	// The text kept shares the Robots' allocation when all fits in one
	// (else it is allocated on its own, without being zeroed first).
	more := n.warnings > 0 || ns > 0 || n.usage > 0 || cut
	small := tw+words(keepN) <= maxSmall || more && tw+words(keepN) <= maxSmallMore
	aw := tw
	if small {
		aw += words(keepN)
	}
	most := maxTables
	if more {
		most = maxTablesMore
	}
	if small && keepN > 0 {
		most = max(most, maxSmall)
		if more {
			most = maxSmallMore
		}
	}
	r, a := newRobots(aw, more, most)
	r.d = d
	p := parser{s: &d.s, r: r}
	p.tab = carve[rule](&a, n.rules)
	p.tab = p.tab[:cap(p.tab)]
	p.groups = carve[group](&a, n.groups)
	p.agents = carve[agent](&a, n.agents)
	warnings := carve[warning](&a, nw)
	p.sitemaps = carve[sitemapRec](&a, ns)
	flags := r.flags
	if clone {
		var buf []byte
		if small && keepN > 0 {
			buf = unsafe.Slice((*byte)(a.take(keepN)), keepN)[:0]
		}
		body = keep(body, recs, keepAll, keepN, buf)
		flags |= robotsOwnsText
	}
	r.src = body
	if more {
		m := r.extra()
		m.warnings = warnings
		if n.usage > 0 {
			m.usage = make([]UsageRule, 0, n.usage)
		}
	}
	var l line
	for i := range recs {
		// Field by field: the table was just written field by field, and a
		// copy of a whole record would wait for those stores.
		rec := &recs[i]
		l.num, l.kind, l.blank, l.prob, l.plain = rec.num, rec.kind, rec.blank, rec.prob, rec.plain
		l.k0, l.k1, l.v0, l.v1 = rec.k0, rec.k1, rec.v0, rec.v1
		// (The scanner's offsets are within body: 0 <= k0 <= k1 <= len
		// and v0 <= v1 <= len; made without bounds checks.)
		l.key, l.value = substr(body, l.k0, l.k1), substr(body, l.v0, l.v1)
		p.line(&l)
	}
	p.endGroup()
	rules := p.tab[:p.nr]
	if cap(rules) > 2*len(rules)+16 {
		// Many rule lines were not used: keep only what is.
		rules = slices.Clone(rules)
	}
	if len(rules) > 0 {
		r.rules, r.nrules = unsafe.SliceData(rules), int32(len(rules))
	}
	if len(p.groups) > 0 {
		r.groups, r.ngroups = unsafe.SliceData(p.groups), int32(len(p.groups))
	}
	if len(p.agents) > 0 {
		r.agents, r.nagents = unsafe.SliceData(p.agents), int32(len(p.agents))
	}
	if len(p.esc) > 0 {
		r.esc = unsafe.String(unsafe.SliceData(p.esc), len(p.esc))
	}
	if len(p.sitemaps) > 0 {
		m := r.extra()
		m.sitemaps, m.nsitemaps = unsafe.SliceData(p.sitemaps), int32(len(p.sitemaps))
	}
	r.bytes = int32(used)
	if cut {
		flags |= robotsCut
		r.warn(last+1, warnCut)
	}
	for i := range p.agents {
		if a := &p.agents[i]; !a.star && a.t1 > a.v0 {
			flags |= robotsNamed
			break
		}
	}
	r.flags = flags
	return r, recs
}

// substr returns s[i:j] for 0 <= i <= j <= len(s), which the caller
// guarantees, without the checks of the slice expression.
func substr(s string, i, j int32) string {
	if i == j {
		return "" // (no pointer past the end of s)
	}
	return unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(unsafe.StringData(s)), i)), j-i)
}

// keepSize returns how many bytes keep copies of body for the lines recs,
// and whether that is all of body.
func keepSize(body string, recs []lineRec) (all bool, n int) {
	need := 0
	for i := range recs {
		need += int(recs[i].k1 - recs[i].k0)
		if recs[i].kind != keyUnknown {
			need += int(recs[i].v1 - recs[i].v0)
		}
	}
	if need >= len(body)/2 {
		return true, len(body)
	}
	return false, need
}

// keep returns a copy of what the lines recs of body refer to, their keys
// and values (the key alone of an unknown key, which a warning names), and
// points recs into it: all of body when they are most of
// it (one copy costs less than many small ones), else only them, so that a
// page of HTML read as robots.txt does not stay in memory. all and n are
// what keepSize returned; buf, if not nil, is room for the n bytes.
func keep(body string, recs []lineRec, all bool, n int, buf []byte) string {
	if all {
		if buf == nil {
			return strings.Clone(body)
		}
		buf = append(buf, body...)
		return unsafe.String(unsafe.SliceData(buf), len(buf))
	}
	b := buf
	if b == nil {
		b = make([]byte, 0, n)
	}
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
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// extra returns r.more, made if r has none yet.
func (r *Robots) extra() *robotsMore {
	if r.more == nil {
		r.more = new(robotsMore)
	}
	return r.more
}

// warn adds a warning of the given kind about line num.
func (r *Robots) warn(num int, kind warnKind) {
	m := r.extra()
	if kind <= warnEmptyKey && len(m.warnings) > 0 {
		// The next line of a run of lines with this problem.
		if w := &m.warnings[len(m.warnings)-1]; w.kind == kind && int(w.line)+int(w.more)+1 == num && w.more < math.MaxUint16 {
			w.more++
			return
		}
	}
	m.warnings = append(m.warnings, warning{line: int32(num), kind: kind})
}

// warnArgs adds a warning about line l whose arguments are l's key (a) and
// value (b), as kind uses them.
func (r *Robots) warnArgs(l *line, kind warnKind) {
	m := r.extra()
	m.warnings = append(m.warnings, warning{line: l.num, kind: kind, a0: l.k0, a1: l.k1, b0: l.v0, b1: l.v1})
}

// warnValue adds a warning about line l whose argument is l's value.
func (r *Robots) warnValue(l *line, kind warnKind) {
	m := r.extra()
	m.warnings = append(m.warnings, warning{line: l.num, kind: kind, a0: l.v0, a1: l.v1})
}

// parser turns lines into groups, as the dialect's table says.
type parser struct {
	s     *spec
	r     *Robots
	open  bool // a group is open
	rules bool // the open group has seen a line that ends its user-agent list
	skip  bool // koster1994: the current record did not start with User-agent
	// tab[:nr] are the rules so far; tab is sized from the lines.
	tab []rule
	nr  int
	// The groups, user-agent entries and sitemaps so far (sized from the
	// lines).
	groups   []group
	agents   []agent
	sitemaps []sitemapRec
	esc      []byte // the normalised patterns that are not in the body
}

func (p *parser) startGroup() {
	p.endGroup()
	p.groups = append(p.groups, group{})
	p.open, p.rules = true, false
}

func (p *parser) endGroup() {
	if !p.open {
		return
	}
	g := &p.groups[len(p.groups)-1]
	g.a1, g.r1, g.u1 = int32(len(p.agents)), int32(p.nr), int32(len(p.r.usage()))
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
			p.sitemaps = append(p.sitemaps, sitemapRec{line: l.num, u0: l.v0, u1: l.v1})
		}
	case keyUnused:
		// Recognised, without effect in this dialect.
	default:
		r.warnArgs(l, warnUnknownKey)
	}
}

func (p *parser) addAgents(l *line) {
	if p.s.agentMatch == matchNames {
		v := l.value
		for _, name := range strings.Fields(v) {
			// name is a part of v, which starts at l.v0.
			v0 := l.v0 + int32(uintptr(unsafe.Pointer(unsafe.StringData(name)))-uintptr(unsafe.Pointer(unsafe.StringData(v))))
			v1 := v0 + int32(len(name))
			p.agents = append(p.agents, agent{line: l.num, v0: v0, v1: v1, t1: v1, star: name == "*"})
		}
		return
	}
	v := l.value
	// Filled in place (the table has room for each user-agent line): an
	// entry built apart and copied in would wait for its stores.
	as := p.agents
	if len(as) == cap(as) {
		as = append(as, agent{})
	} else {
		as = as[:len(as)+1]
	}
	p.agents = as
	a := &as[len(as)-1]
	a.line, a.v0, a.v1, a.t1 = l.num, l.v0, l.v1, l.v0
	a.delayLine, a.delay, a.star = 0, 0, false
	if len(v) > 0 && v[0] == '*' && (len(v) == 1 || isSpace(v[1])) {
		a.star = true
	} else {
		a.t1 = l.v0 + int32(p.s.agentChars.prefixLen(v))
		if a.t1 == a.v0 {
			p.r.warnValue(l, warnNoToken)
		}
	}
}

func (p *parser) addRule(l *line) {
	s := p.s
	allow := l.kind == keyAllow
	if allow && !s.allowLines {
		return
	}
	if l.value == "" {
		if !allow && s.emptyDisallow == emptyDisallowAllowsAll {
			x := p.newRule(l)
			x.setFlags(ruleAllow | ruleNoteEmpty)
			x.p0, x.p1, x.n0, x.n1 = l.v0, l.v0, l.v0, l.v0
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
	x := p.newRule(l)
	x.setFlags(flags)
	x.p0, x.p1, x.n0, x.n1 = l.v0, l.v1, n0, n1
	// (strings.Contains first: LastIndexByte is a byte loop, and few
	// patterns have the name at all.)
	if allow && s.indexHTML && strings.Contains(norm, "/index.htm") {
		// Google: an allowed ".../index.htm(l)..." also allows ".../" exactly.
		if i := strings.LastIndexByte(norm, '/'); i >= 0 && strings.HasPrefix(norm[i:], "/index.htm") {
			e0 := int32(len(p.esc))
			p.esc = append(p.esc, norm[:i+1]...)
			p.esc = append(p.esc, '$')
			x := p.newRule(l)
			x.setFlags(ruleAllow | ruleEsc | ruleNoteIndex)
			x.p0, x.p1, x.n0, x.n1 = l.v0, l.v1, e0, int32(len(p.esc))
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
	m := p.r.extra()
	m.usage = append(m.usage, u)
}

// newRule adds a rule of line l to the open group and returns it, to be
// filled in place. (The rules are counted in p.nr, not appended, so that
// adding one stores no pointer.)
func (p *parser) newRule(l *line) *rule {
	if p.nr == len(p.tab) {
		// An index.html rule is two: more than the lines counted.
		p.tab = append(p.tab, make([]rule, len(p.tab)/4+4)...)
	}
	x := &p.tab[p.nr]
	p.nr++
	*x = rule{line: l.num, gf: uint32(len(p.groups)-1) << 4, k0: l.k0, k1: l.k1}
	return x
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
		if m := r.extra(); m.delayLine == 0 {
			m.delay, m.delayLine = d, l.num
		}
		return
	}
	if !p.open || p.skip {
		r.warn(int(l.num), warnDelayOutside)
		return
	}
	// The delay belongs to the user-agent lines above it in the group that
	// have none yet: the group's user-agent lines may go on after it.
	gi := len(p.groups) - 1
	a0, _ := agentsOf(p.groups, gi)
	for i := int(a0); i < len(p.agents); i++ {
		if a := &p.agents[i]; a.delayLine == 0 {
			a.delay, a.delayLine = d, l.num
		}
	}
	if g := &p.groups[gi]; g.delayLine == 0 {
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
