package botauth

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/politecrawl/robots/internal/authority"
)

// webBotAuthTag is the tag parameter of a Web Bot Auth request signature.
const webBotAuthTag = "web-bot-auth"

// label is the label of the signatures a Signer makes unasked, and the key
// of its Signature-Agent member.
const label = "sig1"

// A Signer signs requests as one crawler: with its current [Key], naming
// its Signature-Agent (the URL of its key directory). It is safe for
// concurrent use.
type Signer struct {
	keys      []Key
	agent     string // the Signature-Agent URL
	agentItem string // agent as an sf-string: the member's value, and the String form's field
	agentKey  string // the member key of the default signature, "" for the String form
	agentDict string // the Signature-Agent field of the default signature
	now       func() time.Time
	window    time.Duration
	skew      time.Duration
	form      Form
	spec      spec // what Sign covers
}

// NewSigner returns a Signer for the crawler whose key directory is at
// agent, an absolute https URL (the full URL, e.g.
// https://bot.example/.well-known/http-message-signatures-directory, which
// verifiers that fetch the URL as given and those that append the
// well-known path to its origin both find). It signs with the newest of
// keys in force (see [Key]). Options: [WithClock], [WithWindow],
// [WithSkew], [WithForm], [Cover], [AllowTestKey]. The defaults are those
// Cloudflare's verifiers accept: the [StringForm], created 5 seconds before
// the signing instant, expires a minute after created.
func NewSigner(agent string, keys []Key, opts ...Option) (*Signer, error) {
	c, keys, err := newKeyConfig("NewSigner", forSigner, opts, keys)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(agent)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" {
		return nil, fmt.Errorf("%w: NewSigner: Signature-Agent %q: want an absolute https URL without user or fragment", ErrOption, agent)
	}
	item, err := httpsfv.Marshal(httpsfv.NewItem(agent))
	if err != nil {
		return nil, fmt.Errorf("%w: NewSigner: Signature-Agent %q: %w", ErrOption, agent, err)
	}
	if c.skew >= c.window {
		return nil, fmt.Errorf("%w: NewSigner: the skew (%v) is not shorter than the window (%v)", ErrOption, c.skew, c.window)
	}
	s := &Signer{keys: keys, agent: agent, agentItem: item, now: c.now, window: c.window, skew: c.skew, form: c.form}
	agentComp := component{name: "signature-agent"}
	if c.form == DictionaryForm {
		agentComp.key = label
	}
	s.agentKey = agentComp.key
	if s.agentDict, err = s.agentField(agentComp.key); err != nil {
		return nil, err
	}
	s.spec.label = label
	s.spec.queryIfAny = c.form == StringForm
	s.spec.comps = []component{{name: "@authority"}, agentComp}
	for _, name := range c.cover {
		s.spec.comps = append(s.spec.comps, component{name: name})
	}
	for _, name := range []string{"created", "keyid", "alg", "expires", "nonce", "tag"} {
		s.spec.params = append(s.spec.params, param{name: name})
	}
	return s, nil
}

// Agent is the signer's Signature-Agent: the URL of its key directory.
func (s *Signer) Agent() string { return s.agent }

// Sign signs req as made at now: it sets its Signature-Agent, Signature-Input
// and Signature header fields (replacing any), covering req's authority,
// the Signature-Agent in the signer's [Form] and what [Cover] added, with
// created the skew before now ([WithSkew]), expires created plus the
// window, keyid the key's thumbprint, alg "ed25519", a
// fresh 64-byte nonce and tag "web-bot-auth". A request sent with a
// signature made by Sign is not signed again on redirect hops or retries:
// a [Transport] signs each when it is sent. The error wraps [ErrKey] when no
// key is in force at now.
func (s *Signer) Sign(req *http.Request, now time.Time) error {
	_, err := s.sign(req, now, &s.spec)
	return err
}

// A component is a covered component: a derived component ("@authority")
// or a lower-case field name, with its key parameter (a Dictionary member)
// or req flag (a response's request component).
type component struct {
	name string
	key  string
	req  bool
}

func (c component) item() httpsfv.Item {
	p := httpsfv.NewParams()
	if c.key != "" {
		p.Add("key", c.key)
	}
	if c.req {
		p.Add("req", true)
	}
	return httpsfv.Item{Value: c.name, Params: p}
}

// A param is a signature parameter; a nil value is filled in when signing
// (created: the skew before now; expires: created plus the window; keyid: the key's
// thumbprint; alg: "ed25519"; nonce: fresh; tag: "web-bot-auth").
type param struct {
	name  string
	value any // int64 or string
}

// A spec says what one signature covers: its label, its components and
// its parameters, in order; with queryIfAny, "@query" only for a URL with
// a query.
type spec struct {
	label      string
	comps      []component
	params     []param
	queryIfAny bool
}

// keyID is the keyid the spec asks for, or "" for the current key.
func (sp *spec) keyID() string {
	for _, p := range sp.params {
		if p.name == "keyid" {
			s, _ := p.value.(string)
			return s
		}
	}
	return ""
}

// sign signs req as sp says, at now, and returns the signature base.
func (s *Signer) sign(req *http.Request, now time.Time, sp *spec) (string, error) {
	if req.URL == nil {
		return "", errors.New("botauth: a request without a URL")
	}
	if req.Header == nil {
		req.Header = make(http.Header)
	}
	key, err := current(s.keys, now, sp.keyID())
	if err != nil {
		return "", err
	}
	lines := make([]line, 0, len(sp.comps))
	for _, c := range sp.comps {
		if c.name == "@query" && sp.queryIfAny && req.URL.RawQuery == "" {
			continue
		}
		lines = append(lines, line{c: c})
		i := len(lines) - 1
		if c.name == "signature-agent" {
			field := s.agentDict
			if c.key != s.agentKey {
				if field, err = s.agentField(c.key); err != nil {
					return "", err
				}
			}
			req.Header.Set("Signature-Agent", field)
			lines[i].value = s.agentItem
			continue
		}
		if lines[i].value, err = requestValue(req, c); err != nil {
			return "", err
		}
	}
	created := now.Add(-s.skew).Unix()
	for _, p := range sp.params {
		if v, ok := p.value.(int64); ok && p.name == "created" {
			created = v
		}
	}
	params := httpsfv.NewParams()
	for _, p := range sp.params {
		v := p.value
		if v == nil {
			switch p.name {
			case "created":
				v = created
			case "expires":
				v = created + int64(s.window/time.Second)
			case "keyid":
				v = key.kid
			case "alg":
				v = "ed25519"
			case "nonce":
				v = newNonce()
			case "tag":
				v = webBotAuthTag
			default:
				return "", fmt.Errorf("botauth: no value for parameter %q", p.name)
			}
		}
		params.Add(p.name, v)
	}
	base, input, sig, err := signLines(key.priv, sp.label, lines, params)
	if err != nil {
		return "", err
	}
	req.Header.Set("Signature-Input", input)
	req.Header.Set("Signature", sig)
	return base, nil
}

// agentField is the Signature-Agent field naming the signer's agent: a
// Dictionary of one member, key, or the bare String when key is empty. A
// key that is no Dictionary key is an error.
func (s *Signer) agentField(key string) (string, error) {
	if key == "" {
		return s.agentItem, nil
	}
	d := httpsfv.NewDictionary()
	d.Add(key, httpsfv.NewItem(s.agent))
	v, err := httpsfv.Marshal(d)
	if err != nil {
		return "", fmt.Errorf("%w \"signature-agent\";key=%s: %w", errComponent, quoted(key), err)
	}
	return v, nil
}

// newNonce is 64 random bytes in base64, as Cloudflare's signers send.
func newNonce() string {
	var b [64]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.StdEncoding.EncodeToString(b[:])
}

// A line is a covered component with its value.
type line struct {
	c     component
	value string
}

// signLines makes the RFC 9421 signature base of lines and params, signs it
// with priv, and returns the base and the Signature-Input and Signature
// field values under label. A component covered twice, or a value outside
// visible ASCII, space and tab, is an error.
func signLines(priv ed25519.PrivateKey, label string, lines []line, params *httpsfv.Params) (base, input, sig string, err error) {
	items := make([]httpsfv.Item, len(lines))
	ids := make([]string, len(lines))
	var b strings.Builder
	for i, l := range lines {
		items[i] = l.c.item()
		if ids[i], err = httpsfv.Marshal(items[i]); err != nil {
			return "", "", "", fmt.Errorf("botauth: component %s: %w", quoted(l.c.name), err)
		}
		for _, id := range ids[:i] {
			if id == ids[i] {
				return "", "", "", fmt.Errorf("botauth: component %s covered twice", quoted(id))
			}
		}
		if !baseValue(l.value) {
			return "", "", "", fmt.Errorf("botauth: component %s: value %s holds a byte a signature base cannot", quoted(ids[i]), quoted(l.value))
		}
		b.WriteString(ids[i])
		b.WriteString(": ")
		b.WriteString(l.value)
		b.WriteByte('\n')
	}
	il := httpsfv.InnerList{Items: items, Params: params}
	p, err := httpsfv.Marshal(il)
	if err != nil {
		return "", "", "", fmt.Errorf("botauth: signature parameters: %w", err)
	}
	b.WriteString(`"@signature-params": `)
	b.WriteString(p)
	base = b.String()
	in := httpsfv.NewDictionary()
	in.Add(label, il)
	if input, err = httpsfv.Marshal(in); err != nil {
		return "", "", "", fmt.Errorf("botauth: label %s: %w", quoted(label), err)
	}
	sd := httpsfv.NewDictionary()
	sd.Add(label, httpsfv.NewItem(ed25519.Sign(priv, []byte(base))))
	if sig, err = httpsfv.Marshal(sd); err != nil {
		return "", "", "", fmt.Errorf("botauth: label %s: %w", quoted(label), err)
	}
	return base, input, sig, nil
}

// baseValue reports whether v may stand in a signature base: visible ASCII,
// space and tab.
func baseValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c >= 0x7f || c < 0x20 && c != '\t' {
			return false
		}
	}
	return true
}

// errComponent is wrapped by the error of a component a request cannot
// give a value for.
var errComponent = errors.New("botauth: cannot sign component")

// requestValue is the value of component c of req.
func requestValue(req *http.Request, c component) (string, error) {
	if c.key != "" || c.req {
		return "", fmt.Errorf("%w %s with parameters", errComponent, quoted(c.name))
	}
	u := req.URL
	switch c.name {
	case "@authority":
		return authorityOf(u.Scheme, req.Host, u)
	case "@method":
		if req.Method == "" {
			return http.MethodGet, nil
		}
		return req.Method, nil
	case "@path":
		if p := u.EscapedPath(); p != "" {
			return p, nil
		}
		return "/", nil
	case "@query":
		return "?" + u.RawQuery, nil
	case "@scheme":
		return strings.ToLower(u.Scheme), nil
	case "@request-target":
		return u.RequestURI(), nil
	case "@target-uri":
		a, err := authorityOf(u.Scheme, req.Host, u)
		if err != nil {
			return "", err
		}
		return strings.ToLower(u.Scheme) + "://" + a + u.RequestURI(), nil
	}
	if strings.HasPrefix(c.name, "@") {
		return "", fmt.Errorf("%w %s", errComponent, quoted(c.name))
	}
	vs := req.Header.Values(c.name)
	if len(vs) == 0 {
		return "", fmt.Errorf("%w %s: the request has no such field", errComponent, quoted(c.name))
	}
	if len(vs) == 1 {
		return strings.Trim(vs[0], " \t"), nil
	}
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strings.Trim(v, " \t"))
	}
	return b.String(), nil
}

// authorityOf is the @authority of a request to u with the given scheme and
// Host (u's host when empty): the host lower-cased, in punycode, with the
// scheme's default port left out (RFC 9421 §2.2.3).
func authorityOf(scheme, host string, u *url.URL) (string, error) {
	if host == "" {
		host = u.Host
	}
	var buf [128]byte
	b, err := authority.Append(buf[:0], &url.URL{Scheme: scheme, Host: host})
	if err != nil {
		return "", fmt.Errorf("%w \"@authority\": %w", errComponent, err)
	}
	_, a, _ := strings.Cut(string(b), "://")
	return a, nil
}
