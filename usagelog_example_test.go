package robots_test

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/botauth"
	"github.com/politecrawl/robots/usage"
)

// A training crawler keeps a usage log signed with its Web Bot Auth key:
// one record per URL decided, which anyone holding the public key (or its
// key directory) can check later.
func ExampleWithUsage_log() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nContent-Usage: /private/ train-ai=n\n")
		default:
			fmt.Fprint(w, "<html>page</html>")
		}
	}))
	defer site.Close()
	dir, _ := os.MkdirTemp("", "usage-log")
	defer os.RemoveAll(dir)
	key, _ := botauth.NewKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))) // botauth.LoadKey(file)

	l, err := usage.OpenLog(filepath.Join(dir, "usage.log"), usage.LogConfig{Key: key.CryptoSigner(), KeyID: key.Thumbprint()})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := colly.NewCollector(
		colly.UserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"),
		robots.WithRobots(robots.WithUsage(usage.Config{Purposes: []string{"train-ai"}, Log: l}),
			robots.WithDefaultDelay(0)), // a local test site
	)
	c.Visit(site.URL + "/blog/post")
	c.Visit(site.URL + "/private/notes")
	c.Wait()
	l.Close()

	f, _ := os.Open(filepath.Join(dir, "usage.log"))
	defer f.Close()
	n, err := usage.VerifyLog(f, func(keyid string) (ed25519.PublicKey, error) {
		return key.CryptoSigner().Public().(ed25519.PublicKey), nil
	})
	fmt.Println(n, "records, error:", err)
	// Output:
	// 3 records, error: <nil>
}
