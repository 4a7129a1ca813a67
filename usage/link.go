package usage

import (
	"net/url"
	"strings"
)

// link is one link of a Link header field (RFC 8288).
type link struct {
	Target string // the URI reference between < and >, as written
	// Params are the link's parameters, names lower-cased, values
	// unquoted; the first occurrence of a name wins. A parameter without
	// a value has "".
	Params map[string]string
}

// Rels returns the link's relation types, lower-cased.
func (l link) Rels() []string { return strings.Fields(strings.ToLower(l.Params["rel"])) }

// parseLinks reads Link field values leniently: a link that does not
// start with "<...>" is skipped up to the next comma outside quotes, a
// parameter that is not "name", "name=token" or "name=quoted-string" ends
// its link's parameters, and reading stops after [maxPointers] links.
func parseLinks(values []string) []link {
	var links []link
	for _, v := range values {
		for v != "" && len(links) < maxPointers {
			var l link
			var ok bool
			l, v, ok = parseLink(v)
			if ok {
				links = append(links, l)
			}
		}
	}
	return links
}

// parseLink reads the link at the start of s and returns what follows its
// comma.
func parseLink(s string) (link, string, bool) {
	s = strings.TrimLeft(s, " \t,")
	if !strings.HasPrefix(s, "<") {
		return link{}, skipLink(s), false
	}
	end := strings.IndexByte(s, '>')
	if end < 0 {
		return link{}, "", false
	}
	l := link{Target: strings.TrimSpace(s[1:end]), Params: map[string]string{}}
	s = s[end+1:]
	for {
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, ";") {
			return l, skipLink(s), true
		}
		s = strings.TrimLeft(s[1:], " \t")
		i := 0
		for i < len(s) && isTokenChar(s[i]) {
			i++
		}
		name := strings.ToLower(s[:i])
		s = strings.TrimLeft(s[i:], " \t")
		value := ""
		if strings.HasPrefix(s, "=") {
			s = strings.TrimLeft(s[1:], " \t")
			if value, s, i = quotedOrToken(s); i < 0 {
				return l, "", true // an unterminated quoted string
			}
		}
		if name == "" {
			return l, skipLink(s), true
		}
		if _, dup := l.Params[name]; !dup {
			l.Params[name] = value
		}
	}
}

// quotedOrToken reads a quoted string or a token at the start of s; n is
// -1 for an unterminated quoted string. A token may hold '/', leniently:
// media types are often written unquoted (type=application/rsl+xml).
func quotedOrToken(s string) (value, rest string, n int) {
	if !strings.HasPrefix(s, `"`) {
		i := 0
		for i < len(s) && (isTokenChar(s[i]) || s[i] == '/') {
			i++
		}
		return s[:i], s[i:], i
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], i + 1
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", -1
}

// skipLink returns what follows the first comma of s outside a quoted
// string or angle brackets.
func skipLink(s string) string {
	var quoted, angle bool
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
		case c == ',' && !quoted && !angle:
			return s[i+1:]
		}
	}
	return ""
}

// isTokenChar reports whether c is an RFC 9110 tchar ('*' included, for
// the extended names of RFC 8187).
func isTokenChar(c byte) bool {
	return 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// licenseLinks returns the licence pointers of the Link field values,
// resolved against base (the URL of the response), each with its type
// (an RSL pointer when it is application/rsl+xml): links whose rel holds
// "license" and which have no anchor parameter (an anchor makes the link
// about another resource).
func licenseLinks(values []string, base *url.URL) []pointer {
	var ptrs []pointer
	for _, l := range parseLinks(values) {
		if _, anchored := l.Params["anchor"]; anchored || !isLicenseRel(l.Params["rel"]) {
			continue
		}
		if u := resolve(base, l.Target); u != "" {
			ptrs = append(ptrs, newPointer(u, "Link header", l.Params["type"]))
		}
	}
	return ptrs
}
