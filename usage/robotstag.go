// Robots directives: the package reads the robots directives a response
// states for a crawler, from its Robots-Tag header fields ([RobotsTag]), its
// X-Robots-Tag header fields ([XRobotsTag]) and the robots meta elements of
// an HTML document ([MetaRobots]), combined by union: a restriction stated
// on any of them, for the crawler or for every crawler, holds. X-Robots-Tag,
// which draft-illyes-repext-03 keeps as a deprecated alias of Robots-Tag,
// is read with its legacy grammar, as the search engines document it (the
// draft's grammar would read "noindex, nofollow" as two crawler names):
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
//     of directives, read in the head ([headElements]).
//   - Names, directives and tokens compare case-insensitively (ASCII).
//     "none" is "noindex, nofollow"; "all", "index" and "follow" lift
//     nothing.
//
// Reading X-Robots-Tag allocates nothing; reading a head allocates what the
// HTML tokenizer does, whatever the length of the body.

package usage

import (
	"slices"
	"strings"
)

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
	var out []string
	for i, n := range names {
		if d&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
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
	for elem := range strings.SplitSeq(s, ",") {
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
	return slices.ContainsFunc(valued[:], func(v string) bool { return strings.EqualFold(name, v) })
}

// matches reports whether name is one of agents (case-insensitively).
func matches(name string, agents []string) bool {
	return slices.ContainsFunc(agents, func(a string) bool { return a != "" && strings.EqualFold(name, a) })
}

// directive returns the directives the element e (trimmed) states.
func directive(e string) Directives {
	if strings.EqualFold(e, "none") {
		return NoIndex | NoFollow
	}
	i := slices.IndexFunc(names[:], func(n string) bool { return strings.EqualFold(e, n) })
	if i < 0 {
		return 0
	}
	return Directives(1) << i
}

// trim removes the HTTP and HTML white space around s.
func trim(s string) string { return strings.Trim(s, " \t\r\n\f") }

// MarshalText returns the directives as String lists them.
func (d Directives) MarshalText() ([]byte, error) { return []byte(d.String()), nil }
