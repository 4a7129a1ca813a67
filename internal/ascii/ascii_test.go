package ascii

import "testing"

func TestEqualFold(t *testing.T) {
	for _, c := range []struct {
		s, lower string
		want     bool
	}{
		{"HTTPS", "https", true},
		{"hTtP", "http", true},
		{"http", "https", false},
		{"https", "http", false},
		{"", "", true},
		{"\xC4", "\xE4", false}, // only ASCII letters fold
		{"User-Agent", "user-agent", true},
		{"User_Agent", "user-agent", false},
	} {
		if got := EqualFold(c.s, c.lower); got != c.want {
			t.Errorf("EqualFold(%q, %q) = %v, want %v", c.s, c.lower, got, c.want)
		}
	}
}

func TestAppendLowerAndIsASCII(t *testing.T) {
	if got := string(AppendLower([]byte("x:"), "ExAmPle.COM-9")); got != "x:example.com-9" {
		t.Errorf("AppendLower = %q", got)
	}
	if !IsASCII("example.com") || IsASCII("bücher.de") {
		t.Error("IsASCII wrong")
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{{"abc", 3, "abc"}, {"abcd", 3, "abc…"}, {"aé", 2, "a…"}, {"", 0, ""}} {
		if got := Clip(tc.s, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
