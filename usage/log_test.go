package usage

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/dialect"
)

func testKey(t testing.TB) (ed25519.PrivateKey, LogKeys) {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	pub := priv.Public().(ed25519.PublicKey)
	return priv, func(kid string) (ed25519.PublicKey, error) {
		if kid != "k1" {
			return nil, fmt.Errorf("no key %q", kid)
		}
		return pub, nil
	}
}

// writeLog writes n records and the closing one, and returns the log's
// lines.
func writeLog(t *testing.T, cfg LogConfig, n int) [][]byte {
	t.Helper()
	var buf bytes.Buffer
	l, err := NewLog(&buf, cfg)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for i := range n {
		rec := LogRecord{Time: at.Add(time.Duration(i) * time.Second), URL: fmt.Sprintf("http://site.test/p%d", i),
			Outcome: Fetched, Status: 200, Purposes: []string{"train-ai"}, Verdicts: map[string]string{"train-ai": "y"}}
		if err := l.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(buf.Bytes(), []byte("\n"))
	return lines[:len(lines)-1]
}

func verifyLines(lines [][]byte, keys LogKeys) (int, error) {
	return VerifyLog(bytes.NewReader(bytes.Join(lines, nil)), keys)
}

// wantBad checks that err names record n.
func wantBad(t *testing.T, err error, n int) {
	t.Helper()
	var le *LogError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v; want a *LogError for record %d", err, n)
	}
	if le.Record != n || !strings.Contains(err.Error(), fmt.Sprintf("record %d:", n)) {
		t.Fatalf("err = %v; want record %d", err, n)
	}
}

func TestLogSignedVerifies(t *testing.T) {
	priv, keys := testKey(t)
	lines := writeLog(t, LogConfig{Key: priv, KeyID: "k1"}, 3)
	if len(lines) != 4 {
		t.Fatalf("%d lines; want 3 records and the closing one", len(lines))
	}
	n, err := verifyLines(lines, keys)
	if err != nil || n != 4 {
		t.Fatalf("VerifyLog = %d, %v; want 4, nil", n, err)
	}
	// prev is the SHA-256 of the line before, and the line ends with its
	// keyid and signature.
	sum := sha256.Sum256(bytes.TrimSuffix(lines[0], []byte("\n")))
	if !bytes.Contains(lines[1], []byte(`"prev":"`+hex.EncodeToString(sum[:])+`","keyid":"k1","sig":"`)) {
		t.Fatalf("line 2 = %s; want prev the hash of line 1, then keyid and sig", lines[1])
	}
	if !bytes.Contains(lines[0], []byte(`"prev":"",`)) {
		t.Fatalf("line 1 = %s; want prev \"\"", lines[0])
	}
	// Another key does not verify it.
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, ed25519.SeedSize)).Public().(ed25519.PublicKey)
	_, err = verifyLines(lines, func(string) (ed25519.PublicKey, error) { return other, nil })
	wantBad(t, err, 1)
	// A signed log needs its key; an unknown keyid is named.
	_, err = verifyLines(lines, nil)
	wantBad(t, err, 1)
	_, err = verifyLines(lines, func(string) (ed25519.PublicKey, error) { return nil, errors.New("unknown") })
	wantBad(t, err, 1)
}

// TestLogTamperNamed changes, removes and moves each record of a signed
// log in turn: each is rejected naming the record.
func TestLogTamperNamed(t *testing.T) {
	priv, keys := testKey(t)
	lines := writeLog(t, LogConfig{Key: priv, KeyID: "k1"}, 4)
	edit := func(i int, f func([][]byte) [][]byte) [][]byte {
		c := make([][]byte, len(lines))
		for j := range lines {
			c[j] = bytes.Clone(lines[j])
		}
		return f(c)
	}
	for i := range lines {
		n := i + 1
		t.Run(fmt.Sprintf("change %d", n), func(t *testing.T) {
			ls := edit(i, func(c [][]byte) [][]byte {
				c[i] = bytes.Replace(c[i], []byte(`"time":"2026`), []byte(`"time":"2025`), 1)
				return c
			})
			_, err := verifyLines(ls, keys)
			wantBad(t, err, n)
		})
		t.Run(fmt.Sprintf("remove %d", n), func(t *testing.T) {
			ls := edit(i, func(c [][]byte) [][]byte { return append(c[:i], c[i+1:]...) })
			_, err := verifyLines(ls, keys)
			wantBad(t, err, n)
		})
		if i+1 < len(lines) {
			t.Run(fmt.Sprintf("swap %d and %d", n, n+1), func(t *testing.T) {
				ls := edit(i, func(c [][]byte) [][]byte { c[i], c[i+1] = c[i+1], c[i]; return c })
				_, err := verifyLines(ls, keys)
				wantBad(t, err, n)
			})
		}
	}
	t.Run("signature moved before another member", func(t *testing.T) {
		ls := edit(0, func(c [][]byte) [][]byte {
			c[1] = bytes.Replace(c[1], []byte(`}`+"\n"), []byte(`,"x":1}`+"\n"), 1)
			return c
		})
		_, err := verifyLines(ls, keys)
		wantBad(t, err, 2)
	})
	t.Run("cut inside the last line", func(t *testing.T) {
		ls := edit(0, func(c [][]byte) [][]byte {
			c[len(c)-1] = c[len(c)-1][:10]
			return c
		})
		_, err := verifyLines(ls, keys)
		wantBad(t, err, len(lines))
	})
}

func TestLogUnsignedChains(t *testing.T) {
	lines := writeLog(t, LogConfig{}, 3)
	if bytes.Contains(lines[0], []byte(`"sig"`)) {
		t.Fatalf("unsigned line %s has a signature", lines[0])
	}
	if n, err := verifyLines(lines, nil); err != nil || n != 4 {
		t.Fatalf("VerifyLog = %d, %v; want 4, nil", n, err)
	}
	// Changed: the next record no longer chains to it.
	c := append([][]byte(nil), lines...)
	c[1] = bytes.Replace(c[1], []byte("/p1"), []byte("/p9"), 1)
	_, err := verifyLines(c, nil)
	wantBad(t, err, 3)
	// Given a key, an unsigned log is refused.
	_, keys := testKey(t)
	_, err = verifyLines(lines, keys)
	wantBad(t, err, 1)
	// Not JSON; empty.
	_, err = verifyLines([][]byte{[]byte("hello\n")}, nil)
	wantBad(t, err, 1)
	_, err = verifyLines(nil, nil)
	wantBad(t, err, 1)
}

// TestOpenLogContinues appends to a log file in two sessions: the second
// continues the chain of the first, and the documents that decided
// (robots.txt, tdmrep.json) are kept once each, content-addressed.
func TestOpenLogContinues(t *testing.T) {
	const robots = "User-agent: *\nDisallow: /private\n"
	const tdm = `[{"location": "/", "tdm-reservation": 1}]`
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, robots)
		case "/.well-known/tdmrep.json":
			io.WriteString(w, tdm)
		}
	}))
	defer site.Close()
	res := newResolver(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "usage.log")
	priv, keys := testKey(t)
	docs := filepath.Join(dir, "docs")
	purposes := []dialect.Category{dialect.TrainAI}
	for session := range 2 {
		l, err := OpenLog(path, LogConfig{Key: priv, KeyID: "k1", Documents: docs})
		if err != nil {
			t.Fatal(err)
		}
		u := mustURL(t, fmt.Sprintf("%s/%d", site.URL, session))
		rep, err := Check(context.Background(), res, u, purposes...)
		if err != nil {
			t.Fatal(err)
		}
		rec := NewLogRecord(res, res.Now(), Decision{URL: u, Outcome: Stopped, Reason: "reserved", Purposes: purposes, Report: &rep})
		if err := l.Append(rec); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := VerifyLog(f, keys); err != nil || n != 4 {
		t.Fatalf("VerifyLog = %d, %v; want 4 records, nil", n, err)
	}
	for _, body := range []string{robots, tdm} {
		sum := sha256.Sum256([]byte(body))
		kept, err := os.ReadFile(filepath.Join(docs, "sha256", hex.EncodeToString(sum[:])))
		if err != nil || string(kept) != body {
			t.Errorf("kept document = %q, %v; want %q", kept, err, body)
		}
	}
	if files, _ := os.ReadDir(filepath.Join(docs, "sha256")); len(files) != 2 {
		t.Errorf("%d files kept; want 2 (each document once)", len(files))
	}
	// A file cut inside its last line is not continued.
	data, _ := os.ReadFile(path)
	cut := filepath.Join(dir, "cut.log")
	if err := os.WriteFile(cut, data[:len(data)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenLog(cut, LogConfig{}); err == nil {
		t.Fatal("OpenLog continued a log cut inside its last line")
	}
}

func TestLogConfigRefused(t *testing.T) {
	priv, _ := testKey(t)
	if _, err := NewLog(&bytes.Buffer{}, LogConfig{Key: priv}); err == nil {
		t.Fatal("a signing key without its KeyID was accepted")
	}
}

// A record too long for a line is refused; the log goes on and verifies.
func TestLogLineTooLong(t *testing.T) {
	var buf bytes.Buffer
	l, err := NewLog(&buf, LogConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(LogRecord{Outcome: Refused, Reason: strings.Repeat("x", maxLine)}); err == nil {
		t.Fatal("a record over maxLine was written")
	}
	if err := l.Append(LogRecord{Outcome: Fetched, URL: "http://site.test/"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if n, err := VerifyLog(&buf, nil); err != nil || n != 2 {
		t.Fatalf("VerifyLog = %d, %v; want 2, nil", n, err)
	}
}
