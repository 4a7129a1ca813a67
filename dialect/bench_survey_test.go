package dialect

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/temoto/robotstxt"
)

// --- the whole corpus in one pass -----------------------------------------

// timePer returns the best-of-three time of one call of f, each trial
// repeating f for at least 2 ms. For code that does not allocate (checks):
// best-of filters out the machine's noise.
func timePer(f func()) time.Duration {
	best := time.Duration(1 << 62)
	for range 3 {
		best = min(best, timeFor(f, 2*time.Millisecond))
	}
	return best
}

// timeAmortized returns the mean time of one call of f over at least 20 ms,
// starting on a collected heap, so that an allocating f pays for its own
// collections and for no one else's, as in a go test -bench run. (Best-of
// short windows favour whichever parser allocates more, and a collection
// started by one parser would land in the next one's window.)
func timeAmortized(f func()) time.Duration {
	f() // warm: the first call pays for page faults
	runtime.GC()
	return timeFor(f, 20*time.Millisecond)
}

// timeFor calls f in growing batches until at least d has passed and
// returns the mean time of one call.
func timeFor(f func(), d time.Duration) time.Duration {
	n := 0
	t0 := time.Now()
	var el time.Duration
	for el < d {
		for range 1 + n/2 {
			f()
		}
		n += 1 + n/2
		el = time.Since(t0)
	}
	return el / time.Duration(n)
}

// surveyAgents are the crawlers of the survey: one that usually falls back
// to the "*" group, and one that many files name.
var surveyAgents = []string{benchAgent, "googlebot"}

type surveyRow struct {
	name, agent string
	size        int
	ours        [4]float64 // ns per check, by dialect (ourDialects order)
	temoto      float64    // ns per check; 0 when temoto rejects the file
	parse       float64    // ns, Google.Parse
	lines, temP float64    // ns, splitLines (the baseline), robotstxt.FromBytes
	temotoErr   error
}

func (r *surveyRow) oursMax() float64 { return slices.Max(r.ours[:]) }

// BenchmarkCorpusSurvey measures every corpus file, for each agent of
// surveyAgents: the mean time of one check over the file's URLs in each of
// our dialects against temoto's Group.Test, and our Google-dialect parse
// against the line-splitting baseline (splitLines) and temoto's FromBytes. It reports the worst and median ratios as metrics and
// logs the worst rows; set ROBOTS_SURVEY_OUT=file to get the whole table as
// TSV. One op is one survey (tens of seconds).
func BenchmarkCorpusSurvey(b *testing.B) {
	c := loadCorpus(b)
	var rows []*surveyRow
	for n := 0; n < b.N; n++ {
		rows = rows[:0]
		for _, f := range c.files {
			urls := f.urls
			tr, terr := robotstxt.FromBytes(f.body)
			var parse, lines, temP float64
			parse = float64(timeAmortized(func() { sinkAny = Google.Parse(f.body) }))
			lines = float64(timeAmortized(func() { sinkInt = splitLines(f.body) }))
			if terr == nil {
				temP = float64(timeAmortized(func() { sinkAny, _ = robotstxt.FromBytes(f.body) }))
			}
			for _, agent := range surveyAgents {
				r := &surveyRow{name: f.name, agent: agent, size: len(f.body), parse: parse, lines: lines, temP: temP, temotoErr: terr}
				for k, d := range ourDialects {
					rs := d.Parse(f.body).For(agent)
					r.ours[k] = float64(timePer(func() {
						for _, u := range urls {
							sinkVerdict = rs.Check(u)
						}
					})) / float64(len(urls))
				}
				if terr == nil {
					g := tr.FindGroup(agent)
					r.temoto = float64(timePer(func() {
						for _, u := range urls {
							sinkBool = g.Test(u)
						}
					})) / float64(len(urls))
				}
				rows = append(rows, r)
			}
		}
	}
	b.StopTimer()

	var ratios, googleRatios, nontrivial, heavy, parseRatios []float64
	below10 := map[string]bool{}
	skipped := map[string]bool{}
	for _, r := range rows {
		if r.temotoErr != nil {
			skipped[r.name] = true
			continue
		}
		q := r.temoto / r.oursMax()
		ratios = append(ratios, q)
		googleRatios = append(googleRatios, r.temoto/r.ours[1])
		if r.temoto >= 100 {
			nontrivial = append(nontrivial, q)
		}
		if r.temoto >= 1000 {
			heavy = append(heavy, q)
		}
		if q < 10 {
			below10[r.name+" "+r.agent] = true
		}
	}
	for i, r := range rows {
		if i%len(surveyAgents) == 0 {
			parseRatios = append(parseRatios, r.parse/r.lines)
		}
	}
	med := func(x []float64) float64 { y := slices.Clone(x); slices.Sort(y); return y[len(y)/2] }
	worst := func(x []float64) float64 {
		if len(x) == 0 {
			return 0
		}
		return slices.Min(x)
	}
	b.ReportMetric(worst(ratios), "worst-x-vs-temoto")
	b.ReportMetric(worst(googleRatios), "worst-google-x-vs-temoto")
	b.ReportMetric(worst(nontrivial), "worst-x-vs-temoto>=100ns")
	b.ReportMetric(worst(heavy), "worst-x-vs-temoto>=1us")
	b.ReportMetric(med(ratios), "median-x-vs-temoto")
	b.ReportMetric(float64(len(below10)), "rows-under-10x")
	b.ReportMetric(slices.Max(parseRatios), "worst-parse-x-of-lines")
	b.ReportMetric(med(parseRatios), "median-parse-x-of-lines")
	b.ReportMetric(float64(len(skipped)), "temoto-rejected-files")

	if out := os.Getenv("ROBOTS_SURVEY_OUT"); out != "" {
		var sb strings.Builder
		sb.WriteString("file\tagent\tbytes\tours_rfc9309_ns\tours_google_ns\tours_coccoc_ns\tours_koster1994_ns\ttemoto_ns\tratio_worst_dialect\tparse_google_ns\tlines_ns\ttemoto_parse_ns\ttemoto_error\n")
		for _, r := range rows {
			e := ""
			if r.temotoErr != nil {
				e = strings.Join(strings.Fields(r.temotoErr.Error()), " ")
			}
			fmt.Fprintf(&sb, "%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.0f\t%.0f\t%.0f\t%s\n", r.name, r.agent, r.size,
				r.ours[0], r.ours[1], r.ours[2], r.ours[3], r.temoto, r.temoto/r.oursMax(), r.parse, r.lines, r.temP, e)
		}
		if err := os.WriteFile(out, []byte(sb.String()), 0o644); err != nil {
			b.Error(err)
		}
	}
	// The benchmark log shows at most a few lines without -v: the worst.
	ok := slices.DeleteFunc(slices.Clone(rows), func(r *surveyRow) bool { return r.temotoErr != nil })
	slices.SortFunc(ok, func(x, y *surveyRow) int { return cmpFloat(x.temoto/x.oursMax(), y.temoto/y.oursMax()) })
	for _, r := range ok[:min(4, len(ok))] {
		b.Logf("check ratio %.2f: %s agent=%s ours(max over dialects)=%.1fns temoto=%.1fns", r.temoto/r.oursMax(), r.name, r.agent, r.oursMax(), r.temoto)
	}
	files := slices.DeleteFunc(slices.Clone(rows), func(r *surveyRow) bool { return r.agent != benchAgent })
	slices.SortFunc(files, func(x, y *surveyRow) int { return cmpFloat(y.parse/y.lines, x.parse/x.lines) })
	for _, r := range files[:min(3, len(files))] {
		b.Logf("parse %.1fx the line-splitting baseline: %s ours=%.0fns lines=%.0fns", r.parse/r.lines, r.name, r.parse, r.lines)
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
