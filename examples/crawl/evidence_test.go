package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/politecrawl/robots/botauth"
	"github.com/politecrawl/robots/usage"
)

// TestCrawlEvidence: -evidence with -sign-key writes a log of every URL
// decided that verifies with the key, ends with its closing record, and
// names the stopped, refused and fetched URLs.
func TestCrawlEvidence(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nDisallow: /private/\nCrawl-delay: 0.1\nContent-Usage: /noai/ train-ai=n\n")
		case "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="/private/1">p</a><a href="/noai/1">n</a><a href="/hdr">h</a>`)
		case "/hdr":
			w.Header().Set("Content-Usage", "train-ai=n")
		}
	}))
	defer srv.Close()
	pemFile, _, directory, _ := keyFiles(t)
	key, err := botauth.LoadKey(pemFile)
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "usage.log")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-progress=false", "-min-delay", "0", "-purpose", "train-ai",
		"-sign-key", pemFile, "-signature-agent", directory, "-evidence", logFile, srv.URL + "/"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	pub := key.CryptoSigner().Public().(ed25519.PublicKey)
	n, err := usage.VerifyLog(bytes.NewReader(data), func(kid string) (ed25519.PublicKey, error) {
		if kid != key.Thumbprint() {
			return nil, fmt.Errorf("key %q", kid)
		}
		return pub, nil
	})
	if err != nil || n != 5 {
		t.Fatalf("VerifyLog = %d, %v; want 5 records\n%s", n, err, data)
	}
	var got []string
	for _, line := range strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n") {
		var rec usage.LogRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		got = append(got, rec.Outcome+" "+strings.TrimPrefix(rec.URL, srv.URL))
	}
	slices.Sort(got[1 : len(got)-1]) // the links are followed in parallel
	kept, err := os.ReadDir(filepath.Join(filepath.Dir(logFile), "sha256"))
	if err != nil || len(kept) != 2 {
		t.Errorf("kept documents %v, %v; want robots.txt's and tdmrep.json's", kept, err)
	}
	want := "[fetched / refused /hdr stopped /noai/1 stopped /private/1 closed ]"
	if fmt.Sprint(got) != want {
		t.Errorf("records %v; want %s", got, want)
	}
	// Without a purpose there is nothing to record.
	if code := run(context.Background(), []string{"-evidence", logFile, srv.URL + "/"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("-evidence without -purpose: exit %d; want 2", code)
	}
}
