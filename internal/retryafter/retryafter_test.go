package retryafter

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"  ", 0, false},
		{"5", 5 * time.Second, true},
		{" 0 ", 0, true},
		{"007", 7 * time.Second, true},
		{"-1", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"5s", 0, false},
		{"99999999999999999999999", time.Duration(maxSeconds) * time.Second, true},
		{"Thu, 01 Jan 2026 00:00:30 GMT", 30 * time.Second, true},
		{"Wed, 31 Dec 2025 00:00:00 GMT", 0, true},
		{"soon", 0, false},
	} {
		got, ok := Parse(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Parse(%q) = %s, %v; want %s, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
