package botauth

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestCardJSON: a card's members under the draft's names, the
// web_bot_auth object only when one of its members is set, and a bad URL
// or trigger refused.
func TestCardJSON(t *testing.T) {
	c := Card{URL: "https://bot.example/card.json", Name: "ExampleBot", Homepage: "https://bot.example/about",
		Contacts: []string{"mailto:bots@bot.example"}, Directory: "https://bot.example" + DirectoryPath,
		UserAgent: "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://bot.example/about)", ProductToken: "ExampleBot",
		ObeysRobots: true, Trigger: "crawler", Purposes: []string{"search"}, RateControl: "CrawlDelay in robots.txt",
		RateExpectation: "avg=1rps;max=2rps"}
	got, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"client_id":"https://bot.example/card.json","client_name":"ExampleBot","client_uri":"https://bot.example/about",` +
		`"contacts":["mailto:bots@bot.example"],"jwks_uri":"https://bot.example/.well-known/http-message-signatures-directory",` +
		`"web_bot_auth":{"expected-user-agent":"Mozilla/5.0 (compatible; ExampleBot/1.0; +https://bot.example/about)",` +
		`"rfc9309-product-token":"ExampleBot","rfc9309-compliance":true,"trigger":"crawler","purpose":["search"],` +
		`"rate-control":"CrawlDelay in robots.txt","rate-expectation":"avg=1rps;max=2rps"}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, err := json.Marshal(Card{Name: "x"}); err != nil || string(got) != `{"client_name":"x"}` {
		t.Errorf("name only: %s %v", got, err)
	}
	for _, bad := range []Card{{Trigger: "robot"}, {URL: "http://bot.example/card"}, {Directory: "/relative"}, {Homepage: "https://u@bot.example/"}} {
		if _, err := json.Marshal(bad); !errors.Is(err, ErrOption) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}
