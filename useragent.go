package robots

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/politecrawl/robots/dialect"
)

// userAgentWarning is the message of the plugin's warning about a
// User-Agent that does not identify the crawler.
const userAgentWarning = "robots: the User-Agent does not identify the crawler as draft-illyes-webbotauth-cbcp asks: " +
	"give it a product token with a version and a URL describing the crawler, " +
	`as in "Mozilla/5.0 (compatible; ExampleBot/0.1; +https://www.example.com/bot.html)"`

// checkUserAgent logs [userAgentWarning], once per plugin, when the
// User-Agent header of the first request the plugin sends lacks a product
// token with a version ("ExampleBot/0.1") or a contact URL
// ("+https://..."). The header is read at the transport, after every
// OnRequest callback, so a User-Agent set on the collector after Attach, or
// one set per request (extensions.RandomUserAgent), is the one checked;
// later requests are not checked again. Colly's default User-Agent names
// the library, not the crawler, and is warned about.
func (p *core) checkUserAgent(req *http.Request) {
	if p.uaChecked.Load() || !p.uaChecked.CompareAndSwap(false, true) {
		return
	}
	ua := req.Header.Get("User-Agent")
	if missing := userAgentLacks(ua); missing != "" {
		p.log.Warn(userAgentWarning, slog.String("user_agent", ua), slog.String("missing", missing))
	}
}

// userAgentLacks says what ua lacks to identify a crawler: "product token",
// "contact URL", both joined by " and ", or "" when it has both. A product
// token is the name [dialect.ProductToken] derives, written as a product
// with a version (Name/version); a contact URL is "+http://" or "+https://"
// followed by a host, the convention of the crawlers' own User-Agents.
func userAgentLacks(ua string) string {
	var missing []string
	if !hasProduct(ua, dialect.ProductToken(ua)) {
		missing = append(missing, "product token")
	}
	if !hasContactURL(ua) {
		missing = append(missing, "contact URL")
	}
	return strings.Join(missing, " and ")
}

// hasProduct reports whether ua holds the product name/version, name
// starting a product (at the start, or after a space, '(' or ';') and the
// version not empty.
func hasProduct(ua, name string) bool {
	if name == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(ua[i:], name+"/")
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(name)+1
		if (at == 0 || strings.IndexByte(" \t(;", ua[at-1]) >= 0) &&
			end < len(ua) && strings.IndexByte(" \t();", ua[end]) < 0 {
			return true
		}
		i = at + 1
	}
}

// hasContactURL reports whether ua holds "+http://" or "+https://" (any
// case) followed by at least one character of a host.
func hasContactURL(ua string) bool {
	lower := strings.ToLower(ua)
	for _, prefix := range []string{"+https://", "+http://"} {
		for i := 0; ; {
			j := strings.Index(lower[i:], prefix)
			if j < 0 {
				break
			}
			end := i + j + len(prefix)
			if end < len(lower) && strings.IndexByte(" \t();/", lower[end]) < 0 {
				return true
			}
			i = end
		}
	}
	return false
}
