package botauth

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/dunglas/httpsfv"
)

// Bounds on what a challenge may ask for: an Accept-Signature field is a
// line or two; beyond these it is not read.
const (
	maxChallengeBytes = 4 << 10
	maxComponents     = 32
)

// challengeStatus reports whether an answer with this status and an
// Accept-Signature field is a challenge the transport answers.
func challengeStatus(code int) bool {
	return code == http.StatusUnauthorized || code == http.StatusForbidden || code == http.StatusTooManyRequests
}

// readChallenge reads the Accept-Signature fields of an answer to req and
// returns the spec of the first signature they request that s can make
// honestly at now (RFC 9421 §5.1, Web Bot Auth §5.3): its label, exactly
// its components, and its parameters, a bare one filled in when signing and
// a valued one used as given. Added when not asked for: created, expires
// and keyid, so that the answer never outlives the window nor hides the
// key. Declined (the error says why): a signature that covers neither
// "@authority" nor "@target-uri" (it would be valid on any site), a field
// the request lacks, a component parameter other than the key of
// "signature-agent", an unknown signature parameter, a keyid of no key in
// force, an alg other than ed25519, a created more than the window away
// from now, an expires already past or more than MaxWindow after created.
func (s *Signer) readChallenge(fields []string, req *http.Request, now time.Time) (*spec, error) {
	n := 0
	for _, f := range fields {
		n += len(f)
	}
	if n > maxChallengeBytes {
		return nil, fmt.Errorf("Accept-Signature of %d bytes, over %d", n, maxChallengeBytes)
	}
	d, err := httpsfv.UnmarshalDictionary(fields)
	if err != nil {
		return nil, fmt.Errorf("Accept-Signature: %w", err)
	}
	var errs []error
	for _, lbl := range d.Names() {
		m, _ := d.Get(lbl)
		sp, err := s.challengeSpec(lbl, m, req, now)
		if err == nil {
			return sp, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", quoted(lbl), err))
	}
	if len(errs) == 0 {
		return nil, errors.New("Accept-Signature requests no signature")
	}
	return nil, errors.Join(errs...)
}

// challengeSpec is the spec of the signature requested as label=m, or why
// it cannot be made.
func (s *Signer) challengeSpec(label string, m httpsfv.Member, req *http.Request, now time.Time) (*spec, error) {
	il, ok := m.(httpsfv.InnerList)
	if !ok {
		return nil, errors.New("not an inner list of components")
	}
	if len(il.Items) > maxComponents {
		return nil, fmt.Errorf("%d components, over %d", len(il.Items), maxComponents)
	}
	sp := &spec{label: label}
	bound := false
	for _, it := range il.Items {
		c, err := s.challengeComponent(it, req)
		if err != nil {
			return nil, err
		}
		for _, have := range sp.comps {
			if have == c {
				return nil, fmt.Errorf("component %s asked twice", quoted(c.name))
			}
		}
		bound = bound || c.name == "@authority" || c.name == "@target-uri"
		sp.comps = append(sp.comps, c)
	}
	if !bound {
		return nil, errors.New(`covers neither "@authority" nor "@target-uri": the signature would be valid on any site`)
	}
	created, expires := now.Unix(), int64(0)
	window := int64(s.window / time.Second)
	has := map[string]bool{}
	for _, name := range il.Params.Names() {
		v, _ := il.Params.Get(name)
		has[name] = true
		if v == true {
			switch name {
			case "created", "expires", "keyid", "alg", "nonce", "tag":
				sp.params = append(sp.params, param{name: name})
				continue
			}
			return nil, fmt.Errorf("parameter %s cannot be signed", quoted(name))
		}
		switch name {
		case "created", "expires":
			t, ok := v.(int64)
			if !ok {
				return nil, fmt.Errorf("parameter %s is not an integer", quoted(name))
			}
			if name == "created" {
				if t < now.Unix()-window || t > now.Unix()+window {
					return nil, fmt.Errorf("created=%d is more than the window (%v) away from now", t, s.window)
				}
				created = t
			} else {
				expires = t
			}
		case "keyid":
			kid, ok := v.(string)
			if !ok {
				return nil, errors.New(`parameter "keyid" is not a string`)
			}
			if _, err := current(s.keys, now, kid); err != nil {
				return nil, err
			}
		case "alg":
			if v != "ed25519" {
				return nil, fmt.Errorf("alg %s: only ed25519 is signed", quoted(v))
			}
		case "nonce", "tag":
			if _, ok := v.(string); !ok {
				return nil, fmt.Errorf("parameter %s is not a string", quoted(name))
			}
		default:
			return nil, fmt.Errorf("parameter %s cannot be signed", quoted(name))
		}
		sp.params = append(sp.params, param{name: name, value: v})
	}
	if expires != 0 && (expires <= now.Unix() || expires > created+int64(MaxWindow/time.Second)) {
		return nil, fmt.Errorf("expires=%d is past or more than %v after created", expires, MaxWindow)
	}
	for _, name := range []string{"created", "expires", "keyid"} {
		if !has[name] {
			sp.params = append(sp.params, param{name: name})
		}
	}
	return sp, nil
}

// challengeComponent is the component it names, if s can sign it for req.
func (s *Signer) challengeComponent(it httpsfv.Item, req *http.Request) (component, error) {
	name, ok := it.Value.(string)
	if !ok {
		return component{}, fmt.Errorf("component %s is not a string", quoted(it.Value))
	}
	c := component{name: name}
	for _, pn := range it.Params.Names() {
		pv, _ := it.Params.Get(pn)
		key, isString := pv.(string)
		if pn != "key" || name != "signature-agent" || !isString {
			return component{}, fmt.Errorf("component %s: parameter %s cannot be signed", quoted(name), quoted(pn))
		}
		if _, err := s.agentField(key); err != nil {
			return component{}, err
		}
		c.key = key
	}
	if name == "signature-agent" {
		return c, nil
	}
	if _, err := requestValue(req, c); err != nil {
		return component{}, err
	}
	return c, nil
}
