package usage

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
)

// specExample is the specification's example file.
const specExample = `[
  {"location": "/directory-a/", "tdm-reservation": 1},
  {"location": "/directory-b/html/", "tdm-reservation": 1, "tdm-policy": "https://provider.com/policies/policy.json"},
  {"location": "/directory-b/images/*.jpg", "tdm-reservation": 0}
]`

func TestTDMRepMatch(t *testing.T) {
	const policy = "https://provider.com/policies/policy.json"
	for _, tc := range []struct {
		file, path string
		want       Reservation
		policy     string
		rule       int // the index of the deciding rule, -1 for none
	}{
		{specExample, "/directory-a/page.html", Reserved, "", 0},
		{specExample, "/directory-b/html/x.html", Reserved, policy, 1},
		{specExample, "/directory-b/images/a/b.jpg", NotReserved, "", 2},
		{specExample, "/directory-b/images/b.png", Unset, "", -1},
		{specExample, "/", Unset, "", -1},
		{`[{"location": "/", "tdm-reservation": 1}]`, "/anything?q=1", Reserved, "", 0},
		// The first match in array order wins, not the longest.
		{`[{"location": "/a", "tdm-reservation": 0}, {"location": "/a/b", "tdm-reservation": 1}]`, "/a/b/c", NotReserved, "", 0},
		{`[{"location": "/a/b", "tdm-reservation": 1}, {"location": "/a", "tdm-reservation": 0}]`, "/a/b/c", Reserved, "", 0},
		// The end anchor and %-encoding.
		{`[{"location": "/*.pdf$", "tdm-reservation": 1}]`, "/x.pdf", Reserved, "", 0},
		{`[{"location": "/*.pdf$", "tdm-reservation": 1}]`, "/x.pdf?dl=1", Unset, "", -1},
		{`[{"location": "/path/foo-%24", "tdm-reservation": 1}]`, "/path/foo-$", Reserved, "", 0},
		{`[{"location": "/~user/", "tdm-reservation": 1}]`, "/%7Euser/a", Reserved, "", 0},
		{`[{"location": "/Dir/", "tdm-reservation": 1}]`, "/dir/a", Unset, "", -1},
		// Values other than 0 and 1 are unset; the rule still decides.
		{`[{"location": "/", "tdm-reservation": 2}, {"location": "/", "tdm-reservation": 1}]`, "/a", Unset, "", 0},
		{`[{"location": "/", "tdm-reservation": true}]`, "/a", Unset, "", 0},
		{`[{"location": "/", "tdm-reservation": "yes"}]`, "/a", Unset, "", 0},
		{`[{"location": "/", "tdm-reservation": null}]`, "/a", Unset, "", 0},
		{`[{"location": "/", "tdm-reservation": "1"}]`, "/a", Reserved, "", 0},
		{`[{"location": "/", "tdm-reservation": "0"}]`, "/a", NotReserved, "", 0},
		{`[{"location": "/", "tdm-reservation": 1.0}]`, "/a", Unset, "", 0},
		// Invalid elements are dropped; the others keep their index.
		{`[3, {"tdm-reservation": 1}, {"location": "/"}, {"location": 7, "tdm-reservation": 1}, {"location": "", "tdm-reservation": 1},` +
			` {"location": "/", "tdm-reservation": 1, "tdm-policy": 5}]`, "/a", Reserved, "", 5},
		{`[{"Location": "/", "tdm-reservation": 1}]`, "/a", Unset, "", -1}, // member names are case-sensitive
		{`[]`, "/a", Unset, "", -1},
	} {
		f, err := ParseTDMRep(strings.NewReader(tc.file))
		if err != nil {
			t.Fatalf("ParseFile(%q): %v", tc.file, err)
		}
		got := f.Match(tc.path)
		rule := -1
		if got.ReservationFrom.Carrier == TDMRepFile {
			rule = got.ReservationFrom.Rule
		}
		if got.Reservation != tc.want || got.Policy != tc.policy || rule != tc.rule {
			t.Errorf("%s\nMatch(%q) = %v %q rule %d, want %v %q rule %d", tc.file, tc.path,
				got.Reservation, got.Policy, rule, tc.want, tc.policy, tc.rule)
		}
		if rule >= 0 && got.ReservationFrom.Location != f.Rules[indexOf(f, rule)].Location {
			t.Errorf("evidence location %q", got.ReservationFrom.Location)
		}
	}
	var nilFile *TDMRep
	if got := nilFile.Match("/a"); got != (TDMTerms{}) {
		t.Errorf("nil TDMRep: %+v", got)
	}
}

func indexOf(f *TDMRep, index int) int {
	for i, r := range f.Rules {
		if r.Index == index {
			return i
		}
	}
	return -1
}

func TestParseFileErrors(t *testing.T) {
	for _, body := range []string{
		``, `{"location": "/", "tdm-reservation": 1}`, `[{"location": "/", "tdm-reservation": 1}`, `null`, `<html>`,
		`["` + strings.Repeat("x", MaxTDMRepSize) + `"]`,
	} {
		if _, err := ParseTDMRep(strings.NewReader(body)); !errors.Is(err, ErrInvalidTDMRep) {
			t.Errorf("ParseFile(%.40q) error = %v, want ErrInvalidTDMRep", body, err)
		}
	}
	readErr := errors.New("connection reset")
	if _, err := ParseTDMRep(iotest.ErrReader(readErr)); !errors.Is(err, readErr) || errors.Is(err, ErrInvalidTDMRep) {
		t.Errorf("read error = %v", err)
	}
	f, err := ParseTDMRep(strings.NewReader("\xEF\xBB\xBF \n[{\"location\": \"/\", \"tdm-reservation\": 1}, 2]"))
	if err != nil || len(f.Rules) != 1 || f.Dropped != 1 {
		t.Errorf("BOM and space: %+v, %v", f, err)
	}
}

func TestHeaderMetaCombine(t *testing.T) {
	file, err := ParseTDMRep(strings.NewReader(specExample))
	if err != nil {
		t.Fatal(err)
	}
	h := func(kv ...string) http.Header {
		hdr := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			hdr.Add(kv[i], kv[i+1])
		}
		return hdr
	}
	for _, tc := range []struct {
		name       string
		path       string
		header     http.Header
		doc        string
		want       Reservation
		resFrom    Carrier
		policy     string
		policyFrom Carrier
	}{
		{"file only", "/directory-b/html/a", nil, "", Reserved, TDMRepFile, "https://provider.com/policies/policy.json", TDMRepFile},
		{"header replaces the reservation only", "/directory-b/html/a", h("tdm-reservation", "0"), "",
			NotReserved, TDMHeader, "https://provider.com/policies/policy.json", TDMRepFile},
		{"header replaces the policy only", "/directory-a/x", h("TDM-Policy", "https://h/p"), "",
			Reserved, TDMRepFile, "https://h/p", TDMHeader},
		{"meta over header", "/x", h("tdm-reservation", "0"), `<meta name="tdm-reservation" content="1">`,
			Reserved, MetaElement, "", NoCarrier},
		{"meta policy only", "/x", h("tdm-reservation", "1"), `<meta name="TDM-Policy" content=" https://m/p ">`,
			Reserved, TDMHeader, "https://m/p", MetaElement},
		{"an invalid header value does not reset", "/directory-a/x", h("tdm-reservation", "yes"), "",
			Reserved, TDMRepFile, "", NoCarrier},
		{"an empty meta does not reset", "/directory-a/x", nil, `<meta name="tdm-reservation" content="">`,
			Reserved, TDMRepFile, "", NoCarrier},
		{"conflicting headers: 1 wins", "/x", h("tdm-reservation", "0", "tdm-reservation", "1"), "",
			Reserved, TDMHeader, "", NoCarrier},
		{"a combined header", "/x", h("tdm-reservation", "1, 0"), "", Reserved, TDMHeader, "", NoCarrier},
		{"conflicting metas: 1 wins", "/x", nil,
			`<meta name="tdm-reservation" content="1"><meta name="tdm-reservation" content="0">`, Reserved, MetaElement, "", NoCarrier},
		{"meta in the body is not read", "/x", nil, `<body><meta name="tdm-reservation" content="1">`, Unset, NoCarrier, "", NoCarrier},
		{"the first policy wins", "/x", h("tdm-policy", "https://a", "tdm-policy", "https://b"), "",
			Unset, NoCarrier, "https://a", TDMHeader},
	} {
		got := combineTDM(file.Match(tc.path), tdmHeader(tc.header), tdmMeta(readHead(tc.doc)))
		if got.Reservation != tc.want || got.ReservationFrom.Carrier != tc.resFrom ||
			got.Policy != tc.policy || got.PolicyFrom.Carrier != tc.policyFrom {
			t.Errorf("%s: got %v from %v, policy %q from %v; want %v from %v, policy %q from %v", tc.name,
				got.Reservation, got.ReservationFrom.Carrier, got.Policy, got.PolicyFrom.Carrier,
				tc.want, tc.resFrom, tc.policy, tc.policyFrom)
		}
	}
	// The evidence of a header: the field value that decided.
	if got := tdmHeader(h("tdm-reservation", "0", "tdm-reservation", " 1 ")); got.ReservationFrom.Value != " 1 " {
		t.Errorf("header evidence %+v", got.ReservationFrom)
	}
}

func TestTDMStrings(t *testing.T) {
	got := Unset.String() + NotReserved.String() + Reserved.String() + NoCarrier.String() +
		TDMRepFile.String() + TDMHeader.String() + MetaElement.String()
	if got != "unset01nonetdmrep.jsontdm-reservationmeta" {
		t.Errorf("strings %q", got)
	}
}
