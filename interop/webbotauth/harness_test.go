// Package webbotauth checks the project's Web Bot Auth signatures against
// Cloudflare's published npm packages (package.json pins them; npm ci
// installs them here), and the project's verifier against signatures made
// by them. Without node or node_modules the tests skip, except under
// CI=true, where they fail.
package webbotauth

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/robots/testkit/testutil"
)

// requireNode skips the test when node or the pinned packages are not
// installed, or fails it under CI=true.
func requireNode(t *testing.T) {
	t.Helper()
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not on PATH"
	}
	for _, pkg := range []string{"web-bot-auth", "http-message-sig"} {
		if _, err := os.Stat(filepath.Join("node_modules", pkg, "package.json")); err != nil && missing == "" {
			missing = "node_modules/" + pkg + " is not installed (run npm ci in interop/webbotauth)"
		}
	}
	if missing == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(missing)
	}
	t.Skip(missing)
}

var (
	binMu  sync.Mutex
	binDir string
	bins   = map[string]string{}
)

// TestMain removes the programs built by binary.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds the project's command pkg (as "examples/crawl") once and
// returns its path.
func binary(t *testing.T, pkg string) string {
	t.Helper()
	binMu.Lock()
	defer binMu.Unlock()
	if p, ok := bins[pkg]; ok {
		return p
	}
	if binDir == "" {
		d, err := os.MkdirTemp("", "interop-bin-")
		if err != nil {
			t.Fatal(err)
		}
		binDir = d
	}
	out := filepath.Join(binDir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, "github.com/politecrawl/robots/"+pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	bins[pkg] = out
	return out
}

// tlsFiles writes a CA certificate and a server certificate it issued for
// 127.0.0.1 and localhost, with the server's key, and returns their paths.
func tlsFiles(t *testing.T) (caFile, certFile, keyFile string) {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "interop test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ = x509.ParseCertificate(caDER)
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile, certFile, keyFile = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePEM(t, caFile, "CERTIFICATE", caDER)
	writePEM(t, certFile, "CERTIFICATE", leafDER)
	writePEM(t, keyFile, "PRIVATE KEY", keyDER)
	return caFile, certFile, keyFile
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// botKey is a crawler's Ed25519 key: its PKCS#8 PEM file (for the
// project's commands) and its private JWK (for Cloudflare's signer).
type botKey struct {
	pub     ed25519.PublicKey
	pemFile string
	jwk     map[string]string
}

func newBotKey(t *testing.T) botKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	k := botKey{pub: pub, pemFile: filepath.Join(t.TempDir(), "bot-key.pem")}
	writePEM(t, k.pemFile, "PRIVATE KEY", der)
	b64 := base64.RawURLEncoding.EncodeToString
	k.jwk = map[string]string{"kty": "OKP", "crv": "Ed25519", "d": b64(priv.Seed()), "x": b64(pub)}
	return k
}

// process is a program started by a test, stopped at its end.
type process struct {
	lines  chan string // standard output, line by line
	stderr *testutil.Buffer
}

// start runs name with args and env added to the environment, until the
// test ends.
func start(t *testing.T, env []string, name string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	p := &process{lines: make(chan string, 1024), stderr: &testutil.Buffer{}}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return p
}

// expect waits for the first line of standard output holding want.
func (p *process) expect(t *testing.T, want string) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("the program ended before printing %q; standard error:\n%s", want, p.stderr.String())
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-timeout:
			t.Fatalf("no line with %q in 30s; standard error:\n%s", want, p.stderr.String())
		}
	}
}

// keyDirectory serves k's directory with examples/keydirectory over HTTPS
// and returns its URL.
func keyDirectory(t *testing.T, k botKey, certFile, keyFile string) string {
	t.Helper()
	p := start(t, nil, binary(t, "examples/keydirectory"), "-key", k.pemFile, "-addr", "127.0.0.1:0",
		"-tls-cert", certFile, "-tls-key", keyFile)
	return strings.Fields(p.expect(t, "serving https://"))[1]
}

// writeJSON writes v as a JSON file and returns its path.
func writeJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "data.json") // a new directory each call
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// checker is examples/botcheck, serving on base.
type checker struct {
	*process
	base string
}

// botcheck starts examples/botcheck on a free loopback port, trusting the
// CA in caFile for key directories, and waits until it listens.
func botcheck(t *testing.T, caFile string) checker {
	t.Helper()
	p := start(t, nil, binary(t, "examples/botcheck"), "-addr", "127.0.0.1:0", "-ca", caFile)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, l, ok := strings.Cut(p.stderr.String(), "listening on "); ok {
			return checker{p, strings.Fields(l)[0]}
		}
		if time.Now().After(deadline) {
			t.Fatalf("botcheck does not say where it listens:\n%s", p.stderr.String())
		}
	}
}
