package dialect

import (
	"strings"

	"github.com/politecrawl/robots/internal/ascii"
)

// line is what the scanner read on one line of a robots.txt body. The parser
// builds groups from these and nothing else.
type line struct {
	num     int
	kind    keyKind
	typo    bool   // key recognised through one of Google's accepted misspellings
	key     string // key as written, trimmed
	value   string // value as written, trimmed, comment removed
	blank   bool   // nothing but white space (a record separator in koster1994)
	comment bool   // nothing but a comment
	problem string // why the line was not understood, if it was not
}

const bom = "\xEF\xBB\xBF"

// scan splits body into lines (CR, LF or CRLF) and passes each to p.line,
// in order. It returns the number of bytes it considered and whether the
// body was cut at MaxBodyBytes.
func (p *parser) scan(body string) (used int, cut bool) {
	if len(body) > MaxBodyBytes {
		after := body[MaxBodyBytes]
		body = body[:MaxBodyBytes]
		cut = true
		// Drop a line cut in the middle so that half a rule never applies;
		// a line that ends exactly at the limit is whole.
		if after != '\n' && after != '\r' {
			if i := strings.LastIndexAny(body, "\r\n"); i >= 0 {
				body = body[:i+1]
			} else {
				body = ""
			}
		}
	}
	used = len(body)
	// A byte-order mark, or any leading part of one, is skipped.
	i := 0
	for i < len(bom) && i < len(body) && body[i] == bom[i] {
		i++
	}
	body = body[i:]

	var l line
	num := 0
	lf := -1 // index of the next '\n' at or after pos, or len(body)
	for pos := 0; pos < len(body); {
		num++
		if lf < pos {
			if j := strings.IndexByte(body[pos:], '\n'); j >= 0 {
				lf = pos + j
			} else {
				lf = len(body)
			}
		}
		end, next := lf, lf+1
		if k := strings.IndexByte(body[pos:lf], '\r'); k >= 0 {
			end = pos + k
			next = end + 1
			if next == lf {
				next++ // CRLF
			}
		}
		l = line{num: num}
		p.s.readLine(body[pos:end], &l)
		p.line(&l)
		pos = next
	}
	return used, cut
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

// readLine fills l from one line of text (no line break in it).
func (s *spec) readLine(text string, l *line) {
	if s.maxLineBytes > 0 && len(text) > s.maxLineBytes {
		text = text[:s.maxLineBytes]
		l.problem = "line longer than the dialect reads: cut"
	}
	if s.nulEndsLine {
		if i := strings.IndexByte(text, 0); i >= 0 {
			text = text[:i]
		}
	}
	if c := strings.IndexByte(text, '#'); c >= 0 {
		text = text[:c]
		l.comment = true
	}
	text = trimSpace(text)
	if text == "" {
		l.blank = !l.comment
		return
	}
	l.comment = false
	sep := strings.IndexByte(text, ':')
	var key, value string
	if sep >= 0 {
		key, value = trimSpace(text[:sep]), trimSpace(text[sep+1:])
	} else if s.colonlessTwoWord {
		// "key value": accepted only when there are exactly two words,
		// separated by spaces or tabs alone, as Google's parser reads them
		// (a vertical tab or form feed separates nothing there).
		w := strings.IndexAny(text, " \t")
		if w < 0 {
			l.problem = "no ':' after the key"
			return
		}
		key, value = text[:w], trimSpace(text[w:])
		if strings.ContainsAny(value, " \t") {
			l.problem = "no ':' after the key"
			return
		}
	} else {
		l.problem = "no ':' after the key"
		return
	}
	if key == "" {
		l.problem = "empty key"
		return
	}
	l.key, l.value = key, value
	l.kind, l.typo = s.classify(key)
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

// classify returns what key means in this dialect: the first of the
// dialect's key prefixes that starts key, or the key equal to it, compared
// case-insensitively (ASCII letters only, as strings.EqualFold does for an
// ASCII name of the same byte length).
func (s *spec) classify(key string) (keyKind, bool) {
	c := key[0] | 0x20
	if c < 'a' || c > 'z' {
		return keyUnknown, false
	}
	for _, e := range s.keyTab[c-'a'] {
		if len(key) < len(e.name) || !e.prefix && len(key) != len(e.name) {
			continue
		}
		if ascii.EqualFold(key[:len(e.name)], e.name) {
			return e.kind, e.typo
		}
	}
	return keyUnknown, false
}
