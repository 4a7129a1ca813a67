package botauth

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

func TestCryptoSigner(t *testing.T) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize))
	k, err := NewKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	s := k.CryptoSigner()
	pub, ok := s.Public().(ed25519.PublicKey)
	if !ok || !pub.Equal(priv.Public()) {
		t.Fatalf("Public() = %v; want the key's Ed25519 public key", s.Public())
	}
	msg := []byte("a usage log line")
	sig, err := s.Sign(nil, msg, crypto.Hash(0))
	if err != nil || !ed25519.Verify(pub, msg, sig) {
		t.Fatalf("Sign: %v; the signature does not verify", err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%x", "%s"} {
		out := fmt.Sprintf(verb, s)
		if strings.Contains(out, hex.EncodeToString(priv.Seed())) || !strings.Contains(out, k.Thumbprint()) {
			t.Errorf("%s prints %q; want the key ID, not the key", verb, out)
		}
	}
	var zero Key
	if _, err := zero.CryptoSigner().Sign(nil, msg, crypto.Hash(0)); err == nil || zero.CryptoSigner().Public() != nil {
		t.Error("the zero Key's signer signed or has a public key")
	}
}
