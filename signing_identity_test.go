package robots

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/politecrawl/robots/botauth"
	"github.com/politecrawl/robots/usage"
)

// signerAt is a signer whose Signature-Agent is agent. The process's
// record of that identity's purposes is forgotten when the test ends, so
// that the test can run again (go test -count).
func signerAt(t *testing.T, agent string, seed byte) *botauth.Signer {
	t.Helper()
	t.Cleanup(func() {
		identities.Lock()
		delete(identities.m, agent)
		identities.Unlock()
	})
	s, err := botauth.NewSigner(agent, []botauth.Key{testKey(t, seed)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestIdentityPerPurpose: one signing identity that declares search and
// train-ai or ai-input is warned about once, whether one plugin declares
// both or two plugins signing as one identity declare one each; an
// identity per purpose is not.
func TestIdentityPerPurpose(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	warnings := func() int { return strings.Count(buf.String(), "one signing identity declares search") }
	newPlugin := func(s *botauth.Signer, purposes ...string) {
		t.Helper()
		p, err := New(WithLogger(log), WithSigner(s), WithUsage(usage.Config{Purposes: purposes}))
		if err != nil {
			t.Fatal(err)
		}
		p.Close()
	}

	both := signerAt(t, "https://both.identity.test/dir", 60)
	newPlugin(both, "search", "train-ai")
	newPlugin(both, "search", "train-ai")
	if n := warnings(); n != 1 || !strings.Contains(buf.String(), "https://both.identity.test/dir") {
		t.Fatalf("one identity, search and train-ai, two plugins: %d warnings:\n%s", n, buf.String())
	}

	shared := signerAt(t, "https://shared.identity.test/dir", 61)
	newPlugin(shared, "search")
	if n := warnings(); n != 1 {
		t.Fatalf("search alone: %d warnings", n)
	}
	newPlugin(shared, "ai-input")
	if n := warnings(); n != 2 {
		t.Fatalf("one identity shared by a search plugin and an ai-input plugin: %d warnings:\n%s", n, buf.String())
	}

	newPlugin(signerAt(t, "https://search.identity.test/dir", 62), "search")
	newPlugin(signerAt(t, "https://train.identity.test/dir", 63), "train-ai", "ai-input")
	if n := warnings(); n != 2 {
		t.Errorf("an identity per purpose: %d warnings:\n%s", n, buf.String())
	}
}

// TestAgentCard: the card is completed from the plugin's settings (key
// directory, product token, purposes, trigger, rate control, robots.txt
// compliance), what the caller set kept.
func TestAgentCard(t *testing.T) {
	s := signerAt(t, "https://card.identity.test/.well-known/http-message-signatures-directory", 64)
	p, err := New(WithSigner(s), WithAgents("ExampleBot"), WithUsage(usage.Config{Purposes: []string{"search"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	card := p.AgentCard(botauth.Card{URL: "https://card.identity.test/card.json", Name: "ExampleBot", RateExpectation: "avg=1rps"})
	b, err := json.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"client_id":"https://card.identity.test/card.json","client_name":"ExampleBot",` +
		`"jwks_uri":"https://card.identity.test/.well-known/http-message-signatures-directory",` +
		`"web_bot_auth":{"rfc9309-product-token":"ExampleBot","rfc9309-compliance":true,"trigger":"crawler",` +
		`"purpose":["search"],"rate-control":"CrawlDelay in robots.txt; 429 and 503 + Retry-After","rate-expectation":"avg=1rps"}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	q, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	c := q.AgentCard(botauth.Card{UserAgent: "Mozilla/5.0 (compatible; OtherBot/2.0; +https://other.test/)", Trigger: "fetcher"})
	if c.ProductToken != "OtherBot" || c.Trigger != "fetcher" || c.Directory != "" || len(c.Purposes) != 0 || !c.ObeysRobots {
		t.Errorf("without signer nor agents: %+v", c)
	}
	if c := q.AgentCard(botauth.Card{}); c.ProductToken != "" {
		t.Errorf("no User-Agent, no agents: product token %q", c.ProductToken)
	}
}
