package dialect

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

// needsRFCNormal reports whether appendRFC3986 would change s.
func needsRFCNormal(s string, url bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7F || c == '%' || url && (c == '*' || c == '$') {
			return true
		}
	}
	return false
}

// appendRFC3986 appends s in the form RFC 9309 §2.2.2 compares: %XX of an
// unreserved character decoded, other %xx upper-cased, a '%' not followed by
// two hex digits written %25, octets outside printable ASCII percent-encoded.
// In a URL (url true) a literal '*' or '$' is encoded, so that only "%2A" or
// "%24" in a rule matches it; in a rule a '$' other than the last byte is
// literal and encoded for the same reason.
func appendRFC3986(b []byte, s string, url bool) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 < len(s) {
				h, ok1 := unhex(s[i+1])
				l, ok2 := unhex(s[i+2])
				if ok1 && ok2 {
					v := h<<4 | l
					if unreserved(v) {
						b = append(b, v)
					} else {
						b = append(b, '%', upperHex[h], upperHex[l])
					}
					i += 2
					continue
				}
			}
			b = append(b, '%', '2', '5')
		case c <= 0x20 || c >= 0x7F:
			b = append(b, '%', upperHex[c>>4], upperHex[c&15])
		case url && (c == '*' || c == '$'):
			b = append(b, '%', upperHex[c>>4], upperHex[c&15])
		case !url && c == '$' && i != len(s)-1:
			b = append(b, '%', '2', '4')
		default:
			b = append(b, c)
		}
	}
	return b
}

// googleEscape is Google's MaybeEscapePattern: octets >= 0x80 percent-encoded
// and the hex digits of existing %xx escapes upper-cased; nothing decoded.
func googleEscape(s string) string {
	need := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) && (isLowerHex(s[i+1]) || isLowerHex(s[i+2])) {
			need = true
			break
		}
	}
	if !need {
		return s
	}
	b := make([]byte, 0, len(s)+8)
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
	return string(b)
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
		if !needsRFCNormal(v, false) && !midDollar(v) {
			return v
		}
		return string(appendRFC3986(nil, v, false))
	case encGoogle:
		return googleEscape(v)
	}
	return v
}

func midDollar(v string) bool {
	for i := 0; i < len(v)-1; i++ {
		if v[i] == '$' {
			return true
		}
	}
	return false
}
