package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/politecrawl/robots/dialect"
)

const day = 24 * time.Hour

// rule is what a dialect does with one fetch outcome, as Decide answers it:
// action at first (with no last good copy); once the failure has lasted
// thenAfter (>0), then instead; a last good copy at most lastGoodMaxAge old
// (>0) is used once the failure has lasted lastGoodFrom; retry is how soon
// robots.txt is fetched again (0: the cache lifetime).
type rule struct {
	action, then                            dialect.Action
	thenAfter, lastGoodFrom, lastGoodMaxAge time.Duration
	retry                                   time.Duration
}

// horizon is longer than any duration of the dialects' fetch rules.
const horizon = 100 * 365 * day

// probe returns what d does with outcome o, read from d.Decide alone: the
// durations are where its answer changes, found by bisection (Decide's
// answer changes once as the failure lasts longer, and once as the last
// good copy gets older).
func probe(d *dialect.Dialect, o dialect.Outcome) rule {
	st := func(lasted time.Duration, good bool, age time.Duration) dialect.Action {
		return d.Decide(o, dialect.FetchState{Lasted: lasted, HaveLastGood: good, LastGoodAge: age}).Action
	}
	first := d.Decide(o, dialect.FetchState{})
	r := rule{action: first.Action, retry: first.Retry}
	if a := st(horizon, false, 0); a != r.action {
		r.then = a
		r.thenAfter = least(func(t time.Duration) bool { return st(t, false, 0) != r.action })
	}
	if st(horizon, true, 0) == dialect.ActionUseLastGood {
		r.lastGoodFrom = least(func(t time.Duration) bool { return st(t, true, 0) == dialect.ActionUseLastGood })
		r.lastGoodMaxAge = least(func(a time.Duration) bool { return st(horizon, true, a) != dialect.ActionUseLastGood }) - 1
	}
	return r
}

// least returns the least t in [0, horizon] for which f is true, f being
// false below some point and true from it on (horizon if f is never true).
func least(f func(time.Duration) bool) time.Duration {
	lo, hi := time.Duration(0), time.Duration(horizon)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if f(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// tableMarkdown returns, as a GitHub-flavoured Markdown table, what each
// fetch outcome of robots.txt means in each dialect.
//
// The table has a header row, a delimiter row and one row per outcome, in
// this order: 200; other 2xx; more than [dialect.Dialect.MaxRedirects] redirects;
// 4xx except 429; 429; 5xx; no answer (DNS, refused, timeout, broken body);
// other (1xx, 3xx without a usable Location, unknown); then a last row,
// "cache lifetime", giving [dialect.Dialect.CacheTTL]. The first column names the
// outcome; the others are the dialects, in [dialect.Names] order. Every line ends
// with a newline; nothing precedes the table or follows it.
//
// Each cell is worded from what [dialect.Dialect.Decide] answers (see
// probe), so the table cannot disagree with it (durations here are
// examples):
//
//   - "parse", "no restrictions", "complete disallow", "host excluded" and
//     "last good copy" name the actions [dialect.ActionParse], [dialect.ActionAllowAll],
//     [dialect.ActionDisallowAll], [dialect.ActionExcludeHost] and [dialect.ActionUseLastGood];
//   - "last good copy ≤ 30 days old, else X": a last good copy at most that
//     old is used when there is one, else X;
//   - "X for 12 h, then Y": X until the failure has lasted 12 h, then Y;
//   - ", retry in 10 min": robots.txt is fetched again that soon (whatever
//     the phase) instead of after the cache lifetime;
//   - "as 5xx": the outcome is decided exactly as a 5xx in that dialect.
func tableMarkdown() string {
	t := fetchTable()
	var b strings.Builder
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" ")
			b.WriteString(strings.ReplaceAll(c, "|", `\|`))
			b.WriteString(" |")
		}
		b.WriteString("\n")
	}
	row(t[0])
	sep := make([]string, len(t[0]))
	for i := range sep {
		sep[i] = "---"
	}
	row(sep)
	for _, r := range t[1:] {
		row(r)
	}
	return b.String()
}

// Column widths of [tableText]: a cell is wrapped at word boundaries
// onto as many lines as it needs to fit its column (a single longer word
// widens the column).
const (
	textLabelWidth = 24
	textCellWidth  = 20
	textGap        = 2 // spaces between columns
	textIndent     = 2 // of continuation lines of the outcome column
)

// tableText returns the table of [tableMarkdown] as plain text with
// aligned columns, for a preformatted block of a Go doc comment (prefix each
// line with "//" and a tab) or a terminal.
//
// It holds the same rows, columns and cell texts. The header row is followed
// by a row of dashes under each column; the outcome column is at most 24
// characters wide and each dialect column at most 20 (wider only for a word
// longer than that), with two spaces between columns. A cell that does not
// fit is wrapped at spaces onto continuation lines; the outcome column's
// continuation lines are indented by two spaces, so that a line whose first
// column is blank or indented continues the row above. Lines hold no tabs
// and no trailing spaces, and each ends with a newline.
func tableText() string {
	t := fetchTable()
	ncol := len(t[0])
	width := make([]int, ncol)
	for i := range width {
		limit := textCellWidth
		if i == 0 {
			limit = textLabelWidth
		}
		for _, r := range t {
			for _, w := range strings.Fields(r[i]) {
				n := utf8.RuneCountInString(w)
				if i == 0 {
					n += textIndent
				}
				limit = max(limit, n)
			}
		}
		for _, r := range t {
			width[i] = max(width[i], min(utf8.RuneCountInString(r[i]), limit))
		}
		width[i] = max(width[i], 3)
	}

	var b strings.Builder
	line := func(cells []string) {
		var l strings.Builder
		for i, c := range cells {
			if i > 0 {
				l.WriteString(strings.Repeat(" ", textGap))
			}
			l.WriteString(c)
			if i < len(cells)-1 {
				l.WriteString(strings.Repeat(" ", max(0, width[i]-utf8.RuneCountInString(c))))
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteString("\n")
	}
	row := func(r []string) {
		wrapped := make([][]string, ncol)
		n := 0
		for i, c := range r {
			if i == 0 {
				wrapped[i] = wrap(c, width[i], textIndent)
			} else {
				wrapped[i] = wrap(c, width[i], 0)
			}
			n = max(n, len(wrapped[i]))
		}
		for k := range n {
			cells := make([]string, ncol)
			for i, w := range wrapped {
				if k < len(w) {
					cells[i] = w[k]
				}
			}
			line(cells)
		}
	}
	row(t[0])
	dashes := make([]string, ncol)
	for i, w := range width {
		dashes[i] = strings.Repeat("-", w)
	}
	line(dashes)
	for _, r := range t[1:] {
		row(r)
	}
	return b.String()
}

// wrap breaks s at spaces into lines of at most width runes, continuation
// lines indented by indent spaces (a longer word stays whole on a line of its
// own).
func wrap(s string, width, indent int) []string {
	var lines []string
	cur, n := "", 0
	for _, w := range strings.Fields(s) {
		wn := utf8.RuneCountInString(w)
		switch {
		case n == 0:
			cur, n = w, wn
		case n+1+wn <= width:
			cur, n = cur+" "+w, n+1+wn
		default:
			lines = append(lines, cur)
			cur, n = strings.Repeat(" ", indent)+w, indent+wn
		}
	}
	if n > 0 || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines
}

// outcomeLabels names the rows of the fetch table.
var outcomeLabels = map[dialect.Outcome]string{
	dialect.OutcomeOK:            "200",
	dialect.OutcomeOther2xx:      "other 2xx",
	dialect.OutcomeRedirectLimit: "", // from the dialects' MaxRedirects
	dialect.Outcome4xx:           "4xx except 429",
	dialect.Outcome429:           "429",
	dialect.Outcome5xx:           "5xx",
	dialect.OutcomeNoAnswer:      "no answer (DNS, refused, timeout, broken body)",
	dialect.OutcomeOtherStatus:   "other (1xx, 3xx without a usable Location, unknown)",
}

// outcomes are the rows of the fetch table, in order.
var outcomes = []dialect.Outcome{
	dialect.OutcomeOK, dialect.OutcomeOther2xx, dialect.OutcomeRedirectLimit, dialect.Outcome4xx,
	dialect.Outcome429, dialect.Outcome5xx, dialect.OutcomeNoAnswer, dialect.OutcomeOtherStatus,
}

// fetchTable returns the cells of the fetch table, header row first.
func fetchTable() [][]string {
	all := dialect.All()
	header := []string{"robots.txt answers"}
	header = append(header, dialect.Names()...)
	t := [][]string{header}

	// The redirect limit goes into the row label when all dialects agree,
	// else into each cell.
	sameLimit := true
	for _, d := range all {
		sameLimit = sameLimit && d.MaxRedirects() == all[0].MaxRedirects()
	}
	for _, o := range outcomes {
		row := []string{outcomeLabels[o]}
		if o == dialect.OutcomeRedirectLimit {
			row[0] = "more than " + strconv.Itoa(all[0].MaxRedirects()) + " redirects"
			if !sameLimit {
				row[0] = "too many redirects"
			}
		}
		for _, d := range all {
			c := fetchCell(d, o)
			if o == dialect.OutcomeRedirectLimit && !sameLimit {
				c = "more than " + strconv.Itoa(d.MaxRedirects()) + ": " + c
			}
			row = append(row, c)
		}
		t = append(t, row)
	}
	row := []string{"cache lifetime"}
	for _, d := range all {
		row = append(row, fmtDuration(d.CacheTTL()))
	}
	return append(t, row)
}

// fetchCell words what outcome o means in dialect d: "as 5xx" when o is
// decided exactly as a 5xx (and that takes more than one word to say), else
// [describeRule].
func fetchCell(d *dialect.Dialect, o dialect.Outcome) string {
	r := probe(d, o)
	if o != dialect.Outcome5xx && r == probe(d, dialect.Outcome5xx) && r.action != dialect.ActionParse && r.action != dialect.ActionAllowAll {
		return "as " + dialect.Outcome5xx.String()
	}
	return describeRule(r)
}

// actionWords names an action in the fetch table.
var actionWords = map[dialect.Action]string{
	dialect.ActionParse:       "parse",
	dialect.ActionAllowAll:    "no restrictions",
	dialect.ActionDisallowAll: "complete disallow",
	dialect.ActionExcludeHost: "host excluded",
	dialect.ActionUseLastGood: "last good copy",
}

// describeRule words one fetch rule, following [dialect.Dialect.Decide] step by step:
// parse and allow all take no time limit and no retry; otherwise the action
// may give way, once the failure has lasted long enough, to a last good copy
// (when there is one young enough) or to a second action; the retry holds in
// every phase.
func describeRule(r rule) string {
	if r.action == dialect.ActionParse || r.action == dialect.ActionAllowAll {
		return actionWords[r.action]
	}
	// What applies once the failure has lasted t.
	at := func(t time.Duration) string {
		a := r.action
		if r.thenAfter > 0 && t >= r.thenAfter {
			a = r.then
		}
		s := actionWords[a]
		if r.lastGoodMaxAge > 0 && t >= r.lastGoodFrom {
			s = "last good copy ≤ " + fmtDuration(r.lastGoodMaxAge) + " old, else " + s
		}
		return s
	}
	// The phases start at 0 and at each threshold of Decide.
	starts := []time.Duration{0}
	if r.lastGoodMaxAge > 0 {
		starts = append(starts, r.lastGoodFrom)
	}
	if r.thenAfter > 0 {
		starts = append(starts, r.thenAfter)
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	var phases []string
	var from []time.Duration
	for _, t := range starts {
		s := at(t)
		if len(phases) > 0 && phases[len(phases)-1] == s {
			continue
		}
		phases, from = append(phases, s), append(from, t)
	}
	var b strings.Builder
	for i, p := range phases {
		if i > 0 {
			b.WriteString(", then ")
		}
		b.WriteString(p)
		if i+1 < len(phases) {
			b.WriteString(" for " + fmtDuration(from[i+1]-from[i]))
		}
	}
	if r.retry > 0 {
		b.WriteString(", retry in " + fmtDuration(r.retry))
	}
	return b.String()
}

// fmtDuration prints d for the fetch table: "30 days" (whole days, two or
// more), "24 h", "10 min", "5 s", else as [time.Duration.String].
func fmtDuration(d time.Duration) string {
	switch {
	case d >= 2*day && d%day == 0:
		return fmt.Sprintf("%d days", d/day)
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	case d >= time.Second && d%time.Second == 0:
		return fmt.Sprintf("%d s", d/time.Second)
	}
	return d.String()
}
