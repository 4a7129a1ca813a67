package policy

import (
	"errors"
	"net/url"
	"testing"
)

func TestAuthority(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://example.com/", "https://example.com"},
		{"https://example.com:443/a", "https://example.com"},
		{"https://example.com:0443/a", "https://example.com"},
		{"https://example.com:8181/a", "https://example.com:8181"},
		{"http://example.com:80/a", "http://example.com"},
		{"http://example.com:443/a", "http://example.com:443"},
		{"https://example.com:80/a", "https://example.com:80"},
		{"http://example.com:/a", "http://example.com"},
		{"HTTP://Example.COM/Path", "http://example.com"},
		{"https://user:pw@example.com/", "https://example.com"},
		{"https://www.exämple.com/", "https://www.xn--exmple-cua.com"},
		{"https://WWW.EXÄMPLE.COM/", "https://www.xn--exmple-cua.com"},
		{"https://xn--exmple-cua.com/", "https://xn--exmple-cua.com"},
		{"https://ドメイン名例.jp/", "https://xn--eckwd4c7cu47r2wf.jp"},
		{"http://[::1]:8080/", "http://[::1]:8080"},
		{"http://[2001:DB8::1]/", "http://[2001:db8::1]"},
		{"http://[2001:db8::1]:80/", "http://[2001:db8::1]"},
		{"http://212.96.82.21/robots.txt", "http://212.96.82.21"},
		{"http://under_score.example/", "http://under_score.example"},
	}
	for _, c := range cases {
		u, err := url.Parse(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		got, err := Authority(u)
		if err != nil || got != c.want {
			t.Errorf("Authority(%s) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestAuthorityErrors(t *testing.T) {
	for _, in := range []string{"ftp://example.com/", "mailto:a@example.com", "file:///etc/passwd", "/relative/path", "http:///nohost", "https:opaque"} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got, err := Authority(u); !errors.Is(err, ErrUnsupportedURL) {
			t.Errorf("Authority(%s) = %q, %v; want ErrUnsupportedURL", in, got, err)
		}
	}
	if _, err := Authority(nil); !errors.Is(err, ErrUnsupportedURL) {
		t.Errorf("Authority(nil): %v", err)
	}
	// Hand-built URLs are not validated by url.Parse.
	for _, host := range []string{"[::1", "::1", "example.com:8o", "[::1]x", "ex\xffample.com"} {
		u := &url.URL{Scheme: "http", Host: host}
		if got, err := Authority(u); !errors.Is(err, ErrUnsupportedURL) {
			t.Errorf("Authority(host %q) = %q, %v; want ErrUnsupportedURL", host, got, err)
		}
	}
}

func TestAuthorityDoesNotAllocate(t *testing.T) {
	u, _ := url.Parse("https://Www.Example.com:443/some/path?q=1")
	var buf [128]byte
	n := testing.AllocsPerRun(100, func() {
		if _, err := AppendAuthority(buf[:0], u); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("AppendAuthority allocates %v times", n)
	}
}
