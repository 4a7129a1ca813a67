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
}

// TestCloudflareSignedVerified sends requests signed by Cloudflare's
// web-bot-auth package, with the crawler's key as a JWK, to
// examples/botcheck, whose verifier fetches the key directory served by
// examples/keydirectory over HTTPS: each gets the verdict due.
func TestCloudflareSignedVerified(t *testing.T) {
	requireNode(t)
	caFile, certFile, certKey := tlsFiles(t)
	key := newBotKey(t)
	agent := keyDirectory(t, key, certFile, certKey)
	check := botcheck(t, caFile)

	stranger := newBotKey(t) // not in the directory
	now := time.Now().Unix()
	jobs := []signJob{
		{Name: "verified", JWK: key.jwk, Agent: agent, Created: now - 1, Expires: now + 60},
		{Name: "expired", JWK: key.jwk, Agent: agent, Created: now - 120, Expires: now - 60},
		{Name: "unknown", JWK: stranger.jwk, Agent: agent, Created: now - 1, Expires: now + 60},
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
		verdict, rest, _ := strings.Cut(l, " ")
		if verdict != j.Name {
			t.Errorf("%s: botcheck says %q", j.Name, l)
		}
		if reason := strings.HasPrefix(rest, "GET "+check.base+"/"+j.Name+": "); reason == (j.Name == "verified") {
			t.Errorf("%s: %q: a reason is given unless verified", j.Name, l)
		}
	}
}
