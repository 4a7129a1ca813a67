package usage

import (
	"net/http"
	"strings"
)

// robotsRule is one robots rule a response states for a crawler: the evidence
// behind [Directives], kept for every rule, the ones without a Directives
// bit (nosnippet, max-snippet, noarchive, ...) included.
type robotsRule struct {
	Carrier Carrier
	// Scope is the crawler name the rule is stated for, as written: "*"
	// or a product token in Robots-Tag, "robots" or a product token in a
	// meta name, a product token or "" (every crawler) in X-Robots-Tag.
	Scope string
	Name  string // lower-case: "noindex", "max-snippet"
	Value string // as written, "" for a rule without one
}

// robotsRules returns the rules the Robots-Tag field values, the X-Robots-Tag
// field values and the <meta> elements of head, the head of an HTML
// document (nil: no document), state for a crawler known by the product tokens agents, in
// that order, and the directives they make: the union of [RobotsTag],
// [XRobotsTag] and [MetaRobots].
func robotsRules(robotsTag, xRobotsTag []string, head []element, agents []string) ([]robotsRule, Directives) {
	var rules []robotsRule
	d := repext(robotsTag, agents, func(scope, name, value string) {
		rules = append(rules, robotsRule{RobotsTagHeader, scope, name, value})
	})
	legacy := func(src Carrier) func(scope, elem string) {
		return func(scope, elem string) {
			name, value, _ := strings.Cut(elem, ":")
			// Clone: a rule outlives the field value it is cut from.
			rules = append(rules, robotsRule{src, strings.Clone(scope), strings.ToLower(strings.Clone(trim(name))),
				strings.Clone(trim(value))})
		}
	}
	for _, v := range xRobotsTag {
		d |= list(v, agents, true, legacy(XRobotsTagHeader))
	}
	emit := legacy(MetaElement)
	for _, e := range head {
		d |= meta(e, agents, emit)
	}
	return rules, d
}

// Nofollow returns the carrier of the nofollow a response with header h
// and body states for a crawler known by the product tokens agents: a
// Robots-Tag field, an X-Robots-Tag field, or (when h's Content-Type is
// HTML) a robots meta element of body; false when none does.
func Nofollow(h http.Header, body []byte, agents []string) (Carrier, bool) {
	switch {
	case RobotsTag(h.Values("Robots-Tag"), agents)&NoFollow != 0:
		return RobotsTagHeader, true
	case XRobotsTag(h.Values("X-Robots-Tag"), agents)&NoFollow != 0:
		return XRobotsTagHeader, true
	case len(body) > 0 && isHTML(h) && MetaRobots(body, agents)&NoFollow != 0:
		return MetaElement, true
	}
	return NoCarrier, false
}
