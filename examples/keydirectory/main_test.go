package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dunglas/httpsfv"

	"github.com/politecrawl/robots/testkit/testutil"
)

// writeKey writes a new Ed25519 key as PKCS#8 PEM (as openssl genpkey
// does) and returns its path and public key.
func writeKey(t *testing.T, dir, name string) (string, ed25519.PublicKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, pub
}

// TestServe starts the command's server with two keys (a rotation) and
// checks its answer as a verifier does: the media type, the Content-Digest
// of the body, each key's kid its RFC 7638 thumbprint and no private
// member, and one signature per key over "@authority";req and
// content-digest, tagged for the directory, that verifies.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	oldPath, oldPub := writeKey(t, dir, "old.pem")
	newPath, newPub := writeKey(t, dir, "new.pem")
	c, err := parse([]string{"-key", oldPath, "-key", newPath, "-addr", "127.0.0.1:0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var out testutil.Buffer
	go func() { _ = serve(c, ln, &out) }()

	resp, err := http.Get("http://" + ln.Addr().String() + "/.well-known/http-message-signatures-directory")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/http-message-signatures-directory+json" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sum := sha256.Sum256(body)
	digest := "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
	if resp.Header.Get("Content-Digest") != digest {
		t.Errorf("Content-Digest %s, body's %s", resp.Header.Get("Content-Digest"), digest)
	}
	var set struct{ Keys []map[string]any }
	if err := json.Unmarshal(body, &set); err != nil {
		t.Fatal(err)
	}
	pubs := map[string]ed25519.PublicKey{}
	for _, pub := range []ed25519.PublicKey{oldPub, newPub} {
		x := base64.RawURLEncoding.EncodeToString(pub)
		h := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
		pubs[base64.RawURLEncoding.EncodeToString(h[:])] = pub
	}
	for _, k := range set.Keys {
		kid, _ := k["kid"].(string)
		if _, ok := pubs[kid]; !ok || k["d"] != nil || k["x"] != base64.RawURLEncoding.EncodeToString(pubs[kid]) {
			t.Errorf("key %v is not one of ours by its thumbprint, or shows a private member", k)
		}
		if !strings.Contains(out.String(), "publishing key "+kid) {
			t.Errorf("output does not name %s:\n%s", kid, out.String())
		}
	}
	inputs, err := httpsfv.UnmarshalDictionary(resp.Header.Values("Signature-Input"))
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := httpsfv.UnmarshalDictionary(resp.Header.Values("Signature"))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 2 || len(inputs.Names()) != 2 {
		t.Fatalf("%d keys, %d signatures", len(set.Keys), len(inputs.Names()))
	}
	raw := strings.Join(resp.Header.Values("Signature-Input"), ", ")
	for _, label := range inputs.Names() {
		m, _ := inputs.Get(label)
		kid, _ := m.(httpsfv.InnerList).Params.Get("keyid")
		tag, _ := m.(httpsfv.InnerList).Params.Get("tag")
		// The parameters as sent: the member's text after "label=".
		params := raw[strings.Index(raw, label+"=")+len(label)+1:]
		params, _, _ = strings.Cut(params, ", ")
		base := `"@authority";req: ` + ln.Addr().String() + "\n\"content-digest\": " + digest + "\n\"@signature-params\": " + params
		s, _ := sigs.Get(label)
		sig, _ := s.(httpsfv.Item).Value.([]byte)
		if tag != "http-message-signatures-directory" || !ed25519.Verify(pubs[kid.(string)], []byte(base), sig) {
			t.Errorf("signature %s (tag %v, key %v) does not verify over\n%s", label, tag, kid, base)
		}
	}
}

// TestParseRefuses: no key, a public key, a key file that is not a key,
// a certificate without its key.
func TestParseRefuses(t *testing.T) {
	dir := t.TempDir()
	keyPath, pub := writeKey(t, dir, "key.pem")
	der, _ := x509.MarshalPKIXPublicKey(pub)
	pubPath := filepath.Join(dir, "pub.pem")
	if err := os.WriteFile(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no -key"},
		{[]string{"-key", pubPath}, "public key"},
		{[]string{"-key", filepath.Join(dir, "missing.pem")}, "no such file"},
		{[]string{"-key", keyPath, "-tls-cert", keyPath}, "go together"},
		{[]string{"-key", keyPath, "extra"}, "unexpected"},
	} {
		if _, err := parse(tc.args, io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want %s", tc.args, err, tc.want)
		}
	}
}

// start serves the command with args on a loopback port and returns its
// base URL.
func start(t *testing.T, args ...string) string {
	t.Helper()
	c, err := parse(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() { _ = serve(c, ln, io.Discard) }()
	return "http://" + ln.Addr().String()
}

func fetch(t *testing.T, u, host string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// TestOtherHost: a request naming a Host other than the directory's gets
// 421 and no signature, so that no one can bind the keys to their domain;
// the directory's own host (-url) gets the signed directory.
func TestOtherHost(t *testing.T) {
	path, _ := writeKey(t, t.TempDir(), "k.pem")
	base := start(t, "-key", path, "-url", "https://bot.example/.well-known/http-message-signatures-directory")
	for _, tc := range []struct {
		host string
		code int
	}{{"bot.example", 200}, {"evil.example", 421}, {"", 421}} {
		resp, _ := fetch(t, base+"/.well-known/http-message-signatures-directory", tc.host)
		if resp.StatusCode != tc.code || (resp.Header.Get("Signature") != "") != (tc.code == 200) {
			t.Errorf("Host %q: %d, Signature %q; want %d", tc.host, resp.StatusCode, resp.Header.Get("Signature"), tc.code)
		}
	}
}

// TestCardServed: -card serves the card file at -card-path beside the
// directory; -one-signature signs a directory of two keys once.
func TestCardServed(t *testing.T) {
	dir := t.TempDir()
	k1, _ := writeKey(t, dir, "a.pem")
	k2, _ := writeKey(t, dir, "b.pem")
	card := filepath.Join(dir, "card.json")
	const doc = `{"client_name":"ExampleBot","jwks_uri":"https://bot.example/.well-known/http-message-signatures-directory"}`
	if err := os.WriteFile(card, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	base := start(t, "-key", k1, "-key", k2, "-one-signature", "-card", card, "-card-path", "/card.json")
	resp, body := fetch(t, base+"/card.json", "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || body != doc {
		t.Errorf("card: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	resp, body = fetch(t, base+"/.well-known/http-message-signatures-directory", "")
	if resp.StatusCode != 200 || len(resp.Header.Values("Signature")) != 1 || strings.Count(body, `"kid"`) != 2 {
		t.Errorf("directory: %d, %d signatures, %s", resp.StatusCode, len(resp.Header.Values("Signature")), body)
	}
	if _, err := parse([]string{"-key", k1, "-card", k1}, io.Discard); err == nil || !strings.Contains(err.Error(), "JSON object") {
		t.Errorf("a card that is no JSON: %v", err)
	}
}
