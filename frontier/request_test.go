package frontier

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gocolly/colly/v2"
)

// slowLease is SetLease by decoding and encoding again: the reference.
func slowLease(t testing.TB, b []byte, id string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("reference decode of %q: %v", b, err)
	}
	ctx, _ := m["Ctx"].(map[string]any)
	if ctx == nil {
		ctx = map[string]any{}
	}
	ctx[LeaseKey] = id
	m["Ctx"] = ctx
	return m
}

func decodeAny(t testing.TB, b []byte) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode of %q: %v", b, err)
	}
	return m
}

// SetLease gives what decoding, setting the key and encoding again gives,
// on Colly's own requests and on other spellings of the same JSON; the
// usual case (Colly's bytes) is a splice; the input is left as it was.
func TestSetLease(t *testing.T) {
	c := colly.NewCollector()
	var fromColly []string
	for _, ctx := range []map[string]any{
		nil,
		{"a": "b"},
		{LeaseKey: "old-lease", "x": 1.5},
		{"tricky": `}"{\"Ctx\":null}`, "nested": map[string]any{"Ctx": []any{"}", "]"}}},
	} {
		r := &colly.Request{Ctx: colly.NewContext(), Method: "POST", Depth: 3, Body: strings.NewReader(`{"Ctx":{}}`), Headers: &http.Header{"X": {"\"}"}}}
		r.URL, _ = url.Parse(`https://example.com/a?b="}"&c=\`)
		for k, v := range ctx {
			r.Ctx.Put(k, v)
		}
		b, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		fromColly = append(fromColly, string(b))
	}
	cases := append(fromColly,
		`{"URL":"https://example.com/","Ctx":null}`,
		`{"URL":"https://example.com/","Ctx":{}}`,
		` { "Ctx" : { } , "URL" : "https://example.com/" } `,
		`{"Ctx":{"k":{"a":[1,{"b":"}"}]}},"URL":"https://example.com/"}`,
		`{"URL":"https://example.com/"}`,                          // no Ctx: the slow path
		`{"URL":"https://example.com/","Ctx":{},"Ctx":{"a":"b"}}`, // twice: the slow path
	)
	for _, in := range cases {
		b := []byte(in)
		for _, id := range []string{"abc-1", "é\"\\"} {
			got, err := SetLease(b, id)
			if err != nil {
				t.Errorf("SetLease(%q, %q): %v", in, id, err)
				continue
			}
			if string(b) != in {
				t.Fatalf("SetLease modified its input: %q", b)
			}
			if want := slowLease(t, b, id); !reflect.DeepEqual(decodeAny(t, got), want) {
				t.Errorf("SetLease(%q, %q) = %s, want the same as %v", in, id, got, want)
			}
		}
	}
	for _, in := range fromColly {
		got, ok := spliceLease([]byte(in), "abc-1")
		if !ok {
			t.Errorf("Colly's request %s is not spliced", in)
		}
		r, err := c.UnmarshalRequest(got)
		if err != nil || r.Ctx.Get(LeaseKey) != "abc-1" {
			t.Errorf("Colly reads %s as lease %q (%v)", got, r.Ctx.Get(LeaseKey), err)
		}
	}
	for _, bad := range []string{`{"Ctx":`, `{"URL":"https://example.com/","Ctx":"x"}`, `[]`} {
		if _, err := SetLease([]byte(bad), "x"); !errors.Is(err, ErrBadRequest) {
			t.Errorf("SetLease(%q): %v, want ErrBadRequest", bad, err)
		}
	}
}

func TestSetLeaseAllocs(t *testing.T) {
	b := []byte(`{"URL":"https://example.com/p","Method":"GET","Depth":1,"Body":"","ID":7,"Ctx":{"k":"v"},"Headers":{"User-Agent":["x"]}}`)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := SetLease(b, "f00d-1z"); err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Errorf("%v allocations, want 1 (the result)", n)
	}
}

// FuzzSetLease: on any JSON object, SetLease gives what the reference
// gives, or an error where the reference cannot decode it either.
func FuzzSetLease(f *testing.F) {
	for _, s := range []string{`{"Ctx":{}}`, `{"Ctx":null,"a":[1,"}"]}`, `{"a":"\"Ctx\":{}","Ctx":{"b":{}}}`, `{}`} {
		f.Add(s, "id-1")
	}
	f.Fuzz(func(t *testing.T, in, id string) {
		var m map[string]any
		if json.Unmarshal([]byte(in), &m) != nil || !utf8.ValidString(id) {
			return
		}
		if _, ok := m["Ctx"]; ok {
			if _, obj := m["Ctx"].(map[string]any); !obj && m["Ctx"] != nil {
				return // the reference cannot set a key in it
			}
		}
		got, err := SetLease([]byte(in), id)
		if err != nil {
			t.Fatalf("SetLease(%q): %v", in, err)
		}
		var gm map[string]any
		if err := json.Unmarshal(got, &gm); err != nil {
			t.Fatalf("SetLease(%q, %q) = %q: %v", in, id, got, err)
		}
		if want := slowLease(t, []byte(in), id); !reflect.DeepEqual(gm, want) {
			t.Fatalf("SetLease(%q, %q) = %s, want %v", in, id, got, want)
		}
	})
}
