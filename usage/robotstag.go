// Robots directives: the package reads the robots directives a response states for a
// crawler: the Robots-Tag header fields (draft-illyes-repext-03), the
// X-Robots-Tag header fields, and the <meta name="robots"> elements (or
// <meta name="TOKEN"> for the crawler's own product token) of an HTML
// document. The result is a set of [Directives]; only the ones a crawler
// acts on are kept (noindex, nofollow, none, noai, noimageai). [robotsRules]
// keeps every rule that applies, the others (nosnippet, max-snippet,
// unavailable_after, noarchive, ...) included, with its carrier and scope,
// as evidence. All carriers combine by union: a restriction stated on any
// of them, for the crawler or for every crawler, holds.
//
// Robots-Tag has a grammar of its own, a Structured Field List of product
// tokens with the rules as parameters: see [RobotsTag]. X-Robots-Tag, which
// the draft keeps as a deprecated alias, is read with its legacy grammar,
// as the search engines document it; the draft's grammar would read
// "noindex, nofollow" as two crawler names without rules. The reading of
// X-Robots-Tag and meta:
//
//   - X-Robots-Tag: a comma-separated list of directives. An element
//     "NAME: rest" whose NAME is not a directive that takes a value
//     (unavailable_after, max-snippet, max-image-preview,
//     max-video-preview) names a crawler: the rest of the element and the
//     elements after it, up to the next such name, apply to that crawler
//     only. Elements before any name apply to every crawler. Several
//     header fields are read one after the other, each starting for every
//     crawler.
//   - meta: name="robots" applies to every crawler, name="TOKEN" to the
//     crawler with that product token; content is a comma-separated list
//     of directives. The document is read up to its <body> start tag (or
//     its end); comments and the contents of script, style, title and
//     textarea elements are skipped, as the HTML tokenizer reads them; an
//     element the document's end cuts short is dropped, and character
//     references in attribute values are decoded.
//   - Names, directives and tokens compare case-insensitively (ASCII). All
//     directives that apply are combined: a restriction stated anywhere
//     holds; "none" is "noindex, nofollow"; "all", "index" and "follow"
//     lift nothing.
//
// [headElements] gives the start tags of a document's head to other readers of
// meta and link elements (the TDM Reservation Protocol's, RSL's).
//
// Reading header fields allocates nothing; reading a head allocates what the
// HTML tokenizer does, whatever the length of the body.

package usage

import "strings"

// Directives is a set of robots directives.
type Directives uint8

// The directives a crawler acts on.
const (
	NoIndex   Directives = 1 << iota // do not index the page ("none" too)
	NoFollow                         // do not follow the page's links ("none" too)
	NoAI                             // do not use the content for AI (DeviantArt's noai)
	NoImageAI                        // do not use the page's images for AI (noimageai)
)

var names = [...]string{"noindex", "nofollow", "noai", "noimageai"}

// String lists the directives in d, comma-separated ("nofollow, noai"),
// "" for none.
func (d Directives) String() string {
	var b strings.Builder
	for i, n := range names {
		if d&(1<<i) != 0 {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n)
		}
	}
	return b.String()
}

// XRobotsTag returns the directives the X-Robots-Tag field values state for a
// crawler known by the product tokens agents.
func XRobotsTag(values []string, agents []string) Directives {
	var d Directives
	for _, v := range values {
		d |= list(v, agents, true, nil)
	}
	return d
}

// valued are the directives written "name: value": a name before a colon
// that is none of them names a crawler.
var valued = [...]string{"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}

// list reads a comma-separated list of directives. With botNames, an
// element "NAME: rest" may name the crawler the following ones apply to.
// emit, when not nil, is called with each element that applies and the
// crawler name it is scoped to ("" for every crawler).
func list(s string, agents []string, botNames bool, emit func(scope, elem string)) Directives {
	var d Directives
	forUs, scope := true, ""
	for s != "" {
		elem := s
		if i := strings.IndexByte(s, ','); i >= 0 {
			elem, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		elem = trim(elem)
		if botNames {
			if name, rest, ok := strings.Cut(elem, ":"); ok && !isValued(trim(name)) {
				scope = trim(name)
				forUs = matches(scope, agents)
				elem = trim(rest)
			}
		}
		if forUs {
			d |= directive(elem)
			if emit != nil && elem != "" {
				emit(scope, elem)
			}
		}
	}
	return d
}

func isValued(name string) bool {
	for _, v := range valued {
		if strings.EqualFold(name, v) {
			return true
		}
	}
	return false
}

// matches reports whether name is one of agents (case-insensitively).
func matches(name string, agents []string) bool {
	for _, a := range agents {
		if a != "" && strings.EqualFold(name, a) {
			return true
		}
	}
	return false
}

// directive returns the directives the element e (trimmed) states.
func directive(e string) Directives {
	switch {
	case strings.EqualFold(e, "none"):
		return NoIndex | NoFollow
	case strings.EqualFold(e, "noindex"):
		return NoIndex
	case strings.EqualFold(e, "nofollow"):
		return NoFollow
	case strings.EqualFold(e, "noai"):
		return NoAI
	case strings.EqualFold(e, "noimageai"):
		return NoImageAI
	}
	return 0
}

// trim removes the HTTP and HTML white space around s.
func trim(s string) string { return strings.Trim(s, " \t\r\n\f") }

// MarshalText returns the directives as String lists them.
func (d Directives) MarshalText() ([]byte, error) { return []byte(d.String()), nil }
