package usage_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
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
		Purposes: []string{"train-ai"}, Verdicts: map[string]string{"train-ai": "n"}})
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

// NewLogRecord makes the record of a decision: the verdict per purpose,
// the deciding signal and the documents that decided, with their hashes
// (what sha256sum gives of the bytes served).
func ExampleNewLogRecord() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case "/.well-known/tdmrep.json":
			fmt.Fprint(w, `[{"location": "/archive/", "tdm-reservation": 1}]`)
		}
	}))
	defer site.Close()
	res, _ := policy.NewResolver(policy.WithUserAgent("ExampleBot/1.0"))
	u, _ := url.Parse(site.URL + "/archive/1.pdf")
	purposes := []dialect.Category{dialect.TrainAI}
	rep, err := usage.Check(context.Background(), res, u, purposes...)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, _ := rep.Refusal(purposes, dialect.UseUnknown, false)
	rec := usage.NewLogRecord(res, res.Now(), usage.Decision{URL: u, Outcome: usage.Stopped, Reason: s.String(),
		Purposes: purposes, Report: &rep})
	fmt.Println(rec.Outcome, rec.Verdicts, rec.Reason)
	for _, d := range rec.Documents {
		fmt.Println(d.Kind, d.Status, d.SHA256[:12])
	}
	// Output:
	// stopped map[train-ai:n] train-ai=n: tdmrep.json rule 0 (location /archive/): 1
	// robots.txt 200 16ceb5ee3e0d
	// tdmrep.json 200 888d9169c69c
}
