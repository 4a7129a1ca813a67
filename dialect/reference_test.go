package dialect

import "strings"

// A brute-force reference for Ruleset.Check, used by the fuzz target and the
// corpus cross-check: every rule in force is matched against the path with a
// plain dynamic-programming wildcard matcher (O(len(pattern)·len(path)), never
// exponential), and the winner is picked by the documented precedence:
// longest normalised pattern, then Allow over Disallow, then earliest line.
// In rfc9309 and coccoc the rules and the path are normalised by refRFC3986,
// written here from the documented rules and not shared with the package.

// refVerdict is what the reference decides.
type refVerdict struct {
	Allowed bool
	Reason  Reason
	Line    int    // line of the deciding rule, 0 when none
	Note    string // Note of the deciding rule
	Norm    string // normalised pattern of the deciding rule
}

// refCheck decides path against the rules of rs by brute force.
func refCheck(rs *Ruleset, path string) refVerdict {
	return refCheckNorms(rs, refNorms(rs), path)
}

// refNorms returns the compared pattern (refNorm) of every rule of rs, so
// that a caller checking many paths against one Ruleset normalises each rule
// once.
func refNorms(rs *Ruleset) []string {
	rules := rs.Rules()
	norms := make([]string, len(rules))
	for i := range rules {
		norms[i] = refNorm(&rs.r.d.s, &rules[i])
	}
	return norms
}

// refCheckNorms is refCheck with the rules' patterns given by norms
// (refNorms(rs)).
func refCheckNorms(rs *Ruleset, norms []string, path string) refVerdict {
	s := &rs.r.d.s
	if path == "" {
		path = "/"
	}
	if s.robotsTxtFree && (path == "/robots.txt" || strings.HasPrefix(path, "/robots.txt?")) {
		return refVerdict{Allowed: true, Reason: ReasonRobotsTxt}
	}
	if s.encoding == encRFC3986 {
		path = refRFC3986(path, true)
	}
	var best *Rule
	bestNorm := ""
	rules := rs.Rules()
	for i := range rules { // the order does not matter: refBetter decides
		r := &rules[i]
		norm := norms[i]
		if !refMatch(norm, path, s.wildcards) {
			continue
		}
		if best == nil || refBetter(r, norm, best, bestNorm) {
			best, bestNorm = r, norm
		}
	}
	if best == nil {
		return refVerdict{Allowed: true, Reason: ReasonNoRule}
	}
	return refVerdict{Allowed: best.Allow, Reason: ReasonRule, Line: best.Line, Note: best.Note, Norm: bestNorm}
}

// refBetter reports whether a, whose normalised pattern is an, takes
// precedence over b (bn).
func refBetter(a *Rule, an string, b *Rule, bn string) bool {
	if len(an) != len(bn) {
		return len(an) > len(bn)
	}
	if a.Allow != b.Allow {
		return a.Allow
	}
	return a.Line < b.Line
}

// refNorm returns the pattern of r as it is compared: in rfc9309 and coccoc
// the reference's own normal form of the line's value (a rule with a Note,
// an empty Disallow read as "allow everything", keeps its empty pattern);
// else the package's.
func refNorm(s *spec, r *Rule) string {
	if s.encoding == encRFC3986 && r.Note == "" {
		return refRFC3986(r.Pattern, false)
	}
	return r.norm
}

// refRFC3986 returns s as rfc9309 and coccoc compare it, one byte at a time:
// "%" and two hex digits of an unreserved character (RFC 3986 §2.3) is that
// character, of any other octet is kept with its hex digits upper-cased; any
// other '%' is "%25"; octets below 0x21 or above 0x7E, and the characters
// RFC 3986 has no place for (" < > \ ^ ` { | }), are percent-encoded; so is
// '$' except as the last byte of a rule, and '*' in a URL (url), so that only
// "%24" and "%2A" in a rule match them.
func refRFC3986(s string, url bool) string {
	const hex = "0123456789ABCDEF"
	hexVal := func(c byte) int { // -1 when c is no hex digit
		switch {
		case '0' <= c && c <= '9':
			return int(c - '0')
		case 'a' <= c && c <= 'f':
			return int(c-'a') + 10
		case 'A' <= c && c <= 'F':
			return int(c-'A') + 10
		}
		return -1
	}
	isUnreserved := func(c byte) bool {
		return strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~", c) >= 0
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && hexVal(s[i+1]) >= 0 && hexVal(s[i+2]) >= 0:
			v := byte(hexVal(s[i+1])<<4 | hexVal(s[i+2]))
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteString("%" + hex[v>>4:v>>4+1] + hex[v&15:v&15+1])
			}
			i += 2
		case c == '$' && !url && i == len(s)-1:
			b.WriteByte(c)
		case c < 0x21 || c > 0x7E || strings.IndexByte("\"<>\\^`{|}%$", c) >= 0 || url && c == '*':
			b.WriteString("%" + hex[c>>4:c>>4+1] + hex[c&15:c&15+1])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// refMatch reports whether pattern matches a prefix of path (or all of it
// when the pattern ends in '$'). Without wildcards the pattern is a plain
// byte prefix.
func refMatch(pattern, path string, wildcards bool) bool {
	if !wildcards {
		return strings.HasPrefix(path, pattern)
	}
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	if !strings.Contains(pattern, "*") {
		if anchored {
			return path == pattern
		}
		return strings.HasPrefix(path, pattern)
	}
	// The literal text before the first '*' must start the path (a cheap
	// necessary condition, to keep the corpus cross-check fast).
	if star := strings.IndexByte(pattern, '*'); !strings.HasPrefix(path, pattern[:star]) {
		return false
	}
	// reach[j]: the pattern read so far can consume exactly path[:j].
	reach := make([]bool, len(path)+1)
	next := make([]bool, len(path)+1)
	reach[0] = true
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		clear(next)
		if c == '*' {
			on := false
			for j := 0; j <= len(path); j++ {
				on = on || reach[j]
				next[j] = on
			}
		} else {
			for j := 0; j < len(path); j++ {
				if reach[j] && path[j] == c {
					next[j+1] = true
				}
			}
		}
		reach, next = next, reach
	}
	if anchored {
		return reach[len(path)]
	}
	for _, ok := range reach {
		if ok {
			return true
		}
	}
	return false
}

// refAgree reports whether v (from Ruleset.Check) is the reference's answer.
func refAgree(v Verdict, want refVerdict) bool {
	if v.Allowed != want.Allowed || v.Reason != want.Reason {
		return false
	}
	if v.Reason != ReasonRule {
		return v.Rule == (Rule{})
	}
	return v.Rule != (Rule{}) && v.Rule.Line == want.Line && v.Rule.Note == want.Note && v.Rule.norm == want.Norm
}
