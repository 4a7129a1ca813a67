package dialect

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The usual Content-Usage and Content-Signal values are read without the
// general Dictionary parser: whatever parseSimplePrefs accepts, it must
// read as the general parser does.
func TestSimplePrefsMatchDictionary(t *testing.T) {
	cases := []string{
		"ai-train=yes, search=yes, ai-input=no",
		"search=no,ai-train=yes",
		"ai-train=yes,\tsearch=no , ai-input=yes",
		"train-ai=n, search=y",
		"train-ai=y, train-ai=n",
		"train-ai=n, train-ai=maybe",
		"search=Yes",
		"*=y, x.y_z-1*=tok:/!#$%&'*+-.^_`|~",
	}
	keys := []string{"ai-train", "search", "ai-input", "train-ai", "x", "*", "a.b_c-1*", "Search", "1x"}
	values := []string{"=yes", "=no", "=y", "=n", "=Y", "=maybe", "=*t:/", "", "=?1", "=\"n\"", "=(y)", "=1", ";p=1", "=y;q", "=", "=-x"}
	seps := []string{",", ", ", " ,", ",\t", " , ", ",,", " ", ""}
	rng := rand.New(rand.NewPCG(9, 10))
	for range 20000 {
		var b strings.Builder
		if rng.IntN(8) == 0 {
			b.WriteString(" ")
		}
		for i := range 1 + rng.IntN(4) {
			if i > 0 {
				sep := seps[rng.IntN(3)]
				if rng.IntN(6) == 0 {
					sep = seps[rng.IntN(len(seps))]
				}
				b.WriteString(sep)
			}
			b.WriteString(keys[rng.IntN(4)])
			if rng.IntN(6) == 0 {
				b.WriteString(keys[rng.IntN(len(keys))])
			}
			v := values[rng.IntN(4)]
			if rng.IntN(5) == 0 {
				v = values[rng.IntN(len(values))]
			}
			b.WriteString(v)
		}
		if rng.IntN(10) == 0 {
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		cases = append(cases, b.String())
	}
	accepted := 0
	for _, v := range cases {
		for _, k := range []struct {
			names   [numCategories]string
			yes, no string
		}{{signalNames, "yes", "no"}, {vocabNames, "y", "n"}} {
			u, ok := parseSimplePrefs(v, k.names, k.yes, k.no)
			if !ok {
				continue
			}
			accepted++
			if want := parseDictPrefs(v, k.names, k.yes, k.no); u != want {
				t.Fatalf("%q: %v, the general parser: %v", v, u, want)
			}
		}
	}
	if accepted < 1000 {
		t.Fatalf("only %d values read without the general parser", accepted)
	}
}
