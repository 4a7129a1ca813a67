package dialect

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// A line longer than shortLine is read by readShort up to shortLine bytes
// and finished by readRest; the record must be the one readLine makes of
// the whole line.
func TestReadRestMatchesReadLine(t *testing.T) {
	const alphabet = "ab/:#% \t\v\f\x00\x80\xff*$Dd"
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []string{
		strings.Repeat(" ", 120) + "Disallow: /x",                  // all space in the head: readLine
		"Disallow: /" + strings.Repeat("a", 100) + "#c:d",          // comment after the head
		"Disallow " + strings.Repeat("a", 100) + ":x",              // colon after the head
		"Disallow: /" + strings.Repeat("a", 100) + "\x00#",         // NUL before the comment
		"Disallow: /" + strings.Repeat("a", 90) + "#" + "b:c\x00d", // comment in the head
		"User-agent " + strings.Repeat("b", 120),                   // two words, no colon
	}
	for range 5000 {
		b := make([]byte, shortLine+1+rng.IntN(80))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, line := range cases {
		for _, d := range all {
			s := &d.s
			for _, body := range []string{line, line + "\r\nx", line + "\ny"} {
				var head, whole lineRec
				_, _, _, ok := s.readShort(body, 0, &head)
				if ok {
					t.Fatalf("%s: %q read as a short line", d, body)
				}
				lf, cr := -1, -1
				end, _ := s.lineEnd(body, 0, &lf, &cr)
				if head.k0 >= shortLine || s.maxLineBytes > 0 && end > s.maxLineBytes {
					continue // scan reads it with readLine
				}
				need := s.readRest(body, 0, end, &head)
				need2 := s.readLine(body, 0, end, &whole)
				// plain only says that no byte needs escaping when set:
				// readRest leaves it unset, as readLine does past
				// shortLine bytes of content.
				whole.plain = false
				if need != need2 || head != whole {
					t.Fatalf("%s: %q: readRest %v %+v, readLine %v %+v", d, body, need, head, need2, whole)
				}
			}
		}
	}
}

// foldEqual compares a key with a dialect's key name as strings.EqualFold
// does, for a key of the name's byte length: every name, in mixed case and
// with each byte changed in turn (to any byte but CR and NUL).
func TestFoldEqual(t *testing.T) {
	var names []string
	for _, d := range all {
		for _, p := range d.s.keyPrefixes {
			names = append(names, p.prefix)
		}
		for name := range d.s.keys {
			names = append(names, name)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, name := range names {
		for range 50 {
			b := []byte(name)
			for i := range b {
				if rng.IntN(2) == 0 {
					b[i] = strings.ToUpper(string(b[i]))[0]
				}
			}
			if !foldEqual(string(b), name) {
				t.Fatalf("foldEqual(%q, %q) = false", b, name)
			}
			for i := range b {
				c := b[i]
				b[i] = byte(rng.IntN(256))
				if b[i] == '\r' || b[i] == 0 {
					// Never in a key where they would compare equal to
					// '-' or ' ' (see foldEqual).
					b[i] = 'x'
				}
				want := strings.EqualFold(string(b), name)
				if got := foldEqual(string(b), name); got != want {
					t.Fatalf("foldEqual(%q, %q) = %v, want %v", b, name, got, want)
				}
				b[i] = c
			}
		}
	}
}

// classify finds a key written as one of the names by its hash (keyFast):
// it must answer as going over the names in order does, for the names, in
// mixed case, changed in a byte, cut or followed by more bytes.
func TestClassifyFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, d := range all {
		s := &d.s
		var names []string
		for _, list := range s.keyTab {
			for _, e := range list {
				names = append(names, e.name)
			}
		}
		fast := 0
		for _, f := range s.keyFast {
			if f.n != 0 {
				fast++
			}
		}
		t.Logf("%s: %d of %d names found by hash", d, fast, len(names))
		for _, name := range names {
			for range 200 {
				b := []byte(name)
				for i := range b {
					if rng.IntN(2) == 0 {
						b[i] = strings.ToUpper(string(b[i]))[0]
					}
				}
				switch rng.IntN(4) {
				case 1:
					b[rng.IntN(len(b))] = "aZ-_ :x\x80"[rng.IntN(8)]
				case 2:
					b = b[:1+rng.IntN(len(b))]
				case 3:
					b = append(b, "a-Z x"[rng.IntN(5)])
				}
				key := string(b)
				if got, want := s.classify(key), s.classifyLoop(key); got != want {
					t.Fatalf("%s: classify(%q) = %v, going over the names: %v", d, key, got, want)
				}
			}
		}
	}
}
