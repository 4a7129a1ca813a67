package robots

import (
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/politecrawl/robots/botauth"
	"github.com/politecrawl/robots/testkit/testutil"
)

// BenchmarkPluginSigned: one page fetched from a loopback server by a sync
// collector with the plugin (robots.txt cached, no delay), unsigned and
// signed with WithSigner; the difference is signing's cost per request:
//
//	go test -run '^$' -bench PluginSigned -benchmem -count 6 .
func BenchmarkPluginSigned(b *testing.B) {
	f := testutil.NewFarm(b, map[string]*testutil.Site{"a.test": {Robots: "User-agent: *\nDisallow: /private\n"}})
	k, err := botauth.NewKey(ed25519.NewKeyFromSeed([]byte(strings.Repeat("\x09", ed25519.SeedSize))))
	if err != nil {
		b.Fatal(err)
	}
	s, err := botauth.NewSigner(testAgent, []botauth.Key{k})
	if err != nil {
		b.Fatal(err)
	}
	for _, signed := range []bool{false, true} {
		name := "unsigned"
		if signed {
			name = "signed"
		}
		b.Run(name, func(b *testing.B) {
			tr := f.Transport()
			defer tr.CloseIdleConnections()
			opts := []Option{WithTransport(tr), WithDefaultDelay(0)}
			if signed {
				opts = append(opts, WithSigner(s))
			}
			c := newCollector(false, WithRobots(opts...))
			visitPages(b, c)
		})
	}
}
