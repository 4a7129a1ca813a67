package dialect

import "strings"

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
// name). The token is cut to the characters RFC 9309 allows in one:
// letters, '_' and '-'.
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
			if t := productToken(part); len(t) == slash {
				return t
			}
		}
	}
	t := productToken(ua)
	if strings.EqualFold(t, "Mozilla") {
		return ""
	}
	return t
}
