// TDM Reservation Protocol: the package reads the TDM Reservation Protocol
// (W3C Community Group Final Report): whether a rightsholder reserves the
// text-and-data-mining rights on a resource (the opt-out of Article 4 of
// Directive 2019/790), and the URL of the policy under which it offers
// them. Its carriers, the origin's /.well-known/tdmrep.json ([ParseTDMRep]),
// the response's header fields ([tdmHeader]) and its head's meta elements
// ([tdmMeta]), are read in that order, each later one replacing only the
// properties it carries ([combineTDM]). Decisions where the specification
// is silent or loose:
//
//   - The file: a body that is not a JSON array or is larger than
//     [MaxTDMRepSize] means the origin does not implement the protocol
//     (the specification's reading of a file it cannot get). An element
//     that is not an object, or lacks a string location or a
//     tdm-reservation member (both mandatory), is dropped; the others keep
//     their index in the array as evidence.
//   - Values: tdm-reservation is 1 or 0, as a JSON number written so or as
//     the string "1" / "0" (the text the header and meta carriers use); any
//     other value (2, true, "yes") is a protocol error, which makes the
//     property unset. A rule with such a value still matches: the first
//     matching rule decides, and it leaves the reservation unset.
//     tdm-policy is kept only as a string; a non-string is ignored.
//   - Headers and meta: a value other than 0/1 is not carried at all, so
//     it does not replace what an earlier carrier stated ("the absence ...
//     MUST not reset current values"; a protocol error is read as absence,
//     so that garbage can neither lift nor impose a reservation).
//   - The file covers its origin only: the caller fetches it per origin
//     (scheme, host, port), not per registrable domain.

package usage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/politecrawl/robots/internal/pathpat"
)

// The limits on a tdmrep.json file. Real files hold a handful of rules.
const (
	MaxTDMRepSize = 512 << 10 // bytes
	MaxTDMRules   = 4096      // array elements read; the rest are counted, not read
)

// ErrInvalidTDMRep is wrapped by every error of [ParseTDMRep]: the file is broken,
// so the origin does not implement the protocol.
var ErrInvalidTDMRep = errors.New("tdmrep: invalid tdmrep.json")

// Reservation is the value of tdm-reservation.
type Reservation int8

// The values of tdm-reservation.
const (
	Unset       Reservation = iota // not stated (or not 0 nor 1)
	NotReserved                    // 0: TDM rights not reserved
	Reserved                       // 1: TDM rights reserved
)

// String returns "unset", "0" or "1".
func (r Reservation) String() string {
	switch r {
	case NotReserved:
		return "0"
	case Reserved:
		return "1"
	}
	return "unset"
}

// TDMRule is one valid rule of a tdmrep.json file.
type TDMRule struct {
	Index       int    // its index in the file's array
	Location    string // its path pattern, as written
	Reservation Reservation
	Policy      string // tdm-policy, "" if absent

	pattern pathpat.Pattern
}

// TDMRep is a parsed tdmrep.json file.
type TDMRep struct {
	Rules   []TDMRule // the valid rules, in array order
	Dropped int       // the elements dropped as invalid
	Ignored int       // the elements past the first MaxTDMRules, not read
}

// ParseTDMRep reads a tdmrep.json body from r, up to [MaxTDMRepSize] bytes.
// Errors wrap [ErrInvalidTDMRep] (and r's own errors are returned as they are).
func ParseTDMRep(r io.Reader) (*TDMRep, error) {
	body, err := readAtMost(r, MaxTDMRepSize, "tdmrep: reading tdmrep.json", ErrInvalidTDMRep)
	if err != nil {
		return nil, err
	}
	body = bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF")) // a byte order mark
	if !bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("[")) {
		return nil, fmt.Errorf("%w: not a JSON array", ErrInvalidTDMRep)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(body, &elems); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidTDMRep, err)
	}
	f := &TDMRep{}
	if len(elems) > MaxTDMRules {
		f.Ignored, elems = len(elems)-MaxTDMRules, elems[:MaxTDMRules]
	}
	for i, e := range elems {
		rule, ok := parseRule(e)
		if !ok {
			f.Dropped++
			continue
		}
		rule.Index = i
		f.Rules = append(f.Rules, rule)
	}
	return f, nil
}

// parseRule reads one array element.
func parseRule(e json.RawMessage) (TDMRule, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(e, &m) != nil || m == nil {
		return TDMRule{}, false
	}
	var r TDMRule
	res, ok := m["tdm-reservation"]
	if json.Unmarshal(m["location"], &r.Location) != nil || r.Location == "" || !ok {
		return TDMRule{}, false
	}
	var s string
	if json.Unmarshal(res, &s) != nil {
		s = string(res) // a number, as written
	}
	r.Reservation = reservation(s)
	if json.Unmarshal(m["tdm-policy"], &s) == nil {
		r.Policy = s
	}
	r.pattern = pathpat.Compile(r.Location)
	return r, true
}

// reservation reads a tdm-reservation value.
func reservation(s string) Reservation {
	switch strings.TrimSpace(s) {
	case "1":
		return Reserved
	case "0":
		return NotReserved
	}
	return Unset
}

// Match returns the terms the file states for the URL path path (with its
// query, if any): those of the first rule, in array order, whose location
// matches it; none if no rule matches. A nil TDMRep states none.
func (f *TDMRep) Match(path string) TDMTerms {
	if f == nil {
		return TDMTerms{}
	}
	p := pathpat.Path(path)
	for i := range f.Rules {
		r := &f.Rules[i]
		if !r.pattern.Match(p) {
			continue
		}
		ev := TDMEvidence{Carrier: TDMRepFile, Rule: r.Index, Location: r.Location, Ignored: f.Ignored}
		t := TDMTerms{Reservation: r.Reservation, Policy: r.Policy, ReservationFrom: ev}
		if t.Policy != "" {
			t.PolicyFrom = ev
		}
		return t
	}
	return TDMTerms{}
}

// MarshalText returns "unset", "0" or "1".
func (r Reservation) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// readAtMost reads r whole, up to limit bytes: r's errors are wrapped after
// reading, a longer body is an error wrapping invalid.
func readAtMost(r io.Reader, limit int, reading string, invalid error) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", reading, err)
	}
	if len(body) > limit {
		return nil, fmt.Errorf("%w: larger than %d bytes", invalid, limit)
	}
	return body, nil
}
