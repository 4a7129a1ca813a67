package authority

import (
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"
)

// Fuzzing Append and String (issue "Hardening"). Two targets: FuzzParsed
// takes a URL string through url.Parse, as the plugin and the resolver get
// their URLs; FuzzHandBuilt takes a url.URL{Scheme, Host} built from two
// strings, as a caller of hostlimit's Transport may. Both check, besides
// "no panic":
//
//   - an error wraps ErrUnsupported, String returns "" with it, and Append
//     leaves b as it was;
//   - on success String and Append (after a prefix) agree; the result is
//     lower-case ASCII, starts with "http://" or "https://", has no default
//     port and no leading zero in its port, and is idempotent: parsing
//     result+"/" with net/url and taking the authority again gives the same
//     string;
//   - FuzzParsed also checks the result against net/url's reading of the
//     URL: the scheme, u.Port() without leading zeros and, for an ASCII
//     host, u.Hostname() lower-cased.
//
// Inputs that hit a deviation already reported on the issue (see
// knownIssue) are still run and checked for everything else; only the
// property they are known to break is not asserted for them. Remove an
// entry of knownIssue once the deviation is fixed. FUZZ_STRICT in the
// environment excuses less: "all" nothing, or a comma-separated list of the
// names knownIssue returns ("FUZZ_STRICT=ipv6-zone go test -fuzz ...").

var parsedSeeds = []string{
	"https://example.com/",
	"HTTP://Example.COM/Path?q=1#f",
	"https://example.com:443/a",
	"https://example.com:0443/a",
	"http://example.com:080/",
	"http://example.com:00000/",
	"http://example.com:443/",
	"https://example.com:80/",
	"https://example.com:8181/",
	"http://example.com:/",
	"https://user:pw@example.com:8443/",
	"http://[::1]:8080/",
	"http://[2001:DB8::1]:80/",
	"http://[::ffff:192.0.2.1]/",
	"http://[fe80::1%25en0]:8080/",
	"http://192.0.2.1:65535/",
	"http://under_score.example/",
	"http://example.com./",
	"https://www.exämple.com/",
	"https://WWW.EXÄMPLE.COM/",
	"https://xn--exmple-cua.com/",
	"https://ドメイン名例.jp/",
	"http://a%C3%A9.com/",
	"https://ＥＸＡＭＰＬＥ。ｃｏｍ/",
	"http://example。com．/",
	"http://%E2%80%8B/",
	"http://%C2%A0/",
	"http://%C2%AF/",
	"http://a\uff20b/",
	"http://xn--/",
	"ftp://example.com/",
	"mailto:a@example.com",
	"https:opaque",
	"//example.com/",
	"/relative",
	"http:///nohost",
	"http://[::1/",
	"http://example.com:99999999999999999999/",
}

var handBuiltSeeds = [][2]string{
	{"http", "example.com"},
	{"HTTPS", "Example.COM:0443"},
	{"https", "example.com:8443"},
	{"http", "[::1]:80"},
	{"http", "[::1]"},
	{"http", "[::1]x"},
	{"http", "[::1"},
	{"http", "::1"},
	{"http", "example.com:8o"},
	{"http", "example.com:"},
	{"http", ":80"},
	{"https", "bücher.de"},
	{"https", "BÜCHER.de:443"},
	{"https", "ＥＸＡＭＰＬＥ．ｃｏｍ"},
	{"http", "ex\xffample.com"},
	{"ftp", "example.com"},
	{"", "example.com"},
	{"http", ""},
	{"http", "a@b"},
	{"http", "a/b"},
	{"http", "[]"},
	{"http", "[x]:80"},
	{"http", "¯"},
}

func FuzzParsed(f *testing.F) {
	for _, s := range parsedSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		got, ok := checkAppend(t, u)
		if !ok {
			return
		}
		// Agreement with net/url's reading of the same URL.
		scheme := strings.ToLower(u.Scheme)
		if !strings.HasPrefix(got, scheme+"://") {
			t.Fatalf("%q: authority %q does not start with %q", raw, got, scheme+"://")
		}
		hostPort := got[len(scheme+"://"):]
		port := strings.TrimLeft(u.Port(), "0")
		if port == "" && u.Port() != "" {
			port = "0"
		}
		if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
			port = ""
		}
		if port != "" && !strings.HasSuffix(hostPort, ":"+port) {
			if knownIssue(u, got) == "" {
				t.Fatalf("%q: authority %q lacks port %q", raw, got, port)
			}
		}
		if isASCII(u.Host) {
			want := strings.ToLower(u.Hostname())
			if strings.HasPrefix(u.Host, "[") {
				want = "[" + want + "]"
			}
			if port != "" {
				want += ":" + port
			}
			if hostPort != want {
				t.Fatalf("%q: authority %q, want host and port %q (url.Host %q)", raw, got, want, u.Host)
			}
		}
	})
}

func FuzzHandBuilt(f *testing.F) {
	for _, s := range handBuiltSeeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, scheme, host string) {
		checkAppend(t, &url.URL{Scheme: scheme, Host: host, Path: "/x"})
	})
}

// checkAppend runs String and Append on u and checks the properties shared
// by both targets. It returns the authority and whether there was one.
func checkAppend(t *testing.T, u *url.URL) (string, bool) {
	t.Helper()
	s, err := String(u)
	prefix := []byte("prefix|")
	b, aerr := Append(prefix, u)
	if (err == nil) != (aerr == nil) {
		t.Fatalf("%#v: String error %v, Append error %v", u, err, aerr)
	}
	if err != nil {
		if !errors.Is(err, ErrUnsupported) || !errors.Is(aerr, ErrUnsupported) {
			t.Fatalf("%#v: errors %v / %v do not wrap ErrUnsupported", u, err, aerr)
		}
		if s != "" {
			t.Fatalf("%#v: String returned %q with error %v", u, s, err)
		}
		if string(b) != string(prefix) {
			t.Fatalf("%#v: Append failed (%v) but returned %q, not the buffer it was given (%q)", u, aerr, b, prefix)
		}
		return "", false
	}
	if string(b) != string(prefix)+s {
		t.Fatalf("%#v: Append gave %q, String gave %q", u, b, s)
	}
	var scheme, defPort string
	switch {
	case strings.HasPrefix(s, "http://"):
		scheme, defPort = "http", "80"
	case strings.HasPrefix(s, "https://"):
		scheme, defPort = "https", "443"
	default:
		t.Fatalf("%#v: authority %q is neither http:// nor https://", u, s)
	}
	if !strings.EqualFold(u.Scheme, scheme) {
		t.Fatalf("%#v: authority %q for scheme %q", u, s, u.Scheme)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || ('A' <= c && c <= 'Z') {
			t.Fatalf("%#v: authority %q has byte %#x at %d: not lower-case ASCII", u, s, c, i)
		}
	}
	if len(s) == len(scheme+"://") {
		t.Fatalf("%#v: authority %q has no host", u, s)
	}
	known := knownIssue(u, s)
	if port, ok := portOf(s[len(scheme+"://"):]); ok && known == "" {
		if port == defPort {
			t.Fatalf("%#v: authority %q keeps the default port", u, s)
		}
		if len(port) > 1 && port[0] == '0' {
			t.Fatalf("%#v: authority %q keeps a leading zero in its port", u, s)
		}
	}
	// Idempotent: the authority of the authority is itself.
	u2, err := url.Parse(s + "/")
	if err != nil {
		if known == "" {
			t.Fatalf("%#v: authority %q does not parse back: %v", u, s, err)
		}
		return s, true
	}
	s2, err := String(u2)
	if (err != nil || s2 != s) && known == "" {
		t.Fatalf("%#v: authority %q is not idempotent: again %q, %v", u, s, s2, err)
	}
	return s, true
}

// portOf returns the port of "host[:port]" (host possibly a bracketed IPv6
// literal), and whether there is one.
func portOf(hp string) (string, bool) {
	i := strings.LastIndexByte(hp, ':')
	if i < 0 || strings.LastIndexByte(hp, ']') > i {
		return "", false
	}
	return hp[i+1:], true
}

var strict = os.Getenv("FUZZ_STRICT")

// knownIssue names the deviation, already reported on the issue, that u
// (with authority got, "" after an error) hits, or returns "". Properties
// an input is known to break are not asserted for it; everything else is.
func knownIssue(u *url.URL, got string) string {
	k := knownIssueOf(u, got)
	if strict == "all" || (k != "" && strings.Contains(","+strict+",", ","+k+",")) {
		return ""
	}
	return k
}

func knownIssueOf(u *url.URL, got string) string {
	host := u.Host
	switch {
	case strings.HasPrefix(host, "[") && strings.Contains(host, "%"):
		// An IPv6 zone is written with a bare "%" (and lower-cased): the
		// result does not parse back ("invalid URL escape").
		return "ipv6-zone"
	case strings.HasPrefix(host, "[") && got != "" && !validParsedHost(host):
		// The bracketed literal of a hand-built Host is checked for URL
		// delimiters only, not for IPv6 syntax: "[]" or "[x]" give
		// "http://[]", which does not parse back.
		return "unchecked-ipv6-literal"
	}
	// Fixed in ae4d522 (authority: refuse a host that would smuggle a URL
	// delimiter, keep the caller's prefix on an error), no longer excused:
	// "append-error-drops-prefix" (Append returned b[:0]),
	// "idna-maps-to-delimiter" ("a＠b" gave "http://a@b", "¯" gave
	// "http://xn-- -3bb") and "unvalidated-ascii-host" (a hand-built
	// "a@b" gave "http://a@b").
	return ""
}

// validParsedHost reports whether url.Parse reads host, as the authority
// of an http URL, unchanged.
func validParsedHost(host string) bool {
	u, err := url.Parse("http://" + host + "/")
	return err == nil && u.Host == host && u.User == nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// TestAppendDoesNotAllocate: Append into a buffer with room does not
// allocate for an ASCII host (the seeds of the fuzz targets that have one).
func TestAppendDoesNotAllocate(t *testing.T) {
	var us []*url.URL
	for _, s := range parsedSeeds {
		if u, err := url.Parse(s); err == nil && isASCII(u.Host) {
			us = append(us, u)
		}
	}
	for _, s := range handBuiltSeeds {
		if isASCII(s[1]) {
			us = append(us, &url.URL{Scheme: s[0], Host: s[1]})
		}
	}
	var buf [128]byte
	n := 0
	for _, u := range us {
		if _, err := Append(buf[:0], u); err != nil {
			continue
		}
		n++
		if a := testing.AllocsPerRun(100, func() { _, _ = Append(buf[:0], u) }); a != 0 {
			t.Errorf("Append(%q) allocates %v times", u.String(), a)
		}
	}
	if n < 20 {
		t.Errorf("only %d ASCII seeds have an authority", n)
	}
}

// TestKnownIssues pins the deviations knownIssue excuses, so that a fix
// shows up here: when one of these fails, the deviation is fixed; remove
// its case here and in knownIssue.
func TestKnownIssues(t *testing.T) {
	// Fixed: a host that would smuggle a URL delimiter is refused, an error
	// keeps the caller's prefix. Still open: an IPv6 zone is written with a
	// bare '%', as url.URL.Host holds it (the authority does not parse back).
	for _, raw := range []string{"http://a\uff20b/", "http://a\uff0fb/", "http://a\uff1a80/"} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := String(u); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: String = %q, %v; want ErrUnsupported", raw, got, err)
		}
	}
	u, _ := url.Parse("http://[fe80::1%25en0]/")
	if got, err := String(u); err != nil || got != "http://[fe80::1%en0]" || knownIssue(u, got) != "ipv6-zone" {
		t.Errorf("IPv6 zone: %q, %v (fixed?)", got, err)
	}
	if got, err := String(&url.URL{Scheme: "http", Host: "a@b"}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("hand-built host a@b: %q, %v; want ErrUnsupported", got, err)
	}
	for _, host := range []string{"[]", "[x]:80"} {
		hand := &url.URL{Scheme: "http", Host: host}
		if got, err := String(hand); err != nil || knownIssue(hand, got) != "unchecked-ipv6-literal" {
			t.Errorf("hand-built host %q: %q, %v (fixed?)", host, got, err)
		}
	}
	if b, err := Append([]byte("prefix"), &url.URL{Scheme: "http", Host: "\xff"}); err == nil || string(b) != "prefix" {
		t.Errorf("Append after an IDNA error returns %q, %v; want the prefix kept", b, err)
	}
}
