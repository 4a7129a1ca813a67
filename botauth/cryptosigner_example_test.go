package botauth_test

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"fmt"

	"github.com/politecrawl/robots/botauth"
)

// The crawler's key signs other things than its requests (a usage log)
// through CryptoSigner, and names them by its thumbprint, as its requests.
func ExampleKey_CryptoSigner() {
	key, err := botauth.NewKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize)))
	if err != nil {
		fmt.Println(err)
		return
	}
	s := key.CryptoSigner()
	msg := []byte(`{"url":"https://example.com/","outcome":"fetched"}`)
	sig, err := s.Sign(nil, msg, crypto.Hash(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ed25519.Verify(s.Public().(ed25519.PublicKey), msg, sig))
	fmt.Println(s)
	// Output:
	// true
	// botauth.CryptoSigner(UDDReOZl1ipXAfp9wYsm13sDBMK5og--QWdBjzuf6o4)
}
