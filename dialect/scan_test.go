package dialect

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// refScan is the scanner written plainly, a line at a time with the
// strings package: what scan must give, whichever way readLine reads a
// line (the short-line loop, or the rest of a long line searched).
func refScan(s *spec, body string) (recs []lineRec, used int, cut bool, last int) {
	cut = len(body) > MaxBodyBytes
	pos := 0
	for pos < len(bom) && pos < len(body) && body[pos] == bom[pos] {
		pos++
	}
	for pos < len(body) && pos < MaxBodyBytes {
		end := len(body)
		if i := strings.IndexAny(body[pos:], "\r\n"); i >= 0 {
			end = pos + i
		}
		if end > MaxBodyBytes {
			break
		}
		last++
		if r, need := refLine(s, body, pos, end); need {
			r.num = int32(last)
			recs = append(recs, r)
		}
		pos = end + 1
		if strings.HasPrefix(body[end:], "\r\n") {
			pos++
		}
	}
	used = len(body)
	if cut {
		used = 0
		if last > 0 {
			used = min(pos, MaxBodyBytes)
		}
	}
	return recs, used, cut, last
}

// refLine reads the line body[pos:end] as readLine does (plain left unset).
func refLine(s *spec, body string, pos, end int) (r lineRec, need bool) {
	if s.maxLineBytes > 0 && end-pos > s.maxLineBytes {
		end, r.prob = pos+s.maxLineBytes, problemLong
	}
	text, commented := body[pos:end], false
	if i := strings.IndexAny(text, "#\x00"); i >= 0 && (text[i] == '#' || s.nulEndsLine) {
		text, commented = text[:i], text[i] == '#'
	} else if i := strings.IndexByte(text, '#'); i >= 0 {
		text, commented = text[:i], true
	}
	const space = " \t\v\f"
	c0 := pos + len(text) - len(strings.TrimLeft(text, space))
	content := strings.Trim(text, space)
	if content == "" {
		r.blank = !commented
		return r, r.prob != problemNone || r.blank && s.blankLineRecords
	}
	var key, value string
	if i := strings.IndexByte(content, ':'); i >= 0 {
		key, value = strings.TrimRight(content[:i], space), strings.TrimLeft(content[i+1:], space)
	} else if w := strings.IndexAny(content, " \t"); w >= 0 && s.colonlessTwoWord {
		// Google: two words apart by spaces and tabs; the second one
		// starts after them (then its white space is trimmed).
		rest := strings.TrimLeft(content[w:], " \t")
		if strings.ContainsAny(rest, " \t") {
			r.prob = problemNoColon
			return r, true
		}
		key, value = content[:w], strings.TrimLeft(rest, space)
	} else {
		r.prob = problemNoColon
		return r, true
	}
	if key == "" {
		r.prob = problemEmptyKey
		return r, true
	}
	v1 := c0 + len(content)
	r.k0, r.k1, r.v0, r.v1 = int32(c0), int32(c0+len(key)), int32(v1-len(value)), int32(v1)
	r.kind = s.classify(key)
	return r, true
}

// sameScan checks scan against refScan on body.
func sameScan(t *testing.T, d *Dialect, body string) {
	t.Helper()
	var n lineCounts
	got, used, cut, last := d.s.scan(body, nil, &n)
	want, used2, cut2, last2 := refScan(&d.s, body)
	if used != used2 || cut != cut2 || last != last2 || len(got) != len(want) {
		t.Fatalf("%s: %q: scan %d lines kept, %d bytes, cut %v, %d lines; reference %d, %d, %v, %d",
			d, body, len(got), used, cut, last, len(want), used2, cut2, last2)
	}
	for i := range got {
		g := got[i]
		g.plain = false
		if g != want[i] {
			t.Fatalf("%s: %q: line %d: scan %+v, reference %+v", d, body, want[i].num, got[i], want[i])
		}
	}
}

// TestScanMatchesReference runs sameScan over random bodies made of the
// bytes the scanner treats specially, with lines short and long (past
// shortLine, and past google's 16,663 bytes).
func TestScanMatchesReference(t *testing.T) {
	const alphabet = "ab/:#% \t\v\f\r\n\x00\x80\xff*$Dd"
	rng := rand.New(rand.NewPCG(1, 2))
	bodies := []string{
		strings.Repeat(" ", 120) + "Disallow: /x",
		"Disallow: /" + strings.Repeat("a", 100) + "#c:d",
		"Disallow " + strings.Repeat("a", 100) + ":x",
		"Disallow: /" + strings.Repeat("a", 100) + "\x00#",
		"Disallow: /" + strings.Repeat("a", 90) + "#" + "b:c\x00d",
		"User-agent " + strings.Repeat("b", 120),
		"Disallow: /" + strings.Repeat("a", 17000) + "\nAllow: /b",
		"Disallow" + strings.Repeat(" ", 17000) + ": /c\r\nAllow: /b",
		strings.Repeat(" ", 17000) + "#x\n\nUser-agent: a",
	}
	buf := make([]byte, 0, 400)
	for range 20000 {
		buf = buf[:rng.IntN(400)]
		for i := range buf {
			buf[i] = alphabet[rng.IntN(len(alphabet))]
		}
		bodies = append(bodies, string(buf))
	}
	for _, body := range bodies {
		for _, d := range all {
			sameScan(t, d, body)
		}
	}
}
