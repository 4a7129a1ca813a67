package dialect

import "strings"

const upperHex = "0123456789ABCDEF"

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// unreserved reports whether c is an RFC 3986 unreserved character.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// outsideURI holds the printable ASCII characters that RFC 3986 has no
// place for in a URI: they are percent-encoded before comparison, as octets
// outside ASCII are.
const outsideURI = "\"<>\\^`{|}"

// rfcPlain[url][c] is 1 when appendRFC3986 copies byte c unchanged (in a URL
// when url is 1, in a rule when it is 0), else 0: printable ASCII other than
// '%' and the characters outsideURI, and other than '$' (in a rule, a '$' is
// copied only at the end) and, in a URL, '*'. (Bytes, not bools, so that
// rfcURLSpecial can AND eight of them.)
var rfcPlain = func() (t [2][256]uint8) {
	for c := byte(0x21); c < 0x7F; c++ {
		if c == '%' || c == '$' || strings.IndexByte(outsideURI, c) >= 0 {
			continue
		}
		t[0][c] = 1
		t[1][c] = b2u(c != '*')
	}
	return t
}()

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// needsRFCNormal reports whether appendRFC3986 might change s.
func needsRFCNormal(s string, url bool) bool {
	plain := &rfcPlain[b2i(url)]
	for i := 0; i < len(s); i++ {
		if plain[s[i]] == 0 && (url || s[i] != '$' || i != len(s)-1) {
			return true
		}
	}
	return false
}

// rfcURLSpecial returns the index of the first byte of the URL path s that
// appendRFC3986 does not copy unchanged, or -1. It runs on every rfc9309
// and coccoc check, so it looks at eight bytes at a time: the AND of their
// table entries is 0 when one of them is special. (Eight independent table
// loads are faster than testing a word for twelve byte values.)
func rfcURLSpecial(s string) int {
	plain := &rfcPlain[1]
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		if plain[w[0]]&plain[w[1]]&plain[w[2]]&plain[w[3]]&plain[w[4]]&plain[w[5]]&plain[w[6]]&plain[w[7]] == 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if plain[s[i]] == 0 {
			return i
		}
	}
	return -1
}

// rfcURLLen returns len(appendRFC3986URL(nil, s, i)).
func rfcURLLen(s string, i int) int {
	plain := &rfcPlain[1]
	n := i
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case plain[c] != 0:
			n++
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			h, _ := unhex(s[i+1])
			l, _ := unhex(s[i+2])
			if unreserved(h<<4 | l) {
				n++
			} else {
				n += 3
			}
			i += 2
		default:
			n += 3
		}
	}
	return n
}

// appendRFC3986 appends s in the form RFC 9309 §2.2.2 compares: %XX of an
// unreserved character decoded, other %xx upper-cased, a '%' not followed by
// two hex digits written %25, octets outside printable ASCII and the
// characters outsideURI percent-encoded.
// In a URL (url true) a literal '*' or '$' is encoded, so that only "%2A" or
// "%24" in a rule matches it; in a rule a '$' other than the last byte is
// literal and encoded for the same reason.
func appendRFC3986(b []byte, s string, url bool) []byte {
	return appendRFC3986From(b, s, 0, url)
}

// appendRFC3986URL is appendRFC3986 of a URL whose first i bytes are known
// to be copied unchanged.
func appendRFC3986URL(b []byte, s string, i int) []byte {
	return appendRFC3986From(b, s, i, true)
}

func appendRFC3986From(b []byte, s string, i int, url bool) []byte {
	plain := &rfcPlain[b2i(url)]
	b = append(b, s[:i]...)
	for i < len(s) {
		j := i
		if url {
			if k := rfcURLSpecial(s[i:]); k >= 0 {
				j += k
			} else {
				j = len(s)
			}
		}
		for j < len(s) && plain[s[j]] != 0 {
			j++
		}
		b = append(b, s[i:j]...)
		if j == len(s) {
			break
		}
		c := s[j]
		i = j + 1
		switch {
		case c == '%':
			if j+2 < len(s) {
				h, ok1 := unhex(s[j+1])
				l, ok2 := unhex(s[j+2])
				if ok1 && ok2 {
					if v := h<<4 | l; unreserved(v) {
						b = append(b, v)
					} else {
						b = append(b, '%', upperHex[h], upperHex[l])
					}
					i = j + 3
					continue
				}
			}
			b = append(b, '%', '2', '5')
		case c == '$' && !url && j == len(s)-1:
			b = append(b, '$')
		default:
			// Outside printable ASCII or outsideURI; or '*' or '$' in a
			// URL; or a '$' inside a rule.
			b = append(b, '%', upperHex[c>>4], upperHex[c&15])
		}
	}
	return b
}

// googleEscape is Google's MaybeEscapePattern: octets >= 0x80 percent-encoded
// and the hex digits of existing %xx escapes upper-cased; nothing decoded.
func googleEscape(s string) string {
	if !googleNeedsEscape(s) {
		return s
	}
	return string(appendGoogleEscape(make([]byte, 0, len(s)+8), s))
}

// googleNeedsEscape reports whether googleEscape changes s: whether s has
// a byte of 0x80 or more, or a '%' and two hex digits of which one is lower
// case.
func googleNeedsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) && (isLowerHex(s[i+1]) || isLowerHex(s[i+2])) {
			return true
		}
	}
	return false
}

// appendGoogleEscape appends googleEscape(s) to b.
func appendGoogleEscape(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, '%', toUpperHex(s[i+1]), toUpperHex(s[i+2]))
			i += 2
		case c >= 0x80:
			b = append(b, '%', upperHex[c>>4], upperHex[c&15])
		default:
			b = append(b, c)
		}
	}
	return b
}

func isHex(c byte) bool { _, ok := unhex(c); return ok }

func isLowerHex(c byte) bool { return 'a' <= c && c <= 'f' }

func toUpperHex(c byte) byte {
	if isLowerHex(c) {
		return c - 'a' + 'A'
	}
	return c
}

// normalizePattern returns a rule's value in the form it is compared in.
func (s *spec) normalizePattern(v string) string {
	switch s.encoding {
	case encRFC3986:
		if !needsRFCNormal(v, false) {
			return v
		}
		return string(appendRFC3986(nil, v, false))
	case encGoogle:
		return googleEscape(v)
	}
	return v
}
