package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/politecrawl/robots/botauth"
	usagepkg "github.com/politecrawl/robots/usage"
)

func evidenceKey(t *testing.T, seed byte) (botauth.Key, ed25519.PrivateKey) {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	k, err := botauth.NewKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return k, priv
}

// writeEvidence writes a log of n records, signed with k unless k is the
// zero Key, and returns its path.
func writeEvidence(t *testing.T, k botauth.Key, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "usage.log")
	cfg := usagepkg.LogConfig{}
	if k.Thumbprint() != "" {
		cfg = usagepkg.LogConfig{Key: k.CryptoSigner(), KeyID: k.Thumbprint()}
	}
	l, err := usagepkg.OpenLog(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := l.Append(usagepkg.LogRecord{URL: fmt.Sprintf("https://site.test/%d", i), Outcome: usagepkg.Fetched, Status: 200}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEvidenceVerify(t *testing.T) {
	k, priv := evidenceKey(t, 5)
	path := writeEvidence(t, k, 3)
	der, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := writeFile(t, "pub.pem", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	pkcs8, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	privPEM := writeFile(t, "priv.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}))
	x := base64.RawURLEncoding.EncodeToString(priv.Public().(ed25519.PublicKey))
	pubJWK := writeFile(t, "pub.jwk", []byte(`{"kty":"OKP","crv":"Ed25519","x":"`+x+`"}`))
	var dir *botauth.Directory
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { dir.ServeHTTP(w, r) }))
	defer srv.Close()
	dir, err = botauth.NewDirectory(srv.URL+botauth.DirectoryPath, []botauth.Key{k})
	if err != nil {
		t.Fatal(err)
	}
	saved := keyClient
	keyClient = srv.Client()
	defer func() { keyClient = saved }()

	for _, args := range [][]string{{"-key", pubPEM}, {"-key", privPEM}, {"-key", pubJWK}, {"-directory", srv.URL}} {
		var out, errOut bytes.Buffer
		code := runMain(append([]string{"evidence", "verify"}, append(args, path)...), nil, &out, &errOut)
		want := fmt.Sprintf("%s: 4 records intact, signed by %s\n", path, k.Thumbprint())
		if code != 0 || out.String() != want {
			t.Errorf("%v: exit %d, out %q, err %q; want 0, %q", args, code, out.String(), errOut.String(), want)
		}
	}

	// Another key, no key, and a changed record: exit 1 naming the record.
	other, _ := evidenceKey(t, 6)
	otherPEM := writeFile(t, "other.jwk", []byte(`{"kty":"OKP","crv":"Ed25519","x":"`+
		base64.RawURLEncoding.EncodeToString(other.CryptoSigner().Public().(ed25519.PublicKey))+`"}`))
	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	lines[1] = strings.Replace(lines[1], "/1", "/9", 1)
	changed := writeFile(t, "changed.log", []byte(strings.Join(lines, "")))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-key", otherPEM, path}, "record 1: key"},
		{[]string{path}, "record 1: signed by key"},
		{[]string{"-key", pubPEM, changed}, "record 2: its signature does not verify"},
	} {
		var errOut bytes.Buffer
		code := runMain(append([]string{"evidence", "verify"}, tc.args...), nil, io.Discard, &errOut)
		if code != 1 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", tc.args, code, errOut.String(), tc.want)
		}
	}

	// An unsigned log chains without a key.
	unsigned := writeEvidence(t, botauth.Key{}, 2)
	var out bytes.Buffer
	if code := runMain([]string{"evidence", "verify", unsigned}, nil, &out, io.Discard); code != 0 || !strings.Contains(out.String(), "3 records intact") {
		t.Errorf("unsigned: exit %d, out %q", code, out.String())
	}

	// Usage errors: exit 2.
	for _, args := range [][]string{
		{"evidence"}, {"evidence", "check", path}, {"evidence", "verify"},
		{"evidence", "verify", "-key", pubPEM, "-directory", srv.URL, path},
		{"evidence", "verify", "-directory", "http://example.com", path},
		{"evidence", "verify", "-key", path, path},
		{"evidence", "verify", filepath.Join(t.TempDir(), "missing.log")},
	} {
		if code := runMain(args, nil, io.Discard, io.Discard); code != 2 {
			t.Errorf("%v: exit %d; want 2", args, code)
		}
	}

	// A directory that lists the key but is not signed by it is not used.
	unsignedDir := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		r.Host = strings.TrimPrefix(srv.URL, "https://") // the directory's own
		dir.ServeHTTP(rec, r)
		for name, v := range rec.Header() {
			if name != "Signature" {
				w.Header()[name] = v
			}
		}
		_, _ = w.Write(rec.Body.Bytes())
	}))
	defer unsignedDir.Close()
	keyClient = unsignedDir.Client()
	var errOut bytes.Buffer
	code := runMain([]string{"evidence", "verify", "-directory", unsignedDir.URL, path}, nil, io.Discard, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "no listed key signed the directory") {
		t.Errorf("an unsigned directory: exit %d, stderr %q; want 2 and the directory refused", code, errOut.String())
	}
}
