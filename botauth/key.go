package botauth

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"time"
)

// ErrKey is wrapped by every error about a key: one that cannot be read, a
// key that is not Ed25519, a public key where a private key is needed.
var ErrKey = errors.New("botauth: unusable key")

// maxKeyFile bounds what LoadKey reads: a PEM or JWK Ed25519 key is a few
// hundred bytes.
const maxKeyFile = 64 << 10

// testKeyID is the thumbprint of RFC 9421's Ed25519 test key (Appendix
// B.1.4), which is public: verifiers should reject it, so a [Signer] and a
// [Directory] refuse it unless [AllowTestKey] is given.
const testKeyID = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"

// A Key is an Ed25519 private key with its key ID, the RFC 7638 JWK SHA-256
// thumbprint of its public key. NotBefore and Expires bound when it may
// sign; a [Signer] signs with the newest key in force, a [Directory]
// publishes every key not yet expired with these bounds as its nbf and exp
// members. The zero Key is not a key: [NewSigner] and [NewDirectory] refuse
// it.
type Key struct {
	priv ed25519.PrivateKey
	kid  string

	// NotBefore is the instant the key starts to sign; zero means always.
	NotBefore time.Time
	// Expires is the instant it stops signing and is no longer published;
	// zero means never.
	Expires time.Time
}

// NewKey returns the Key of an Ed25519 private key (64 bytes, as
// ed25519.GenerateKey or ed25519.NewKeyFromSeed return it).
func NewKey(priv ed25519.PrivateKey) (Key, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return Key{}, fmt.Errorf("%w: an Ed25519 private key has %d bytes, not %d", ErrKey, ed25519.PrivateKeySize, len(priv))
	}
	priv = bytes.Clone(priv)
	return Key{priv: priv, kid: thumbprint(priv.Public().(ed25519.PublicKey))}, nil
}

// ParseKey reads an Ed25519 private key from a PEM "PRIVATE KEY" block
// (PKCS#8, as `openssl genpkey -algorithm ed25519` writes it) or from a
// private JWK (kty "OKP", crv "Ed25519", with its "d" member). A JWK's
// "nbf" and "exp" members (seconds since the epoch) set NotBefore and
// Expires. Another key type, a public key alone, or a JWK whose "x" does not
// belong to its "d" is an error wrapping [ErrKey].
func ParseKey(data []byte) (Key, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return parseJWK(trimmed)
	}
	block, _ := pem.Decode(trimmed)
	if block == nil {
		return Key{}, fmt.Errorf("%w: neither a PEM block nor a JWK", ErrKey)
	}
	switch block.Type {
	case "PRIVATE KEY":
	case "PUBLIC KEY":
		return Key{}, fmt.Errorf("%w: a public key; signing needs the private key", ErrKey)
	default:
		return Key{}, fmt.Errorf("%w: PEM block %q; want \"PRIVATE KEY\" (PKCS#8, e.g. openssl genpkey -algorithm ed25519)", ErrKey, block.Type)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return Key{}, fmt.Errorf("%w: %w", ErrKey, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return Key{}, fmt.Errorf("%w: a %T; want Ed25519", ErrKey, k)
	}
	return NewKey(priv)
}

// LoadKey is [ParseKey] of the file at path. A file that users other than
// its owner may read (mode 0o044 set: chmod 600 it) is read all the same,
// with a warning logged through slog's default logger.
func LoadKey(path string) (Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return Key{}, fmt.Errorf("%w: %w", ErrKey, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o044 != 0 && runtime.GOOS != "windows" {
		slog.Warn("botauth: the private key file is readable by other users; chmod 600 it",
			slog.String("path", path), slog.String("mode", fi.Mode().Perm().String()))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return Key{}, fmt.Errorf("%w: %w", ErrKey, err)
	}
	if len(data) > maxKeyFile {
		return Key{}, fmt.Errorf("%w: %s is over %d bytes", ErrKey, path, maxKeyFile)
	}
	k, err := ParseKey(data)
	if err != nil {
		return Key{}, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// jwk is the JSON Web Key of an Ed25519 key, private members included when
// read and left out when published.
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	Kid string `json:"kid,omitempty"`
	X   string `json:"x"`
	D   string `json:"d,omitempty"`
	Use string `json:"use,omitempty"`
	Nbf int64  `json:"nbf,omitempty"`
	Exp int64  `json:"exp,omitempty"`
}

func parseJWK(data []byte) (Key, error) {
	var j jwk
	if err := json.Unmarshal(data, &j); err != nil {
		return Key{}, fmt.Errorf("%w: JWK: %w", ErrKey, err)
	}
	if j.Kty != "OKP" || j.Crv != "Ed25519" {
		return Key{}, fmt.Errorf("%w: JWK kty %q crv %q; want OKP Ed25519", ErrKey, j.Kty, j.Crv)
	}
	if j.D == "" {
		return Key{}, fmt.Errorf("%w: a public JWK (no \"d\"); signing needs the private key", ErrKey)
	}
	seed, err := base64.RawURLEncoding.DecodeString(j.D)
	if err != nil || len(seed) != ed25519.SeedSize {
		return Key{}, fmt.Errorf("%w: JWK \"d\" is not a base64url Ed25519 seed of %d bytes", ErrKey, ed25519.SeedSize)
	}
	k, err := NewKey(ed25519.NewKeyFromSeed(seed))
	if err != nil {
		return Key{}, err
	}
	if j.X != "" && j.X != k.x() {
		return Key{}, fmt.Errorf("%w: JWK \"x\" is not the public key of its \"d\"", ErrKey)
	}
	if j.Nbf != 0 {
		k.NotBefore = time.Unix(j.Nbf, 0)
	}
	if j.Exp != 0 {
		k.Expires = time.Unix(j.Exp, 0)
	}
	return k, nil
}

// Thumbprint returns the key's ID: the base64url RFC 7638 JWK SHA-256
// thumbprint of its public key, the keyid of its signatures and its kid in
// the directory.
func (k Key) Thumbprint() string { return k.kid }

// x is the JWK "x" member: the public key, base64url.
func (k Key) x() string {
	return base64.RawURLEncoding.EncodeToString(k.priv.Public().(ed25519.PublicKey))
}

// valid reports whether k may sign at now.
func (k Key) valid(now time.Time) bool {
	return (k.NotBefore.IsZero() || !now.Before(k.NotBefore)) && (k.Expires.IsZero() || now.Before(k.Expires))
}

// thumbprint is the RFC 7638 thumbprint of an Ed25519 public key: SHA-256
// of its required JWK members in lexical order without whitespace (RFC
// 8037 Appendix A.3), base64url without padding.
func thumbprint(pub ed25519.PublicKey) string {
	canon := `{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`
	sum := sha256.Sum256([]byte(canon))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// checkKeys refuses an empty list, a zero Key, a key given twice and,
// unless testKey, RFC 9421's published test key.
func checkKeys(keys []Key, testKey bool) ([]Key, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no key", ErrKey)
	}
	seen := make(map[string]bool, len(keys))
	for i, k := range keys {
		switch {
		case k.priv == nil:
			return nil, fmt.Errorf("%w: key %d is the zero Key; use ParseKey, LoadKey or NewKey", ErrKey, i)
		case k.kid == testKeyID && !testKey:
			return nil, fmt.Errorf("%w: key %d is RFC 9421's published test key, which verifiers reject; AllowTestKey is for tests", ErrKey, i)
		case seen[k.kid]:
			return nil, fmt.Errorf("%w: key %d (%s) is given twice", ErrKey, i, k.kid)
		case !k.Expires.IsZero() && !k.NotBefore.IsZero() && !k.Expires.After(k.NotBefore):
			return nil, fmt.Errorf("%w: key %d (%s) expires before it starts", ErrKey, i, k.kid)
		}
		seen[k.kid] = true
	}
	return append([]Key(nil), keys...), nil
}

// current is the key to sign with at now: of the keys in force, the one
// that started last (the first given of equals); with kid not empty, the
// key of that ID if it is in force.
func current(keys []Key, now time.Time, kid string) (Key, error) {
	var best Key
	for _, k := range keys {
		if !k.valid(now) || kid != "" && k.kid != kid {
			continue
		}
		if best.priv == nil || k.NotBefore.After(best.NotBefore) {
			best = k
		}
	}
	if best.priv == nil {
		if kid != "" {
			return Key{}, fmt.Errorf("%w: no key %s in force at %s", ErrKey, quoted(kid), now.UTC().Format(time.RFC3339))
		}
		return Key{}, fmt.Errorf("%w: no key in force at %s", ErrKey, now.UTC().Format(time.RFC3339))
	}
	return best, nil
}
