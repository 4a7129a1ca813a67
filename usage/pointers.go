package usage

import (
	"html"
	"net/url"
	"strings"
)

// maxPointers is how many licence pointers [licenseLinks] and
// [htmlLicenses] return at most, and how many link values [parseLinks]
// reads.
const maxPointers = 64

// robotsLine is a robots.txt License line as the robots.txt parser read
// it (License: OWS absolute-URI OWS, the field name case-insensitive).
//
// Group is the index, in file order, of the group the line falls in by
// RFC 9309 grouping, the grouping of Allow and Disallow: a group starts at
// a User-agent line that follows a line of another field, or at the first
// User-agent line, and runs to the next such start, blank lines and
// Sitemap lines included.
// A line before the first User-agent line is outside any group: Group is
// -1, and the line is global. A License line at the end of the file thus
// belongs to the last group, as an Allow line there would.
type robotsLine struct {
	Line  int    // its line number, for evidence
	Group int    // its group's index, -1 for none
	Value string // its value, as written
}

// robotsLicenseLines returns the License lines that apply to a crawler whose
// rules come from the groups selected (indices as in robotsLine.Group,
// every group RFC 9309 merges for the crawler): the lines of those groups
// if they have any, else the global ones (RSL 1.0 §4.4.2-4.4.3 with the
// erratum of 2026-01-16 on group association; the older guide's reading,
// every line for every crawler, would let a crawler take a licence its own
// group replaced). Lines whose value is not an absolute http or https URL
// are skipped. Values are returned trimmed.
func robotsLicenseLines(lines []robotsLine, selected []int) []robotsLine {
	var group, global []robotsLine
	for _, l := range lines {
		l.Value = strings.TrimSpace(l.Value)
		if !absoluteHTTP(l.Value) {
			continue
		}
		switch {
		case l.Group < 0:
			global = append(global, l)
		case containsInt(selected, l.Group):
			group = append(group, l)
		}
	}
	if len(group) > 0 {
		return group
	}
	return global
}

func containsInt(list []int, n int) bool {
	for _, v := range list {
		if v == n {
			return true
		}
	}
	return false
}

func absoluteHTTP(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (strings.EqualFold(u.Scheme, "https") || strings.EqualFold(u.Scheme, "http")) && u.Host != ""
}

// htmlLicenses returns the RSL licence URLs the <link rel="license">
// elements of the head of the HTML document doc point to, resolved
// against base (or against the document's <base href>, when it comes
// first): elements whose rel list holds "license" and whose type is
// absent or application/rsl+xml. Character references in href are
// decoded. A link in the head covers the whole page.
func htmlLicenses(doc []byte, base *url.URL) []string {
	var urls []string
	for e := range headElements(doc) {
		switch {
		case strings.EqualFold(e.Name, "base"):
			if href, ok := e.Attr("href"); ok && base != nil {
				if b, err := base.Parse(strings.TrimSpace(html.UnescapeString(href))); err == nil {
					base = b
				}
			}
		case strings.EqualFold(e.Name, "link"):
			rel, _ := e.Attr("rel")
			typ, _ := e.Attr("type")
			href, ok := e.Attr("href")
			if ok && isLicense(rel, html.UnescapeString(typ)) {
				if u := resolve(base, html.UnescapeString(href)); u != "" {
					urls = append(urls, u)
				}
			}
		}
		if len(urls) == maxPointers {
			break
		}
	}
	return urls
}

// isLicense reports whether a rel list and a type mark an RSL licence.
func isLicense(rel, typ string) bool {
	if typ = strings.TrimSpace(typ); typ != "" {
		mt, _, _ := strings.Cut(typ, ";")
		if !strings.EqualFold(strings.TrimSpace(mt), RSLMediaType) {
			return false
		}
	}
	for _, r := range strings.Fields(rel) {
		if strings.EqualFold(r, "license") {
			return true
		}
	}
	return false
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
