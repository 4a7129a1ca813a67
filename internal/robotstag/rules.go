package robotstag

import "strings"

// Source is where a robots rule was stated.
type Source uint8

// The carriers of robots rules.
const (
	RobotsTagField  Source = iota + 1 // a Robots-Tag header field
	XRobotsTagField                   // an X-Robots-Tag header field
	MetaElement                       // a <meta> element of an HTML head
)

// String returns "Robots-Tag", "X-Robots-Tag" or "meta".
func (s Source) String() string {
	switch s {
	case RobotsTagField:
		return "Robots-Tag"
	case XRobotsTagField:
		return "X-Robots-Tag"
	case MetaElement:
		return "meta"
	}
	return "Source(?)"
}

// Rule is one robots rule a response states for a crawler: the evidence
// behind [Directives], kept for every rule, the ones without a Directives
// bit (nosnippet, max-snippet, noarchive, ...) included.
type Rule struct {
	Source Source
	// Scope is the crawler name the rule is stated for, as written: "*"
	// or a product token in Robots-Tag, "robots" or a product token in a
	// meta name, a product token or "" (every crawler) in X-Robots-Tag.
	Scope string
	Name  string // lower-case: "noindex", "max-snippet"
	Value string // as written, "" for a rule without one
}

// Rules returns the rules the Robots-Tag field values, the X-Robots-Tag
// field values and the <meta> elements of the HTML document doc (nil: no
// document) state for a crawler known by the product tokens agents, in
// that order, and the directives they make: the union of [RobotsTag],
// [Header] and [Meta].
func Rules(robotsTag, xRobotsTag []string, doc []byte, agents []string) ([]Rule, Directives) {
	var rules []Rule
	d := repext(robotsTag, agents, func(scope, name, value string) {
		rules = append(rules, Rule{RobotsTagField, scope, name, value})
	})
	legacy := func(src Source) func(scope, elem string) {
		return func(scope, elem string) {
			name, value, _ := strings.Cut(elem, ":")
			// Clone: a meta element's strings share the document's memory.
			rules = append(rules, Rule{src, strings.Clone(scope), strings.ToLower(strings.Clone(trim(name))),
				strings.Clone(trim(value))})
		}
	}
	for _, v := range xRobotsTag {
		d |= list(v, agents, true, legacy(XRobotsTagField))
	}
	emit := legacy(MetaElement)
	scanHead(doc, func(e Element) bool {
		if strings.EqualFold(e.Name, "meta") {
			d |= meta(e, agents, emit)
		}
		return true
	})
	return rules, d
}
