package botauth

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"
)

// This file is a verifier written from RFC 9421 §2 and §3.2 and the Web
// Bot Auth draft, as a site checks a crawler's requests. It shares no code
// with the signer: it parses the fields with httpsfv, and builds the
// signature base, component identifiers, values and the parameters line
// itself.

// verifier holds what a site knows: the crawler's keys by thumbprint (as
// computed here from the directory's x members), the Signature-Agent it
// expects, the time, and the longest lifetime it accepts.
type verifier struct {
	keys   map[string]ed25519.PublicKey
	agent  string
	now    func() time.Time
	window time.Duration
}

// check is what verify found in a good signature.
type check struct {
	label      string
	components []string // identifiers as in the base
	authority  string
	created    int64
	expires    int64
	nonce      string
	keyid      string
	tag        string
}

// verify checks the one signature of r (a request as a server receives
// it): its tag, its keyid (a key of the directory), created about now,
// expires after now and at most the window after created, "@authority"
// covered, and the Signature-Agent field present, naming the expected
// agent, and covered (the member keyed by the label for the Dictionary
// form, the whole field for the legacy String); then the Ed25519 signature
// over the base rebuilt from r.
func (v *verifier) verify(r *http.Request) (check, error) {
	inputs, err := httpsfv.UnmarshalDictionary(r.Header.Values("Signature-Input"))
	if err != nil {
		return check{}, fmt.Errorf("Signature-Input: %w", err)
	}
	if len(inputs.Names()) != 1 {
		return check{}, fmt.Errorf("Signature-Input: %d signatures, want 1", len(inputs.Names()))
	}
	c := check{label: inputs.Names()[0]}
	m, _ := inputs.Get(c.label)
	il, ok := m.(httpsfv.InnerList)
	if !ok {
		return check{}, errors.New("Signature-Input: not an inner list")
	}
	sigs, err := httpsfv.UnmarshalDictionary(r.Header.Values("Signature"))
	if err != nil {
		return check{}, fmt.Errorf("Signature: %w", err)
	}
	sm, ok := sigs.Get(c.label)
	if !ok {
		return check{}, fmt.Errorf("Signature: no %s", c.label)
	}
	sig, ok := sm.(httpsfv.Item).Value.([]byte)
	if !ok {
		return check{}, errors.New("Signature: not a byte sequence")
	}

	// Parameters.
	if err := c.readParams(il.Params); err != nil {
		return check{}, err
	}
	if c.tag != "web-bot-auth" {
		return check{}, fmt.Errorf("tag %q", c.tag)
	}
	pub, ok := v.keys[c.keyid]
	if !ok {
		return check{}, fmt.Errorf("keyid %q is no key of the directory", c.keyid)
	}
	now := v.now().Unix()
	if c.created > now+1 || c.created < now-1 {
		return check{}, fmt.Errorf("created %d, now %d", c.created, now)
	}
	if c.expires <= now || c.expires-c.created > int64(v.window/time.Second) {
		return check{}, fmt.Errorf("expires %d: past, or more than %v after created %d", c.expires, v.window, c.created)
	}
	if c.nonce == "" {
		return check{}, errors.New("no nonce")
	}

	// Components: the base, line by line.
	var base strings.Builder
	agentCovered := false
	for _, it := range il.Items {
		name, _ := it.Value.(string)
		id := `"` + name + `"`
		var value string
		switch {
		case name == "signature-agent":
			key, hasKey := it.Params.Get("key")
			if hasKey {
				id += `;key="` + key.(string) + `"`
			}
			value, err = v.agentValue(r, key, hasKey, c.label)
			agentCovered = err == nil
		case len(it.Params.Names()) > 0:
			err = fmt.Errorf("component %s has parameters", name)
		default:
			value, err = componentValue(r, name)
		}
		if err != nil {
			return check{}, err
		}
		if name == "@authority" {
			c.authority = value
		}
		c.components = append(c.components, id)
		base.WriteString(id + ": " + value + "\n")
	}
	if c.authority == "" {
		return check{}, errors.New(`"@authority" not covered`)
	}
	if !agentCovered {
		return check{}, errors.New("Signature-Agent not covered")
	}
	base.WriteString(`"@signature-params": (` + strings.Join(c.components, " ") + ")" + paramsText(il.Params))
	if !ed25519.Verify(pub, []byte(base.String()), sig) {
		return check{}, fmt.Errorf("signature does not verify over:\n%s", base.String())
	}
	return c, nil
}

func (c *check) readParams(p *httpsfv.Params) error {
	for _, name := range p.Names() {
		val, _ := p.Get(name)
		switch name {
		case "created", "expires":
			n, ok := val.(int64)
			if !ok {
				return fmt.Errorf("%s not an integer", name)
			}
			if name == "created" {
				c.created = n
			} else {
				c.expires = n
			}
		case "keyid", "nonce", "tag", "alg":
			s, ok := val.(string)
			if !ok {
				return fmt.Errorf("%s not a string", name)
			}
			switch name {
			case "keyid":
				c.keyid = s
			case "nonce":
				c.nonce = s
			case "tag":
				c.tag = s
			case "alg":
				if s != "ed25519" {
					return fmt.Errorf("alg %q", s)
				}
			}
		default:
			return fmt.Errorf("unexpected parameter %q", name)
		}
	}
	return nil
}

// agentValue is the covered value of the Signature-Agent field: the member
// keyed key (which must be the label) of the Dictionary form, re-serialised
// as an sf-string, or the legacy String field as it is.
func (v *verifier) agentValue(r *http.Request, key any, hasKey bool, label string) (string, error) {
	field := strings.TrimSpace(r.Header.Get("Signature-Agent"))
	var agent string
	if hasKey {
		if key != label {
			return "", fmt.Errorf("Signature-Agent member %v is not the label %s", key, label)
		}
		d, err := httpsfv.UnmarshalDictionary([]string{field})
		if err != nil {
			return "", fmt.Errorf("Signature-Agent: %w", err)
		}
		m, ok := d.Get(label)
		if !ok {
			return "", fmt.Errorf("Signature-Agent has no member %s", label)
		}
		it := m.(httpsfv.Item)
		if len(it.Params.Names()) > 0 {
			return "", errors.New("Signature-Agent member has parameters")
		}
		agent, _ = it.Value.(string)
	} else {
		if !strings.HasPrefix(field, `"`) {
			return "", errors.New("legacy Signature-Agent is not a String")
		}
		it, err := httpsfv.UnmarshalItem([]string{field})
		if err != nil {
			return "", err
		}
		agent, _ = it.Value.(string)
	}
	if agent != v.agent || !strings.HasPrefix(agent, "https://") {
		return "", fmt.Errorf("Signature-Agent %q, want %q", agent, v.agent)
	}
	return `"` + agent + `"`, nil // an https URL holds no '"' nor '\'
}

// componentValue derives a component of a request as a server receives it
// (RFC 9421 §2.2, §2.1).
func componentValue(r *http.Request, name string) (string, error) {
	switch name {
	case "@authority":
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		return authorityText(scheme, r.Host), nil
	case "@method":
		return r.Method, nil
	case "@path":
		if r.URL.EscapedPath() == "" {
			return "/", nil
		}
		return r.URL.EscapedPath(), nil
	case "@query":
		return "?" + r.URL.RawQuery, nil
	}
	if strings.HasPrefix(name, "@") {
		return "", fmt.Errorf("component %s not derived by this verifier", name)
	}
	vs := r.Header.Values(name)
	if len(vs) == 0 {
		return "", fmt.Errorf("field %s absent", name)
	}
	parts := make([]string, len(vs))
	for i, s := range vs {
		parts[i] = strings.TrimSpace(s)
	}
	return strings.Join(parts, ", "), nil
}

// authorityText is the authority of hostport under scheme: lower-cased,
// the scheme's default port left out (RFC 9110 §4.2.3).
func authorityText(scheme, hostport string) string {
	def := map[string]string{"http": "80", "https": "443"}[scheme]
	hostport = strings.ToLower(hostport)
	if h, p, err := net.SplitHostPort(hostport); err == nil && p == def {
		if strings.Contains(h, ":") {
			return "[" + h + "]"
		}
		return h
	}
	return hostport
}

// paramsText serialises signature parameters (integers, strings, true) as
// RFC 8941 does, for the @signature-params line.
func paramsText(p *httpsfv.Params) string {
	var b strings.Builder
	for _, name := range p.Names() {
		val, _ := p.Get(name)
		b.WriteString(";" + name)
		switch x := val.(type) {
		case int64:
			b.WriteString("=" + strconv.FormatInt(x, 10))
		case string:
			b.WriteString(`="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(x) + `"`)
		case bool:
			if !x {
				b.WriteString("=?0")
			}
		}
	}
	return b.String()
}

// fetchDirectory reads a key directory as a verifier does: 200, the media
// type, the Content-Digest of the body, each key's kid equal to the
// thumbprint computed here, no private member; and the response's
// signatures, one per key, checked over "@authority";req and
// content-digest with the directory tag. It returns the keys by
// thumbprint.
func fetchDirectory(client *http.Client, u string, now time.Time) (map[string]ed25519.PublicKey, error) {
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
		h := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
		tp := base64.RawURLEncoding.EncodeToString(h[:])
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
		var c check
		if err := c.readParams(il.Params); err != nil {
			return nil, err
		}
		if c.tag != "http-message-signatures-directory" || c.created > now.Unix() || c.expires <= now.Unix() {
			return nil, fmt.Errorf("directory signature %s: tag %q created %d expires %d", lbl, c.tag, c.created, c.expires)
		}
		base := `"@authority";req: ` + auth + "\n" + `"content-digest": ` + digest + "\n" +
			`"@signature-params": ("@authority";req "content-digest")` + paramsText(il.Params)
		sm, _ := sigs.Get(lbl)
		sig, _ := sm.(httpsfv.Item).Value.([]byte)
		if !ed25519.Verify(keys[c.keyid], []byte(base), sig) {
			return nil, fmt.Errorf("directory signature %s does not verify over:\n%s", lbl, base)
		}
	}
	return keys, nil
}
