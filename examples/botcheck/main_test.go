package main

import (
	"crypto/ed25519"
	"encoding/pem"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/botauth"
	"github.com/politecrawl/robots/testkit/testutil"
)

func key(t *testing.T, seed byte) botauth.Key {
	t.Helper()
	k, err := botauth.NewKey(ed25519.NewKeyFromSeed([]byte(strings.Repeat(string([]byte{seed}), ed25519.SeedSize))))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestBotcheck runs the command's server with -ca trusting a key
// directory served over TLS, sends it one request of each verdict, and
// reads the lines it prints.
func TestBotcheck(t *testing.T) {
	k := key(t, 1)
	ds := httptest.NewUnstartedServer(nil)
	agent := "https://" + ds.Listener.Addr().String() + botauth.DirectoryPath
	dir, err := botauth.NewDirectory(agent, []botauth.Key{k})
	if err != nil {
		t.Fatal(err)
	}
	ds.Config.Handler = dir
	ds.StartTLS()
	defer ds.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ds.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := parse([]string{"-addr", "127.0.0.1:0", "-ca", ca}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		t.Fatal(err)
	}
	var out testutil.Buffer
	served := make(chan error, 1)
	go func() { served <- serve(c, ln, &out) }()
	site := "http://" + ln.Addr().String()

	signer := func(k botauth.Key) *botauth.Signer {
		s, err := botauth.NewSigner(agent, []botauth.Key{k}, botauth.WithForm(botauth.StringForm))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	good, stranger := signer(k), signer(key(t, 2))
	send := func(path string, s *botauth.Signer, signedFor string, at time.Time) {
		t.Helper()
		req, err := http.NewRequest("GET", site+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s != nil {
			target, _ := http.NewRequest("GET", signedFor+path, nil)
			if err := s.Sign(target, at); err != nil {
				t.Fatal(err)
			}
			req.Header = target.Header
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", path, resp.StatusCode)
		}
	}
	now := time.Now()
	send("/verified?a=1", good, site, now)
	send("/expired", good, site, now.Add(-time.Hour))
	send("/unknown", stranger, site, now)
	send("/invalid", good, "http://evil.example", now)
	send("/unsigned", nil, "", now)

	want := []string{
		"verified GET " + site + "/verified?a=1",
		"expired GET " + site + "/expired: expired at ",
		"unknown GET " + site + "/unknown: keyid ",
		"invalid GET " + site + "/invalid: the signature does not verify",
		"unsigned GET " + site + "/unsigned: no Signature",
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("printed:\n%s", out.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) || (i == 0) != (lines[i] == w) {
			t.Errorf("line %d: %q, want %q", i, lines[i], w)
		}
	}
	ln.Close()
	if err := <-served; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("serve: %v", err)
	}
}

func TestParse(t *testing.T) {
	if _, err := parse([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	if _, err := parse([]string{"extra"}, io.Discard); err == nil {
		t.Fatal("an extra argument accepted")
	}
	bad := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := newVerifier(bad); err == nil {
		t.Fatal("a -ca file without a certificate accepted")
	}
	if _, err := newVerifier(filepath.Join(t.TempDir(), "absent.pem")); !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "-ca: ") {
		t.Fatalf("an absent -ca file: %v", err)
	}
}
