package botauth

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"
	"golang.org/x/sync/singleflight"
)

// A Verdict is what a [Verifier] concluded about a request.
type Verdict uint8

// The verdicts, as [Verifier.Verify] gives them.
const (
	// Unsigned: the request carries no Signature nor Signature-Input.
	Unsigned Verdict = iota
	// Verified: a web-bot-auth signature verifies with a key of the key
	// directory its Signature-Agent names.
	Verified
	// Invalid: a signature is there but malformed, incomplete, not valid
	// for this request (another authority, a future created, a replayed
	// nonce), or does not verify.
	Invalid
	// Expired: the signature's expires is past.
	Expired
	// Unknown: the key cannot be found: no Signature-Agent, no key
	// directory there, or no such key in it.
	Unknown
)

var verdictNames = [...]string{"unsigned", "verified", "invalid", "expired", "unknown"}

// String is the verdict's lower-case name, e.g. "verified".
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", v)
}

// A Result is a [Verifier]'s verdict on a request and what it read from
// the signature. Fields other than Verdict are set as far as the verifier
// got reading the signature; they are the signer's claims unless Verdict
// is [Verified].
type Result struct {
	Verdict Verdict
	// Reason says why the verdict is not Verified; "" when it is.
	Reason string
	// Label is the signature's label in Signature-Input.
	Label string
	// Components are the covered component identifiers, in order, as
	// serialised in the signature base (e.g. `"signature-agent";key="sig1"`).
	Components []string
	// Agent is the Signature-Agent URL.
	Agent string
	// KeyID is the signature's keyid, the key's JWK thumbprint.
	KeyID string
	// Nonce is the signature's nonce.
	Nonce string
	// Created and Expires are the signature's created and expires.
	Created, Expires time.Time
}

// Defaults and bounds of a Verifier.
const (
	defaultVerifySkew   = 5 * time.Second
	defaultVerifyWindow = 5 * time.Minute
	maxSignatureFields  = 16 << 10 // bytes of Signature, Signature-Input and Signature-Agent together
	maxCovered          = 32
	maxReason           = 400 // bytes of a Result's Reason
)

// A Verifier checks Web Bot Auth request signatures as a site receives
// them. It is safe for concurrent use; use one for the whole site, so that
// its key directory cache and nonce memory are shared.
//
// For each request it picks the first signature tagged "web-bot-auth" and
// accepts it only when: its alg, if given, is "ed25519"; created, expires,
// keyid and nonce are present; created is at most the skew ahead of the
// clock; expires is after created, at most the window after it, and not
// more than the skew behind the clock; the covered components include
// "@authority" (whose value is the request's own authority) and, when the
// request carries Signature-Agent, "signature-agent" in either form (the
// bare String covered as "signature-agent", or the Dictionary member
// covered as "signature-agent";key=...); the key named by keyid is in the
// key directory the Signature-Agent names, and in force by its nbf and
// exp; the Ed25519 signature over the rebuilt signature base verifies; and
// the nonce was not seen before with that key while a signature lasts.
//
// The key directory is read at the Signature-Agent URL, or at
// [DirectoryPath] under it when the URL names an origin alone, over https
// only, without following redirects, at most 64 KiB in 10 seconds, one
// fetch at a time per directory. Its Content-Digest must match its body,
// and only keys that signed the response (tag
// "http-message-signatures-directory", covering "@authority";req, the
// directory's own authority, and content-digest) are used. It is cached
// for its Cache-Control max-age, from one minute to a day (an hour when
// none is given); a failed fetch is not retried for a minute, and keys
// already cached serve meanwhile. The default client refuses to connect to
// loopback, private and link-local addresses; [VerifyClient] replaces it
// (to trust a local CA in tests, say).
//
// Nonces are remembered until their signature expires, at most 100 000 of
// them: past that, the one expiring first is forgotten.
type Verifier struct {
	client *http.Client
	now    func() time.Time
	skew   time.Duration
	window time.Duration

	dirs   dirCache
	flight singleflight.Group
	nonces nonceSet
}

// A VerifyOption configures [NewVerifier].
type VerifyOption struct {
	name string
	set  func(*Verifier) error
}

// VerifyClock sets the clock a [Verifier] reads (default time.Now).
func VerifyClock(now func() time.Time) VerifyOption {
	return VerifyOption{"VerifyClock", func(v *Verifier) error {
		if now == nil {
			return errors.New("nil clock")
		}
		v.now = now
		return nil
	}}
}

// VerifySkew sets how far ahead of the verifier's clock a signature's
// created may be, and how far behind it its expires may be; d must be at
// least 0 and at most a minute. The default is 5 seconds.
func VerifySkew(d time.Duration) VerifyOption {
	return VerifyOption{fmt.Sprintf("VerifySkew(%v)", d), func(v *Verifier) error {
		if d < 0 || d > time.Minute {
			return errors.New("must be at least 0 and at most 1m0s")
		}
		v.skew = d
		return nil
	}}
}

// VerifyWindow sets the longest signature lifetime (expires minus created)
// a [Verifier] accepts, and so how long it remembers a nonce; d must be at
// least a second and at most [MaxWindow]. The default is 5 minutes.
func VerifyWindow(d time.Duration) VerifyOption {
	return VerifyOption{fmt.Sprintf("VerifyWindow(%v)", d), func(v *Verifier) error {
		if d < time.Second || d > MaxWindow {
			return fmt.Errorf("must be at least 1s and at most %v", MaxWindow)
		}
		v.window = d
		return nil
	}}
}

// VerifyClient sets the client a [Verifier] fetches key directories with,
// instead of one that refuses loopback, private and link-local addresses.
// The verifier does not let it follow redirects.
func VerifyClient(c *http.Client) VerifyOption {
	return VerifyOption{"VerifyClient", func(v *Verifier) error {
		if c == nil {
			return errors.New("nil client")
		}
		v.client = c
		return nil
	}}
}

// NewVerifier returns a Verifier. Options: [VerifyClock], [VerifySkew],
// [VerifyWindow], [VerifyClient]; a bad value is an error wrapping
// [ErrOption].
func NewVerifier(opts ...VerifyOption) (*Verifier, error) {
	v := &Verifier{now: time.Now, skew: defaultVerifySkew, window: defaultVerifyWindow}
	var errs []error
	for _, o := range opts {
		if o.set == nil {
			errs = append(errs, fmt.Errorf("%w: NewVerifier: the zero VerifyOption", ErrOption))
		} else if err := o.set(v); err != nil {
			errs = append(errs, fmt.Errorf("%w: NewVerifier: %s: %w", ErrOption, o.name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	v.client = directoryClient(v.client)
	return v, nil
}

type resultKey struct{}

// Handler returns a handler that verifies each request, as [Verifier.Verify]
// does, and then calls next with the [Result] in the request's context,
// where [ResultOf] reads it. It answers nothing itself: next decides what
// each verdict deserves (serve, throttle, refuse with 401 or 403).
func (v *Verifier) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := v.Verify(r)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), resultKey{}, res)))
	})
}

// ResultOf returns the [Result] that a [Verifier.Handler] stored in r's
// context, and whether there is one.
func ResultOf(r *http.Request) (Result, bool) {
	res, ok := r.Context().Value(resultKey{}).(Result)
	return res, ok
}

// Verify checks r, a request as a server receives it, and returns its
// verdict (see [Verifier] for what is checked). It fetches the key
// directory when it is not cached, stopping when r's context is done;
// a request that carries no signature costs no fetch, nor does one that
// fails a check that needs no key.
func (v *Verifier) Verify(r *http.Request) Result {
	res := v.verify(r)
	if len(res.Reason) > maxReason {
		res.Reason = res.Reason[:maxReason] + "..."
	}
	return res
}

func (v *Verifier) verify(r *http.Request) Result {
	var res Result
	sig, err := v.read(r, &res)
	if err != nil {
		var ve verdictError
		if errors.As(err, &ve) {
			res.Verdict = ve.verdict
		} else {
			res.Verdict = Invalid
		}
		res.Reason = err.Error()
		return res
	}
	if sig == nil {
		res.Reason = "no Signature nor Signature-Input"
		return res
	}
	keys, err := v.directory(r.Context(), sig.dirURL)
	if err != nil {
		res.Verdict, res.Reason = Unknown, fmt.Sprintf("key directory %s: %v", sig.dirURL, err)
		return res
	}
	now := v.now()
	k, ok := keys[res.KeyID]
	if !ok {
		res.Verdict, res.Reason = Unknown, fmt.Sprintf("keyid %s is no key of %s", clip(res.KeyID), sig.dirURL)
		return res
	}
	if !k.inForce(now, v.skew) {
		res.Verdict, res.Reason = Unknown, fmt.Sprintf("key %s of %s is not in force", res.KeyID, sig.dirURL)
		return res
	}
	if !ed25519.Verify(k.pub, []byte(sig.base), sig.sig) {
		res.Verdict, res.Reason = Invalid, "the signature does not verify (signed for another request or another authority?)"
		return res
	}
	if !v.nonces.add(nonceKey(sig.dirURL, res.KeyID, res.Nonce), res.Expires.Add(v.skew), now, maxNonces) {
		res.Verdict, res.Reason = Invalid, "nonce replayed"
		return res
	}
	res.Verdict = Verified
	return res
}

// A verdictError is a reason for a verdict other than Invalid.
type verdictError struct {
	verdict Verdict
	msg     string
}

func (e verdictError) Error() string { return e.msg }

// A signature is what read found: the base to verify, the signature
// bytes, and the key directory to look the key up in.
type signature struct {
	base   string
	sig    []byte
	dirURL string
}

// read parses r's signature fields into res and checks everything that
// needs no key. It returns nil and no error for an unsigned request; an
// error is the verdict's reason (a verdictError for other than Invalid).
func (v *Verifier) read(r *http.Request, res *Result) (*signature, error) {
	inputs, sigs := r.Header.Values("Signature-Input"), r.Header.Values("Signature")
	if len(inputs) == 0 && len(sigs) == 0 {
		return nil, nil
	}
	agents := r.Header.Values("Signature-Agent")
	if fieldsLen(inputs)+fieldsLen(sigs)+fieldsLen(agents) > maxSignatureFields {
		return nil, fmt.Errorf("signature fields over %d bytes", maxSignatureFields)
	}
	if len(inputs) == 0 || len(sigs) == 0 {
		return nil, errors.New("fields Signature and Signature-Input must come together")
	}
	if r.URL == nil {
		return nil, errors.New("a request without a URL")
	}
	in, err := httpsfv.UnmarshalDictionary(inputs)
	if err != nil {
		return nil, fmt.Errorf("field Signature-Input: %w", err)
	}
	var il httpsfv.InnerList
	for _, name := range in.Names() {
		m, _ := in.Get(name)
		l, ok := m.(httpsfv.InnerList)
		if !ok {
			return nil, fmt.Errorf("field Signature-Input: member %s is not an inner list", clip(name))
		}
		if t, _ := paramOf(l.Params, "tag").(string); t == webBotAuthTag {
			res.Label, il = name, l
			break
		}
	}
	if res.Label == "" {
		return nil, errors.New(`no signature tagged "web-bot-auth"`)
	}
	sd, err := httpsfv.UnmarshalDictionary(sigs)
	if err != nil {
		return nil, fmt.Errorf("field Signature: %w", err)
	}
	sm, _ := sd.Get(res.Label)
	it, _ := sm.(httpsfv.Item)
	sigBytes, _ := it.Value.([]byte)
	if len(sigBytes) != ed25519.SignatureSize {
		return nil, fmt.Errorf("field Signature: no %d-byte signature %s", ed25519.SignatureSize, res.Label)
	}
	if err := v.readParams(il.Params, res); err != nil {
		return nil, err
	}
	base, agentCovered, err := requestBase(r, il, res)
	if err != nil {
		return nil, err
	}
	if len(agents) > 0 && !agentCovered {
		return nil, errors.New("field Signature-Agent present but not covered")
	}
	if len(agents) == 0 {
		return nil, verdictError{Unknown, "no Signature-Agent: no key directory to find the key in"}
	}
	dir, err := directoryURL(res.Agent)
	if err != nil {
		return nil, err
	}
	return &signature{base: base, sig: sigBytes, dirURL: dir}, nil
}

// readParams reads a request signature's parameters into res and checks
// them against the clock.
func (v *Verifier) readParams(p *httpsfv.Params, res *Result) error {
	if p == nil {
		return errors.New("no signature parameters")
	}
	var created, expires int64
	var haveCreated, haveExpires bool
	for _, name := range p.Names() {
		val, _ := p.Get(name)
		var ok bool
		switch name {
		case "created":
			created, ok = val.(int64)
			haveCreated = ok
		case "expires":
			expires, ok = val.(int64)
			haveExpires = ok
		case "keyid":
			res.KeyID, ok = val.(string)
		case "nonce":
			res.Nonce, ok = val.(string)
		case "alg":
			var alg string
			alg, ok = val.(string)
			if ok && alg != "ed25519" {
				return fmt.Errorf("alg %s: only ed25519 is accepted", clip(alg))
			}
		default:
			ok = true // tag, read already; others are covered by the signature
		}
		if !ok {
			return fmt.Errorf("signature parameter %s of the wrong type", name)
		}
	}
	switch {
	case !haveCreated || !haveExpires:
		return errors.New("created and expires are required")
	case res.KeyID == "":
		return errors.New("no keyid")
	case res.Nonce == "":
		return errors.New("no nonce: a replay could not be told apart")
	}
	res.Created, res.Expires = time.Unix(created, 0), time.Unix(expires, 0)
	now := v.now()
	skew := int64(v.skew / time.Second)
	switch {
	case expires <= created:
		return fmt.Errorf("expires %d is not after created %d", expires, created)
	case expires-created > int64(v.window/time.Second):
		return fmt.Errorf("lifetime %ds is over the %v accepted", expires-created, v.window)
	case created > now.Unix()+skew:
		return fmt.Errorf("created %d is in the future (now %d)", created, now.Unix())
	case expires < now.Unix()-skew:
		return verdictError{Expired, fmt.Sprintf("expired at %d (now %d)", expires, now.Unix())}
	}
	return nil
}

// requestBase rebuilds the signature base of il over r, recording the
// identifiers and the Signature-Agent URL in res, and reports whether
// Signature-Agent is covered.
func requestBase(r *http.Request, il httpsfv.InnerList, res *Result) (string, bool, error) {
	if len(il.Items) == 0 {
		return "", false, errors.New("the signature covers nothing")
	}
	if len(il.Items) > maxCovered {
		return "", false, fmt.Errorf("over %d components", maxCovered)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	u := *r.URL
	u.Scheme, u.Host = scheme, r.Host
	req := *r
	req.URL = &u
	var b strings.Builder
	b.Grow(512)
	res.Components = make([]string, 0, len(il.Items))
	authority, agentCovered := false, false
	for _, it := range il.Items {
		name, ok := it.Value.(string)
		if !ok || name == "" {
			return "", false, errors.New("a component name that is not a string")
		}
		id, err := httpsfv.Marshal(it)
		if err != nil {
			return "", false, fmt.Errorf("component %s: %w", clip(name), err)
		}
		for _, seen := range res.Components {
			if seen == id {
				return "", false, fmt.Errorf("component %s covered twice", clip(id))
			}
		}
		res.Components = append(res.Components, id)
		var value string
		switch {
		case name == "signature-agent":
			value, err = agentValue(r, it.Params, res)
			agentCovered = err == nil
		case it.Params != nil && len(it.Params.Names()) > 0:
			err = fmt.Errorf("component %s: parameters are not supported", clip(id))
		case name == "@query-param" || name == "@status" || name == "@signature-params":
			err = fmt.Errorf("component %s is not supported", name)
		default:
			value, err = requestValue(&req, component{name: name})
			authority = authority || name == "@authority"
		}
		if err != nil {
			return "", false, err
		}
		if !baseValue(value) {
			return "", false, fmt.Errorf("component %s: a value a signature base cannot hold", clip(id))
		}
		b.WriteString(id)
		b.WriteString(": ")
		b.WriteString(value)
		b.WriteByte('\n')
	}
	if !authority {
		return "", false, errors.New(`"@authority" not covered`)
	}
	p, err := httpsfv.Marshal(il)
	if err != nil {
		return "", false, fmt.Errorf("signature parameters: %w", err)
	}
	b.WriteString(`"@signature-params": `)
	b.WriteString(p)
	return b.String(), agentCovered, nil
}

// agentValue is the value of the "signature-agent" component with params
// (none, or key) in r, and records the agent URL in res. The bare String
// field is covered bare; the Dictionary form either bare (the whole field)
// or by the member key, and names the agent of that member (bare: the
// member keyed by the label, or the only one).
func agentValue(r *http.Request, params *httpsfv.Params, res *Result) (string, error) {
	var key string
	if params != nil {
		for _, n := range params.Names() {
			k, _ := params.Get(n)
			s, ok := k.(string)
			if n != "key" || !ok {
				return "", fmt.Errorf(`component "signature-agent": parameter %s is not supported`, clip(n))
			}
			key = s
		}
	}
	fields := r.Header.Values("Signature-Agent")
	if len(fields) == 0 {
		return "", errors.New("field Signature-Agent covered but absent")
	}
	whole, err := requestValue(r, component{name: "signature-agent"})
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(whole, `"`) {
		if key != "" {
			return "", errors.New(`field Signature-Agent is a String, covered as a Dictionary member`)
		}
		it, err := httpsfv.UnmarshalItem(fields)
		if err != nil {
			return "", fmt.Errorf("field Signature-Agent: %w", err)
		}
		s, ok := it.Value.(string)
		if !ok {
			return "", errors.New("field Signature-Agent is not a String")
		}
		res.Agent = s
		return whole, nil
	}
	d, err := httpsfv.UnmarshalDictionary(fields)
	if err != nil {
		return "", fmt.Errorf("field Signature-Agent: %w", err)
	}
	member := key
	if member == "" {
		member = res.Label
		if names := d.Names(); len(names) == 1 {
			member = names[0]
		}
	}
	m, ok := d.Get(member)
	it, isItem := m.(httpsfv.Item)
	s, isString := it.Value.(string)
	if !ok || !isItem || !isString {
		return "", fmt.Errorf("field Signature-Agent has no String member %s", clip(member))
	}
	if it.Params != nil && len(it.Params.Names()) > 0 {
		return "", fmt.Errorf("field Signature-Agent member %s has parameters", clip(member))
	}
	res.Agent = s
	if key == "" {
		return whole, nil
	}
	return httpsfv.Marshal(it)
}

// directoryURL is the key directory URL of a Signature-Agent: the URL as
// given (without query or fragment), or [DirectoryPath] under it when it
// names an origin alone.
func directoryURL(agent string) (string, error) {
	u, err := url.Parse(agent)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return "", fmt.Errorf("field Signature-Agent %s is not an absolute https URL", clip(agent))
	}
	path := u.EscapedPath()
	if path == "" || path == "/" {
		path = DirectoryPath
	}
	return "https://" + strings.ToLower(u.Host) + path, nil
}

// paramOf is parameter name of p, nil when absent.
func paramOf(p *httpsfv.Params, name string) any {
	if p == nil {
		return nil
	}
	v, _ := p.Get(name)
	return v
}

func fieldsLen(vs []string) int {
	n := 0
	for _, v := range vs {
		n += len(v)
	}
	return n
}

// clip quotes s, cut to 64 bytes, for a reason or an error.
func clip(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%q...", s[:64])
	}
	return fmt.Sprintf("%q", s)
}
