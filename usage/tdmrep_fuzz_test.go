package usage

import (
	"errors"
	"strings"
	"testing"

	"github.com/politecrawl/robots/internal/pathpat"
)

// FuzzParseTDMRep: any body parses or fails with ErrInvalidTDMRep, without a
// panic, and a match is decided by the first rule that matches.
func FuzzParseTDMRep(f *testing.F) {
	f.Add(specExample, "/directory-b/images/x.jpg")
	f.Add(`[{"location":"/a$","tdm-reservation":"1","tdm-policy":"p"},{"location":"*","tdm-reservation":0}]`, "/a")
	f.Fuzz(func(t *testing.T, body, path string) {
		file, err := ParseTDMRep(strings.NewReader(body))
		if err != nil {
			if !errors.Is(err, ErrInvalidTDMRep) {
				t.Fatalf("error %v does not wrap ErrInvalidTDMRep", err)
			}
			return
		}
		got := file.Match(path)
		p := pathpat.Path(path)
		for _, r := range file.Rules {
			if r.pattern.Match(p) {
				if got.ReservationFrom.Carrier != TDMRepFile || got.ReservationFrom.Rule != r.Index || got.Reservation != r.Reservation {
					t.Fatalf("Match(%q) = %+v, want rule %d", path, got, r.Index)
				}
				return
			}
		}
		if got != (TDMTerms{}) {
			t.Fatalf("Match(%q) = %+v without a matching rule", path, got)
		}
	})
}

// FuzzTDMMeta: any document is read without a panic, and terms come only
// from a document that names them.
func FuzzTDMMeta(f *testing.F) {
	f.Add(`<meta name="tdm-reservation" content="1"><meta name=tdm-policy content=x>`)
	f.Add(`<head><!-- x --><script><meta name="tdm-reservation" content="1"></script>`)
	f.Fuzz(func(t *testing.T, doc string) {
		got := tdmMeta(readHead(doc))
		if !strings.Contains(strings.ToLower(doc), "tdm-") && got != (TDMTerms{}) {
			t.Fatalf("Meta(%q) = %+v", doc, got)
		}
		if got.Reservation != Unset && got.ReservationFrom.Carrier != MetaElement {
			t.Fatalf("Meta(%q) = %+v: no evidence", doc, got)
		}
	})
}
