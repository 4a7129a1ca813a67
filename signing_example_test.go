package robots_test

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/botauth"
	"github.com/politecrawl/robots/usage"
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

// One identity per purpose: a search crawler and an AI-training crawler
// sign as two identities, each with its own key, key directory and
// User-Agent, each in a collector of its own. Sites (Cloudflare's, on some
// plans) can then allow one and refuse the other; one identity that
// declares both is warned about when its plugin starts.
func ExampleWithSigner_identityPerPurpose() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.1\n")
		case "/page":
			fmt.Printf("%s from %s\n", r.Header.Get("User-Agent"), r.Header.Get("Signature-Agent"))
		}
	}))
	defer site.Close()
	for _, crawler := range []struct{ name, agent, purpose string }{
		{"ExampleSearch", "https://search.bot.example/.well-known/http-message-signatures-directory", "search"},
		{"ExampleTrainer", "https://train.bot.example/.well-known/http-message-signatures-directory", "train-ai"},
	} {
		// Each identity has its own key (botauth.LoadKey of its own file).
		_, priv, _ := ed25519.GenerateKey(nil)
		key, err := botauth.NewKey(priv)
		if err != nil {
			fmt.Println(err)
			return
		}
		signer, err := botauth.NewSigner(crawler.agent, []botauth.Key{key})
		if err != nil {
			fmt.Println(err)
			return
		}
		c := colly.NewCollector(colly.UserAgent(crawler.name + "/1.0 (+https://bot.example/about)"))
		p, err := robots.Attach(c, robots.WithAgents(crawler.name), robots.WithSigner(signer), robots.WithUsage(usage.Config{Purposes: []string{crawler.purpose}}))
		if err != nil {
			fmt.Println(err)
			return
		}
		c.Visit(site.URL + "/page")
		p.Close()
	}
	// Output:
	// ExampleSearch/1.0 (+https://bot.example/about) from "https://search.bot.example/.well-known/http-message-signatures-directory"
	// ExampleTrainer/1.0 (+https://bot.example/about) from "https://train.bot.example/.well-known/http-message-signatures-directory"
}

// The crawler's Signature Agent Card, completed from the plugin's
// settings; serve it beside the key directory (examples/keydirectory
// -card).
func ExamplePlugin_AgentCard() {
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
	p, err := robots.New(robots.WithSigner(signer), robots.WithUsage(usage.Config{Purposes: []string{"search"}}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	card := p.AgentCard(botauth.Card{
		URL:       "https://bot.example/signature-agent-card.json",
		Name:      "ExampleBot",
		Homepage:  "https://bot.example/about",
		Contacts:  []string{"mailto:bots@bot.example"},
		UserAgent: "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://bot.example/about)",
	})
	b, err := json.MarshalIndent(card, "", "  ")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))
	// Output:
	// {
	//   "client_id": "https://bot.example/signature-agent-card.json",
	//   "client_name": "ExampleBot",
	//   "client_uri": "https://bot.example/about",
	//   "contacts": [
	//     "mailto:bots@bot.example"
	//   ],
	//   "jwks_uri": "https://bot.example/.well-known/http-message-signatures-directory",
	//   "web_bot_auth": {
	//     "expected-user-agent": "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://bot.example/about)",
	//     "rfc9309-product-token": "ExampleBot",
	//     "rfc9309-compliance": true,
	//     "trigger": "crawler",
	//     "purpose": [
	//       "search"
	//     ],
	//     "rate-control": "CrawlDelay in robots.txt; 429 and 503 + Retry-After"
	//   }
	// }
}
