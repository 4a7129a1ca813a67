package usage

import (
	"net/url"
	"slices"
	"strings"
)

// maxPointers is how many licence pointers [licenseLinks] and
// [htmlLicenses] return at most, and how many link values [parseLinks]
// reads.
const maxPointers = 64

func absoluteHTTP(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (strings.EqualFold(u.Scheme, "https") || strings.EqualFold(u.Scheme, "http")) && u.Host != ""
}

// htmlLicenses returns the licence pointers of the <link rel="license">
// elements of head, the head of an HTML document, resolved against base
// (or against the document's <base href>, when it comes first), each with
// its type: an RSL pointer when the type is application/rsl+xml.
// Character references are decoded once. A link in the head covers the
// whole page.
func htmlLicenses(head []element, base *url.URL) []pointer {
	var ptrs []pointer
	for _, e := range head {
		switch e.Name {
		case "base":
			if href, ok := e.Attr("href"); ok && base != nil {
				if b, err := base.Parse(strings.TrimSpace(href)); err == nil {
					base = b
				}
			}
		case "link":
			rel, _ := e.Attr("rel")
			typ, _ := e.Attr("type")
			href, ok := e.Attr("href")
			if ok && isLicenseRel(rel) {
				if u := resolve(base, href); u != "" {
					ptrs = append(ptrs, newPointer(u, "<link rel=license>", typ))
				}
			}
		}
		if len(ptrs) == maxPointers {
			break
		}
	}
	return ptrs
}

// pointer is a licence URL and what pointed to it ("robots.txt line 4",
// "Link header", "<link rel=license>"). typ is the media type the pointer
// states, as written; rsl is true when the pointer says it leads to an RSL
// licence (a robots.txt License line, or the type application/rsl+xml):
// only such a licence is fetched and decides.
type pointer struct {
	url, from, typ string
	rsl            bool
}

// newPointer returns the pointer of a link to u whose type is typ.
func newPointer(u, from, typ string) pointer {
	typ = strings.TrimSpace(typ)
	mt, _, _ := strings.Cut(typ, ";")
	return pointer{url: u, from: from, typ: typ, rsl: strings.EqualFold(strings.TrimSpace(mt), RSLMediaType)}
}

// isLicenseRel reports whether a rel list holds "license".
func isLicenseRel(rel string) bool {
	return slices.ContainsFunc(strings.Fields(rel), func(r string) bool { return strings.EqualFold(r, "license") })
}

// resolve returns ref resolved against base as an absolute http(s) URL,
// or "".
func resolve(base *url.URL, ref string) string {
	u, err := url.Parse(strings.TrimSpace(ref))
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if s := u.String(); absoluteHTTP(s) {
		return s
	}
	return ""
}
