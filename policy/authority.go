package policy

import (
	"net/url"

	"github.com/politecrawl/robots/internal/authority"
)

// ErrUnsupportedURL is wrapped by the error for a URL that has no
// robots.txt this package can fetch: a scheme other than http or https, or
// no usable host.
var ErrUnsupportedURL = authority.ErrUnsupported

// Authority returns the authority a URL's robots.txt applies to, as
// "scheme://host[:port]": scheme and host lower-cased, an internationalised
// host name in its punycode form, the scheme's default port dropped
// ("https://example.com:443/" and "https://example.com/" share a robots.txt,
// "https://example.com:8181/" does not), an IPv6 literal kept in brackets.
// Only http and https URLs have one; anything else gets an error wrapping
// [ErrUnsupportedURL]. Package hostlimit keys hosts the same way.
func Authority(u *url.URL) (string, error) { return authority.String(u) }

// AppendAuthority appends [Authority] of u to b, without allocating for an
// ASCII host when b has room.
func AppendAuthority(b []byte, u *url.URL) ([]byte, error) { return authority.Append(b, u) }
