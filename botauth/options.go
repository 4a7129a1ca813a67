package botauth

import (
	"errors"
	"fmt"
	"time"
)

// MaxWindow is the longest lifetime a signature may be given: the Web Bot
// Auth draft recommends that expires be at most 24 hours after created.
const MaxWindow = 24 * time.Hour

// defaultWindow is a request signature's lifetime unless [WithWindow] says
// otherwise: about a minute, as verifiers advise.
const defaultWindow = time.Minute

// defaultSkew is how far before the signing instant a request
// signature's created is set unless [WithSkew] says otherwise.
const defaultSkew = 5 * time.Second

// maxSkew bounds [WithSkew]: a clock further off than this needs setting,
// not a margin.
const maxSkew = 5 * time.Minute

// defaultMaxAge is how long the directory's response may be cached unless
// [WithMaxAge] says otherwise.
const defaultMaxAge = 24 * time.Hour

// ErrOption is wrapped by the error of an option value out of range or an
// option given to a constructor it cannot act on.
var ErrOption = errors.New("botauth: invalid option")

// which constructors an option acts on
const (
	forSigner = 1 << iota
	forDirectory
	forTransport
)

// An Option configures [NewSigner], [NewDirectory] or [NewTransport]. Each
// option says which it acts on; given to another, it is refused with an
// error wrapping [ErrOption].
type Option struct {
	name string
	on   uint8
	set  func(*config) error
}

type config struct {
	now        func() time.Time
	window     time.Duration
	maxAge     time.Duration
	skew       time.Duration
	cover      []string
	form       Form
	testKey    bool
	challenged bool
	newestOnly bool
}

func newConfig(who string, kind uint8, opts []Option) (config, error) {
	c := config{now: time.Now, window: defaultWindow, skew: defaultSkew, maxAge: defaultMaxAge}
	var errs []error
	for _, o := range opts {
		switch {
		case o.set == nil:
			errs = append(errs, fmt.Errorf("%w: %s: the zero Option", ErrOption, who))
		case o.on&kind == 0:
			errs = append(errs, fmt.Errorf("%w: %s: %s cannot act here", ErrOption, who, o.name))
		default:
			if err := o.set(&c); err != nil {
				errs = append(errs, fmt.Errorf("%w: %s: %s: %w", ErrOption, who, o.name, err))
			}
		}
	}
	return c, errors.Join(errs...)
}

// newKeyConfig is newConfig for a holder of keys, which it checks next
// (see checkKeys).
func newKeyConfig(who string, kind uint8, opts []Option, keys []Key) (config, []Key, error) {
	c, err := newConfig(who, kind, opts)
	if err == nil {
		keys, err = checkKeys(keys, c.testKey)
	}
	return c, keys, err
}

// WithClock sets the clock a [Signer] reads when its [Transport] sends a
// request, and a [Directory] when it answers (default time.Now).
func WithClock(now func() time.Time) Option {
	return Option{"WithClock", forSigner | forDirectory, func(c *config) error {
		if now == nil {
			return errors.New("nil clock")
		}
		c.now = now
		return nil
	}}
}

// WithWindow sets a request signature's lifetime: expires is created plus
// d. d must be above zero, at most [MaxWindow] and longer than the skew
// ([WithSkew]); the default is a minute.
func WithWindow(d time.Duration) Option {
	return Option{fmt.Sprintf("WithWindow(%v)", d), forSigner, func(c *config) error {
		if d <= 0 || d > MaxWindow {
			return fmt.Errorf("must be above 0 and at most %v", MaxWindow)
		}
		c.window = d
		return nil
	}}
}

// WithSkew sets how far before the signing instant a request signature's
// created is set, so that a verifier whose clock is behind the crawler's
// by less than d does not see a signature made in the future (Cloudflare's
// reference verifier refuses any created later than its own clock). The
// lifetime stays the window ([WithWindow]): expires is created plus the
// window, so a signature lasts the window minus d after it is sent. d must
// be at least zero, at most 5 minutes and shorter than the window; the
// default is 5 seconds.
func WithSkew(d time.Duration) Option {
	return Option{fmt.Sprintf("WithSkew(%v)", d), forSigner, func(c *config) error {
		if d < 0 || d > maxSkew {
			return fmt.Errorf("must be at least 0 and at most %v", maxSkew)
		}
		c.skew = d
		return nil
	}}
}

// Cover makes a [Signer] cover more of each request than its authority and
// its Signature-Agent: any of "@method", "@path" and "@query", which bind
// the signature to that method, path or query. A signature that covers the
// authority alone is valid for any request there until it expires.
//
// In the [StringForm], "@query" is covered only when the URL has a query:
// Cloudflare's packages build the value of an absent query as empty where
// RFC 9421 writes "?", and so refuse a signature that covers it. The cost:
// the signature of a URL without a query also verifies for the same
// method, authority and path with any query, until it expires. The
// [DictionaryForm] covers "@query" always ("?" for none).
func Cover(components ...string) Option {
	return Option{fmt.Sprintf("Cover(%q)", components), forSigner, func(c *config) error {
		for _, name := range components {
			switch name {
			case "@method", "@path", "@query":
			default:
				return fmt.Errorf("%q is not one of \"@method\", \"@path\", \"@query\"", name)
			}
			for _, have := range c.cover {
				if have == name {
					return fmt.Errorf("%q given twice", name)
				}
			}
			c.cover = append(c.cover, name)
		}
		return nil
	}}
}

// A Form is how a [Signer] sends its Signature-Agent and how its signature
// covers it. Deployed verifiers accept one form or the other (see
// docs/identity.md); a challenge that asks for the other form is answered
// in that form.
type Form uint8

const (
	// StringForm, the default, is the form Cloudflare's production
	// verifier and its web-bot-auth package accept
	// (draft-meunier-http-message-signatures-directory-03): the field is an
	// sf-string, Signature-Agent: "https://...", covered as
	// "signature-agent", no covered component carrying a parameter. In this
	// form "@query" is covered only for a URL with a query (see [Cover]).
	StringForm Form = iota
	// DictionaryForm is the working group's form
	// (draft-ietf-webbotauth-httpsig-protocol-01): the field is a
	// Dictionary, Signature-Agent: sig1="https://...", whose member is
	// covered as "signature-agent";key="sig1". RFC 9421 verifiers and
	// http-message-sig 0.3.0 accept it; Cloudflare's production verifier
	// and web-bot-auth 0.1.3 refuse it.
	DictionaryForm
)

// String is the form's name: "string" or "dictionary".
func (f Form) String() string {
	switch f {
	case StringForm:
		return "string"
	case DictionaryForm:
		return "dictionary"
	}
	return fmt.Sprintf("Form(%d)", uint8(f))
}

// WithForm sets the form of a [Signer]'s Signature-Agent (default
// [StringForm]).
func WithForm(f Form) Option {
	return Option{"WithForm(" + f.String() + ")", forSigner, func(c *config) error {
		if f != StringForm && f != DictionaryForm {
			return errors.New("not a form")
		}
		c.form = f
		return nil
	}}
}

// AllowTestKey lets a [Signer] or [Directory] use RFC 9421's Ed25519 test
// key. The key is published, so verifiers reject it; it is for tests and
// for checking against the specifications' test vectors, never for a
// crawler.
func AllowTestKey() Option {
	return Option{"AllowTestKey", forSigner | forDirectory, func(c *config) error {
		c.testKey = true
		return nil
	}}
}

// WithMaxAge sets how long a [Directory]'s response may be cached
// (Cache-Control max-age) and so how long its response signatures last; d
// must be at least a second and at most [MaxWindow]. The default is
// a day. Publish a new key at least this long before it starts
// to sign, so that every verifier's cached copy holds it by then.
func WithMaxAge(d time.Duration) Option {
	return Option{fmt.Sprintf("WithMaxAge(%v)", d), forDirectory, func(c *config) error {
		if d < time.Second || d > MaxWindow {
			return fmt.Errorf("must be at least 1s and at most %v", MaxWindow)
		}
		c.maxAge = d
		return nil
	}}
}

// OneSignature makes a [Directory] sign its response with one key only:
// the newest in force, the one its signers sign with (the first listed
// when none is in force yet), while it still lists every key not yet
// expired. By default it signs with each listed key, as the Web Bot Auth
// draft recommends; Cloudflare's web-bot-auth 0.1.3 (http-message-sig
// 0.2.0) refuses a response carrying two signatures, so a directory
// checked by it serves one while two keys are published for a rotation.
func OneSignature() Option {
	return Option{"OneSignature", forDirectory, func(c *config) error {
		c.newestOnly = true
		return nil
	}}
}

// OnlyWhenChallenged makes a [Transport] send requests unsigned and sign
// only its answers to challenges (see [Transport.Answering]). Without
// Answering such a transport signs nothing.
func OnlyWhenChallenged() Option {
	return Option{"OnlyWhenChallenged", forTransport, func(c *config) error {
		c.challenged = true
		return nil
	}}
}
