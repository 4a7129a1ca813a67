package dialect

import (
	"strings"
	"unicode"
)

// AgentToken returns what the dialect compares, of a crawler's product token
// as given to [Robots.For], with the user-agent lines of a file, and whether
// that is the whole token (whole is compared == token, and false when
// compared is ""):
//
//   - rfc9309 and coccoc compare the token's leading run of letters, digits,
//     '_' and '-' ("Googlebot/2.1" → "Googlebot", "MJ12bot" whole);
//   - google compares the token whole, as Google's parser does, with the
//     leading run of letters, '_' and '-' of each user-agent value, so a
//     token holding any other character ("MJ12bot", "Googlebot/2.1") names
//     no group and compared is "";
//   - koster1994 compares the token whole with each name of a user-agent
//     line, so one holding white space names no record and compared is "".
//
// White space around token is trimmed first, as For does. compared is ""
// also for an empty token and for "*", which names no crawler (the "*"
// groups apply when no token names a group). For(token) selects what
// For(compared) selects; a caller can warn when whole is false.
func (d *Dialect) AgentToken(token string) (compared string, whole bool) {
	s := &d.s
	t := strings.TrimSpace(token)
	switch {
	case t == "*":
		t = ""
	case s.agentMatch == matchNames:
		if strings.IndexFunc(t, unicode.IsSpace) >= 0 {
			t = "" // names are split at white space
		}
	default:
		n := s.agentChars.prefixLen(t)
		if s.crawlerTokenWhole && n < len(t) {
			n = 0
		}
		t = t[:n]
	}
	return t, t != "" && t == token
}

// ProductToken derives a crawler's robots.txt product token from a full
// User-Agent header value, or returns "" when it finds none:
//
//	Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)  → ExampleBot
//	colly - https://github.com/gocolly/colly/v2                          → colly
//	Googlebot-Image/1.0                                                  → Googlebot-Image
//	Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 ... Safari/537.36 → ""
//
// A "Name/version" entry inside a parenthesised comment names the crawler
// (the "compatible; ..." convention); otherwise the first product of the
// header does, unless it is "Mozilla" (a browser-like header with no crawler
// name). The token is the name's leading run of letters, digits, '_' and
// '-' ("MJ12bot/1.4" → "MJ12bot"), and must start with a letter ("360Spider"
// and "12345" give ""). Whether a dialect compares all of it says
// [Dialect.AgentToken] (google compares it whole: one with digits names no
// group there).
func ProductToken(userAgent string) string {
	ua := strings.TrimSpace(userAgent)
	rest := ua
	for {
		open := strings.IndexByte(rest, '(')
		if open < 0 {
			break
		}
		close := strings.IndexByte(rest[open:], ')')
		var comment string
		if close < 0 {
			comment, rest = rest[open+1:], ""
		} else {
			comment, rest = rest[open+1:open+close], rest[open+close+1:]
		}
		for _, part := range strings.Split(comment, ";") {
			part = strings.TrimSpace(part)
			slash := strings.IndexByte(part, '/')
			if slash <= 0 || strings.HasPrefix(part, "+") || strings.Contains(part[:slash], ":") {
				continue
			}
			if t := nameToken(part); len(t) == slash {
				return t
			}
		}
	}
	t := nameToken(ua)
	if strings.EqualFold(t, "Mozilla") {
		return ""
	}
	return t
}

// nameToken returns the leading run of [A-Za-z0-9_-] of v, or "" when it does
// not start with a letter.
func nameToken(v string) string {
	if v == "" || !('a' <= v[0]|0x20 && v[0]|0x20 <= 'z') {
		return ""
	}
	return v[:digitsToken.prefixLen(v)]
}
