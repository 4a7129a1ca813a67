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
