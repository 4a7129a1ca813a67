package dialect

import (
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
