package robots

import (
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/policy"
)

// mayVisit reports whether a collector the plugin is attached to may
// visit u by its filters (DisallowedURLFilters, URLFilters,
// DisallowedDomains, AllowedDomains, read as Colly reads them): the
// documents a site names (tdmrep.json, licences) and their redirects are
// fetched only from such URLs.
func (p *core) mayVisit(u *url.URL) bool {
	p.colls.mu.Lock()
	defer p.colls.mu.Unlock()
	if len(p.colls.attached) == 0 {
		return true
	}
	s, host := u.String(), u.Hostname()
	for c := range p.colls.attached {
		if collectorMayVisit(c, s, host) {
			return true
		}
	}
	return false
}

func collectorMayVisit(c *colly.Collector, s, host string) bool {
	match := func(fs []*regexp.Regexp) bool {
		return slices.ContainsFunc(fs, func(r *regexp.Regexp) bool { return r.MatchString(s) })
	}
	switch {
	case match(c.DisallowedURLFilters),
		len(c.URLFilters) > 0 && !match(c.URLFilters),
		slices.Contains(c.DisallowedDomains, host),
		len(c.AllowedDomains) > 0 && !slices.Contains(c.AllowedDomains, host):
		return false
	}
	return true
}

// defaultTransport is the plugin's base transport when none is given:
// net/http's default, whose dialer refuses the addresses a document a
// site names may not be fetched from ([policy.DialControl]; it lets every
// other request through).
func defaultTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, ControlContext: policy.DialControl}).DialContext
	return tr
}
