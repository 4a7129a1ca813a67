package usage

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/politecrawl/robots/dialect"
)

// BenchmarkLogAppend is the usage log's cost per URL decided, what a
// crawl with a log adds to each URL: the record made (NewLogRecord: the
// verdicts, the signals, robots.txt's and tdmrep.json's hashes from
// memory), encoded, chained, signed or not, and written to a file.
func BenchmarkLogAppend(b *testing.B) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\nContent-Usage: /open/ train-ai=y\nContent-Signal: search=yes\n")
		case "/.well-known/tdmrep.json":
			fmt.Fprint(w, `[{"location": "/books/", "tdm-reservation": 1}, {"location": "/open/*.pdf$", "tdm-reservation": 0}]`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	r := newResolver(b)
	u := mustURL(b, site.URL+"/open/paper.pdf")
	purposes := []dialect.Category{dialect.TrainAI, dialect.Search}
	rep, err := Check(context.Background(), r, u, purposes...)
	if err != nil {
		b.Fatal(err)
	}
	d := Decision{URL: u, Outcome: Fetched, Status: 200, Purposes: purposes, Report: &rep}
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
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
			var size int64
			for b.Loop() {
				if err := l.Append(NewLogRecord(r, r.Now(), d)); err != nil {
					b.Fatal(err)
				}
			}
			if st, err := f.Stat(); err == nil {
				size = st.Size()
			}
			b.ReportMetric(float64(size)/float64(b.N), "logB/op")
		})
	}
}
