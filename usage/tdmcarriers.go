package usage

import (
	"net/http"
	"strings"
)

// TDMEvidence says which statement set a property.
type TDMEvidence struct {
	Carrier Carrier
	// Rule and Location identify the file's rule (TDMRepFile): its index
	// in the array and its location as written.
	Rule     int
	Location string
	// File is the URL the file was read from when a redirect took its
	// fetch to another origin (whose rules then apply: the protocol lets
	// the file's URL redirect); "" for the origin's own.
	File string
	// Ignored counts the file's rules past [MaxTDMRules], not read.
	Ignored int
	// Value is the header field value or meta content that decided, as
	// written (TDMHeader, MetaElement).
	Value string
}

// TDMTerms are the TDM terms stated for a resource, each property with the
// evidence of the statement that set it. The zero TDMTerms state nothing.
type TDMTerms struct {
	Reservation Reservation
	Policy      string // tdm-policy; act on it only when Reserved
	// ReservationFrom is the statement that set Reservation; for the file,
	// the matching rule even when its value left Reservation unset.
	ReservationFrom TDMEvidence
	PolicyFrom      TDMEvidence
}

// combineTDM returns the terms of the carriers read in order (the file's
// terms for the path, then the response's header terms, then its meta
// terms), each replacing only the properties it carries: a Reservation
// other than Unset, a Policy other than "".
func combineTDM(carriers ...TDMTerms) TDMTerms {
	var t TDMTerms
	for _, c := range carriers {
		if c.Reservation != Unset || t.ReservationFrom.Carrier == NoCarrier {
			t.Reservation, t.ReservationFrom = c.Reservation, c.ReservationFrom
		}
		if c.Policy != "" {
			t.Policy, t.PolicyFrom = c.Policy, c.PolicyFrom
		}
	}
	return t
}

// tdmHeader returns the terms the tdm-reservation and tdm-policy fields of
// the response header h state (field names are case-insensitive, as
// net/http canonicalises them). A field value may be a comma-separated
// list, as HTTP combines repeated fields; values other than 0 and 1 are
// not read, 1 wins over 0, and the first non-empty tdm-policy wins.
func tdmHeader(h http.Header) TDMTerms {
	var t TDMTerms
	for _, v := range h.Values("Tdm-Reservation") {
		for _, e := range strings.Split(v, ",") {
			t.setReservation(e, TDMHeader, v)
		}
	}
	for _, v := range h.Values("Tdm-Policy") {
		t.setPolicy(v, TDMHeader)
	}
	return t
}

// tdmMeta returns the terms the <meta name="tdm-reservation"> and <meta
// name="tdm-policy"> elements of head, the head of an HTML document, state
// (names compare case-insensitively, content is read as in [tdmHeader]: 1
// wins over 0, the first policy wins). They cover the document itself, not
// the resources it references.
func tdmMeta(head []element) TDMTerms {
	var t TDMTerms
	for _, e := range head {
		if e.Name != "meta" {
			continue
		}
		name, _ := e.Attr("name")
		content, _ := e.Attr("content")
		switch name = strings.TrimSpace(name); {
		case strings.EqualFold(name, "tdm-reservation"):
			t.setReservation(content, MetaElement, content)
		case strings.EqualFold(name, "tdm-policy"):
			t.setPolicy(content, MetaElement)
		}
	}
	return t
}

// setReservation reads one tdm-reservation value v, stated in raw.
func (t *TDMTerms) setReservation(v string, c Carrier, raw string) {
	if r := reservation(v); r > t.Reservation {
		t.Reservation, t.ReservationFrom = r, TDMEvidence{Carrier: c, Value: raw}
	}
}

// setPolicy reads one tdm-policy value v.
func (t *TDMTerms) setPolicy(v string, c Carrier) {
	if v = strings.TrimSpace(v); v != "" && t.Policy == "" {
		t.Policy, t.PolicyFrom = v, TDMEvidence{Carrier: c, Value: v}
	}
}
