package dialect

import (
	"slices"
	"strings"
	"sync"

	"github.com/politecrawl/robots/internal/ascii"
)

// line is a line of the table (lineRec) with its key and value, as the
// parser reads it.
type line struct {
	lineRec
	key   string // key as written, trimmed
	value string // value as written, trimmed, comment removed
}

// problem is why the scanner could not read a line, if it could not.
type problem uint8

const (
	problemNone problem = iota
	problemLong
	problemNoColon
	problemEmptyKey
)

var problemText = [...]string{
	problemLong:     "line longer than the dialect reads: cut",
	problemNoColon:  "no ':' after the key",
	problemEmptyKey: "empty key",
}

// lineRec is what the scanner keeps of a line for the parser: the line's
// key and value as offsets into the body, so that the table of lines holds
// no pointers (the garbage collector does not look into it) and is reused
// from parse to parse (recPool). Lines without a key, a problem or (in
// koster1994) a record break are not kept.
type lineRec struct {
	num   int32
	kind  keyKind
	blank bool
	prob  problem
	plain bool // no byte of the line may need escaping in a rule

	k0, k1 int32 // key: body[k0:k1]
	v0, v1 int32 // value: body[v0:v1]
}

// lineCounts is how many lines of each kind the scanner kept: what the
// parser sizes its slices by.
type lineCounts struct {
	agents, rules, usage, sitemaps, warnings int
	// groups bounds the number of groups: the user-agent lines that do not
	// follow another (a group starts only at one of them).
	groups int
}

// scratch is the memory a parse needs only while it runs, reused from
// parse to parse (scratchPool): the table of lines (a 500 KiB body of short
// lines makes one of about 750 KB).
type scratch struct {
	recs []lineRec
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

const bom = "\xEF\xBB\xBF"

// scan reads body once, line by line (lines end at CR, LF or CRLF), and
// appends the lines that matter to recs (empty). It returns the table, the
// number of bytes it considered, whether the body was cut at MaxBodyBytes
// and the number of the last line it read, and adds what it counted to n
// (a pointer, not a result: a struct result, stored field by field and
// then copied whole by the caller, stalls the CPU on the copy). A line cut
// in the middle by that limit is dropped, so that half a rule never
// applies; a line that ends exactly at the limit is whole.
//
// (What the loop keeps from line to line is little, so that little of it
// is spilled and reloaded around each call: the counts look back at the
// line kept last, in the table, rather than keep their own state.)
func (s *spec) scan(body string, recs []lineRec, n *lineCounts) (out []lineRec, used int, cut bool, last int) {
	cut = len(body) > MaxBodyBytes
	if len(body) > 1<<31-1 {
		body = body[:MaxBodyBytes+1] // offsets are int32
	}
	// A byte-order mark, or any leading part of one, is skipped.
	pos := 0
	for pos < len(bom) && pos < len(body) && body[pos] == bom[pos] {
		pos++
	}
	num := 0
	lf := -1 // index of the next '\n' at or after pos, or len(body)
	cr := -1 // index of the next '\r' at or after pos, or len(body)
	var memo keyMemo
	for pos < len(body) {
		if len(recs) == cap(recs) {
			recs = slices.Grow(recs, 1)
		}
		// Read the line into the table's next slot, kept if needed.
		r := &recs[:len(recs)+1][len(recs)]
		*r = lineRec{}
		// A short line is read in one loop that also finds its end.
		end, next, need, short := s.readShort(body, pos, r)
		if !short {
			end, next = s.lineEnd(body, pos, &lf, &cr)
		}
		// (Only a body cut at the limit has lines past it.)
		if pos >= MaxBodyBytes || end > MaxBodyBytes {
			break // past the limit, or cut by it
		}
		num++
		if !short {
			if int(r.k0) < pos+shortLine && (s.maxLineBytes == 0 || end-pos <= s.maxLineBytes) {
				need = s.readRest(body, pos, end, r)
			} else {
				*r = lineRec{}
				need = s.readLine(body, pos, end, r)
			}
		}
		if need {
			if r.kind == keyPending {
				r.kind = memo.kind(s, body[r.k0:r.k1])
			}
			r.num = int32(num)
			// recs[k-1] is the line kept before this one, if k > 0.
			k := len(recs)
			recs = recs[:k+1]
			if r.kind == keyUserAgent && (k == 0 || recs[k-1].kind != keyUserAgent) {
				n.groups++
			}
			switch r.kind {
			case keyUserAgent:
				n.agents++
			case keyAllow, keyDisallow:
				if n.agents > 0 {
					n.rules++ // a rule before any group is not kept
				}
			case keyContentUsage, keyContentSignal:
				n.usage++
			case keySitemap:
				n.sitemaps++
			case keyUnknown:
				if r.k1 > r.k0 {
					n.warnings++ // an unknown key (not a line without one)
				}
			}
			// A run of lines with the same problem is one warning (a
			// line with a problem is always kept).
			if r.prob != problemNone && (k == 0 || r.prob != recs[k-1].prob || r.num != recs[k-1].num+1) {
				n.warnings++
			}
		}
		pos = next
	}
	used = len(body)
	if cut {
		// The lines read end where the next would have started.
		used = 0
		if num > 0 {
			used = min(pos, MaxBodyBytes)
		}
	}
	return recs, used, cut, num
}

// lineEnd returns the end of the line that starts at pos (the index of its
// CR or LF, or len(body)) and where the next line starts. lf and cr are the
// indexes of the next LF and CR found so far (or len(body)); each search
// starts past the one found last, so that the body is searched once for LFs
// and once for CRs in all.
func (s *spec) lineEnd(body string, pos int, lf, cr *int) (end, next int) {
	if *lf < pos {
		if j := strings.IndexByte(body[pos:], '\n'); j >= 0 {
			*lf = pos + j
		} else {
			*lf = len(body)
		}
	}
	if *cr < pos {
		if k := strings.IndexByte(body[pos:], '\r'); k >= 0 {
			*cr = pos + k
		} else {
			*cr = len(body)
		}
	}
	end, next = *lf, *lf+1
	if *cr < *lf {
		end = *cr
		next = end + 1
		if next == *lf {
			next++ // CRLF
		}
	}
	return end, next
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }

func trimSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// lineStop bits: white space (isSpace), a byte that ends a line's content,
// ':', and a byte that a rule's value may have to be escaped for (see
// normalizePattern).
const (
	stopSpace = 1 << iota
	stopEnd
	stopColon
	stopEscape
	stopLine // CR or LF: the end of the line (readShort)
)

// newLineStop returns spec.lineStop for s.
func newLineStop(s *spec) (t [256]uint8) {
	t[' '], t['\t'], t['\v'], t['\f'] = stopSpace, stopSpace, stopSpace, stopSpace
	t['#'], t[':'] = stopEnd, stopColon
	t['\r'], t['\n'] = stopLine, stopLine
	if s.nulEndsLine {
		t[0] = stopEnd
	}
	for c := range 256 {
		switch s.encoding {
		case encGoogle:
			if c >= 0x80 || c == '%' {
				t[c] |= stopEscape
			}
		case encRFC3986:
			if rfcPlain[0][c] == 0 {
				t[c] |= stopEscape
			}
		}
	}
	return t
}

// shortLine is the length up to which readLine looks for the bytes that
// end a line's content and for its colon in one loop over the bytes; a
// longer line is searched with strings.IndexByte, which is faster there.
const shortLine = 96

// readLine reads the line body[pos:end] (no line break in it) into r. It
// reports whether the parser needs the line: whether it has a key, a
// problem, or is blank in a dialect of blank-line records.
func (s *spec) readLine(body string, pos, end int, r *lineRec) bool {
	if s.maxLineBytes > 0 && end-pos > s.maxLineBytes {
		end = pos + s.maxLineBytes
		r.prob = problemLong
	}
	stop := &s.lineStop
	for pos < end && stop[body[pos]]&stopSpace != 0 {
		pos++
	}
	// The content ends at a '#' (a comment) or, in google, a NUL; colon is
	// the first ':' before it. (Leading white space is skipped, trailing
	// white space ends the content whole: neither needs escaping.)
	colon, commented := -1, false
	if text := body[pos:end]; len(text) <= shortLine {
		esc := false
		for i := 0; i < len(text); i++ {
			if f := stop[text[i]]; f > stopSpace {
				if f&stopEnd != 0 {
					end, commented = pos+i, text[i] == '#'
					break
				}
				if f&stopColon != 0 && colon < 0 {
					colon = pos + i
				}
				esc = esc || f&stopEscape != 0
			}
		}
		r.plain = !esc
	} else {
		if s.nulEndsLine {
			if i := strings.IndexByte(text, 0); i >= 0 {
				end, text = pos+i, text[:i]
			}
		}
		if i := strings.IndexByte(text, '#'); i >= 0 {
			end, commented, text = pos+i, true, text[:i]
		}
		if i := strings.IndexByte(text, ':'); i >= 0 {
			colon = pos + i
		}
	}
	return s.splitLine(body, pos, end, colon, commented, r)
}

// readShort reads the line that starts at pos into r, as readLine does, if
// its end (a CR or LF, or the end of the body) is within shortLine bytes,
// in one loop over the bytes that also finds the end: it returns the
// line's end and where the next line starts, whether the parser needs the
// line, and whether the line was short enough to be read so. When it was
// not, r holds what the loop found in the line's first shortLine bytes, for
// readRest: where the content starts (k0), the index of the '#' or NUL that
// ends it (k1, -1 if none yet) and of its first ':' (v0, -1 if none yet),
// and whether a '#' ended it (blank).
func (s *spec) readShort(body string, pos int, r *lineRec) (end, next int, need, ok bool) {
	stop := &s.lineStop
	lim := min(len(body), pos+shortLine)
	i := pos
	// Indentation (an HTML page read as robots.txt has much of it): eight
	// spaces at a time.
	if i < lim && body[i] == ' ' {
		for i+8 <= lim && load64(body[i:]) == 0x2020202020202020 {
			i += 8
		}
	}
	for i < lim && stop[body[i]]&stopSpace != 0 {
		i++
	}
	start := i
	i, cend, colon, commented, esc := s.shortText(body[i:lim], start)
	if i == lim && lim < len(body) {
		// Longer than shortLine.
		r.k0, r.k1, r.v0, r.blank = int32(start), int32(cend), int32(colon), commented
		return 0, 0, false, false
	}
	end, next = i, i+1
	if i+1 < len(body) && body[i] == '\r' && body[i+1] == '\n' {
		next++ // CRLF
	}
	if cend < 0 {
		cend = end
	}
	r.plain = !esc
	return end, next, s.splitLine(body, start, cend, colon, commented, r), true
}

// shortText is readShort's loop over the bytes of text, a line's content
// from its first byte that is not white space, which starts at start in
// the body: it returns the index in the body of the first CR or LF in text
// (or of text's end), of the first '#' or NUL before it that ends the
// content (cend, -1 if none), and of the first ':' before that (colon, -1
// if none), whether a '#' ended the content, and whether a byte of the
// content may need escaping in a rule. (A function of its own, so that
// the loop has the registers to itself.)
func (s *spec) shortText(text string, start int) (end, cend, colon int, commented, esc bool) {
	stop := &s.lineStop
	cend, colon = -1, -1
	j := 0
	for ; j < len(text); j++ {
		f := stop[text[j]]
		if f <= stopSpace {
			continue
		}
		if f&stopLine != 0 {
			break
		}
		if cend >= 0 {
			continue // in the comment
		}
		if f&stopEnd != 0 {
			cend, commented = start+j, text[j] == '#'
			continue
		}
		if f&stopColon != 0 && colon < 0 {
			colon = start + j
		}
		esc = esc || f&stopEscape != 0
	}
	return start + j, cend, colon, commented, esc
}

// readRest reads the line that starts at pos and ends at end (no line
// break before it, no longer than the dialect reads) into r, as readLine
// does, when readShort has read its first shortLine bytes and left in r
// what it found there: the rest of the line is searched with
// strings.IndexByte (assembly), not read again from its start. It must not
// be used when the line's first shortLine bytes are all white space.
func (s *spec) readRest(body string, pos, end int, r *lineRec) bool {
	start, cend, colon, commented := int(r.k0), int(r.k1), int(r.v0), r.blank
	*r = lineRec{}
	if cend < 0 {
		lim := pos + shortLine
		rest := body[lim:end]
		cend = end
		if s.nulEndsLine {
			if i := strings.IndexByte(rest, 0); i >= 0 {
				cend, rest = lim+i, rest[:i]
			}
		}
		if i := strings.IndexByte(rest, '#'); i >= 0 {
			cend, commented, rest = lim+i, true, rest[:i]
		}
		if colon < 0 {
			if i := strings.IndexByte(rest, ':'); i >= 0 {
				colon = lim + i
			}
		}
	}
	// r.plain stays false, as readLine leaves it on a long line.
	return s.splitLine(body, start, cend, colon, commented, r)
}

// splitLine reads the content body[pos:end] of a line (no white space at
// pos; colon is the index of its first ':' or -1; commented: a '#' ended
// it) into r, with the kind of its key as classifyFast finds it (scan
// finds the kind of a key left keyPending), and reports
// whether the parser needs the line: whether it has a key, a problem, or is
// blank in a dialect of blank-line records.
func (s *spec) splitLine(body string, pos, end, colon int, commented bool, r *lineRec) bool {
	stop := &s.lineStop
	for end > pos && stop[body[end-1]]&stopSpace != 0 {
		end--
	}
	if pos == end {
		r.blank = !commented
		return r.prob != problemNone || r.blank && s.blankLineRecords
	}
	var k0, k1, v0, v1 int
	switch {
	case colon >= 0:
		k0, k1, v0, v1 = pos, colon, colon+1, end
		for k1 > k0 && stop[body[k1-1]]&stopSpace != 0 {
			k1--
		}
		for v0 < v1 && stop[body[v0]]&stopSpace != 0 {
			v0++
		}
	case s.colonlessTwoWord:
		// "key value": accepted only when there are exactly two words,
		// separated by spaces or tabs alone, as Google's parser reads them
		// (a vertical tab or form feed separates nothing there).
		w := pos
		for w < end && body[w] != ' ' && body[w] != '\t' {
			w++
		}
		if w == end {
			r.prob = problemNoColon
			return true
		}
		k0, k1, v0, v1 = pos, w, w, end
		for v0 < v1 && isSpace(body[v0]) {
			v0++
		}
		for i := v0; i < v1; i++ {
			if body[i] == ' ' || body[i] == '\t' {
				r.prob = problemNoColon
				return true
			}
		}
	default:
		r.prob = problemNoColon
		return true
	}
	if k0 == k1 {
		r.prob = problemEmptyKey
		return true
	}
	r.k0, r.k1, r.v0, r.v1 = int32(k0), int32(k1), int32(v0), int32(v1)
	r.kind = s.classifyFast(body[k0:k1])
	return true
}

// keyEntry is a key a dialect recognises, for classify.
type keyEntry struct {
	name   string // lower case
	kind   keyKind
	typo   bool
	prefix bool // name need only start the key
}

// keyTable holds a dialect's keys by their first letter, in the order
// classify tries them: spec.keyPrefixes when there are any, else spec.keys.
type keyTable [26][]keyEntry

func newKeyTable(s *spec) *keyTable {
	t := new(keyTable)
	add := func(e keyEntry) {
		c := e.name[0] - 'a'
		t[c] = append(t[c], e)
	}
	for _, p := range s.keyPrefixes {
		add(keyEntry{name: p.prefix, kind: p.kind, typo: p.typo, prefix: true})
	}
	if s.keyPrefixes == nil {
		for name, kind := range s.keys {
			add(keyEntry{name: name, kind: kind})
		}
	}
	return t
}

// fastKey is a key name that classify compares a key with directly, found
// by keyHash: its length, and its first and last 8 bytes (4 when shorter
// than 8) as foldEqual compares them.
type fastKey struct {
	w0, w1 uint64
	n      uint8
	kind   keyKind
}

// keyHash picks the slot of spec.keyFast for a key of 4 to 16 bytes
// (classifyFast computes it from the key's words).
func keyHash(key string) int {
	// (No two of user-agent, allow, disallow, sitemap, crawl-delay,
	// content-usage and content-signal share a slot.)
	return (len(key) + int(key[0]|0x20) + int(key[len(key)-1]|0x20)*4) & 31
}

// newKeyFast returns spec.keyFast for the keys of t: each name of 4 to 16
// bytes that classify's loop would return for a key equal to it (no name
// tried before it is a prefix of it), in its slot unless another name has
// that slot (a key of that name then goes by the loop): the names that are
// not typos first.
func newKeyFast(t *keyTable) (f [32]fastKey) {
	for pass := range 2 {
		for _, list := range t {
			for i, e := range list {
				if e.typo != (pass == 1) {
					continue
				}
				addFastKey(&f, list, i)
			}
		}
	}
	return f
}

// addFastKey gives list[i] its slot of f, if it may have one and the slot
// is free.
func addFastKey(f *[32]fastKey, list []keyEntry, i int) {
	e := list[i]
	n := len(e.name)
	if n < 4 || n > 16 {
		return
	}
	for _, prev := range list[:i] {
		if prev.prefix && strings.HasPrefix(e.name, prev.name) {
			return // the loop returns prev for a key equal to e.name
		}
	}
	h := keyHash(e.name)
	if f[h].n != 0 {
		return
	}
	k := fastKey{n: uint8(n), kind: e.kind}
	if n >= 8 {
		k.w0, k.w1 = load64(e.name), load64(e.name[n-8:])
	} else {
		k.w0, k.w1 = uint64(load32(e.name)), uint64(load32(e.name[n-4:]))
	}
	f[h] = k
}

// keyPending is the kind of a line's key in a lineRec that classifyFast
// did not find, until scan classifies the key.
const keyPending keyKind = 0xff

// classifyFast returns classify(key) for a key (not empty) written as one
// of the names that keyFast holds (the usual case), found by its hash; for
// any other key it returns keyPending.
func (s *spec) classifyFast(key string) keyKind {
	n := len(key)
	if n < 4 || n > 16 {
		return keyPending
	}
	// The key's words as fastKey holds them, loaded first, and keyHash
	// computed from their first and last bytes (a byte loaded apart would
	// keep the compiler from loading a word in one instruction).
	var w0, w1 uint64
	var last byte
	if n >= 8 {
		w0, w1 = load64(key)|0x2020202020202020, load64(key[n-8:])|0x2020202020202020
		last = byte(w1 >> 56)
	} else {
		w0, w1 = uint64(load32(key)|0x20202020), uint64(load32(key[n-4:])|0x20202020)
		last = byte(w1 >> 24)
	}
	e := &s.keyFast[(n+int(byte(w0))+int(last)*4)&31]
	if int(e.n) == n && w0 == e.w0 && w1 == e.w1 {
		return e.kind
	}
	return keyPending
}

// classify returns what key (not empty) means in this dialect: the first of the
// dialect's key prefixes that starts key, or the key equal to it, compared
// case-insensitively (ASCII letters only, as strings.EqualFold does for an
// ASCII name of the same byte length).
func (s *spec) classify(key string) keyKind {
	// A key written as one of the names (the usual case) is found by its
	// hash and compared as foldEqual does, without going over the names.
	if k := s.classifyFast(key); k != keyPending {
		return k
	}
	return s.classifyLoop(key)
}

// keyMemo is what scan remembers of the keys that classifyFast did not
// find, which it classifies with classifyLoop: keys repeat from line to
// line ("Disallow"), or alternate ("User-agent", "Disallow",
// "User-agent"...), and the last two distinct ones are kept with their
// kinds. (It is kept in memory, off the registers of scan's loop.)
type keyMemo struct {
	last, prev         string
	lastKind, prevKind keyKind
}

// kind returns classify(key) for a key that classifyFast did not find.
func (m *keyMemo) kind(s *spec, key string) keyKind {
	switch key {
	case m.last:
		return m.lastKind
	case m.prev:
		m.last, m.lastKind, m.prev, m.prevKind = key, m.prevKind, m.last, m.lastKind
	default:
		k := s.classifyLoop(key)
		m.last, m.lastKind, m.prev, m.prevKind = key, k, m.last, m.lastKind
	}
	return m.lastKind
}

// classifyLoop is classify going over the names that start with the key's
// first letter, in order.
func (s *spec) classifyLoop(key string) keyKind {
	c := key[0] | 0x20
	if c < 'a' || c > 'z' {
		return keyUnknown
	}
	for _, e := range s.keyTab[c-'a'] {
		if len(key) < len(e.name) || !e.prefix && len(key) != len(e.name) {
			continue
		}
		if foldEqual(key[:len(e.name)], e.name) {
			return e.kind
		}
	}
	return keyUnknown
}

// foldEqual reports whether s equals name, a key of a dialect (lower-case
// letters, '-' and ' '), in any case of the letters: eight bytes at a time,
// each byte of s with bit 0x20 set, which maps an upper-case letter to its
// lower case and leaves '-' and ' ' as they are. (Only CR and NUL would
// compare equal to '-' and ' ' that way, and neither is part of a key.)
func foldEqual(s, name string) bool {
	if len(s) != len(name) {
		return false
	}
	n := len(s)
	switch {
	case n >= 8:
		for i := 0; i+8 < n; i += 8 {
			if load64(s[i:])|0x2020202020202020 != load64(name[i:]) {
				return false
			}
		}
		// The last eight bytes (overlapping the ones compared).
		return load64(s[n-8:])|0x2020202020202020 == load64(name[n-8:])
	case n >= 4:
		return load32(s)|0x20202020 == load32(name) && load32(s[n-4:])|0x20202020 == load32(name[n-4:])
	}
	return ascii.EqualFold(s, name)
}

// load32 returns the first four bytes of s, little-endian.
func load32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// load64 returns the first eight bytes of s, little-endian.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
