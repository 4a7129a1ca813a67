package policy

import (
	"context"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/internal/robotstag"
	"github.com/politecrawl/robots/internal/rsl"
	"github.com/politecrawl/robots/internal/tdmrep"
)

// Signal is one statement a site makes about the use of a URL's content,
// for one purpose or of the use level: what it says and where it says it,
// the evidence an operator keeps for a fetched URL.
type Signal struct {
	// Purpose and Pref are what the signal says of one purpose, when Use
	// is UseUnknown.
	Purpose dialect.Category
	Pref    dialect.Pref
	// Use is the use level the signal states (Content-Signal's use=), the
	// most the site allows; UseUnknown for a signal about a purpose.
	Use dialect.UseLevel
	// Carrier names where the statement was made: "robots.txt",
	// "tdmrep.json", a response header field ("Content-Usage",
	// "Content-Signal", "tdm-reservation", "X-Robots-Tag", "Robots-Tag"),
	// "meta" (an element of the HTML head) or "license" (an RSL licence).
	Carrier string
	// Where locates it in its carrier: "line 4", "rule 0 (location /a/)",
	// `<meta name="tdm-reservation">`, the licence's URL and its content
	// scope.
	Where string
	// Value is what was stated, as written ("Content-Usage: train-ai=n",
	// "1", "noai"); for a licence "licensed" (with the terms it asks for,
	// which are the operator's to meet), "not licensed" or "unobtainable"
	// and why.
	Value string
}

// String reads "train-ai=n: tdmrep.json rule 0 (location /): 1", "train-ai=n:
// robots.txt line 4: Content-Usage: train-ai=n", "use=reference: robots.txt
// line 2: Content-Signal: search=yes, use=reference".
func (s Signal) String() string {
	what := s.Purpose.String() + "=" + s.Pref.String()
	if s.Use != dialect.UseUnknown {
		what = "use=" + s.Use.String()
	}
	if s.Carrier == "" {
		return what + ": " + s.Value
	}
	return what + ": " + s.Carrier + " " + s.Where + ": " + s.Value
}

// UsageReport is what a site states about the use of a URL's content:
// every signal seen, and per purpose the most restrictive of them.
type UsageReport struct {
	// Usage is the preference in force per purpose: n if any signal says
	// n, else y if one says y, else unknown; and the lowest use level
	// stated.
	Usage dialect.Usage
	// Signals are the statements that state y or n, in this order:
	// robots.txt's, the response's Content-Usage header's, its robots
	// directives' (Robots-Tag, X-Robots-Tag, meta), the TDM reservation
	// (tdmrep.json's, or the tdm-reservation header or meta element that
	// replaced it), the licences'.
	Signals []Signal
	// NoImageAI is true when the response's robots directives say
	// noimageai for the crawler: the images a page shows may not be used
	// for AI. It refuses the response itself only when it is an image.
	NoImageAI bool
}

// Refusal returns the signal that refuses one of purposes, the first
// purpose first, or the use level use (a site's level lower than use
// refuses it; UseUnknown declares none), and false when none is refused.
// With strict, a purpose nothing states a preference for is refused too,
// by a Signal whose Carrier is "" and whose Value says so; a level nothing
// states never refuses.
func (r UsageReport) Refusal(purposes []dialect.Category, use dialect.UseLevel, strict bool) (Signal, bool) {
	for _, c := range purposes {
		switch r.Usage.Pref(c) {
		case dialect.PrefDisallow:
			for _, s := range r.Signals {
				if s.Purpose == c && s.Pref == dialect.PrefDisallow {
					return s, true
				}
			}
		case dialect.PrefUnknown:
			if strict {
				return Signal{Purpose: c, Value: "nothing stated"}, true
			}
		}
	}
	if site := r.Usage.Use(); use != dialect.UseUnknown && site != dialect.UseUnknown && site < use {
		for _, s := range r.Signals {
			if s.Use == site {
				return s, true
			}
		}
	}
	return Signal{}, false
}

func (r *UsageReport) add(s Signal) {
	switch {
	case s.Use != dialect.UseUnknown:
		r.Usage = r.Usage.Combine(dialect.Usage(0).WithUse(s.Use))
	case s.Pref != dialect.PrefUnknown:
		r.Usage = r.Usage.Combine(dialect.Usage(0).With(s.Purpose, s.Pref))
	default:
		return
	}
	r.Signals = append(r.Signals, s)
}

// addUsage adds a signal per category u states, and one for its use
// level.
func (r *UsageReport) addUsage(u dialect.Usage, carrier, where, value string) {
	for _, c := range dialect.Categories() {
		r.add(Signal{Purpose: c, Pref: u.Pref(c), Carrier: carrier, Where: where, Value: value})
	}
	r.add(Signal{Use: u.Use(), Carrier: carrier, Where: where, Value: value})
}

// tdmRefused are the purposes a TDM reservation refuses: AI training and
// AI input are text and data mining; a search index is not refused.
var tdmRefused = []dialect.Category{dialect.TrainAI, dialect.AIInput}

// Usage returns what the site states, before the fetch, about the use of
// u for each of purposes: robots.txt's usage lines (Content-Usage,
// Content-Signal with its use level), and when a purpose is
// declared the origin's /.well-known/tdmrep.json (fetched once per
// origin) and the RSL licences robots.txt points to (each fetched once).
// With no purpose, nothing is fetched but robots.txt. Errors are those of
// [Resolver.Policy] and ctx's.
func (r *Resolver) Usage(ctx context.Context, u *url.URL, purposes ...dialect.Category) (UsageReport, error) {
	return r.usage(ctx, u, nil, nil, purposes)
}

// ResponseUsage is [Resolver.Usage] after the fetch of u, with what the
// response states: its Content-Usage, Content-Signal, tdm-reservation and
// tdm-policy, Link rel="license", X-Robots-Tag and Robots-Tag header
// fields, and, when its Content-Type is HTML, the meta and link elements
// of body's head (<meta name="robots"> or the crawler's token,
// content-signal, tdm-reservation, tdm-policy, <link rel="license">).
// X-Content-Signal and X-Content-Signals are not read: no one defines
// them, and their values are often free text. A tdm-reservation header or
// meta element replaces what tdmrep.json states for u; the other carriers
// add to what was known (noai refuses train-ai and ai-input). Licences the
// response points to are fetched only when a purpose is declared.
func (r *Resolver) ResponseUsage(ctx context.Context, u *url.URL, h http.Header, body []byte, purposes ...dialect.Category) (UsageReport, error) {
	if h == nil {
		h = http.Header{}
	}
	if !isHTML(h) {
		body = nil
	}
	return r.usage(ctx, u, h, body, purposes)
}

// usage builds the report; h is nil before the fetch.
func (r *Resolver) usage(ctx context.Context, u *url.URL, h http.Header, doc []byte, purposes []dialect.Category) (UsageReport, error) {
	var rep UsageReport
	pol, err := r.Policy(ctx, u)
	if err != nil {
		return rep, err
	}
	uv := pol.Usage(u)
	for _, c := range dialect.Categories() {
		if rule := uv.Rule(c); rule != nil {
			rep.add(Signal{Purpose: c, Pref: uv.Usage.Pref(c), Carrier: "robots.txt",
				Where: "line " + strconv.Itoa(rule.Line), Value: rule.String()})
		}
	}
	if rule := uv.UseRule(); rule != nil {
		rep.add(Signal{Use: uv.Usage.Use(), Carrier: "robots.txt", Where: "line " + strconv.Itoa(rule.Line), Value: rule.String()})
	}
	var file tdmrep.Terms
	if len(purposes) > 0 {
		st, err := r.tdmFile(ctx, pol.Authority())
		if err != nil {
			return rep, err
		}
		if st.file != nil {
			file = st.file.Match(u.RequestURI())
		}
	}
	var licenses []pointer
	if len(purposes) > 0 {
		licenses = robotsLicenses(pol)
	}
	if h != nil {
		file = tdmrep.Combine(file, tdmrep.Header(h), tdmrep.Meta(doc))
		if v := h.Values("Content-Usage"); len(v) > 0 {
			val := strings.Join(v, ", ")
			rep.addUsage(dialect.ParseUsage(val), "Content-Usage", "header", val)
		}
		if v := h.Values("Content-Signal"); len(v) > 0 {
			val := strings.Join(v, ", ")
			rep.addUsage(dialect.ParseContentSignal(val), "Content-Signal", "header", val)
		}
		rep.addTags(h, doc, r.cfg.tokens)
		rep.addMetaSignals(doc)
		for _, lu := range rsl.LicenseLinks(h.Values("Link"), u) {
			licenses = append(licenses, pointer{lu, "Link header"})
		}
		for _, lu := range rsl.HTMLLicenses(doc, u) {
			licenses = append(licenses, pointer{lu, "<link rel=license>"})
		}
	}
	rep.addTDM(file)
	if len(purposes) > 0 {
		if err := rep.addLicenses(ctx, r, u, licenses, purposes); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// addTDM adds the signals of the TDM terms t.
func (r *UsageReport) addTDM(t tdmrep.Terms) {
	var pref dialect.Pref
	switch t.Reservation {
	case tdmrep.Reserved:
		pref = dialect.PrefDisallow
	case tdmrep.NotReserved:
		pref = dialect.PrefAllow
	default:
		return
	}
	s := Signal{Pref: pref, Value: t.Reservation.String()}
	if t.Reservation == tdmrep.Reserved && t.Policy != "" {
		s.Value += ", tdm-policy " + t.Policy
	}
	switch ev := t.ReservationFrom; ev.Carrier {
	case tdmrep.FileCarrier:
		s.Carrier, s.Where = "tdmrep.json", "rule "+strconv.Itoa(ev.Rule)+" (location "+ev.Location+")"
	case tdmrep.HeaderCarrier:
		s.Carrier, s.Where = "tdm-reservation", "header"
	default:
		s.Carrier, s.Where = "meta", `<meta name="tdm-reservation">`
	}
	for _, c := range tdmRefused {
		s.Purpose = c
		r.add(s)
	}
}

// addTags adds the noai (and, on an image, noimageai) signals of the
// response's robots directives for the crawler known by agents.
func (r *UsageReport) addTags(h http.Header, doc []byte, agents []string) {
	rules, dirs := robotstag.Rules(h.Values("Robots-Tag"), h.Values("X-Robots-Tag"), doc, agents)
	r.NoImageAI = dirs&robotstag.NoImageAI != 0
	image := isImage(h)
	for _, rule := range rules {
		if rule.Name != "noai" && (rule.Name != "noimageai" || !image) {
			continue
		}
		where := "header"
		switch {
		case rule.Source == robotstag.MetaElement:
			where = `<meta name="` + rule.Scope + `">`
		case rule.Scope != "":
			where = "header, for " + rule.Scope
		}
		for _, c := range tdmRefused {
			r.add(Signal{Purpose: c, Pref: dialect.PrefDisallow, Carrier: rule.Source.String(), Where: where, Value: rule.Name})
		}
	}
}

// pointer is a licence URL and the pointer to it ("robots.txt line 4",
// "Link header", "<link rel=license>").
type pointer struct{ url, from string }

// robotsLicenses returns the License lines of robots.txt that apply to the
// crawler, resolved against the URL robots.txt was fetched from; a value
// that is not an absolute http(s) URL after that is skipped.
func robotsLicenses(pol *Policy) []pointer {
	rules := pol.Rules()
	if rules == nil {
		return nil
	}
	base, err := url.Parse(pol.Fetch().FinalURL)
	if err != nil {
		return nil
	}
	var out []pointer
	for _, l := range rules.Licenses() {
		lu, err := base.Parse(l.URL)
		if err != nil || (lu.Scheme != "http" && lu.Scheme != "https") || lu.Host == "" {
			continue
		}
		out = append(out, pointer{lu.String(), "robots.txt line " + strconv.Itoa(l.Line)})
	}
	return out
}

// addMetaSignals adds the signals of the <meta name="content-signal">
// elements of doc's head, read as the Content-Signal header (keywords
// some pages put there state nothing).
func (r *UsageReport) addMetaSignals(doc []byte) {
	for el := range robotstag.Head(doc) {
		if !strings.EqualFold(el.Name, "meta") {
			continue
		}
		if name, _ := el.Attr("name"); !strings.EqualFold(name, "content-signal") {
			continue
		}
		content, _ := el.Attr("content")
		r.addUsage(dialect.ParseContentSignal(content), "meta", `<meta name="content-signal">`, content)
	}
}

// MaxLicenses is how many distinct RSL licences are fetched for one URL;
// a licence pointed to beyond them is not fetched and counts as one that
// cannot be obtained.
const MaxLicenses = 8

// addLicenses adds, per purpose, the verdict of each RSL licence: those
// robots.txt points to, then urls (the response's), each fetched once.
func (r *UsageReport) addLicenses(ctx context.Context, res *Resolver, u *url.URL, ptrs []pointer, purposes []dialect.Category) error {
	seen := map[string]bool{}
	for _, p := range ptrs {
		if seen[p.url] {
			continue
		}
		seen[p.url] = true
		st := licenseState{why: "more than " + strconv.Itoa(MaxLicenses) + " licences for one URL"}
		if len(seen) <= MaxLicenses {
			var err error
			if st, err = res.licenseDoc(ctx, p.url); err != nil {
				return err
			}
		}
		for _, c := range purposes {
			r.add(licenseSignal(st, p, u, c))
		}
	}
	return nil
}

// licenseSignal is what the licence p points to (state st) says of
// purpose c for u. A licence that cannot be obtained licenses nothing
// (RSL: no fallback to permitted), so it refuses, with a Value that says
// so.
func licenseSignal(st licenseState, p pointer, u *url.URL, c dialect.Category) Signal {
	s := Signal{Purpose: c, Pref: dialect.PrefDisallow, Carrier: "license", Where: p.url + " (" + p.from + ")"}
	if st.doc == nil {
		s.Value = "unobtainable: " + st.why
		return s
	}
	v, err := st.doc.Decide(u, rsl.Use{Purpose: c.String()})
	if err != nil {
		return Signal{} // a purpose RSL has no token for: no statement
	}
	if v.Content == nil {
		s.Value = "not licensed: no content element matches"
		return s
	}
	s.Where += ", content " + strconv.Quote(v.Content.URL)
	if !v.Licensed {
		s.Value = "not licensed"
		return s
	}
	s.Pref, s.Value = dialect.PrefAllow, "licensed"
	var terms []string
	if p := v.License.Payment; p != nil && p.Type != "free" {
		terms = append(terms, "payment "+p.Type)
	}
	for _, rp := range v.License.Reporting {
		terms = append(terms, "reporting "+rp.Type)
	}
	if v.Content.Server != "" {
		terms = append(terms, "server "+v.Content.Server)
	}
	if len(terms) > 0 {
		s.Value += " (" + strings.Join(slices.Compact(terms), "; ") + ")"
	}
	return s
}

// isHTML reports whether h's Content-Type holds "html" in any case.
func isHTML(h http.Header) bool {
	return strings.Contains(strings.ToLower(h.Get("Content-Type")), "html")
}

// isImage reports whether h's Content-Type is image/*.
func isImage(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && strings.HasPrefix(mt, "image/")
}
