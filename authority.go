package robots

import (
	"errors"
	"fmt"
	"net/url"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// ErrUnsupportedURL is returned (wrapped) for a URL that has no robots.txt
// this package can fetch: a scheme other than http or https, or no host.
var ErrUnsupportedURL = errors.New("robots: unsupported URL")

// idnaProfile maps an internationalised host name to its ASCII (punycode)
// form for lookup. Unlike idna.Lookup it accepts host names outside the
// strict LDH syntax (underscores exist in the wild).
var idnaProfile = idna.New(idna.MapForLookup(), idna.StrictDomainName(false), idna.Transitional(false))

// Authority returns the authority a URL's robots.txt applies to, as
// "scheme://host[:port]": scheme and host lower-cased, an internationalised
// host name in its punycode form, the scheme's default port dropped
// ("https://example.com:443/" and "https://example.com/" share a robots.txt,
// "https://example.com:8181/" does not), an IPv6 literal kept in brackets.
// Only http and https URLs have one; anything else gets an error wrapping
// [ErrUnsupportedURL].
func Authority(u *url.URL) (string, error) {
	var buf [128]byte
	b, err := appendAuthority(buf[:0], u)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// appendAuthority appends the authority of u to b. It does not allocate for
// an ASCII host when b has room.
func appendAuthority(b []byte, u *url.URL) ([]byte, error) {
	if u == nil {
		return b, fmt.Errorf("%w: nil URL", ErrUnsupportedURL)
	}
	var scheme, defPort string
	switch {
	case asciiEqualFold(u.Scheme, "https"):
		scheme, defPort = "https", "443"
	case asciiEqualFold(u.Scheme, "http"):
		scheme, defPort = "http", "80"
	default:
		return b, fmt.Errorf("%w: %q is not an http or https URL", ErrUnsupportedURL, u.Redacted())
	}
	host, port, ok := splitHostPort(u.Host)
	if !ok || host == "" {
		return b, fmt.Errorf("%w: %q has no usable host", ErrUnsupportedURL, u.Redacted())
	}
	b = append(b, scheme...)
	b = append(b, "://"...)
	if isASCII(host) {
		b = appendLower(b, host)
	} else {
		a, err := idnaProfile.ToASCII(host)
		if err != nil || a == "" || !utf8.ValidString(host) {
			return b[:0], fmt.Errorf("%w: host %q is not a valid internationalised domain name", ErrUnsupportedURL, host)
		}
		b = appendLower(b, a)
	}
	// Leading zeros never change a port number.
	for len(port) > 1 && port[0] == '0' {
		port = port[1:]
	}
	if port != "" && port != defPort {
		b = append(b, ':')
		b = append(b, port...)
	}
	return b, nil
}

// splitHostPort splits u.Host into the host (brackets kept for IPv6) and the
// port digits ("" when absent or empty).
func splitHostPort(hp string) (host, port string, ok bool) {
	if hp == "" {
		return "", "", false
	}
	if hp[0] == '[' {
		end := -1
		for i := 1; i < len(hp); i++ {
			if hp[i] == ']' {
				end = i
				break
			}
		}
		if end < 0 {
			return "", "", false
		}
		rest := hp[end+1:]
		host = hp[:end+1]
		if rest == "" {
			return host, "", true
		}
		if rest[0] != ':' {
			return "", "", false
		}
		port = rest[1:]
	} else {
		colon := -1
		for i := len(hp) - 1; i >= 0; i-- {
			if hp[i] == ':' {
				colon = i
				break
			}
		}
		if colon < 0 {
			return hp, "", true
		}
		host, port = hp[:colon], hp[colon+1:]
		for i := 0; i < len(host); i++ {
			if host[i] == ':' {
				return "", "", false // an IPv6 literal without brackets
			}
		}
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return "", "", false
		}
	}
	return host, port, true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// asciiEqualFold reports whether s equals lower (given in lower case),
// ignoring ASCII case.
func asciiEqualFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
