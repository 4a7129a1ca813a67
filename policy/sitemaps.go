package policy

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/politecrawl/robots/dialect"
)

// Sitemaps returns the sitemap URLs the robots.txt in force announces, in
// file order: each Sitemap line's value resolved against the robots.txt URL
// (a relative value such as "/sitemap.xml" becomes an absolute URL of the
// policy's authority), the fragment dropped, and each URL once (the first
// line naming it counts). A value that is not an http(s) URL once resolved
// is left out. [Policy.SitemapWarnings] says what was resolved or left out.
// Sitemaps returns nil when the fetch outcome decides every URL (no
// robots.txt in force) or the file has no Sitemap line.
func (p *Policy) Sitemaps() []string {
	urls, _ := p.sitemaps()
	return urls
}

// SitemapWarnings returns what [Policy.Sitemaps] resolved or left out, one
// line each ("line 7: relative Sitemap /s.xml resolved to
// https://example.com/s.xml"): nil when every Sitemap line was an absolute
// http(s) URL named once.
func (p *Policy) SitemapWarnings() []string {
	_, w := p.sitemaps()
	return w
}

func (p *Policy) sitemaps() ([]string, []string) {
	r := p.Robots()
	if r == nil || len(r.Sitemaps()) == 0 {
		return nil, nil
	}
	base := p.fetch.URL
	if base == "" {
		base = p.authority + "/robots.txt"
	}
	return ResolveSitemaps(base, r.Sitemaps())
}

// ResolveSitemaps resolves the values of Sitemap lines against base, the URL
// of the robots.txt they were read from, as [Policy.Sitemaps] does: absolute
// http(s) URLs without fragment, in line order, each once. warnings says,
// for each line, what was resolved (a relative value), or left out (not an
// http(s) URL, a duplicate). With a base that is no absolute URL, relative
// values are left out.
func ResolveSitemaps(base string, lines []dialect.Sitemap) (urls, warnings []string) {
	b, err := url.Parse(base)
	if err != nil || !b.IsAbs() {
		b = nil
	}
	seen := make(map[string]int, len(lines))
	for _, l := range lines {
		at := "line " + strconv.Itoa(l.Line) + ": "
		v, resolved := strings.TrimSpace(l.URL), false
		if v == "" {
			warnings = append(warnings, at+"empty Sitemap; left out")
			continue
		}
		u, err := url.Parse(v)
		if err != nil {
			warnings = append(warnings, at+"Sitemap "+strconv.Quote(v)+" is no URL ("+shortURLError(err)+"); left out")
			continue
		}
		if !u.IsAbs() {
			if b == nil {
				warnings = append(warnings, at+"relative Sitemap "+strconv.Quote(v)+" cannot be resolved; left out")
				continue
			}
			u = b.ResolveReference(u)
			resolved = true
		}
		s := strings.ToLower(u.Scheme)
		if s != "http" && s != "https" || u.Host == "" {
			warnings = append(warnings, at+"Sitemap "+strconv.Quote(v)+" is not an http(s) URL; left out")
			continue
		}
		u.Fragment, u.RawFragment = "", ""
		abs := u.String()
		if first, dup := seen[abs]; dup {
			warnings = append(warnings, at+"Sitemap "+abs+" repeats line "+strconv.Itoa(first)+"; left out")
			continue
		}
		seen[abs] = l.Line
		if resolved {
			warnings = append(warnings, at+"relative Sitemap "+strconv.Quote(v)+" resolved to "+abs)
		}
		urls = append(urls, abs)
	}
	return urls, warnings
}

// shortURLError is err of url.Parse without the repeated value.
func shortURLError(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return err.Error()
}
