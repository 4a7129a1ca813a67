package dialect

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// rfcURLSpecialBytewise is rfcURLSpecial one byte at a time: the reference.
func rfcURLSpecialBytewise(s string) int {
	for i := 0; i < len(s); i++ {
		if rfcPlain[1][s[i]] == 0 {
			return i
		}
	}
	return -1
}

// TestRFCURLSpecialEveryByte puts every byte value at every position of
// paths of 0 to 40 bytes (so in every lane of the eight-byte blocks and in
// the tail), alone and before another special byte, and compares the
// block-at-a-time scan with the bytewise one.
func TestRFCURLSpecialEveryByte(t *testing.T) {
	for n := 0; n <= 40; n++ {
		base := []byte(strings.Repeat("a", n))
		if got := rfcURLSpecial(string(base)); got != -1 {
			t.Fatalf("plain path of %d bytes: %d, want -1", n, got)
		}
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := append([]byte(nil), base...)
				b[pos] = byte(c)
				s := string(b)
				if got, want := rfcURLSpecial(s), rfcURLSpecialBytewise(s); got != want {
					t.Fatalf("byte %#x at %d of %d: %d, want %d", c, pos, n, got, want)
				}
				if pos+1 < n {
					// A second special byte later: the first still counts.
					b[pos+1] = 0xFF
					s = string(b)
					if got, want := rfcURLSpecial(s), rfcURLSpecialBytewise(s); got != want {
						t.Fatalf("byte %#x at %d then 0xff, of %d: %d, want %d", c, pos, n, got, want)
					}
				}
			}
		}
	}
}

// googleNeedsEscape tells exactly when Google's escaping changes a
// pattern (which then costs a copy).
func TestGoogleNeedsEscapeMatchesEscape(t *testing.T) {
	const alphabet = "%aAfFgG09/x\x7f\x80\xff"
	rng := rand.New(rand.NewPCG(11, 12))
	for range 50000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
			if rng.IntN(3) == 0 {
				b[i] = 'z'
			}
		}
		want := string(appendGoogleEscape(nil, string(b))) != string(b)
		if got := googleNeedsEscape(string(b)); got != want {
			t.Fatalf("googleNeedsEscape(%q) = %v, want %v", b, got, want)
		}
	}
}
