package botauth

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
)

// FuzzAcceptSignature feeds the Accept-Signature reader any field: it
// never panics, and a challenge it accepts always signs, under the label
// asked, covering "@authority" or "@target-uri", with created and expires
// present and expires after now, at most MaxWindow after created. Seeds
// are in testdata/fuzz/FuzzAcceptSignature.
func FuzzAcceptSignature(f *testing.F) {
	f.Add(`sig1=("@authority" "signature-agent";key="sig1");created;expires;keyid;nonce;tag="web-bot-auth"`)
	s, err := NewSigner("https://bot.example"+DirectoryPath, []Key{seedKey(f, 42)})
	if err != nil {
		f.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	f.Fuzz(func(t *testing.T, field string) {
		req := httptest.NewRequest("POST", "https://shop.example/cart?item=1", strings.NewReader("x"))
		req.Header.Set("Content-Type", "text/plain")
		sp, err := s.readChallenge([]string{field}, req, now)
		if err != nil {
			return
		}
		base, err := s.sign(req, now, sp)
		if err != nil {
			t.Fatalf("accepted %q, then could not sign: %v", field, err)
		}
		if !strings.Contains(base, `"@authority": `) && !strings.Contains(base, `"@target-uri": `) {
			t.Fatalf("accepted %q: the signature is bound to no site:\n%s", field, base)
		}
		d, err := httpsfv.UnmarshalDictionary(req.Header.Values("Signature-Input"))
		if err != nil || len(d.Names()) != 1 || d.Names()[0] != sp.label {
			t.Fatalf("accepted %q: Signature-Input %q: %v", field, req.Header.Get("Signature-Input"), err)
		}
		m, _ := d.Get(sp.label)
		p := m.(httpsfv.InnerList).Params
		created, _ := p.Get("created")
		expires, _ := p.Get("expires")
		c, ok1 := created.(int64)
		e, ok2 := expires.(int64)
		if !ok1 || !ok2 || e <= now.Unix() || e > c+int64(MaxWindow/time.Second) {
			t.Fatalf("accepted %q: created %v expires %v", field, created, expires)
		}
	})
}
