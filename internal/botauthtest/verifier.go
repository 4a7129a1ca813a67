// Package botauthtest is test support: a verifier of Web Bot Auth request
// signatures written from RFC 9421 §2 and §3.2 and the Web Bot Auth draft,
// as a site checks a crawler's requests, and the reader of a key directory
// a verifier fetches. It shares no code with package botauth (it imports only
// the standard library and httpsfv), so that a test checking botauth's
// signatures with it checks them against an independent reading of the
// specifications.
package botauthtest

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"
)

// Verifier holds what a site knows: the crawler's keys by thumbprint (as
// computed here from the directory's x members), the Signature-Agent it
// expects, the time, and the longest lifetime it accepts.
type Verifier struct {
	Keys   map[string]ed25519.PublicKey // by thumbprint (see Thumbprint)
	Agent  string                       // the Signature-Agent URL expected
	Now    func() time.Time             // the site's clock
	Window time.Duration                // the longest lifetime accepted
}

// Check is what Verify found in a good signature.
type Check struct {
	Label      string
	Components []string // identifiers as in the base
	Authority  string
	Created    int64
	Expires    int64
	Nonce      string
	KeyID      string
	Tag        string
}

// Verify checks the one signature of r (a request as a server receives
// it): its tag, its keyid (a key of the directory), created at most a
// second ahead of now and at most the window before it,
// expires after now and at most the window after created, "@authority"
// covered, and the Signature-Agent field present, naming the expected
// agent, and covered (the member keyed by the label for the Dictionary
// form, the whole field for the legacy String); then the Ed25519 signature
// over the base rebuilt from r. It parses the fields with httpsfv and
// builds the signature base (identifiers, values, parameters line) itself.
func (v *Verifier) Verify(r *http.Request) (Check, error) {
	inputs, err := httpsfv.UnmarshalDictionary(r.Header.Values("Signature-Input"))
	if err != nil {
		return Check{}, fmt.Errorf("field Signature-Input: %w", err)
	}
	if len(inputs.Names()) != 1 {
		return Check{}, fmt.Errorf("field Signature-Input: %d signatures, want 1", len(inputs.Names()))
	}
	c := Check{Label: inputs.Names()[0]}
	m, _ := inputs.Get(c.Label)
	il, ok := m.(httpsfv.InnerList)
	if !ok {
		return Check{}, errors.New("field Signature-Input: not an inner list")
	}
	sigs, err := httpsfv.UnmarshalDictionary(r.Header.Values("Signature"))
	if err != nil {
		return Check{}, fmt.Errorf("field Signature: %w", err)
	}
	sm, ok := sigs.Get(c.Label)
	if !ok {
		return Check{}, fmt.Errorf("field Signature: no %s", c.Label)
	}
	sig, ok := sm.(httpsfv.Item).Value.([]byte)
	if !ok {
		return Check{}, errors.New("field Signature: not a byte sequence")
	}

	// Parameters.
	if err := c.readParams(il.Params); err != nil {
		return Check{}, err
	}
	if c.Tag != "web-bot-auth" {
		return Check{}, fmt.Errorf("tag %q", c.Tag)
	}
	pub, ok := v.Keys[c.KeyID]
	if !ok {
		return Check{}, fmt.Errorf("keyid %q is no key of the directory", c.KeyID)
	}
	now := v.Now().Unix()
	if c.Created > now+1 || c.Created < now-int64(v.Window/time.Second) {
		return Check{}, fmt.Errorf("created %d, now %d", c.Created, now)
	}
	if c.Expires <= now || c.Expires-c.Created > int64(v.Window/time.Second) {
		return Check{}, fmt.Errorf("expires %d: past, or more than %v after created %d", c.Expires, v.Window, c.Created)
	}
	if c.Nonce == "" {
		return Check{}, errors.New("no nonce")
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
			value, err = v.agentValue(r, key, hasKey, c.Label)
			agentCovered = err == nil
		case len(it.Params.Names()) > 0:
			err = fmt.Errorf("component %s has parameters", name)
		default:
			value, err = componentValue(r, name)
		}
		if err != nil {
			return Check{}, err
		}
		if name == "@authority" {
			c.Authority = value
		}
		c.Components = append(c.Components, id)
		base.WriteString(id + ": " + value + "\n")
	}
	if c.Authority == "" {
		return Check{}, errors.New(`"@authority" not covered`)
	}
	if !agentCovered {
		return Check{}, errors.New("field Signature-Agent not covered")
	}
	base.WriteString(`"@signature-params": (` + strings.Join(c.Components, " ") + ")" + paramsText(il.Params))
	if !ed25519.Verify(pub, []byte(base.String()), sig) {
		return Check{}, fmt.Errorf("signature does not verify over:\n%s", base.String())
	}
	return c, nil
}

func (c *Check) readParams(p *httpsfv.Params) error {
	for _, name := range p.Names() {
		val, _ := p.Get(name)
		switch name {
		case "created", "expires":
			n, ok := val.(int64)
			if !ok {
				return fmt.Errorf("%s not an integer", name)
			}
			if name == "created" {
				c.Created = n
			} else {
				c.Expires = n
			}
		case "keyid", "nonce", "tag", "alg":
			s, ok := val.(string)
			if !ok {
				return fmt.Errorf("%s not a string", name)
			}
			switch name {
			case "keyid":
				c.KeyID = s
			case "nonce":
				c.Nonce = s
			case "tag":
				c.Tag = s
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
func (v *Verifier) agentValue(r *http.Request, key any, hasKey bool, label string) (string, error) {
	field := strings.TrimSpace(r.Header.Get("Signature-Agent"))
	var agent string
	if hasKey {
		if key != label {
			return "", fmt.Errorf("field Signature-Agent member %v is not the label %s", key, label)
		}
		d, err := httpsfv.UnmarshalDictionary([]string{field})
		if err != nil {
			return "", fmt.Errorf("field Signature-Agent: %w", err)
		}
		m, ok := d.Get(label)
		if !ok {
			return "", fmt.Errorf("field Signature-Agent has no member %s", label)
		}
		it := m.(httpsfv.Item)
		if len(it.Params.Names()) > 0 {
			return "", errors.New("field Signature-Agent member has parameters")
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
	if agent != v.Agent || !strings.HasPrefix(agent, "https://") {
		return "", fmt.Errorf("field Signature-Agent %q, want %q", agent, v.Agent)
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
