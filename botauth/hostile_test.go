package botauth

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// secrets are the forms a private key's seed could print in: raw, hex,
// base64 (standard and URL), and as fmt prints a byte slice in decimal.
func secrets(priv ed25519.PrivateKey) []string {
	seed := priv.Seed()
	dec := strings.Trim(fmt.Sprint(seed[:6]), "[]")
	return []string{string(seed[:8]), hex.EncodeToString(seed[:8]), strings.ToUpper(hex.EncodeToString(seed[:8])),
		base64.StdEncoding.EncodeToString(seed[:9]), base64.RawURLEncoding.EncodeToString(seed[:9]), dec,
		strings.ReplaceAll(dec, " ", ","), strings.ReplaceAll(dec, " ", ", ")}
}

// TestPrintRedacted: a Key, a Signer and a Directory, as values and as
// pointers, print no byte of the private key through any fmt verb or
// through slog's text and JSON handlers, and still name the key ID.
func TestPrintRedacted(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	k.NotBefore = time.Unix(1_800_000_000, 0)
	s, err := NewSigner(formAgent, []Key{k})
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDirectory(formAgent, []Key{k})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTransport(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	type holder struct{ K Key } // a Key inside a caller's struct
	values := map[string]any{"Key": k, "*Key": &k, "Signer": *s, "*Signer": s, "Directory": *d, "*Directory": d,
		"[]Key": []Key{k}, "holder": holder{k}, "*Transport": tr, "Answering": tr.Answering(nil)}
	bad := secrets(priv)
	check := func(what, out string) {
		t.Helper()
		for _, b := range bad {
			if strings.Contains(out, b) {
				t.Errorf("%s prints the private key (%q): %s", what, b, out)
			}
		}
	}
	for name, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v"} {
			check(name+" "+verb, fmt.Sprintf(verb, v))
		}
		check(name+" Sprint", fmt.Sprint(v))
		var buf bytes.Buffer
		slog.New(slog.NewTextHandler(&buf, nil)).Info("m", "v", v)
		slog.New(slog.NewJSONHandler(&buf, nil)).Info("m", "v", v)
		check(name+" slog", buf.String())
		if !strings.Contains(name, "Transport") && name != "Answering" && !strings.Contains(fmt.Sprintf("%v", v)+buf.String(), k.Thumbprint()) {
			t.Errorf("%s does not name its key: %v / %s", name, v, buf.String())
		}
	}
}

// captureLog sets slog's default logger to one writing into the returned
// buffer until the test ends.
func captureLog(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

// TestLoadKeyWarnsOpenMode: a key file others may read is read with one
// warning naming it; a file of mode 0600 without.
func TestLoadKeyWarnsOpenMode(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		mode os.FileMode
		warn bool
	}{{0o600, false}, {0o400, false}, {0o640, true}, {0o604, true}, {0o644, true}} {
		path := filepath.Join(dir, fmt.Sprintf("key-%o.pem", tc.mode))
		if err := os.WriteFile(path, []byte(testKeyPEM), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tc.mode); err != nil {
			t.Fatal(err)
		}
		buf := captureLog(t)
		if _, err := LoadKey(path); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if got := strings.Count(out, "level=WARN"); got != map[bool]int{true: 1}[tc.warn] || tc.warn && !strings.Contains(out, path) {
			t.Errorf("mode %o: log %q", tc.mode, out)
		}
	}
}

// TestChallengeErrorBounded: whatever a challenge holds, the reason it is
// declined quotes at most 64 bytes of any of its values.
func TestChallengeErrorBounded(t *testing.T) {
	s, err := NewSigner(formAgent, []Key{seedKey(t, 45)})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a", 3000)
	for _, ask := range []string{
		`sig1=("@authority");keyid="` + long + `"`,
		`sig1=("@authority");alg="` + long + `"`,
		`sig1=("@authority" "` + long + `")`,
		`sig1=("@authority" "@` + long + `")`,
		`sig1=("@authority");` + long + `=1`,
		`sig1=("@authority" "x";` + long + `)`,
		`sig1=("@authority" ` + long + `)`,
		`sig1=("@authority");nonce=` + long,
		`sig1=("@authority" "@authority");nonce="` + long + `"`,
		long + `=("@authority";x)`,
	} {
		_, err := s.readChallenge([]string{ask}, httptest.NewRequest("GET", "https://shop.example/", nil), time.Unix(1_800_000_000, 0))
		if err == nil {
			t.Errorf("%.40s… answered", ask)
			continue
		}
		if msg := err.Error(); len(msg) > 300 || strings.Contains(msg, strings.Repeat("a", 65)) {
			t.Errorf("%.40s…: an error of %d bytes: %.200s", ask, len(msg), msg)
		}
	}
}
