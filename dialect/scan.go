package dialect

import "strings"

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

// scan splits body into lines (CR, LF or CRLF) and calls fn for each, in
// order. It returns the number of bytes it considered and whether the body
// was cut at MaxBodyBytes. The *line passed to fn is reused between calls.
func (s *spec) scan(body string, fn func(*line)) (used int, cut bool) {
	if len(body) > MaxBodyBytes {
		body = body[:MaxBodyBytes]
		cut = true
		// Drop a line cut in the middle so that half a rule never applies.
		if i := strings.LastIndexAny(body, "\r\n"); i >= 0 {
			body = body[:i+1]
		} else {
			body = ""
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
		s.readLine(body[pos:end], &l)
		fn(&l)
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
		// "key value": accepted only when there are exactly two words.
		w := strings.IndexAny(text, " \t\v\f")
		if w < 0 {
			l.problem = "no ':' after the key"
			return
		}
		key, value = text[:w], trimSpace(text[w:])
		if strings.ContainsAny(value, " \t\v\f") {
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

// classify returns what key means in this dialect.
func (s *spec) classify(key string) (keyKind, bool) {
	if s.keyPrefixes != nil {
		for _, p := range s.keyPrefixes {
			if len(key) >= len(p.prefix) && strings.EqualFold(key[:len(p.prefix)], p.prefix) {
				return p.kind, p.typo
			}
		}
		return keyUnknown, false
	}
	if len(key) > 16 {
		return keyUnknown, false
	}
	var buf [16]byte
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return s.keys[string(buf[:len(key)])], false
}
