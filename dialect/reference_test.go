package dialect

import "strings"

// A brute-force reference for Ruleset.Check, used by the fuzz target and the
// corpus cross-check: every rule in force is matched against the path with a
// plain dynamic-programming wildcard matcher (O(len(pattern)·len(path)), never
// exponential), and the winner is picked by the documented precedence:
// longest normalised pattern, then Allow over Disallow, then earliest line.

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
	s := rs.s
	if path == "" {
		path = "/"
	}
	if s.robotsTxtFree && (path == "/robots.txt" || strings.HasPrefix(path, "/robots.txt?")) {
		return refVerdict{Allowed: true, Reason: ReasonRobotsTxt}
	}
	if s.encoding == encRFC3986 {
		path = string(appendRFC3986(nil, path, true))
	}
	var best *Rule
	for i := range rs.rules { // the order does not matter: refBetter decides
		r := &rs.rules[i]
		if !refMatch(r.norm, path, s.wildcards) {
			continue
		}
		if best == nil || refBetter(r, best) {
			best = r
		}
	}
	if best == nil {
		return refVerdict{Allowed: true, Reason: ReasonNoRule}
	}
	return refVerdict{Allowed: best.Allow, Reason: ReasonRule, Line: best.Line, Note: best.Note, Norm: best.norm}
}

// refBetter reports whether a takes precedence over b.
func refBetter(a, b *Rule) bool {
	if len(a.norm) != len(b.norm) {
		return len(a.norm) > len(b.norm)
	}
	if a.Allow != b.Allow {
		return a.Allow
	}
	return a.Line < b.Line
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
		return v.Rule == nil
	}
	return v.Rule != nil && v.Rule.Line == want.Line && v.Rule.Note == want.Note && v.Rule.norm == want.Norm
}
