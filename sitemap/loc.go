package sitemap

import (
	"net/url"
	"strings"
)

// resolve makes a loc absolute and checks it; reason is "" when it is
// kept.
func (r *Reader) resolve(s string) (loc, reason string) {
	if strings.ContainsAny(s, "\t\r\n") {
		s = strings.Map(func(c rune) rune {
			if c == '\t' || c == '\r' || c == '\n' {
				return -1
			}
			return c
		}, s)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", RejectNoLoc
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", RejectUnparsable
	}
	resolved := false
	if !u.IsAbs() {
		resolved = true
		if r.base == nil {
			return "", RejectRelativeNoDoc
		}
		u = r.base.ResolveReference(u)
		r.warn("relative loc %q resolved against %s", truncate(s, 80), r.baseStr)
	}
	if sc := strings.ToLower(u.Scheme); sc != "http" && sc != "https" {
		return "", RejectNotHTTP
	}
	if u.Host == "" {
		return "", RejectNoHost
	}
	out := s // as written when u.String() would give it back unchanged
	if resolved || !plainURL(s) {
		out = u.String()
	}
	if len(out) > r.lim.MaxLocLength {
		return "", RejectLocTooLong
	}
	return out, ""
}

// plainURL: s (an absolute URL that parsed) has a lower-case http(s)
// scheme and holds only bytes that url.URL.String writes back as they are:
// no percent sign (whose escapes String may rewrite), no fragment, no
// userinfo (String escapes it).
func plainURL(s string) bool {
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '%' || c == '#' || c == '@' || c == '"' || c == '<' || c == '>' || c == '\\' || c == '^' || c == '`' || c == '{' || c == '|' || c == '}' {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
