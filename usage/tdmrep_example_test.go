package usage

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// The three carriers of one response, combined: the file reserves the
// directory, the response's header names a policy, its meta says nothing.
func ExampleParseTDMRep() {
	file, err := ParseTDMRep(strings.NewReader(`[
		{"location": "/images/*.jpg", "tdm-reservation": 0},
		{"location": "/", "tdm-reservation": 1}]`))
	if err != nil {
		fmt.Println("does not implement TDMRep:", err)
		return
	}
	header := http.Header{"Tdm-Policy": {"https://example.com/tdm-policy.json"}}
	doc := []byte(`<html><head><title>Report</title></head><body>`)

	t := combineTDM(file.Match("/reports/2026.html"), tdmHeader(header), tdmMeta(slices.Collect(headElements(doc))))
	fmt.Printf("tdm-reservation %v from %v rule %d (%s)\n", t.Reservation, t.ReservationFrom.Carrier,
		t.ReservationFrom.Rule, t.ReservationFrom.Location)
	fmt.Printf("tdm-policy %s from %v\n", t.Policy, t.PolicyFrom.Carrier)
	// Output:
	// tdm-reservation 1 from tdmrep.json rule 1 (/)
	// tdm-policy https://example.com/tdm-policy.json from tdm-reservation
}
