package policy

import (
	"testing"
	"time"
)

// The usage document cache holds at most its count and its bytes,
// dropping an expired entry first, else the oldest; the entry just put
// stays even when it alone is over the bytes.
func TestDocCacheBounds(t *testing.T) {
	c := newDocCache(3, 100)
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	k := func(s string) docKey { return docKey{"tdmrep.json", s} }
	c.put(k("a"), &Document{Value: "A", Expires: at(100)}, 10, at(0))
	c.put(k("b"), &Document{Value: "B", Expires: at(5)}, 10, at(1)) // expires first
	c.put(k("c"), &Document{Value: "C", Expires: at(100)}, 10, at(2))
	c.put(k("d"), &Document{Value: "D", Expires: at(100)}, 10, at(10)) // full: b has expired, it goes
	if c.get(k("a"), at(10)) == nil {
		t.Error("a dropped while b had expired")
	}
	c.put(k("e"), &Document{Value: "E", Expires: at(100)}, 10, at(11)) // full: the oldest, a, goes
	if c.get(k("a"), at(11)) != nil {
		t.Error("a kept past the count")
	}
	c.put(k("f"), &Document{Value: "F", Expires: at(100)}, 95, at(12)) // over the bytes: all the others go
	if len(c.m) != 1 || c.bytes != 95 {
		t.Errorf("%d entries, %d bytes, want f alone", len(c.m), c.bytes)
	}
	c.put(k("g"), &Document{Value: "G", Expires: at(100)}, 500, at(13))
	if d := c.get(k("g"), at(13)); d == nil || d.Value != "G" || len(c.m) != 1 {
		t.Errorf("g: %v, %d entries", d, len(c.m))
	}
}
