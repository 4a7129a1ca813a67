package dialect

import (
	"strings"
	"testing"
)

// tc is one check: robots body, crawler tokens (comma-separated), URL or path,
// and the expected verdict; line, when not 0, is the deciding rule's line
// (-1: no rule decided).
type tc struct {
	name   string
	body   string
	agents string
	url    string
	allow  bool
	line   int
}

func runCases(t *testing.T, d *Dialect, cases []tc) {
	t.Helper()
	for _, c := range cases {
		name := c.name
		if name == "" {
			name = c.agents + " " + c.url
		}
		t.Run(name, func(t *testing.T) {
			rs := d.ParseString(c.body).For(strings.Split(c.agents, ",")...)
			v := rs.CheckURL(c.url)
			if v.Allowed != c.allow {
				t.Fatalf("%s: %s for %q: allowed=%v (%s), want %v\nrobots.txt:\n%s", d, c.agents, c.url, v.Allowed, v, c.allow, c.body)
			}
			switch {
			case c.line > 0 && (v.Rule == (Rule{}) || v.Rule.Line != c.line):
				t.Fatalf("%s: deciding rule %s, want line %d", d, v, c.line)
			case c.line < 0 && v.Rule != (Rule{}):
				t.Fatalf("%s: deciding rule %s, want none", d, v)
			}
		})
	}
}
