package botauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func pemOf(t *testing.T, typ string, der []byte) []byte {
	t.Helper()
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// TestParseKey reads a PKCS#8 PEM and a private JWK of the same key to the
// same thumbprint, and reads a JWK's nbf and exp.
func TestParseKey(t *testing.T) {
	k := seedKey(t, 20)
	der, err := x509.MarshalPKCS8PrivateKey(k.priv)
	if err != nil {
		t.Fatal(err)
	}
	fromPEM, err := ParseKey(pemOf(t, "PRIVATE KEY", der))
	if err != nil {
		t.Fatal(err)
	}
	j := `{"kty":"OKP","crv":"Ed25519","d":"FBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQ","x":"` + k.x() + `","nbf":1800000000,"exp":1900000000}`
	fromJWK, err := ParseKey([]byte(j))
	if err != nil {
		t.Fatal(err)
	}
	if fromPEM.Thumbprint() != k.Thumbprint() || fromJWK.Thumbprint() != k.Thumbprint() {
		t.Errorf("thumbprints %s %s, want %s", fromPEM.Thumbprint(), fromJWK.Thumbprint(), k.Thumbprint())
	}
	if !fromJWK.NotBefore.Equal(time.Unix(1800000000, 0)) || !fromJWK.Expires.Equal(time.Unix(1900000000, 0)) {
		t.Errorf("nbf %v exp %v", fromJWK.NotBefore, fromJWK.Expires)
	}
}

// TestParseKeyRefuses: another key type, a public key alone, a JWK whose x
// is not its d's, and what is no key at all are errors wrapping ErrKey
// that say which.
func TestParseKeyRefuses(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ec)
	pubDER, _ := x509.MarshalPKIXPublicKey(seedKey(t, 21).priv.Public())
	for name, tc := range map[string]struct {
		data   []byte
		reason string
	}{
		"ECDSA PKCS#8":  {pemOf(t, "PRIVATE KEY", ecDER), "ecdsa"},
		"public PEM":    {pemOf(t, "PUBLIC KEY", pubDER), "public key"},
		"SEC 1 PEM":     {pemOf(t, "EC PRIVATE KEY", []byte{1}), `"EC PRIVATE KEY"`},
		"broken PKCS#8": {pemOf(t, "PRIVATE KEY", []byte{1, 2, 3}), "asn1"},
		"public JWK":    {[]byte(`{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}`), "public JWK"},
		"RSA JWK":       {[]byte(`{"kty":"RSA","n":"AQAB","e":"AQAB","d":"AQAB"}`), `kty "RSA"`},
		"X25519 JWK":    {[]byte(`{"kty":"OKP","crv":"X25519","d":"AQAB","x":"AQAB"}`), `crv "X25519"`},
		"mismatched x":  {[]byte(`{"kty":"OKP","crv":"Ed25519","d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU","x":"AAAA"}`), "not the public key"},
		"short d":       {[]byte(`{"kty":"OKP","crv":"Ed25519","d":"AAAA"}`), "seed"},
		"broken JSON":   {[]byte(`{"kty":`), "JWK"},
		"neither":       {[]byte("hello"), "neither"},
		"empty":         {nil, "neither"},
	} {
		_, err := ParseKey(tc.data)
		if !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: %v; want ErrKey saying %s", name, err, tc.reason)
		}
	}
	if _, err := NewKey(make([]byte, 12)); !errors.Is(err, ErrKey) {
		t.Errorf("NewKey of 12 bytes: %v", err)
	}
}

// TestLoadKey reads a file, and refuses a missing one and one too big to
// be a key without reading it all.
func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(good, []byte(testKeyPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	if k, err := LoadKey(good); err != nil || k.Thumbprint() != testKeyID {
		t.Errorf("LoadKey: %v %s", err, k.Thumbprint())
	}
	big := filepath.Join(dir, "big.pem")
	if err := os.WriteFile(big, make([]byte, maxKeyFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{big, filepath.Join(dir, "missing.pem")} {
		if _, err := LoadKey(p); !errors.Is(err, ErrKey) {
			t.Errorf("LoadKey(%s): %v", p, err)
		}
	}
}

// TestKeysRefused: the test key without AllowTestKey, no key, the zero
// Key, a key given twice and one that expires before it starts are
// refused by NewSigner and NewDirectory.
func TestKeysRefused(t *testing.T) {
	k := seedKey(t, 22)
	backwards := seedKey(t, 23)
	backwards.NotBefore, backwards.Expires = time.Unix(2000, 0), time.Unix(1000, 0)
	for name, keys := range map[string][]Key{
		"test key":  {rfcTestKey(t)},
		"none":      nil,
		"zero":      {{}},
		"twice":     {k, k},
		"backwards": {backwards},
	} {
		if _, err := NewSigner("https://bot.example/", keys); !errors.Is(err, ErrKey) {
			t.Errorf("NewSigner, %s: %v", name, err)
		}
		if _, err := NewDirectory("https://bot.example/", keys); !errors.Is(err, ErrKey) {
			t.Errorf("NewDirectory, %s: %v", name, err)
		}
	}
	if _, err := NewSigner("https://bot.example/", []Key{rfcTestKey(t)}, AllowTestKey()); err != nil {
		t.Errorf("AllowTestKey: %v", err)
	}
}

// TestOptionsRefused: an option out of range, or given to a constructor it
// cannot act on, is an error wrapping ErrOption that names it.
func TestOptionsRefused(t *testing.T) {
	keys := []Key{seedKey(t, 24)}
	s, err := NewSigner("https://bot.example/", keys)
	if err != nil {
		t.Fatal(err)
	}
	signer := func(agent string, o ...Option) func() error {
		return func() error { _, err := NewSigner(agent, keys, o...); return err }
	}
	dir := func(o Option) func() error {
		return func() error { _, err := NewDirectory("https://bot.example/", keys, o); return err }
	}
	for _, tc := range []struct {
		names string
		make  func() error
	}{
		{"WithWindow(0s)", signer("https://bot.example/", WithWindow(0))},
		{"WithWindow(25h0m0s)", signer("https://bot.example/", WithWindow(25*time.Hour))},
		{`Cover(["@status"])`, signer("https://bot.example/", Cover("@status"))},
		{`"@path" given twice`, signer("https://bot.example/", Cover("@path", "@path"))},
		{"nil clock", signer("https://bot.example/", WithClock(nil))},
		{"the zero Option", signer("https://bot.example/", Option{})},
		{"WithMaxAge(1h0m0s) cannot act here", signer("https://bot.example/", WithMaxAge(time.Hour))},
		{"http://bot.example/", signer("http://bot.example/")},
		{"relative", signer("relative")},
		{"u@bot", signer("https://u@bot.example/")},
		{"mple", signer("https://bot.ex\u00e9mple/")},
		{"WithMaxAge(0s)", dir(WithMaxAge(0))},
		{"Cover([]) cannot act here", dir(Cover())},
		{"OnlyWhenChallenged cannot act here", dir(OnlyWhenChallenged())},
		{"WithForm(dictionary) cannot act here", func() error { _, err := NewTransport(nil, s, WithForm(DictionaryForm)); return err }},
		{"WithSkew(-1s)", signer("https://bot.example/", WithSkew(-time.Second))},
		{"WithSkew(6m0s)", signer("https://bot.example/", WithSkew(6*time.Minute))},
		{"not shorter than the window", signer("https://bot.example/", WithSkew(time.Minute))},
		{"WithForm(Form(7))", signer("https://bot.example/", WithForm(7))},
		{"ftp://bot.example/", func() error { _, err := NewDirectory("ftp://bot.example/", keys); return err }},
		{"bot.example/?q", func() error { _, err := NewDirectory("https://bot.example/?q", keys); return err }},
		{"nil Signer", func() error { _, err := NewTransport(nil, nil); return err }},
	} {
		if err := tc.make(); !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), tc.names) {
			t.Errorf("%s: %v", tc.names, err)
		}
	}
}

// TestNoKeyInForce: with no key in force the Transport sends nothing and
// says why; Sign fails the same way.
func TestNoKeyInForce(t *testing.T) {
	k := seedKey(t, 25)
	k.Expires = time.Unix(1000, 0)
	s, err := NewSigner("https://bot.example/", []Key{k})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTransport(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	if _, err := (&http.Client{Transport: tr}).Get(srv.URL); !errors.Is(err, ErrKey) || hits.Load() != 0 {
		t.Errorf("Get: %v, %d requests reached the site", err, hits.Load())
	}
	if err := s.Sign(httptest.NewRequest("GET", "http://a.example/", nil), time.Now()); !errors.Is(err, ErrKey) {
		t.Errorf("Sign: %v", err)
	}
}

// TestSignBareRequest: a request built by hand without a header map is
// signed; one without a URL is an error, not a panic.
func TestSignBareRequest(t *testing.T) {
	s, err := NewSigner("https://bot.example/", []Key{seedKey(t, 26)})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("https://shop.example/")
	req := &http.Request{Method: "GET", URL: u}
	if err := s.Sign(req, time.Now()); err != nil || req.Header.Get("Signature") == "" {
		t.Errorf("no header map: %v %v", err, req.Header)
	}
	if err := s.Sign(&http.Request{}, time.Now()); err == nil {
		t.Error("no URL: signed")
	}
}
