package webbotauth

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// signJob is one request of sign.mjs: sent to Send, signed by Cloudflare's
// web-bot-auth with JWK for the URL Sign (Send when empty), unsigned
// without a JWK.
type signJob struct {
	Name    string            `json:"name"`
	Send    string            `json:"send"`
	Sign    string            `json:"sign,omitempty"`
	JWK     map[string]string `json:"jwk,omitempty"`
	Agent   string            `json:"agent,omitempty"`
	Created int64             `json:"created,omitempty"`
	Expires int64             `json:"expires,omitempty"`
	// Components: web-bot-auth's default when empty.
	Components []string `json:"components,omitempty"`
}

// TestCloudflareSignedVerified sends requests signed by Cloudflare's
// web-bot-auth package, with the crawler's key as a JWK, to
// examples/botcheck, whose verifier fetches the key directory served by
// examples/keydirectory over HTTPS: each gets the verdict due, the first
// word of its name: verified (web-bot-auth's default components, and
// "@method", "@path" and "@query" of a URL with a query), expired, unknown
// (a key not in the directory, a Signature-Agent where there is no
// directory), invalid (signed for another authority), unsigned.
func TestCloudflareSignedVerified(t *testing.T) {
	requireNode(t)
	caFile, certFile, certKey := tlsFiles(t)
	key := newBotKey(t)
	agent := keyDirectory(t, key, certFile, certKey)
	check := botcheck(t, caFile)

	stranger := newBotKey(t) // not in the directory
	now := time.Now().Unix()
	noDirectory := strings.Replace(agent, "/.well-known/", "/elsewhere/", 1)
	jobs := []signJob{
		{Name: "verified", JWK: key.jwk, Agent: agent, Created: now - 1, Expires: now + 60},
		{Name: "verified-query?x=1", JWK: key.jwk, Agent: agent, Created: now - 1, Expires: now + 60,
			Components: []string{"@authority", "@method", "@path", "@query", "signature-agent"}},
		{Name: "expired", JWK: key.jwk, Agent: agent, Created: now - 120, Expires: now - 60},
		{Name: "unknown", JWK: stranger.jwk, Agent: agent, Created: now - 1, Expires: now + 60},
		{Name: "unknown-directory", JWK: key.jwk, Agent: noDirectory, Created: now - 1, Expires: now + 60},
		{Name: "invalid", Sign: "http://elsewhere.example/invalid", JWK: key.jwk, Agent: agent, Created: now - 1, Expires: now + 60},
		{Name: "unsigned"},
	}
	for i := range jobs {
		jobs[i].Send = check.base + "/" + jobs[i].Name
	}
	out, err := exec.Command("node", "sign.mjs", writeJSON(t, jobs)).CombinedOutput()
	if err != nil {
		t.Fatalf("sign.mjs: %v\n%s", err, out)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			Name, Error string
			Status      int
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Status != 200 {
			t.Errorf("sign.mjs: %s", l)
		}
	}
	for _, j := range jobs {
		l := check.expect(t, " "+check.base+"/"+j.Name)
		t.Log(l)
		want, _, _ := strings.Cut(j.Name, "-")
		line := want + " GET " + check.base + "/" + j.Name
		if want != "verified" {
			line += ": "
		}
		if !strings.HasPrefix(l, line) || want == "verified" && l != line {
			t.Errorf("%s: botcheck says %q, want %q (a reason after it unless verified)", j.Name, l, line)
		}
	}
}
