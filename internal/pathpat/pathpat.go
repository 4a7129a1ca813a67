// Package pathpat matches URL paths against the path patterns of
// robots.txt (RFC 9309 §2.2.2-2.2.3), which the TDM Reservation Protocol's
// tdmrep.json locations and RSL's <content url> scopes reuse.
//
// A pattern matches a path from its start: "*" stands for any sequence of
// characters (none included), and a "$" ending the pattern anchors it at
// the path's end; elsewhere "$" is an ordinary character. To state a
// literal "*" or "$", a pattern %-encodes it ("%2A", "%24"), and a "*" or
// "$" in a path matches those.
//
// Before comparing, patterns and paths are brought to one form: a
// %-encoded octet that is an RFC 3986 unreserved character (letters,
// digits, "-", ".", "_", "~") is decoded; every other %-encoding keeps its
// "%" and has its hex digits upper-cased; octets a URI has no place for
// (controls, space, non-ASCII, `"<>\^{|}` and the backquote) and a "%"
// not followed by two hex digits are %-encoded. So "/caf%C3%A9" matches
// "/café", "/%7Euser" matches "/~user", and "/a%2Fb" does not match
// "/a/b". Comparison is case-sensitive.
//
// Matching takes time linear in the path per pattern segment and
// allocates nothing once the pattern is compiled and the path normalised.
package pathpat

import "strings"

// Parts is a path pattern split at its wildcards: the one reading of "*"
// and "$" that robots.txt rules, tdmrep.json locations and RSL scopes
// share.
type Parts struct {
	// Prefix is the literal text before the first "*" (the whole
	// pattern, less an ending "$", when it has none).
	Prefix string
	// Wild is true when the pattern has a "*".
	Wild bool
	// Anchored is true when a "$" ends the pattern right after literal
	// text: the path must end where that text does. A "$" after a "*"
	// asks for nothing.
	Anchored bool
	rest     string // after the first "*", without the ending "$"
}

// Split splits the pattern p at its wildcards. It does not allocate.
func Split(p string) Parts {
	star := strings.IndexByte(p, '*')
	if star < 0 {
		body, anchored := strings.CutSuffix(p, "$")
		return Parts{Prefix: body, Anchored: anchored}
	}
	rest, dollar := strings.CutSuffix(p[star+1:], "$")
	return Parts{Prefix: p[:star], Wild: true, rest: rest, Anchored: dollar && rest != "" && rest[len(rest)-1] != '*'}
}

// Segments calls fn with each literal segment after the first "*", in
// order, empty ones left out, until fn returns false; it reports whether
// fn never did.
func (s Parts) Segments(fn func(seg string) bool) bool {
	for rest := s.rest; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, "*")
		if seg != "" && !fn(seg) {
			return false
		}
	}
	return true
}

// Match reports whether the pattern matches path from its start, both
// in one form (see [Path]): the prefix first, then each segment after the
// one before, the last one at the path's end when anchored. It does not
// allocate.
func (s Parts) Match(path string) bool {
	if !strings.HasPrefix(path, s.Prefix) {
		return false
	}
	i := len(s.Prefix)
	if !s.Wild {
		return !s.Anchored || len(path) == i
	}
	rest, last := s.rest, ""
	if s.Anchored {
		k := strings.LastIndexByte(rest, '*')
		rest, last = rest[:k+1], rest[k+1:]
	}
	ok := Parts{rest: rest}.Segments(func(seg string) bool {
		x := strings.Index(path[i:], seg)
		i += x + len(seg)
		return x >= 0
	})
	return ok && len(path)-i >= len(last) && strings.HasSuffix(path, last)
}

// Pattern is a compiled path pattern.
type Pattern struct {
	norm  string // normalised
	parts Parts
}

// Compile returns the pattern p. Every string is a pattern; "" matches
// every path.
func Compile(p string) Pattern {
	body, anchored := strings.CutSuffix(p, "$")
	norm := normalize(body, true)
	if anchored {
		norm += "$"
	}
	return Pattern{norm: norm, parts: Split(norm)}
}

// Len returns the length in octets of the pattern's normalised form, its
// "$" included: RFC 9309's measure of how specific a matching pattern is.
func (p Pattern) Len() int { return len(p.norm) }

// Path returns the path p (with its query, if any) in the form
// [Pattern.Match] compares.
func Path(p string) string { return normalize(p, false) }

// Match reports whether the pattern matches the path path, given in the
// form [Path] returns.
func (p Pattern) Match(path string) bool { return p.parts.Match(path) }

const upperHex = "0123456789ABCDEF"

// normalize returns s in the compared form. In a pattern a "*" is kept as
// the wildcard; in a path it is %-encoded, as "$" is in both.
func normalize(s string, pattern bool) string {
	i := 0
	for i < len(s) && plain(s[i]) && s[i] != '%' && (s[i] != '*' || pattern) {
		i++
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, i, len(s)+8)
	copy(b, s)
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if unreserved(v) {
				b = append(b, v)
			} else {
				b = append(b, '%', upperHex[v>>4], upperHex[v&15])
			}
			i += 2
		case c == '*' && pattern || plain(c) && c != '%' && c != '*':
			b = append(b, c)
		default:
			b = append(b, '%', upperHex[c>>4], upperHex[c&15])
		}
	}
	return string(b)
}

// plain reports whether c stands for itself in the compared form ('%' and
// '*' aside, which the callers test): printable ASCII other than "$" and
// the characters a URI has no place for.
func plain(c byte) bool {
	return 0x21 <= c && c < 0x7F && c != '$' && !strings.ContainsRune("\"<>\\^`{|}", rune(c))
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}
