package webbotauth

import (
	"crypto/ed25519"
	"net/http"
	"testing"
	"time"

	"github.com/politecrawl/robots/internal/botauthtest"
)

// ourVerifier is the project's verifier of the crawl's requests, as its
// verdict.
func ourVerifier(t *testing.T, k botKey, agent, caFile string) func(*http.Request) string {
	v := &botauthtest.Verifier{Keys: map[string]ed25519.PublicKey{botauthtest.Thumbprint(k.pub): k.pub},
		Agent: agent, Now: time.Now, Window: time.Minute}
	return func(r *http.Request) string {
		if _, err := v.Verify(r); err != nil {
			return "invalid: " + err.Error()
		}
		return "verified"
	}
}
