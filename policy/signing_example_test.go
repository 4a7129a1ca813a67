package policy_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/politecrawl/robots/botauth"
	"github.com/politecrawl/robots/policy"
)

// A resolver used without the robots plugin signs its fetches (Web Bot
// Auth) through the client given with WithHTTPClient: a botauth.Transport
// signs each request when it is sent, every redirect hop afresh, and its
// Answering layer answers a signature challenge once.
func ExampleWithHTTPClient_signed() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Printf("%s: signed %t\n", r.URL.Path, r.Header.Get("Signature") != "")
		switch r.URL.Path {
		case "/robots.txt":
			http.Redirect(w, r, "/robots-moved.txt", http.StatusMovedPermanently)
		case "/robots-moved.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		}
	}))
	defer site.Close()

	// A crawler reads its key with botauth.LoadKey("bot-key.pem").
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
	tr, err := botauth.NewTransport(nil, signer)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := policy.NewResolver(
		policy.WithUserAgent("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://bot.example/about)"),
		policy.WithHTTPClient(&http.Client{Transport: tr.Answering(tr)}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	u, _ := url.Parse(site.URL + "/private/x")
	v, err := r.Check(context.Background(), u)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("allowed:", v.Allowed)
	// Output:
	// /robots.txt: signed true
	// /robots-moved.txt: signed true
	// allowed: false
}
