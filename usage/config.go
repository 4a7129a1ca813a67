package usage

import (
	"errors"
	"fmt"
	"slices"

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
}

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
	switch {
	case len(purposes) == 0 && use == dialect.UseUnknown && len(errs) == 0:
		errs = append(errs, errors.New("no purpose and no use level"))
	case len(c.Purposes) == 0 && c.Strict:
		errs = append(errs, errors.New("strict without a purpose"))
	}
	return purposes, use, errors.Join(errs...)
}
