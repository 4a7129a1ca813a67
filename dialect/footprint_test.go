package dialect

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Footprint estimates what a parsed file and its Ruleset hold: it must stay
// within [0.6, 1.6] of the heap they really keep, from tiny to 400 KB
// files, plain and wildcard rules, one group or many.
func TestFootprintTracksHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	gen := func(groups, rules int, wild bool) string {
		var b strings.Builder
		for g := range groups {
			fmt.Fprintf(&b, "User-agent: bot%d\nUser-agent: other%d\n", g, g)
			if g == groups-1 {
				b.WriteString("User-agent: examplebot\n")
			}
			for r := range rules {
				if wild && r%2 == 0 {
					fmt.Fprintf(&b, "Disallow: /*/section-%d/*.pdf$\n", r)
				} else {
					fmt.Fprintf(&b, "Allow: /products/category-%d/item\n", r)
				}
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	for _, c := range []struct {
		name string
		body string
	}{
		{"tiny", "User-agent: *\nDisallow: /private\n"},
		{"tiny with a sitemap", "User-agent: *\nDisallow: /private\nSitemap: https://example.com/sitemap.xml\n"},
		{"tiny with a delay before the agents", "Crawl-delay: 5\nUser-agent: *\nDisallow: /private\n"},
		{"plain 3,000 rules", gen(1, 3000, false)},
		{"wildcards 3,000 rules", gen(1, 3000, true)},
		{"200 groups of 10", gen(200, 10, true)},
		{"400 KB", gen(1, 12000, true)},
	} {
		const n = 16
		keep := make([]any, 0, n)
		est := 0
		before := heapAfterGC()
		for range n {
			body := strings.Clone(c.body)
			r := RFC9309.ParseString(body)
			rs := r.For("examplebot")
			rs.index() // counted by Footprint, built or not
			keep = append(keep, rs, r)
			est = r.Footprint() + rs.Footprint()
		}
		got := float64(heapAfterGC()-before) / n
		runtime.KeepAlive(keep)
		q := float64(est) / got
		t.Logf("%-22s %7d bytes: estimate %8d, heap %8.0f (%.2f)", c.name, len(c.body), est, got, q)
		if q < 0.6 || q > 1.6 {
			t.Errorf("%s: estimate %d for %.0f bytes of heap", c.name, est, got)
		}
	}
}

// An empty file's Rulesets are one shared value: For allocates nothing,
// and nothing applies (no rule, no delay), in every dialect.
func TestEmptyFileFor(t *testing.T) {
	for _, d := range []*Dialect{RFC9309, Google, CocCoc, Koster1994} {
		if n := testing.AllocsPerRun(100, func() { d.Parse(nil).For("examplebot") }); n != 0 {
			t.Errorf("%s: Parse and For of an empty file: %v allocations, want 0", d, n)
		}
		rs := d.ParseString("").For("examplebot", "*")
		if rs != d.Parse([]byte{}).For("otherbot") || rs.Dialect() != d {
			t.Errorf("%s: For of an empty file is not the dialect's shared Ruleset", d)
		}
		if v := rs.Check("/private"); !v.Allowed || v.Reason != ReasonNoRule {
			t.Errorf("%s: Check of an empty file: %s, want allowed by no rule", d, v)
		}
		if delay, ok := rs.CrawlDelay(); ok || delay != 0 || rs.Footprint() != 0 {
			t.Errorf("%s: empty file: delay %v %v, footprint %d; want none, 0", d, delay, ok, rs.Footprint())
		}
	}
}
