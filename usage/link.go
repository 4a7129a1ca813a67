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

// parseLinks reads Link field values leniently: a link that does not
// start with "<...>" is skipped up to the next comma outside quotes and
// angle brackets, a parameter that is not "name", "name=token" or
// "name=quoted-string" ends its link's parameters, and reading stops after
// [maxPointers] links.
func parseLinks(values []string) []link {
	var links []link
	for _, v := range values {
		for _, s := range splitUnquoted(v, ',') {
			if len(links) == maxPointers {
				return links
			}
			s = strings.TrimLeft(s, " \t")
			target, params, ok := strings.Cut(s, ">")
			if !ok || !strings.HasPrefix(s, "<") {
				continue
			}
			l := link{Target: strings.TrimSpace(target[1:]), Params: map[string]string{}}
			l.readParams(params)
			links = append(links, l)
		}
	}
	return links
}

// readParams reads the parameters of s, what follows a link's "<...>",
// up to the first that is not one.
func (l link) readParams(s string) {
	params := splitUnquoted(s, ';')
	if strings.Trim(params[0], " \t") != "" {
		return
	}
	for _, p := range params[1:] {
		p = strings.TrimLeft(p, " \t")
		i := 0
		for i < len(p) && isTokenChar(p[i]) {
			i++
		}
		name, rest, value := strings.ToLower(p[:i]), strings.TrimLeft(p[i:], " \t"), ""
		if strings.HasPrefix(rest, "=") {
			var ok bool
			if value, rest, ok = quotedOrToken(strings.TrimLeft(rest[1:], " \t")); !ok {
				return // an unterminated quoted string
			}
		}
		if name == "" {
			return
		}
		if _, dup := l.Params[name]; !dup {
			l.Params[name] = value
		}
		if strings.Trim(rest, " \t") != "" {
			return
		}
	}
}

// quotedOrToken reads a quoted string or a token at the start of s; ok is
// false for an unterminated quoted string. A token may hold '/', leniently:
// media types are often written unquoted (type=application/rsl+xml).
func quotedOrToken(s string) (value, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		i := 0
		for i < len(s) && (isTokenChar(s[i]) || s[i] == '/') {
			i++
		}
		return s[:i], s[i:], true
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], true
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
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
