package robots

import "testing"

// String never panics, whatever the value.
func TestKindStrings(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Disallowed.String(), "disallowed"},
		{Deferred.String(), "deferred"},
		{Skipped.String(), "skipped"},
		{Canceled.String(), "canceled"},
		{BlockKind(9).String(), "BlockKind(9)"},
		{CapDelay.String(), "cap"},
		{SkipHost.String(), "skip"},
		{ObeyDelay.String(), "obey"},
		{OverDelay(7).String(), "OverDelay(7)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
