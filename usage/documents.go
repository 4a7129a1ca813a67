package usage

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/politecrawl/robots/internal/ascii"
	"github.com/politecrawl/robots/policy"
)

// The documents a site names, as the resolver fetches them.
var (
	tdmrepKind = &policy.DocumentKind{Name: "tdmrep.json", Accept: "application/json", MaxBytes: MaxTDMRepSize,
		Parse: func(b []byte) (any, time.Duration, error) {
			if b == nil {
				return nil, 0, nil // no file: kept as robots.txt is
			}
			f, err := ParseTDMRep(bytes.NewReader(b))
			return f, 0, err
		}}
	rslKind = &policy.DocumentKind{Name: "license", Accept: RSLMediaType + ", application/xml;q=0.9, */*;q=0.5", MaxBytes: MaxRSLSize,
		Parse: func(b []byte) (any, time.Duration, error) {
			if b == nil {
				return nil, 0, errNoLicense // asked again soon
			}
			d, err := ParseRSL(bytes.NewReader(b))
			if nr := (notRSLError{}); errors.As(err, &nr) {
				return nr, 0, nil // kept as an answer: it decides nothing
			}
			if err != nil {
				return nil, 0, err
			}
			return d, d.MaxAge, nil
		}}
)

var errNoLicense = errors.New("no licence")

// tdmTerms returns the terms the tdmrep.json of authority states for u;
// an origin without a readable file states none.
func tdmTerms(ctx context.Context, r *policy.Resolver, authority string, u *url.URL) (TDMTerms, error) {
	d, err := r.Document(ctx, u, authority+"/.well-known/tdmrep.json", tdmrepKind)
	if err != nil {
		return TDMTerms{}, err
	}
	if f, ok := d.Value.(*TDMRep); ok {
		t := f.Match(u.RequestURI())
		if fu, err := url.Parse(d.FinalURL); err == nil && d.FinalURL != d.URL {
			if a, err := policy.Authority(fu); err != nil || a != authority {
				t.ReservationFrom.File = d.FinalURL
				if t.PolicyFrom.Carrier == TDMRepFile {
					t.PolicyFrom.File = d.FinalURL
				}
			}
		}
		return t, nil
	}
	return TDMTerms{}, nil
}

// maxQuoted bounds a value of a site quoted in a signal (a header, a URL):
// a longer one is cut, with "…".
const maxQuoted = 256

// clip returns s cut to maxQuoted bytes.
func clip(s string) string { return ascii.Clip(s, maxQuoted) }
