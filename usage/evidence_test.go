package usage

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/politecrawl/robots/dialect"
)

// The evidence marshals with names and values as written: a tdmrep.json
// reservation a header replaced is kept and marked replaced, the
// tdm-policy URL and the licence's URL and payment are fields, a use-level
// signal has no purpose; and it reads back as it was.
func TestEvidenceJSON(t *testing.T) {
	site := newUsageSite(t, map[string]string{
		"/robots.txt":  "User-agent: *\nAllow: /\nContent-Signal: use=reference\n",
		tdmPath:        `[{"location": "/", "tdm-reservation": 1, "tdm-policy": "https://example.com/p.json"}]`,
		"/license.xml": licenseXML,
	})
	r := newResolver(t)
	h := http.Header{"Tdm-Reservation": {"0"}, "Link": {"</license.xml>; rel=license; type=application/rsl+xml"}}
	rep, err := CheckResponse(context.Background(), r, mustURL(t, site.URL+"/articles/x"), h, nil, dialect.Search)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	lic := site.URL + "/license.xml"
	want := `{"usage":{"train-ai":"y","search":"y","ai-input":"y","use":"reference"},"signals":[` +
		`{"use":"reference","carrier":"robots.txt","where":"line 3","value":"Content-Signal: use=reference"},` +
		`{"pref":"n","carrier":"tdmrep.json","where":"rule 0 (location /)","value":"1","tdm_policy":"https://example.com/p.json","replaced":true,"purpose":"train-ai"},` +
		`{"pref":"n","carrier":"tdmrep.json","where":"rule 0 (location /)","value":"1","tdm_policy":"https://example.com/p.json","replaced":true,"purpose":"ai-input"},` +
		`{"pref":"y","carrier":"tdm-reservation","where":"header","value":"0","purpose":"train-ai"},` +
		`{"pref":"y","carrier":"tdm-reservation","where":"header","value":"0","purpose":"ai-input"},` +
		`{"pref":"y","carrier":"license","where":"` + lic + ` (Link header), content \"/articles/\"","value":"licensed (payment attribution)",` +
		`"license":{"url":"` + lic + `","from":"Link header","type":"application/rsl+xml","content":"/articles/","payment":"attribution"},"purpose":"search"}]}`
	if string(b) != want {
		t.Errorf("JSON\n%s\nwant\n%s", b, want)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, rep) {
		t.Errorf("read back %+v (%v), want %+v", back, err, rep)
	}
	// The replaced reservation decides nothing: train-ai is not refused.
	if s, refused := rep.Refusal(trainAI, dialect.UseUnknown, false); refused {
		t.Errorf("refused by %v", s)
	}
	if _, err := json.Marshal(Signal{Carrier: Carrier(200)}); err == nil || !strings.Contains(err.Error(), "unknown carrier") {
		t.Errorf("an unknown carrier marshalled: %v", err)
	}
}
