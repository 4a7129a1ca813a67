package robots_test

import (
	"crypto/ed25519"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/botauth"
)

func ExampleWithSigner() {
	// A site that says which of the requests it receives are signed.
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Printf("%s: Signature-Agent %s, signed %t\n", r.URL.Path, r.Header.Get("Signature-Agent"), r.Header.Get("Signature") != "")
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.1\n")
		}
	}))
	defer site.Close()

	// A crawler reads its key with botauth.LoadKey("bot-key.pem"); here, a
	// key made on the spot.
	_, priv, _ := ed25519.GenerateKey(nil)
	key, err := botauth.NewKey(priv)
	if err != nil {
		fmt.Println(err)
		return
	}
	signer, err := botauth.NewSigner("https://bot.example/.well-known/http-message-signatures-directory", []botauth.Key{key})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := colly.NewCollector(colly.UserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://bot.example/about)"))
	p, err := robots.Attach(c, robots.WithSigner(signer))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	c.Visit(site.URL + "/page")
	// Output:
	// /robots.txt: Signature-Agent "https://bot.example/.well-known/http-message-signatures-directory", signed true
	// /page: Signature-Agent "https://bot.example/.well-known/http-message-signatures-directory", signed true
}
