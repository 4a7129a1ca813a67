package pathpat

import (
	"testing"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"/", "/", true},
		{"/", "/a", true},
		{"", "/a", true},
		{"/a", "/", false},
		{"/directory-a/", "/directory-a/x.html", true},
		{"/directory-a/", "/directory-a", false},
		{"/Dir/", "/dir/x", false}, // case-sensitive
		// Wildcards and the end anchor.
		{"/directory-b/images/*.jpg", "/directory-b/images/a/b.jpg", true},
		{"/directory-b/images/*.jpg", "/directory-b/images/b.jpg?x=1", true},
		{"/directory-b/images/*.jpg", "/directory-b/images/b.png", false},
		{"/*.jpg$", "/a.jpg", true},
		{"/*.jpg$", "/a.jpg?x", false},
		{"/*.jpg$", "/a.jpg.jpg", true},
		{"/a$", "/a", true},
		{"/a$", "/ab", false},
		{"*", "/anything", true},
		{"/a*b*c", "/a-c-b-c", true},
		{"/a*b*c$", "/abcb", false},
		{"/a*b$", "/ab", true},
		{"/a**b", "/axb", true},
		// A "$" inside a pattern is a character; a literal one is %24.
		{"/a$b", "/a$b", true},
		{"/path/foo-%24", "/path/foo-$", true},
		{"/path/foo-%24", "/path/foo-", false},
		{"/path/foo-$", "/path/foo-", true},
		{"/x%2A", "/x*", true},
		{"/x%2A", "/xy", false},
		{"/x*", "/x%2A", true},
		// %-encoding: unreserved decoded, others kept with upper-case hex.
		{"/%7Euser", "/~user", true},
		{"/~user", "/%7euser", true},
		{"/%61", "/a", true},
		{"/a%2Fb", "/a/b", false},
		{"/a%2fb", "/a%2Fb", true},
		{"/caf%C3%A9", "/café", true},
		{"/café", "/caf%c3%a9", true},
		{"/a b", "/a%20b", true},
		{"/100%", "/100%25", true},
		{"/100%zz", "/100%25zz", true},
		{"/%", "/%", true},
	} {
		p := Compile(tc.pattern)
		if got := p.Match(Path(tc.path)); got != tc.want {
			t.Errorf("Compile(%q).Match(Path(%q)) = %v, want %v (pattern %q, path %q)",
				tc.pattern, tc.path, got, tc.want, p.norm, Path(tc.path))
		}
	}
}

func TestLen(t *testing.T) {
	for pattern, want := range map[string]int{"": 0, "/": 1, "/a$": 3, "/%7E": 2, "/é": 7, "/*.jpg": 6} {
		if got := Compile(pattern).Len(); got != want {
			t.Errorf("Compile(%q).Len() = %d, want %d", pattern, got, want)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	p := Compile("/a/*/c*.html$")
	path := Path("/a/b/c/d.html")
	if n := testing.AllocsPerRun(100, func() {
		if !p.Match(path) || Path("/plain/path") != "/plain/path" {
			t.Fatal("no match")
		}
	}); n != 0 {
		t.Errorf("%v allocations per match, want 0", n)
	}
}

// FuzzMatch: normalising is idempotent, a pattern made of a normalised
// path matches that path, and nothing panics.
func FuzzMatch(f *testing.F) {
	f.Add("/a*b$", "/a/b")
	f.Add("/%7e%zz%", "/~%C3%A9 $*")
	f.Fuzz(func(t *testing.T, pattern, path string) {
		Compile(pattern).Match(Path(path))
		n := Path(path)
		if Path(n) != n {
			t.Fatalf("Path(%q) = %q, not a fixed point", path, n)
		}
		if !Compile(n).Match(n) {
			t.Fatalf("%q does not match itself", n)
		}
	})
}
