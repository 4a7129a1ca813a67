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
	cover      []string
	legacy     bool
	testKey    bool
	challenged bool
}

func newConfig(who string, kind uint8, opts []Option) (config, error) {
	c := config{now: time.Now, window: defaultWindow, maxAge: defaultMaxAge}
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
// d. d must be above zero and at most [MaxWindow]; the default is
// a minute.
func WithWindow(d time.Duration) Option {
	return Option{fmt.Sprintf("WithWindow(%v)", d), forSigner, func(c *config) error {
		if d <= 0 || d > MaxWindow {
			return fmt.Errorf("must be above 0 and at most %v", MaxWindow)
		}
		c.window = d
		return nil
	}}
}

// Cover makes a [Signer] cover more of each request than its authority and
// its Signature-Agent: any of "@method", "@path" and "@query", which bind
// the signature to that method, path or query. A signature that covers the
// authority alone is valid for any request there until it expires.
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

// LegacyAgentString makes a [Signer] send Signature-Agent as a bare String
// (Signature-Agent: "https://..."), the form of earlier drafts that some
// verifiers still read, covered as "signature-agent" without a key. By
// default it sends the Dictionary form the draft requires
// (Signature-Agent: sig1="https://..."), covered as
// "signature-agent";key="sig1".
func LegacyAgentString() Option {
	return Option{"LegacyAgentString", forSigner, func(c *config) error {
		c.legacy = true
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

// OnlyWhenChallenged makes a [Transport] send requests unsigned and sign
// only its answers to challenges (see [Transport.Answering]). Without
// Answering such a transport signs nothing.
func OnlyWhenChallenged() Option {
	return Option{"OnlyWhenChallenged", forTransport, func(c *config) error {
		c.challenged = true
		return nil
	}}
}
