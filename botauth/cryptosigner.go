package botauth

import (
	"crypto"
	"fmt"
	"io"
)

// CryptoSigner returns k's private key as a crypto.Signer, for signing
// other things than requests with the crawler's key (a usage log): its
// Public is the Ed25519 public key; the private key stays inside, and the
// signer prints as its key ID. The zero Key's has no public key and
// cannot sign.
func (k Key) CryptoSigner() crypto.Signer { return keySigner{k} }

type keySigner struct{ k Key }

func (s keySigner) Public() crypto.PublicKey {
	if s.k.priv == nil {
		return nil
	}
	return s.k.priv.Public()
}

func (s keySigner) Sign(rand io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	if s.k.priv == nil {
		return nil, fmt.Errorf("%w: the zero Key", ErrKey)
	}
	return s.k.priv.Sign(rand, msg, opts)
}

func (s keySigner) String() string { return "botauth.CryptoSigner(" + s.k.kid + ")" }

func (s keySigner) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.String()) }
