package botauth

import (
	"net/http"
	"testing"
	"time"
)

// BenchmarkSign is the cost of signing one request (what a Transport adds
// to each send): go test -run XXX -bench Sign -benchmem ./botauth
func BenchmarkSign(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"authority", nil},
		{"method-path-query", []Option{Cover("@method", "@path", "@query")}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := NewSigner("https://bot.example"+DirectoryPath, []Key{seedKey(b, 40)}, tc.opts...)
			if err != nil {
				b.Fatal(err)
			}
			req, _ := http.NewRequest("GET", "https://shop.example/catalogue/page-2?sort=price", nil)
			now := time.Unix(1_800_000_000, 0)
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Sign(req, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
