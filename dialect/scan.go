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
// from parse to parse (scratchPool). Lines without a key, a problem or (in
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
// parser sizes its tables by.
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
// appends the lines that matter to recs. It returns the table, the number
// of bytes it considered, whether the body was cut at MaxBodyBytes and the
// number of the last line it read, and adds what it counted to n. A line
// cut in the middle by that limit is dropped, so that half a rule never
// applies; a line that ends exactly at the limit is whole.
func (s *spec) scan(body string, recs []lineRec, n *lineCounts) (out []lineRec, used int, cut bool, last int) {
	cut = len(body) > MaxBodyBytes
	if cut {
		body = body[:MaxBodyBytes+1] // one byte more shows where the cut is
	}
	// A byte-order mark, or any leading part of one, is skipped.
	pos := 0
	for pos < len(bom) && pos < len(body) && body[pos] == bom[pos] {
		pos++
	}
	num := 0
	lf, cr := -1, -1 // the next LF and CR found by lineEnd
	var memo keyMemo
	for pos < len(body) && pos < MaxBodyBytes {
		// The line is read into the table's next slot, kept if needed.
		if len(recs) == cap(recs) {
			recs = slices.Grow(recs, 1)
		}
		r := &recs[:len(recs)+1][len(recs)]
		*r = lineRec{}
		end, next, need := s.readLine(body, pos, &lf, &cr, r)
		if end > MaxBodyBytes {
			break // cut by the limit
		}
		num++
		pos = next
		if !need {
			continue
		}
		if r.k1 > r.k0 {
			r.kind = memo.kind(s, body[r.k0:r.k1])
		}
		r.num = int32(num)
		k := len(recs) // recs[k-1] is the line kept before this one
		switch r.kind {
		case keyUserAgent:
			n.agents++
			if k == 0 || recs[k-1].kind != keyUserAgent {
				n.groups++
			}
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
		// A run of lines with the same problem is one warning.
		if r.prob != problemNone && (k == 0 || r.prob != recs[k-1].prob || r.num != recs[k-1].num+1) {
			n.warnings++
		}
		recs = recs[:k+1]
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

// lineEnd returns the end of the line that goes on at pos (the index of its
// CR or LF, or len(body)) and where the next line starts. lf and cr are the
// indexes of the next LF and CR found so far (or len(body)); each search
// starts past the one found last, so that the body is searched once for LFs
// and once for CRs in all.
func lineEnd(body string, pos int, lf, cr *int) (end, next int) {
	if *lf < pos {
		*lf = len(body)
		if j := strings.IndexByte(body[pos:], '\n'); j >= 0 {
			*lf = pos + j
		}
	}
	if *cr < pos {
		*cr = len(body)
		if k := strings.IndexByte(body[pos:], '\r'); k >= 0 {
			*cr = pos + k
		}
	}
	end, next = *lf, *lf+1
	if *cr < *lf {
		end, next = *cr, *cr+1
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
// ':', a byte that a rule's value may have to be escaped for (see
// normalizePattern), and CR or LF.
const (
	stopSpace = 1 << iota
	stopEnd
	stopColon
	stopEscape
	stopLine
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

// shortLine is how far readLine's loop over the bytes goes past a line's
// leading white space; the rest of a longer line is searched with
// strings.IndexByte, which is faster there.
const shortLine = 96

// readLine reads the line that starts at pos into r. It returns the line's
// end (its CR or LF, or len(body)), where the next line starts, and whether
// the parser needs the line: whether it has a key, a problem, or is blank
// in a dialect of blank-line records.
//
// The content ends at a '#' (a comment) or, in google, a NUL; the key ends
// at the first ':' before it. One loop over the first shortLine bytes after
// the leading white space looks for all of these and for the line's end,
// which is all there is to do on most lines.
func (s *spec) readLine(body string, pos int, lf, cr *int, r *lineRec) (end, next int, need bool) {
	stop := &s.lineStop
	i := pos
	for i+8 <= len(body) && body[i:i+8] == "        " {
		i += 8 // indentation (an HTML page read as robots.txt has much of it)
	}
	for i < len(body) && stop[body[i]]&stopSpace != 0 {
		i++
	}
	start := i
	lim := min(len(body), i+shortLine)
	i, cend, colon, commented, esc := s.shortText(body[start:lim], start)
	if i < lim || i == len(body) {
		end, next = i, i+1
		if next < len(body) && body[i] == '\r' && body[next] == '\n' {
			next++
		}
	} else {
		// A long line: the rest of it from where the loop stopped.
		end, next = lineEnd(body, i, lf, cr)
		esc = true  // not looked at: the parser will
		read := end // what the dialect reads of the line ends there
		if s.maxLineBytes > 0 {
			read = min(end, pos+s.maxLineBytes)
		}
		if cend < 0 && i < read {
			rest := body[i:read]
			if s.nulEndsLine {
				if k := strings.IndexByte(rest, 0); k >= 0 {
					cend, rest = i+k, rest[:k]
				}
			}
			if k := strings.IndexByte(rest, '#'); k >= 0 {
				cend, commented, rest = i+k, true, rest[:k]
			}
			if k := strings.IndexByte(rest, ':'); colon < 0 && k >= 0 {
				colon = i + k
			}
		}
	}
	if cend < 0 {
		cend = end
	}
	if s.maxLineBytes > 0 && end-pos > s.maxLineBytes {
		// Only the first maxLineBytes of the line are read.
		cut := pos + s.maxLineBytes
		r.prob = problemLong
		if cend >= cut {
			cend, commented = cut, false
		}
		if colon >= cut {
			colon = -1
		}
		start = min(start, cut)
	}
	r.plain = !esc
	return end, next, s.splitLine(body, start, cend, colon, commented, r)
}

// shortText is readLine's loop over text, the first bytes of a line's
// content, which starts at start in the body: it returns the index in the
// body of the first CR or LF in text (or of text's end), of the first '#'
// or NUL before it that ends the content (cend, -1 if none) and of the
// first ':' before that (-1 if none), whether a '#' ended the content, and
// whether a byte of the content may need escaping in a rule.
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

// splitLine reads the content body[pos:end] of a line (no white space at
// pos; colon is the index of its first ':' or -1; commented: a '#' ended
// it) into r and reports whether the parser needs the line: whether it
// has a key, a problem, or is blank in a dialect of blank-line records.
func (s *spec) splitLine(body string, pos, end, colon int, commented bool, r *lineRec) bool {
	stop := &s.lineStop
	for end > pos && stop[body[end-1]]&stopSpace != 0 {
		end--
	}
	if pos == end {
		r.blank = !commented
		return r.prob != problemNone || r.blank && s.blankLineRecords
	}
	k0, k1, v0, v1 := pos, colon, colon+1, end
	switch {
	case colon >= 0:
		for k1 > k0 && stop[body[k1-1]]&stopSpace != 0 {
			k1--
		}
	case s.colonlessTwoWord:
		// "key value": accepted only when there are exactly two words,
		// separated by spaces or tabs alone, as Google's parser reads them
		// (a vertical tab or form feed separates nothing there, and the
		// second word may not start after one).
		w := pos
		for w < end && body[w] != ' ' && body[w] != '\t' {
			w++
		}
		if w == end {
			r.prob = problemNoColon
			return true
		}
		k1, v0 = w, w
		for v0 < v1 && (body[v0] == ' ' || body[v0] == '\t') {
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
	for v0 < v1 && stop[body[v0]]&stopSpace != 0 {
		v0++
	}
	if k0 == k1 {
		r.prob = problemEmptyKey
		return true
	}
	r.k0, r.k1, r.v0, r.v1 = int32(k0), int32(k1), int32(v0), int32(v1)
	return true
}

// keyEntry is a key a dialect recognises, for classify.
type keyEntry struct {
	name   string // lower case
	kind   keyKind
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
		add(keyEntry{name: p.prefix, kind: p.kind, prefix: true})
	}
	if s.keyPrefixes == nil {
		for name, kind := range s.keys {
			add(keyEntry{name: name, kind: kind})
		}
	}
	return t
}

// classify returns what key (not empty) means in this dialect: the first
// of the dialect's key prefixes that starts key, or the key equal to it,
// compared case-insensitively (ASCII letters only).
func (s *spec) classify(key string) keyKind {
	c := ascii.Lower(key[0])
	if c < 'a' || c > 'z' {
		return keyUnknown
	}
	for _, e := range s.keyTab[c-'a'] {
		if len(key) < len(e.name) || !e.prefix && len(key) != len(e.name) {
			continue
		}
		if ascii.EqualFold(key[:len(e.name)], e.name) {
			return e.kind
		}
	}
	return keyUnknown
}

// keyMemo is what scan remembers of the keys it classified: keys repeat
// from line to line ("Disallow") or alternate ("User-agent", "Disallow",
// "User-agent"...), and the last two distinct ones are kept with their
// kinds.
type keyMemo struct {
	last, prev         string
	lastKind, prevKind keyKind
}

// kind returns s.classify(key).
func (m *keyMemo) kind(s *spec, key string) keyKind {
	switch key {
	case m.last:
	case m.prev:
		m.last, m.lastKind, m.prev, m.prevKind = key, m.prevKind, m.last, m.lastKind
	default:
		m.last, m.lastKind, m.prev, m.prevKind = key, s.classify(key), m.last, m.lastKind
	}
	return m.lastKind
}
