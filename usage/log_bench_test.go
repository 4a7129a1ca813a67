package usage

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkLogAppend is the usage log's cost per URL decided: one record
// (a fetched URL, two purposes, robots.txt and tdmrep.json named) encoded,
// chained, signed or not, and written to a file.
func BenchmarkLogAppend(b *testing.B) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	rec := LogRecord{
		Time: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC), URL: "https://news.example/archive/2026/11/report.html",
		Outcome: Fetched, Status: 200, Purposes: []string{"train-ai", "search"},
		Verdicts: map[string]string{"train-ai": "n", "search": "y"},
		Documents: []LogDocument{
			{Kind: "robots.txt", URL: "https://news.example/robots.txt", Status: 200, SHA256: "0c2a2ea5d9b0b7f4c3c2a1c7f5b3e8f1d6b4a3c2e1f0a9b8c7d6e5f4a3b2c1d0"},
			{Kind: "tdmrep.json", URL: "https://news.example/.well-known/tdmrep.json", Status: 200, SHA256: "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0"},
		},
	}
	for _, bc := range []struct {
		name string
		cfg  LogConfig
	}{{"unsigned", LogConfig{}}, {"signed", LogConfig{Key: priv, KeyID: "k1"}}} {
		b.Run(bc.name, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "usage.log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			l, err := NewLog(f, bc.cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := l.Append(rec, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
