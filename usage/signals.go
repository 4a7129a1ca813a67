package usage

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
)

// Signal is one statement a site makes about the use of a URL's content,
// for one purpose or of the use level: what it says and where it says it,
// the evidence an operator keeps for a fetched URL. It marshals to JSON
// with names: {"purpose":"train-ai","pref":"n","carrier":"tdmrep.json",
// "where":"rule 0 (location /)","value":"1"}.
type Signal struct {
	// Purpose and Pref are what the signal says of one purpose, when Use
	// is UseUnknown.
	Purpose dialect.Category `json:"purpose"`
	Pref    dialect.Pref     `json:"pref,omitempty"`
	// Use is the use level the signal states (Content-Signal's use=), the
	// most the site allows; UseUnknown for a signal about a purpose.
	Use dialect.UseLevel `json:"use,omitempty"`
	// Carrier is where the statement was made.
	Carrier Carrier `json:"carrier"`
	// Where locates it in its carrier: "line 4", "rule 0 (location /a/)",
	// `<meta name="tdm-reservation">`, the licence's URL and its content
	// scope.
	Where string `json:"where,omitempty"`
	// Value is what was stated, as written ("Content-Usage: train-ai=n",
	// "1", "noai"); for a licence "licensed" (with the terms it asks for,
	// which are the operator's to meet), "not licensed" (with the user or
	// geo term not met), "unobtainable" and why, or, for a licence that is
	// not RSL and decides nothing, "not an RSL licence (type …)" or "not
	// an RSL document: …".
	Value string `json:"value"`
	// Policy is the tdm-policy URL stated with a TDM reservation.
	Policy string `json:"tdm_policy,omitempty"`
	// License is the licence a LicenseDocument signal reads.
	License *LicenseTerms `json:"license,omitempty"`
	// Replaced is true for a signal a later carrier replaced (tdmrep.json's
	// reservation, when the response's tdm-reservation header or meta
	// element states one): kept as evidence, it decides nothing.
	Replaced bool `json:"replaced,omitempty"`
}

// LicenseTerms are an RSL licence as a signal reads it.
type LicenseTerms struct {
	URL     string `json:"url"`               // the licence document's URL
	From    string `json:"from"`              // what pointed to it: "robots.txt line 4", "Link header"
	Type    string `json:"type,omitempty"`    // the media type the pointer states, as written
	Content string `json:"content,omitempty"` // the <content url> that matched the URL
	// Payment is the payment type asked for ("purchase", "attribution"),
	// "" when free or none; Amounts are its amounts.
	Payment   string   `json:"payment,omitempty"`
	Amounts   []Amount `json:"amounts,omitempty"`
	Reporting []string `json:"reporting,omitempty"` // reporting types asked for
	Server    string   `json:"server,omitempty"`    // the licence server
}

// String reads "train-ai=n: tdmrep.json rule 0 (location /): 1", "train-ai=n:
// robots.txt line 4: Content-Usage: train-ai=n", "use=reference: robots.txt
// line 2: Content-Signal: search=yes, use=reference".
func (s Signal) String() string {
	what := s.Purpose.String() + "=" + s.Pref.String()
	if s.Use != dialect.UseUnknown {
		what = "use=" + s.Use.String()
	}
	val := s.Value
	if s.Policy != "" && s.Pref == dialect.PrefDisallow {
		val += ", tdm-policy " + s.Policy
	}
	if s.Carrier == NoCarrier {
		return what + ": " + val
	}
	return what + ": " + s.Carrier.String() + " " + s.Where + ": " + val
}

// Report is what a site states about the use of a URL's content: every
// signal seen, and per purpose the most restrictive of them.
type Report struct {
	// Usage is the preference in force per purpose: n if any signal says
	// n, else y if one says y, else unknown; and the lowest use level
	// stated.
	Usage dialect.Usage `json:"usage"`
	// Signals are the statements that state y or n, in this order:
	// robots.txt's, the response's Content-Usage header's, its robots
	// directives' (Robots-Tag, X-Robots-Tag, meta), the TDM reservation
	// (tdmrep.json's, marked Replaced when a tdm-reservation header or
	// meta element replaced it, then that one), the licences'. A licence
	// that is not RSL (a link not typed application/rsl+xml, a License
	// document that is not RSL) is recorded with Pref unknown: it decides
	// nothing.
	Signals []Signal `json:"signals"`
	// NoImageAI is true when the response's robots directives say
	// noimageai for the crawler: the images a page shows may not be used
	// for AI. It refuses the response itself only when it is an image.
	NoImageAI bool `json:"noimageai,omitempty"`
}

// Refusal returns the signal that refuses one of purposes, the first
// purpose first, or the use level use (a site's level lower than use
// refuses it; UseUnknown declares none), and false when none is refused.
// With strict, a purpose nothing states a preference for is refused too,
// by a Signal whose Carrier is NoCarrier and whose Value says so; a level
// nothing states never refuses.
func (r Report) Refusal(purposes []dialect.Category, use dialect.UseLevel, strict bool) (Signal, bool) {
	for _, c := range purposes {
		switch r.Usage.Pref(c) {
		case dialect.PrefDisallow:
			for _, s := range r.Signals {
				if s.Purpose == c && s.Pref == dialect.PrefDisallow && !s.Replaced {
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

func (r *Report) add(s Signal) {
	s.Where, s.Value, s.Policy = clip(s.Where), clip(s.Value), clip(s.Policy)
	if s.License != nil {
		s.License.URL = clip(s.License.URL)
	}
	switch {
	case s.Replaced:
	case s.Use != dialect.UseUnknown:
		r.Usage = r.Usage.Combine(dialect.Usage(0).WithUse(s.Use))
	case s.Pref != dialect.PrefUnknown:
		r.Usage = r.Usage.Combine(dialect.Usage(0).With(s.Purpose, s.Pref))
	case s.Carrier == LicenseDocument: // a licence that is not RSL: recorded, it decides nothing
	default:
		return
	}
	r.Signals = append(r.Signals, s)
}

// addUsage adds a signal per category u states, and one for its use
// level.
func (r *Report) addUsage(u dialect.Usage, carrier Carrier, where, value string) {
	for _, c := range dialect.Categories() {
		r.add(Signal{Purpose: c, Pref: u.Pref(c), Carrier: carrier, Where: where, Value: value})
	}
	r.add(Signal{Use: u.Use(), Carrier: carrier, Where: where, Value: value})
}

// tdmRefused are the purposes a TDM reservation refuses: AI training and
// AI input are text and data mining; a search index is not refused.
var tdmRefused = []dialect.Category{dialect.TrainAI, dialect.AIInput}

// Check returns what u's site states, before the fetch, about the use of
// u for each of purposes: robots.txt's usage lines (Content-Usage,
// Content-Signal with its use level), and when a purpose is declared the
// origin's /.well-known/tdmrep.json and the RSL licences robots.txt points
// to, each fetched once through r ([policy.Resolver.Document], as named
// by u: only from hosts the crawl may reach), the licences together. With
// no purpose, nothing is fetched but robots.txt. Errors are those of
// [policy.Resolver.Policy] and ctx's.
func Check(ctx context.Context, r *policy.Resolver, u *url.URL, purposes ...dialect.Category) (Report, error) {
	return Who{}.Check(ctx, r, u, purposes...)
}

// Check is [Check] for a crawler that declares who makes the use and
// where: the RSL licences' user and geo terms are matched against w.
func (w Who) Check(ctx context.Context, r *policy.Resolver, u *url.URL, purposes ...dialect.Category) (Report, error) {
	return check(ctx, r, u, nil, nil, w, purposes)
}

// CheckResponse is [Check] after the fetch of u, with what the response
// states: its Content-Usage, Content-Signal, tdm-reservation and
// tdm-policy, Link rel="license", X-Robots-Tag and Robots-Tag header
// fields, and, when its Content-Type is HTML, the meta and link elements
// of body's head (<meta name="robots"> or the crawler's token,
// content-signal, tdm-reservation, tdm-policy, <link rel="license">).
// X-Content-Signal and X-Content-Signals are not read: no one defines
// them, and their values are often free text. A tdm-reservation header or
// meta element replaces what tdmrep.json states for u; the other carriers
// add to what was known (noai refuses train-ai and ai-input). Licences the
// response points to are fetched only when a purpose is declared.
func CheckResponse(ctx context.Context, r *policy.Resolver, u *url.URL, h http.Header, body []byte, purposes ...dialect.Category) (Report, error) {
	return Who{}.CheckResponse(ctx, r, u, h, body, purposes...)
}

// CheckResponse is [CheckResponse] for a crawler that declares who makes
// the use and where, as [Who.Check].
func (w Who) CheckResponse(ctx context.Context, r *policy.Resolver, u *url.URL, h http.Header, body []byte, purposes ...dialect.Category) (Report, error) {
	if h == nil {
		h = http.Header{}
	}
	if !isHTML(h) {
		body = nil
	}
	return check(ctx, r, u, h, body, w, purposes)
}

// check builds the report; h is nil before the fetch.
func check(ctx context.Context, r *policy.Resolver, u *url.URL, h http.Header, doc []byte, who Who, purposes []dialect.Category) (Report, error) {
	var rep Report
	pol, err := r.Policy(ctx, u)
	if err != nil {
		return rep, err
	}
	uv := pol.Usage(u)
	for _, c := range dialect.Categories() {
		if rule := uv.Rule(c); rule != nil {
			rep.add(Signal{Purpose: c, Pref: uv.Usage.Pref(c), Carrier: RobotsTxt,
				Where: "line " + strconv.Itoa(rule.Line), Value: rule.String()})
		}
	}
	if rule := uv.UseRule(); rule != nil {
		rep.add(Signal{Use: uv.Usage.Use(), Carrier: RobotsTxt, Where: "line " + strconv.Itoa(rule.Line), Value: rule.String()})
	}
	var file TDMTerms
	var licenses []pointer
	if len(purposes) > 0 {
		if file, err = tdmTerms(ctx, r, pol.Authority(), u); err != nil {
			return rep, err
		}
		licenses = policyLicenses(pol)
	}
	if h != nil {
		head := slices.Collect(headElements(doc, "meta", "link", "base")) // read once, for every carrier
		resp := combineTDM(tdmHeader(h), tdmMeta(head))
		if resp.Reservation != Unset && file.Reservation != Unset {
			rep.addTDM(file, true)
		}
		file = combineTDM(file, resp)
		if v := h.Values("Content-Usage"); len(v) > 0 {
			val := strings.Join(v, ", ")
			rep.addUsage(dialect.ParseUsage(val), ContentUsageHeader, "header", val)
		}
		if v := h.Values("Content-Signal"); len(v) > 0 {
			val := strings.Join(v, ", ")
			rep.addUsage(dialect.ParseContentSignal(val), ContentSignalHeader, "header", val)
		}
		rep.addTags(h, head, r.Agents())
		rep.addMetaSignals(head)
		licenses = append(licenses, licenseLinks(h.Values("Link"), u)...)
		licenses = append(licenses, htmlLicenses(head, u)...)
	}
	rep.addTDM(file, false)
	if len(purposes) > 0 {
		if err := rep.addLicenses(ctx, r, u, licenses, who, purposes); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// addTDM adds the signals of the TDM terms t, marked replaced or not.
func (r *Report) addTDM(t TDMTerms, replaced bool) {
	var pref dialect.Pref
	switch t.Reservation {
	case Reserved:
		pref = dialect.PrefDisallow
	case NotReserved:
		pref = dialect.PrefAllow
	default:
		return
	}
	s := Signal{Pref: pref, Value: t.Reservation.String(), Replaced: replaced}
	if t.Reservation == Reserved {
		s.Policy = t.Policy
	}
	switch ev := t.ReservationFrom; ev.Carrier {
	case TDMRepFile:
		s.Carrier, s.Where = TDMRepFile, "rule "+strconv.Itoa(ev.Rule)+" (location "+ev.Location+")"
		if ev.File != "" {
			s.Where += " of " + ev.File
		}
		if ev.Ignored > 0 {
			s.Where += " (" + strconv.Itoa(ev.Ignored) + " rules past " + strconv.Itoa(MaxTDMRules) + " not read)"
		}
	case TDMHeader:
		s.Carrier, s.Where = TDMHeader, "header"
	default:
		s.Carrier, s.Where = MetaElement, `<meta name="tdm-reservation">`
	}
	for _, c := range tdmRefused {
		s.Purpose = c
		r.add(s)
	}
}

// addTags adds the noai (and, on an image, noimageai) signals of the
// response's robots directives for the crawler known by agents.
func (r *Report) addTags(h http.Header, head []element, agents []string) {
	rules, dirs := robotsRules(h.Values("Robots-Tag"), h.Values("X-Robots-Tag"), head, agents)
	r.NoImageAI = dirs&NoImageAI != 0
	image := isImage(h)
	for _, rule := range rules {
		if rule.Name != "noai" && (rule.Name != "noimageai" || !image) {
			continue
		}
		where := "header"
		switch {
		case rule.Carrier == MetaElement:
			where = `<meta name="` + rule.Scope + `">`
		case rule.Scope != "":
			where = "header, for " + rule.Scope
		}
		for _, c := range tdmRefused {
			r.add(Signal{Purpose: c, Pref: dialect.PrefDisallow, Carrier: rule.Carrier, Where: where, Value: rule.Name})
		}
	}
}

// addMetaSignals adds the signals of the <meta name="content-signal">
// elements of head, read as the Content-Signal header (keywords some
// pages put there state nothing).
func (r *Report) addMetaSignals(head []element) {
	for _, el := range head {
		if name, _ := el.Attr("name"); el.Name == "meta" && strings.EqualFold(name, "content-signal") {
			content, _ := el.Attr("content")
			r.addUsage(dialect.ParseContentSignal(content), MetaElement, `<meta name="content-signal">`, content)
		}
	}
}

// MaxLicenses is how many distinct RSL licences are fetched for one URL;
// a licence pointed to beyond them is not fetched and counts as one that
// cannot be obtained.
const MaxLicenses = 8

// addLicenses adds, per purpose, the verdict of each RSL licence: those
// robots.txt points to, then the response's, each fetched once, all
// together ([fetchLicenses]). A pointer that is not RSL's is recorded (a
// signal that states nothing), never fetched.
func (r *Report) addLicenses(ctx context.Context, res *policy.Resolver, u *url.URL, ptrs []pointer, who Who, purposes []dialect.Category) error {
	var fetch []string
	for _, p := range ptrs {
		if p.rsl && !slices.Contains(fetch, p.url) && len(fetch) < MaxLicenses {
			fetch = append(fetch, p.url)
		}
	}
	docs, err := fetchLicenses(ctx, res, u, fetch)
	if err != nil {
		return err
	}
	seen := map[pointer]bool{}
	for _, p := range ptrs {
		key := p
		if p.rsl {
			key = pointer{url: p.url, rsl: true} // an RSL licence is read once, whatever points to it
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		var doc *RSL
		why, decides := "more than "+strconv.Itoa(MaxLicenses)+" licences for one URL", p.rsl
		switch i := slices.Index(fetch, p.url); {
		case !p.rsl && p.typ == "":
			why = "not an RSL licence (no type)"
		case !p.rsl:
			why = "not an RSL licence (type " + p.typ + ")"
		case i >= 0:
			doc, _ = docs[i].Value.(*RSL)
			why = docs[i].Err
			if nr, ok := docs[i].Value.(notRSLError); ok {
				why, decides = nr.Error(), false
			}
		}
		for _, c := range purposes {
			r.add(licenseSignal(doc, decides, why, p, u, c, who))
		}
	}
	return nil
}

// licenseSignal is what the licence doc that p points to says of purpose
// c for u, used by who. A licence that does not decide (one that is not
// RSL, for the reason why) states nothing. A licence that cannot be
// obtained (doc nil, for the reason why) licenses nothing (RSL: no
// fallback to permitted), so it refuses, with a Value that says so; one
// that permits the purpose but not the user or region says which term was
// not met.
func licenseSignal(doc *RSL, decides bool, why string, p pointer, u *url.URL, c dialect.Category, who Who) Signal {
	lt := &LicenseTerms{URL: p.url, From: p.from, Type: p.typ}
	s := Signal{Purpose: c, Carrier: LicenseDocument, Where: p.url + " (" + p.from + ")", License: lt, Value: why}
	if !decides {
		return s
	}
	s.Pref = dialect.PrefDisallow
	if doc == nil {
		s.Value = "unobtainable: " + why
		return s
	}
	v, err := doc.Decide(u, RSLUse{Purpose: c.String(), User: who.User, Geo: who.Geo})
	if err != nil {
		return Signal{} // a purpose RSL has no token for: no statement
	}
	if v.Content == nil {
		s.Value = "not licensed: no content element matches"
		return s
	}
	lt.Content, lt.Server = v.Content.URL, v.Content.Server
	s.Where += ", content " + strconv.Quote(v.Content.URL)
	if !v.Licensed {
		s.Value = "not licensed"
		if v.Unmet != "" {
			s.Value += ": " + v.Unmet
		}
		return s
	}
	s.Pref, s.Value = dialect.PrefAllow, "licensed"
	var terms []string
	if p := v.License.Payment; p != nil && p.Type != "free" {
		terms = append(terms, "payment "+p.Type)
		lt.Payment, lt.Amounts = p.Type, p.Amount
	}
	for _, rp := range v.License.Reporting {
		terms = append(terms, "reporting "+rp.Type)
		lt.Reporting = append(lt.Reporting, rp.Type)
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

// MarshalJSON writes the signal with names; a signal of the use level
// has no purpose.
func (s Signal) MarshalJSON() ([]byte, error) {
	type plain Signal
	v := struct {
		plain
		Purpose *dialect.Category `json:"purpose,omitempty"`
	}{plain: plain(s)}
	if s.Use == dialect.UseUnknown {
		v.Purpose = &s.Purpose
	}
	return json.Marshal(v)
}
