package usage_test

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/politecrawl/robots/usage"
)

// A log records what decided each URL; each line chains to the one before
// and, with a key, is signed. VerifyLog checks it as written.
func ExampleNewLog() {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	var buf bytes.Buffer
	l, err := usage.NewLog(&buf, usage.LogConfig{Key: priv, KeyID: "crawler-key-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	l.Append(usage.LogRecord{Time: at, URL: "https://news.example/archive/1.pdf", Outcome: usage.Stopped,
		Reason:   "train-ai=n: tdmrep.json rule 0 (location /archive/): 1",
		Purposes: []string{"train-ai"}, Verdicts: map[string]string{"train-ai": "n"}}, nil)
	l.Close() // the closing record: a log cut short does not verify

	n, err := usage.VerifyLog(bytes.NewReader(buf.Bytes()), func(kid string) (ed25519.PublicKey, error) {
		return priv.Public().(ed25519.PublicKey), nil
	})
	fmt.Println(n, "records, error:", err)

	tampered := bytes.Replace(buf.Bytes(), []byte(`"n"`), []byte(`"y"`), 1)
	_, err = usage.VerifyLog(bytes.NewReader(tampered), func(kid string) (ed25519.PublicKey, error) {
		return priv.Public().(ed25519.PublicKey), nil
	})
	fmt.Println(err)
	// Output:
	// 2 records, error: <nil>
	// usage: log record 1: its signature does not verify with key "crawler-key-1" (changed, or signed by another key)
}
