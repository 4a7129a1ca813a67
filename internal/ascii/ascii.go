// Package ascii holds the byte-level ASCII helpers the module's packages
// share: case folding of ASCII letters only, as HTTP and robots.txt compare
// names.
package ascii

// EqualFold reports whether s equals lower, which must be lower-case,
// ignoring the case of ASCII letters in s. Other bytes compare exactly.
func EqualFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if Lower(s[i]) != lower[i] {
			return false
		}
	}
	return true
}

// Lower returns c lower-cased when it is an ASCII capital letter, else c.
func Lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// AppendLower appends s to b with ASCII letters lower-cased.
func AppendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		b = append(b, Lower(s[i]))
	}
	return b
}

// IsASCII reports whether s holds only bytes below 0x80.
func IsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Clip returns s cut to at most n bytes at a rune boundary, with "…" when
// it was cut: how the module quotes a value of a site in a message.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
