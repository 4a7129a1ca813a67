package usage

import (
	"strings"

	"github.com/dunglas/httpsfv"
)

// MaxRobotsTag is how many bytes of a response's Robots-Tag field values
// [RobotsTag] reads: 8 KiB, the least draft-illyes-repext-03 allows.
const MaxRobotsTag = 8 << 10

// RobotsTag returns the directives the Robots-Tag field values
// (draft-illyes-repext-03) state for a crawler known by the product tokens
// agents.
//
// The field is a Structured Field List (RFC 8941): each member is an Item
// naming a product token, or "*" for every crawler, and carries that
// crawler's rules as its Parameters ("*;nosnippet, ExampleBot;noindex").
// The rules of the members naming one of agents or "*" apply, all of them
// (the union); a rule whose value is the Boolean false (";noindex=?0")
// does not. A product token may be written as a Token or a String. Several
// field values are read as one list, as HTTP combines them. Only the first
// [MaxRobotsTag] bytes are read: a member cut short there is ignored, as are
// the ones after it.
//
// The reading is lenient where the draft and RFC 8941 part: product tokens
// and rule names compare case-insensitively, so "ExampleBot;NoIndex" holds
// (RFC 8941 rejects an upper-case key), and a member that is not valid
// ends the reading instead of voiding the whole field: the members before
// it hold, as before a cut. The legacy X-Robots-Tag syntax is not read
// here ("noindex, nofollow" names two crawlers without rules): see
// [XRobotsTag].
func RobotsTag(values []string, agents []string) Directives {
	return repext(values, agents, nil)
}

// repext reads Robots-Tag field values; emit, when not nil, is called with
// each applying rule's scope, name (lower-case) and value as written (""
// for a rule without one). Each member is checked with the Structured
// Field parser, its keys lower-cased (the lenient reading), and read as
// written.
func repext(values []string, agents []string, emit func(scope, name, value string)) Directives {
	s, cut := joinLimited(values)
	var d Directives
	members := splitUnquoted(s, ',')
	for i, m := range members {
		if i == len(members)-1 && cut {
			break // cut short
		}
		lead := " \t"
		if i == 0 {
			lead = " "
		}
		m = strings.TrimRight(strings.TrimLeft(m, lead), " \t")
		list, err := httpsfv.UnmarshalList([]string{lowerUnquoted(m)})
		if err != nil || len(list) != 1 {
			break
		}
		item, ok := list[0].(httpsfv.Item)
		if !ok {
			continue // an inner list names no crawler
		}
		params := splitUnquoted(m, ';')
		name := params[0]
		switch v := item.Value.(type) {
		case string:
			name = v
		case httpsfv.Token:
		default:
			continue
		}
		if name != "*" && !matches(name, agents) {
			continue
		}
		for _, p := range params[1:] {
			key, value, _ := strings.Cut(strings.TrimLeft(p, " "), "=")
			if value == "?0" {
				continue
			}
			d |= directive(key)
			if emit != nil {
				emit(name, strings.ToLower(key), strings.TrimPrefix(value, "?1"))
			}
		}
	}
	return d
}

// joinLimited joins values as HTTP combines field lines, cut at
// MaxRobotsTag bytes; cut reports a cut.
func joinLimited(values []string) (s string, cut bool) {
	if len(values) == 1 {
		s = values[0]
	} else {
		var b strings.Builder
		for _, v := range values {
			if b.Len() > MaxRobotsTag {
				break
			}
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(v)
		}
		s = b.String()
	}
	if len(s) > MaxRobotsTag {
		return s[:MaxRobotsTag], true
	}
	return s, false
}

// splitUnquoted splits s at each sep outside quoted strings and angle
// brackets.
func splitUnquoted(s string, sep byte) []string {
	var out []string
	quoted, angle, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"' && !angle:
			quoted = !quoted
		case c == '<' && !quoted:
			angle = true
		case c == '>' && !quoted:
			angle = false
		case c == sep && !quoted && !angle:
			out, start = append(out, s[start:i]), i+1
		}
	}
	return append(out, s[start:])
}

// lowerUnquoted returns s lower-cased outside its quoted strings.
func lowerUnquoted(s string) string {
	b := []byte(s)
	quoted := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && 'A' <= c && c <= 'Z':
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
