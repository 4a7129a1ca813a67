package botauthtest

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/dunglas/httpsfv"
)

// Thumbprint is the RFC 7638 JWK SHA-256 thumbprint of an Ed25519 public
// key, base64url: the keyid a verifier looks the key up by.
func Thumbprint(pub ed25519.PublicKey) string {
	return thumbprintX(base64.RawURLEncoding.EncodeToString(pub))
}

// thumbprintX is the thumbprint of the key whose JWK x member is x.
func thumbprintX(x string) string {
	h := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// FetchDirectory reads a key directory as a verifier does: 200, the media
// type, the Content-Digest of the body, each key's kid equal to the
// thumbprint computed here, no private member; and the response's
// signatures, one per key, checked over "@authority";req and
// content-digest with the directory tag. It returns the keys by
// thumbprint.
func FetchDirectory(client *http.Client, u string, now time.Time) (map[string]ed25519.PublicKey, error) {
	resp, err := client.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/http-message-signatures-directory+json" {
		return nil, fmt.Errorf("directory: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sum := sha256.Sum256(body)
	digest := "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
	if resp.Header.Get("Content-Digest") != digest {
		return nil, fmt.Errorf("directory: Content-Digest %q, body's %q", resp.Header.Get("Content-Digest"), digest)
	}
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, err
	}
	keys := map[string]ed25519.PublicKey{}
	for _, k := range set.Keys {
		if _, ok := k["d"]; ok {
			return nil, errors.New("directory: a private member")
		}
		x, _ := k["x"].(string)
		pub, err := base64.RawURLEncoding.DecodeString(x)
		if err != nil || len(pub) != ed25519.PublicKeySize || k["kty"] != "OKP" || k["crv"] != "Ed25519" {
			return nil, fmt.Errorf("directory: key %v", k)
		}
		tp := thumbprintX(x)
		if k["kid"] != tp {
			return nil, fmt.Errorf("directory: kid %v, thumbprint %s", k["kid"], tp)
		}
		keys[tp] = pub
	}
	inputs, err := httpsfv.UnmarshalDictionary(resp.Header.Values("Signature-Input"))
	if err != nil {
		return nil, err
	}
	sigs, err := httpsfv.UnmarshalDictionary(resp.Header.Values("Signature"))
	if err != nil {
		return nil, err
	}
	if len(inputs.Names()) != len(keys) {
		return nil, fmt.Errorf("directory: %d signatures for %d keys", len(inputs.Names()), len(keys))
	}
	auth := authorityText(resp.Request.URL.Scheme, resp.Request.URL.Host)
	for _, lbl := range inputs.Names() {
		m, _ := inputs.Get(lbl)
		il := m.(httpsfv.InnerList)
		var c Check
		if err := c.readParams(il.Params); err != nil {
			return nil, err
		}
		if c.Tag != "http-message-signatures-directory" || c.Created > now.Unix() || c.Expires <= now.Unix() {
			return nil, fmt.Errorf("directory signature %s: tag %q created %d expires %d", lbl, c.Tag, c.Created, c.Expires)
		}
		base := `"@authority";req: ` + auth + "\n" + `"content-digest": ` + digest + "\n" +
			`"@signature-params": ("@authority";req "content-digest")` + paramsText(il.Params)
		sm, _ := sigs.Get(lbl)
		sig, _ := sm.(httpsfv.Item).Value.([]byte)
		if !ed25519.Verify(keys[c.KeyID], []byte(base), sig) {
			return nil, fmt.Errorf("directory signature %s does not verify over:\n%s", lbl, base)
		}
	}
	return keys, nil
}
