package usage

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/politecrawl/robots/dialect"
)

// Config is what a crawler declares about the use of the content it
// fetches, as the robots plugin's WithUsage takes it:
//
//	robots.WithUsage(usage.Config{Purposes: []string{"train-ai"}})
type Config struct {
	// Purposes are the usage categories the content is used for:
	// "train-ai" (RSL's "ai-train" is read as it), "search" (of
	// draft-ietf-aipref-vocab) and "ai-input" (Cloudflare's
	// Content-Signal).
	Purposes []string
	// Use is how far the content is used, Content-Signal's use= key:
	// "immediate", "reference" or "full"; "" declares no level.
	Use string
	// Strict makes a purpose nothing states a preference for refused, as
	// n is; without it an unknown preference allows.
	Strict bool
	// User and Geo say who makes the use and where, as RSL licences'
	// user and geo terms ask (see [Who]); they need a purpose. Without
	// them, a licence that lists users (or regions) licenses nothing, and
	// the refusal says "user not declared".
	User, Geo string
	// Reach, for the robots plugin, fetches a URL that the usage signals
	// known before the fetch refuse (and robots.txt allows), so that its
	// links are followed: the response is marked refused (UsageOf's
	// Refused, the onRefused function) and its content must not be used.
	// A reservation restricts use, not access.
	Reach bool
	// Log, when not nil, gets one record per URL the crawl decided (see
	// [LogRecord]): each URL answered (fetched, whatever the status, or
	// refused), stopped before the fetch, or sent without answer (failed);
	// a request handed back as Deferred has its record once it is decided.
	// The caller opens it ([OpenLog]) and closes it once the crawl is over.
	Log *Log
}

// Who is who makes the use of content and where, matched against the user
// and geo terms of RSL licences: a licence that permits or prohibits
// users (regions) licenses a use only when its user (region) is declared
// and meets those terms.
type Who struct {
	// User is "commercial", "non-commercial", "education", "government"
	// or "personal"; "" undeclared.
	User string
	// Geo is the ISO 3166-1 alpha-2 code of the country where the use is
	// made ("FR"); "" undeclared.
	Geo string
}

// userTypes are RSL's user tokens.
var userTypes = []string{"commercial", "non-commercial", "education", "government", "personal"}

// Who returns the user and region c declares, normalised (user in lower
// case, region in upper case).
func (c Config) Who() Who { return Who{User: strings.ToLower(c.User), Geo: strings.ToUpper(c.Geo)} }

// Parse returns the declared purposes (each once, in order) and use
// level, or an error naming each value that is not one.
func (c Config) Parse() ([]dialect.Category, dialect.UseLevel, error) {
	var purposes []dialect.Category
	var errs []error
	for _, s := range c.Purposes {
		if s == "ai-train" {
			s = "train-ai"
		}
		cat, ok := dialect.ParseCategory(s)
		if !ok {
			errs = append(errs, fmt.Errorf("unknown purpose %q (known: train-ai, search, ai-input)", s))
		} else if !slices.Contains(purposes, cat) {
			purposes = append(purposes, cat)
		}
	}
	use := dialect.UseUnknown
	if c.Use != "" {
		l, ok := dialect.ParseUseLevel(c.Use)
		if !ok {
			errs = append(errs, fmt.Errorf("unknown use level %q (known: immediate, reference, full)", c.Use))
		}
		use = l
	}
	who := c.Who()
	if who.User != "" && !slices.Contains(userTypes, who.User) {
		errs = append(errs, fmt.Errorf("unknown user %q (known: %s)", c.User, strings.Join(userTypes, ", ")))
	}
	if who.Geo != "" && !isCountryCode(who.Geo) {
		errs = append(errs, fmt.Errorf("geo %q is not an ISO 3166-1 alpha-2 code", c.Geo))
	}
	switch {
	case len(c.Purposes) == 0 && (c.User != "" || c.Geo != ""):
		errs = append(errs, errors.New("user or geo without a purpose"))
	case len(purposes) == 0 && use == dialect.UseUnknown && len(errs) == 0:
		errs = append(errs, errors.New("no purpose and no use level"))
	case len(c.Purposes) == 0 && c.Strict:
		errs = append(errs, errors.New("strict without a purpose"))
	}
	return purposes, use, errors.Join(errs...)
}

// isCountryCode reports whether s is two ASCII capital letters other than
// EU (a region of licences, not where a use is made).
func isCountryCode(s string) bool {
	return len(s) == 2 && 'A' <= s[0] && s[0] <= 'Z' && 'A' <= s[1] && s[1] <= 'Z' && s != "EU"
}
