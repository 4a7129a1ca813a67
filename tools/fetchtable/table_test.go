package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/politecrawl/robots/dialect"
)

// parseMarkdownTable splits a Markdown table into its rows of cells, the
// delimiter row left out.
func parseMarkdownTable(t *testing.T, md string) [][]string {
	t.Helper()
	var rows [][]string
	for i, line := range strings.Split(strings.TrimSuffix(md, "\n"), "\n") {
		if !strings.HasPrefix(line, "| ") || !strings.HasSuffix(line, " |") {
			t.Fatalf("line %d is not a table row: %q", i+1, line)
		}
		cells := strings.Split(line[2:len(line)-2], " | ")
		if i == 1 {
			continue // | --- | --- |
		}
		rows = append(rows, cells)
	}
	return rows
}

// decisions returns every Decision d gives for o over a grid of fetch states
// that crosses each threshold of the current data (12 h, 30 days).
func decisions(d *dialect.Dialect, o dialect.Outcome) []dialect.Decision {
	ds := []time.Duration{0, time.Minute, time.Hour, 12*time.Hour - 1, 12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour,
		30*24*time.Hour - 1, 30 * 24 * time.Hour, 30*24*time.Hour + 1, 365 * 24 * time.Hour}
	var out []dialect.Decision
	for _, lasted := range ds {
		out = append(out, d.Decide(o, dialect.FetchState{Lasted: lasted}))
		for _, age := range ds {
			out = append(out, d.Decide(o, dialect.FetchState{Lasted: lasted, LastGoodAge: age, HaveLastGood: true}))
		}
	}
	return out
}

// TestFetchTableMatchesDecide reads the rendered Markdown table back and
// checks each cell against what Decide answers for that dialect and outcome:
// a cell names an action exactly when some fetch state leads Decide to it,
// and a retry time exactly when Decide returns one.
func TestFetchTableMatchesDecide(t *testing.T) {
	rows := parseMarkdownTable(t, tableMarkdown())
	names := dialect.Names()
	if got, want := strings.Join(rows[0][1:], ","), strings.Join(names, ","); got != want {
		t.Fatalf("columns %s, want %s", got, want)
	}
	outcomes := []dialect.Outcome{
		dialect.OutcomeOK, dialect.OutcomeOther2xx, dialect.OutcomeRedirectLimit, dialect.Outcome4xx,
		dialect.Outcome429, dialect.Outcome5xx, dialect.OutcomeNoAnswer, dialect.OutcomeOtherStatus,
	}
	if len(rows) != 1+len(outcomes)+1 {
		t.Fatalf("%d rows, want header, %d outcomes and the cache lifetime", len(rows), len(outcomes))
	}
	words := map[dialect.Action]string{
		dialect.ActionParse:       "parse",
		dialect.ActionAllowAll:    "no restrictions",
		dialect.ActionDisallowAll: "complete disallow",
		dialect.ActionExcludeHost: "host excluded",
		dialect.ActionUseLastGood: "last good copy",
	}
	// row5xx is the row index of the 5xx outcome, to which "as 5xx" refers.
	const row5xx = 1 + 5
	if dialect.Outcome5xx != outcomes[row5xx-1] {
		t.Fatal("outcome list out of order")
	}

	for col, name := range names {
		d, err := dialect.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range outcomes {
			cell := rows[1+i][1+col]
			if cell == "as 5xx" {
				// The claim itself: o is decided as a 5xx in every state.
				got, want := decisions(d, o), decisions(d, dialect.Outcome5xx)
				for k := range got {
					got[k].Outcome, want[k].Outcome = 0, 0
					if got[k] != want[k] {
						t.Errorf("%s, %s: cell says %q but Decide gives %v where 5xx gives %v", name, o, cell, got[k], want[k])
						break
					}
				}
				cell = rows[row5xx][1+col]
			}
			reached := map[dialect.Action]bool{}
			retries := map[time.Duration]bool{}
			for _, dec := range decisions(d, o) {
				reached[dec.Action] = true
				if dec.Retry > 0 {
					retries[dec.Retry] = true
				}
			}
			for a, w := range words {
				if strings.Contains(cell, w) != reached[a] {
					t.Errorf("%s, %s: cell %q mentions %q: %v; Decide reaches %s: %v", name, o, cell, w, !reached[a], a, reached[a])
				}
			}
			if strings.Contains(cell, "retry") != (len(retries) > 0) {
				t.Errorf("%s, %s: cell %q, Decide's retry times %v", name, o, cell, retries)
			}
			for r := range retries {
				if want := "retry in " + tableDuration(r); !strings.Contains(cell, want) {
					t.Errorf("%s, %s: cell %q lacks %q", name, o, cell, want)
				}
			}
			// The cell opens with what applies at once, given a young last
			// good copy, and "X for D, then" means that changes at D.
			young := dialect.FetchState{HaveLastGood: true}
			first := d.Decide(o, young).Action
			if !strings.HasPrefix(cell, words[first]) {
				t.Errorf("%s, %s: cell %q does not open with %q", name, o, cell, words[first])
			}
			if _, rest, ok := strings.Cut(cell, words[first]+" for "); ok {
				dur, _, _ := strings.Cut(rest, ", then ")
				before, at := young, young
				for _, lasted := range []time.Duration{time.Minute, time.Hour, 12 * time.Hour, 24 * time.Hour} {
					if tableDuration(lasted) == dur {
						before.Lasted, at.Lasted = lasted-1, lasted
					}
				}
				if at.Lasted == 0 || d.Decide(o, before).Action != first || d.Decide(o, at).Action == first {
					t.Errorf("%s, %s: cell %q, but Decide does not change from %s after %s", name, o, cell, first, dur)
				}
			}
			if reached[dialect.ActionUseLastGood] {
				if want := "≤ " + tableDuration(d.LastGoodMaxAge()) + " old"; !strings.Contains(cell, want) {
					t.Errorf("%s, %s: cell %q lacks %q", name, o, cell, want)
				}
			}
		}
		if want := "more than " + strconv.Itoa(d.MaxRedirects()) + " redirects"; rows[1+2][0] != want {
			t.Errorf("redirect row is %q, want %q", rows[1+2][0], want)
		}
		if got, want := rows[len(rows)-1][1+col], tableDuration(d.CacheTTL()); got != want {
			t.Errorf("%s: cache lifetime %q, want %q", name, got, want)
		}
	}
}

// tableDuration is how the table prints the durations in today's data.
func tableDuration(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d >= 2*day && d%day == 0:
		return fmt.Sprintf("%d days", d/day)
	case d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	default:
		return fmt.Sprintf("%d min", d/time.Minute)
	}
}

// TestFetchTableText checks the text form: the same cells as the Markdown
// form, aligned, wrapped to a bounded width, without trailing spaces.
func TestFetchTableText(t *testing.T) {
	text := tableText()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("line %d is %d characters long: %q", i+1, n, l)
		}
		if strings.TrimRight(l, " ") != l || strings.Contains(l, "\t") {
			t.Errorf("line %d has stray white space: %q", i+1, l)
		}
	}
	// Columns start where the dashes under the header do.
	var starts []int
	for i, r := range []rune(lines[1]) {
		if r == '-' && (i == 0 || []rune(lines[1])[i-1] == ' ') {
			starts = append(starts, i)
		}
	}
	// Reassemble each column's text and compare it with the Markdown cells.
	rows := parseMarkdownTable(t, tableMarkdown())
	var got [][]string
	for i, l := range lines {
		if i == 1 {
			continue
		}
		r := []rune(l)
		cells := make([]string, len(starts))
		for c, s := range starts {
			if s > 0 && s <= len(r) && r[s-1] != ' ' {
				t.Fatalf("line %d: column %d does not start at %d: %q", i+1, c, s, l)
			}
			e := len(r)
			if c+1 < len(starts) {
				e = min(e, starts[c+1])
			}
			if s < e {
				cells[c] = strings.TrimSpace(string(r[s:e]))
			}
		}
		if i > 2 && (cells[0] == "" || strings.HasPrefix(string(r), "  ")) { // a continuation line
			for c := range cells {
				if cells[c] != "" {
					got[len(got)-1][c] = strings.TrimSpace(got[len(got)-1][c] + " " + cells[c])
				}
			}
			continue
		}
		got = append(got, cells)
	}
	if fmt.Sprint(got) != fmt.Sprint(rows) {
		t.Errorf("text table reads back as\n%q\nwant the Markdown cells\n%q", got, rows)
	}
}

func Example_tableMarkdown() {
	fmt.Print(tableMarkdown())
	// Output:
	// | robots.txt answers | rfc9309 | google | coccoc | koster1994 |
	// | --- | --- | --- | --- | --- |
	// | 200 | parse | parse | parse | parse |
	// | other 2xx | parse | parse | no restrictions | parse |
	// | more than 5 redirects | no restrictions | no restrictions | no restrictions | no restrictions |
	// | 4xx except 429 | no restrictions | no restrictions | no restrictions | no restrictions |
	// | 429 | no restrictions | as 5xx | no restrictions | as 5xx |
	// | 5xx | last good copy ≤ 30 days old, else complete disallow, retry in 10 min | complete disallow for 12 h, then last good copy ≤ 30 days old, else no restrictions, retry in 10 min | no restrictions | complete disallow, retry in 10 min |
	// | no answer (DNS, refused, timeout, broken body) | as 5xx | as 5xx | host excluded, retry in 1 h | as 5xx |
	// | other (1xx, 3xx without a usable Location, unknown) | as 5xx | as 5xx | no restrictions | as 5xx |
	// | cache lifetime | 24 h | 24 h | 24 h | 24 h |
}
