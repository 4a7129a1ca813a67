package botauth

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkVerify is the cost of verifying one signed request once the
// key directory is cached: go test -run XXX -bench Verify -benchmem ./botauth
func BenchmarkVerify(b *testing.B) {
	k := seedKey(b, 41)
	now := time.Unix(1_800_000_000, 0)
	srv, agent := tlsDirectory(b, []Key{k}, nil, WithClock(func() time.Time { return now }))
	v, err := NewVerifier(VerifyClient(srv.Client()), VerifyClock(func() time.Time { return now }))
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewSigner(agent, []Key{k}, WithForm(StringForm), Cover("@method", "@path"))
	if err != nil {
		b.Fatal(err)
	}
	// Signed requests, each with its own nonce; the nonce memory is
	// emptied each time they are used again.
	reqs := make([]*http.Request, 1000)
	for i := range reqs {
		reqs[i] = httptest.NewRequest("GET", "https://shop.example/catalogue/page-2?sort=price", nil)
		if err := s.Sign(reqs[i], now); err != nil {
			b.Fatal(err)
		}
	}
	if res := v.Verify(reqs[0]); res.Verdict != Verified { // fetches the directory
		b.Fatalf("%+v", res)
	}
	b.ReportAllocs()
	i := 1
	for b.Loop() {
		if i == len(reqs) {
			i = 0
			v.nonces = nonceSet{}
		}
		if res := v.Verify(reqs[i]); res.Verdict != Verified {
			b.Fatalf("%+v", res)
		}
		i++
	}
}
