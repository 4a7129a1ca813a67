package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/politecrawl/robots/dialect"
)

// schemeOf returns the scheme of s when s starts with one (RFC 3986: a
// letter, then letters, digits, '+', '-', '.', then ':').
func schemeOf(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z':
		case i > 0 && ('0' <= b && b <= '9' || b == '+' || b == '-' || b == '.'):
		case i > 0 && b == ':':
			return s[:i], true
		default:
			return "", false
		}
	}
	return "", false
}

// isHTTP reports whether scheme is http or https, in any case.
func isHTTP(scheme string) bool {
	return strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")
}

// targetError says why a URL argument is not one.
type targetError struct{ url, why string }

func (e *targetError) Error() string { return fmt.Sprintf("URL %q: %s", e.url, e.why) }

// checkTarget accepts a URL argument: an absolute path ("" is "/"), taken as
// given, or a URL with a scheme and a host (http, https, ftp, ...); its path
// is taken as given too. Its errors are *targetError.
func checkTarget(s string) error {
	if s == "" || s[0] == '/' {
		return nil
	}
	scheme, ok := schemeOf(s)
	if !ok {
		return &targetError{s, "not an absolute path (/...) or an http(s) URL"}
	}
	// Any scheme with an authority: RFC 9309 applies to any URI-based
	// protocol (FTP included), and a local FILE binds no scheme.
	rest, ok := strings.CutPrefix(s[len(scheme)+1:], "//")
	if !ok {
		return &targetError{s, "no host"}
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	u, err := url.Parse("http://" + rest)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &targetError{s, err.Error()}
	}
	if u.Hostname() == "" {
		return &targetError{s, "no host"}
	}
	return nil
}

// pathOf is the path and query of a URL argument that checkTarget accepted,
// as the dialects compare it: an absolute path as given, an http(s) URL's
// after its authority; without the fragment.
func pathOf(s string) string {
	if s == "" || s[0] == '/' {
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		return s
	}
	return dialect.PathOf(s)
}

// eachURL calls one for each URL argument, or for each line of stdin when
// there are none; it stops at the first error (of one, or a line that is no
// URL).
func eachURL(c *common, stdin io.Reader, one func(u string) error) error {
	if len(c.rest) > 0 {
		for _, u := range c.rest {
			if err := one(u); err != nil {
				return err
			}
		}
		return nil
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		u := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(u) == "" {
			continue
		}
		if err := checkTarget(u); err != nil {
			var te *targetError
			errors.As(err, &te)
			return fmt.Errorf("%w: URL %q (line %d of standard input): %s", errUsage, te.url, n, te.why)
		}
		if err := one(u); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading URLs from standard input: %w", err)
	}
	return nil
}
