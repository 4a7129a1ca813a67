// Package authority computes the authority a URL's robots.txt and per-host
// spacing apply to: "scheme://host[:port]". Package policy exports it as
// policy.Authority; hostlimit's Transport keys requests by it, so that the
// plugin, the resolver and the gate name a host the same way.
package authority

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/politecrawl/robots/internal/ascii"
)

// ErrUnsupported is wrapped by the error for a URL without an authority:
// not http or https, or no usable host.
var ErrUnsupported = errors.New("unsupported URL")

// idnaProfile maps an internationalised host name to its ASCII (punycode)
// form for lookup. Unlike idna.Lookup it accepts host names outside the
// strict LDH syntax (underscores exist in the wild).
var idnaProfile = idna.New(idna.MapForLookup(), idna.StrictDomainName(false), idna.Transitional(false))

// Append appends the authority of u to b: scheme and host lower-cased, an
// internationalised host name in punycode, the scheme's default port and
// leading zeros of a port dropped, an IPv6 literal kept in brackets. It
// does not allocate for an ASCII host when b has room. Anything but an
// http(s) URL with a usable host gets an error wrapping [ErrUnsupported].
func Append(b []byte, u *url.URL) ([]byte, error) {
	if u == nil {
		return b, fmt.Errorf("%w: nil URL", ErrUnsupported)
	}
	var scheme, defPort string
	switch {
	case ascii.EqualFold(u.Scheme, "https"):
		scheme, defPort = "https", "443"
	case ascii.EqualFold(u.Scheme, "http"):
		scheme, defPort = "http", "80"
	default:
		return b, fmt.Errorf("%w: %q is not an http or https URL", ErrUnsupported, u.Redacted())
	}
	host, port, ok := splitHostPort(u.Host)
	if !ok || host == "" {
		return b, fmt.Errorf("%w: %q has no usable host", ErrUnsupported, u.Redacted())
	}
	start := len(b)
	b = append(b, scheme...)
	b = append(b, "://"...)
	name := host
	if !ascii.IsASCII(host) {
		a, err := idnaProfile.ToASCII(host)
		if err != nil || a == "" || !utf8.ValidString(host) {
			return b[:start], fmt.Errorf("%w: host %q is not a valid internationalised domain name", ErrUnsupported, host)
		}
		name = a
	}
	// A host must not smuggle URL delimiters into the authority: a
	// hand-built Host "a@b", or IDNA mapping a fullwidth "＠" or "／" to
	// '@' or '/', would make "http://a@b" name host b.
	if !validHost(name) {
		return b[:start], fmt.Errorf("%w: host %q holds characters a host name cannot", ErrUnsupported, host)
	}
	b = ascii.AppendLower(b, name)
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

// String is [Append] to a new string.
func String(u *url.URL) (string, error) {
	var buf [128]byte
	b, err := Append(buf[:0], u)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// validHost reports whether host (ASCII) is a name, an IPv4 address or a
// bracketed IPv6 literal (with an optional zone): no URL delimiter, space
// or control byte.
func validHost(host string) bool {
	if host[0] == '[' {
		for i := 1; i < len(host)-1; i++ {
			c := host[i]
			if !(c == ':' || c == '.' || c == '%' || isAlnum(c) || c == '-' || c == '_' || c == '~') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !(isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || strings.IndexByte("!$&'()*+,;=", c) >= 0) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
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
