package usage

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/politecrawl/robots/internal/pathpat"
)

// scope is the compiled url of a content element.
type scope struct {
	scheme, host string // lower-case; "" for a path pattern
	pattern      pathpat.Pattern
}

// parseScope compiles a url attribute.
func parseScope(s string) (scope, error) {
	if s == "" || s[0] == '/' || s[0] == '*' {
		return scope{pattern: pathpat.Compile(s)}, nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return scope{}, fmt.Errorf("content url %q is neither an absolute URL nor a path pattern", s)
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" || u.ForceQuery {
		path += "?" + u.RawQuery
	}
	return scope{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Host), pattern: pathpat.Compile(path)}, nil
}

// match reports whether the scope covers the target whose normalised path
// is path.
func (s *scope) match(target *url.URL, path string) bool {
	if s.scheme != "" && (!strings.EqualFold(s.scheme, target.Scheme) || !strings.EqualFold(s.host, target.Host)) {
		return false
	}
	return s.pattern.Match(path)
}

// covers maps each purpose onto the usage tokens that cover it: its own
// and its supersets.
var covers = map[string][]string{
	"train-ai": {"ai-train", "ai-all", "all"},
	"ai-input": {"ai-input", "ai-all", "all"},
	"ai-index": {"ai-index", "ai-all", "all"},
	"search":   {"search", "all"},
}

// errUnknownPurpose is returned for a purpose RSL has no usage token for.
var errUnknownPurpose = errors.New("rsl: unknown purpose")

// RSLUse is a use of content that a caller intends.
type RSLUse struct {
	// Purpose is "train-ai", "ai-input", "ai-index" or "search".
	Purpose string
	// User is who makes the use: "commercial", "non-commercial",
	// "education", "government" or "personal"; "" when unknown.
	User string
	// Geo is where the use is made: an ISO 3166-1 alpha-2 code; "" when
	// unknown.
	Geo string
}

// RSLVerdict is the answer of [RSL.Decide].
type RSLVerdict struct {
	Licensed bool
	// RSLContent is the narrowest content element whose url matches the
	// target (with several tied, the first that refuses, else the first);
	// nil when none matches, which leaves the target unlicensed.
	Content *RSLContent
	// RSLLicense is the licence of RSLContent that grants the use, a free
	// one preferred (nil when not licensed). Its Payment and Reporting terms, and RSLContent.Server,
	// are the caller's to meet.
	License *RSLLicense
	// Unmet says, when a licence permits the purpose but not this user or
	// region, which term was not met: "user commercial not permitted
	// (permits education)", "geo not declared (prohibits CN)"; "" when
	// licensed, or when no licence permits the purpose itself.
	Unmet string
}

// Decide returns whether the document licenses use of target, and the
// content element and licence that decided. The error is
// errUnknownPurpose for a purpose outside [RSLUse.Purpose]'s list.
func (d *RSL) Decide(target *url.URL, use RSLUse) (RSLVerdict, error) {
	cover, ok := covers[use.Purpose]
	if !ok {
		return RSLVerdict{}, fmt.Errorf("%w %q", errUnknownPurpose, use.Purpose)
	}
	p := target.EscapedPath()
	if p == "" {
		p = "/"
	}
	if target.RawQuery != "" {
		p += "?" + target.RawQuery
	}
	p = pathpat.Path(p)
	best, v := -1, RSLVerdict{}
	for i := range d.Contents {
		c := &d.Contents[i]
		n := c.scope.pattern.Len()
		if n < best || !c.scope.match(target, p) {
			continue
		}
		l, unmet := c.grant(cover, use)
		switch {
		case n > best:
			best, v = n, RSLVerdict{Licensed: l != nil, Content: c, License: l, Unmet: unmet}
		case v.Licensed && l == nil: // a tie: the most restrictive holds
			v = RSLVerdict{Content: c, Unmet: unmet}
		}
	}
	return v, nil
}

// grant returns the licence of c that grants use, a free one preferred,
// or nil and the user or geo term that the first licence permitting the
// purpose does not meet.
func (c *RSLContent) grant(cover []string, use RSLUse) (*RSLLicense, string) {
	var found *RSLLicense
	var unmet string
	for i := range c.Licenses {
		l := &c.Licenses[i]
		why := l.unmet(cover, use)
		switch {
		case why == "" && (found == nil || !found.free() && l.free()):
			found = l
		case why != "usage" && unmet == "":
			unmet = why
		}
	}
	if found != nil {
		return found, ""
	}
	return nil, unmet
}

// unmet returns the first term of l that use does not meet: "usage" when
// l does not license the purpose, a "user …" or "geo …" phrase when it
// does but not for use's user or region, "" when l grants the use. A
// licence that lists users (or regions), permitted or prohibited, grants
// nothing to a use whose user (region) is not declared.
func (l *RSLLicense) unmet(cover []string, use RSLUse) string {
	usage := func(list []string) bool {
		return slices.ContainsFunc(cover, func(t string) bool { return slices.Contains(list, t) })
	}
	if l.term("usage", "purpose", usage) != "" {
		return "usage"
	}
	user := func(list []string) bool { return slices.Contains(list, strings.ToLower(use.User)) }
	if why := l.term("user", strings.ToLower(use.User), user); why != "" {
		return why
	}
	return l.term("geo", strings.ToUpper(use.Geo), func(list []string) bool { return slices.ContainsFunc(list, inRegion(use.Geo)) })
}

// term returns why l's lists of type typ do not allow the use whose value
// of that type is value ("" undeclared), names reporting whether a list
// names it; "" when they allow it.
func (l *RSLLicense) term(typ, value string, names func([]string) bool) string {
	permits, hasPermits := l.Permits[typ]
	prohibits, hasProhibits := l.Prohibits[typ]
	lists := func() string {
		var out []string
		if hasPermits {
			out = append(out, "permits "+listed(permits))
		}
		if hasProhibits {
			out = append(out, "prohibits "+listed(prohibits))
		}
		return " (" + strings.Join(out, "; ") + ")"
	}
	switch {
	case !hasPermits && !hasProhibits:
		return ""
	case value == "":
		return typ + " not declared" + lists()
	case hasProhibits && names(prohibits):
		return typ + " " + value + " prohibited" + lists()
	case hasPermits && !names(permits):
		return typ + " " + value + " not permitted" + lists()
	}
	return ""
}

// listed quotes a token list in a reason, cut at 120 bytes.
func listed(list []string) string {
	s := strings.Join(list, " ")
	switch {
	case s == "":
		return "nothing"
	case len(s) > 120:
		return strings.ToValidUTF8(s[:120], "") + " …"
	}
	return s
}

// eu are the member states of the European Union, which the geo token
// "EU" stands for.
const eu = "AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK"

// inRegion returns a test of whether a geo token covers the region code.
func inRegion(code string) func(string) bool {
	code = strings.ToUpper(code)
	return func(token string) bool {
		return token == code || token == "EU" && len(code) == 2 && strings.Contains(eu, code)
	}
}
