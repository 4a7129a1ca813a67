package dialect

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/temoto/robotstxt"
)

// Benchmarks of parsing and checking, side by side with a floor and a peer:
// a Go loop that only splits the same bytes into lines (impl=lines: no
// parser can read a file faster than it can find its lines), and
// github.com/temoto/robotstxt. Run them with
//
//	go test -run '^$' -bench . -benchmem ./dialect
//
// The corpus benchmarks read the shared corpus (ROBOTS_CORPUS, or
// ../../shared/corpus/robots) and are skipped when it is not there; the
// benchmarks on generated files need nothing external. By default the
// per-file sub-benchmarks cover a representative set of corpus files and
// BenchmarkCorpusSurvey covers every file in one pass; set
// ROBOTS_BENCH_ALL=1 to get per-file sub-benchmarks for every file.

const benchAgent = "examplebot"

// benchFiles are the corpus files given sub-benchmarks of their own: the three
// files named in the issue first, then malformed and unusual ones.
var benchFiles = []string{
	"egonkm__en.wikipedia.org.txt",                // 27 KB, plain prefixes
	"protego__github.com.txt",                     // 31 KB, wildcards
	"protego__docs.oracle.com.txt",                // 853 KB, cut at 500 KiB
	"crawlercommons__wildcards.txt",               // leading/trailing wildcards
	"crawlercommons__robots-with-utf8-bom.txt",    // BOM
	"crawlercommons__robots-with-utf16le-bom.txt", // UTF-16
	"protego__cdbaby.com.txt",                     // bare CR line ends
	"egonkm__www.wsj.com.txt",                     // 731 KB HTML page
	"crawlercommons__many-user-agents.txt",        // many groups
	"egonkm__www.shopify.ca.txt",                  // 73 KB, hundreds of wildcard rules
	"protego__www.uber.com.txt",                   // 57 KB, three thousand short lines
	"protego__www.okstate.edu.txt",                // empty
	"protego__www.salesforce.com.txt",             // 405 KB HTML page, 16,000 lines
	"egonkm__www.baidu.com.txt",                   // 2.8 KB, the corpus's median size
	"protego__www.elkhabar.com.txt",               // 22 B, one group of one rule
	"protego__www.who.int.txt",                    // 19 KB, 528 one-line groups
}

type corpusFile struct {
	name string
	body []byte
	urls []string // request paths derived from this file (or all of urls.txt)
}

type benchCorpus struct {
	dir   string
	files []*corpusFile
	byKey map[string]*corpusFile
	urls  []string // urls.txt
	// own pairs each path of urls_by_file.tsv with the file it came from
	// (generic paths with en.wikipedia).
	own []ownURL
}

type ownURL struct {
	file *corpusFile
	path string
}

var (
	corpusOnce sync.Once
	corpus     *benchCorpus
	corpusErr  error
)

// corpusDir returns the robots directory of the shared corpus.
func corpusDir() string {
	if d := os.Getenv("ROBOTS_CORPUS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "corpus", "robots")
}

// loadCorpus returns the shared corpus, or skips tb when it is not there.
func loadCorpus(tb testing.TB) *benchCorpus {
	tb.Helper()
	corpusOnce.Do(func() { corpus, corpusErr = readCorpus(corpusDir()) })
	if corpusErr != nil {
		tb.Skipf("shared corpus not available: %v", corpusErr)
	}
	return corpus
}

func readCorpus(dir string) (*benchCorpus, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	c := &benchCorpus{dir: dir, byKey: map[string]*corpusFile{}}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		f := &corpusFile{name: e.Name(), body: b}
		c.files = append(c.files, f)
		c.byKey[f.name] = f
	}
	if len(c.files) == 0 {
		return nil, fmt.Errorf("no .txt files in %s", dir)
	}
	sort.Slice(c.files, func(i, j int) bool { return c.files[i].name < c.files[j].name })
	parent := filepath.Dir(filepath.Clean(dir))
	if c.urls, err = readLines(filepath.Join(parent, "urls.txt")); err != nil {
		return nil, err
	}
	byFile, err := readLines(filepath.Join(parent, "urls_by_file.tsv"))
	if err != nil {
		return nil, err
	}
	generic := c.byKey["egonkm__en.wikipedia.org.txt"]
	if generic == nil {
		generic = c.files[0]
	}
	for _, l := range byFile {
		if strings.HasPrefix(l, "#") {
			continue
		}
		parts := strings.SplitN(l, "\t", 3)
		if len(parts) != 3 {
			continue
		}
		f := c.byKey[parts[0]]
		if f == nil {
			c.own = append(c.own, ownURL{generic, parts[2]})
			continue
		}
		f.urls = append(f.urls, parts[2])
		c.own = append(c.own, ownURL{f, parts[2]})
	}
	for _, f := range c.files {
		if len(f.urls) < 20 {
			f.urls = c.urls
		}
	}
	return c, nil
}

func readLines(name string) ([]string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

// benchSubjects returns the files of the per-file sub-benchmarks.
func (c *benchCorpus) benchSubjects() []*corpusFile {
	if os.Getenv("ROBOTS_BENCH_ALL") != "" {
		return c.files
	}
	var out []*corpusFile
	for _, n := range benchFiles {
		if f := c.byKey[n]; f != nil {
			out = append(out, f)
		}
	}
	return out
}

func shortName(file string) string {
	if i := strings.Index(file, "__"); i >= 0 {
		file = file[i+2:]
	}
	return strings.TrimSuffix(file, ".txt")
}

// --- generated files -------------------------------------------------------

type genFile struct {
	name string
	body []byte
	urls []string
}

var (
	genOnce  sync.Once
	genFiles []*genFile
)

// generated returns the synthetic files: ~500 KiB with tens of thousands of
// rules (one mostly literal, one mostly wildcards), deterministic.
func generated() []*genFile {
	genOnce.Do(func() {
		genFiles = []*genFile{
			genRobots("gen-500k-prefix", 1, 0.1),
			genRobots("gen-500k-wild", 2, 0.7),
		}
	})
	return genFiles
}

var genWords = strings.Fields(`api app archive article assets author blog cart
catalog category cgi-bin checkout comment content css data docs download edit
en event feed files forum gallery help images img index item js login media
news page photo print private product profile search share shop static story
tag tmp topic user video wiki widget`)

// genRobots writes a robots.txt of just under MaxBodyBytes: a few groups, the
// biggest for examplebot, with wild (0..1) of the rules using '*' or '$'.
func genRobots(name string, seed uint64, wild float64) *genFile {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	word := func() string { return genWords[rng.IntN(len(genWords))] }
	seg := func() string {
		if rng.IntN(3) == 0 {
			return fmt.Sprintf("%s-%d", word(), rng.IntN(1000))
		}
		return word()
	}
	pathOf := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteByte('/')
			sb.WriteString(seg())
		}
		return sb.String()
	}
	rule := func() string {
		p := pathOf(1 + rng.IntN(4))
		if rng.Float64() < wild {
			switch rng.IntN(6) {
			case 0:
				p = "/*" + p
			case 1:
				p += "*." + word() + "$"
			case 2:
				p = "/*?" + word() + "=*&" + word()
			case 3:
				p = pathOf(1) + "/*" + pathOf(1) + "*" + word()
			case 4:
				p += "$"
			default:
				p = "/*." + word()
			}
		}
		return p
	}
	var b bytes.Buffer
	var paths []string
	groups := []string{"googlebot", "*", benchAgent}
	const limit = MaxBodyBytes - 2048
	for gi := 0; b.Len() < limit; gi++ {
		fmt.Fprintf(&b, "User-agent: %s\n", groups[gi%len(groups)])
		n := 50
		if gi%len(groups) == len(groups)-1 {
			n = 5000
		}
		for i := 0; i < n && b.Len() < limit; i++ {
			kind := "Disallow"
			if rng.IntN(4) == 0 {
				kind = "Allow"
			}
			r := rule()
			fmt.Fprintf(&b, "%s: %s\n", kind, r)
			if len(paths) < 4000 && rng.IntN(4) == 0 {
				// A request path near the rule.
				p := strings.NewReplacer("*", word(), "$", "").Replace(r)
				if rng.IntN(2) == 0 {
					p += pathOf(1)
				}
				if rng.IntN(4) == 0 {
					p += "?" + word() + "=" + word()
				}
				paths = append(paths, p)
			}
		}
		b.WriteString("\n")
	}
	for range 1000 {
		paths = append(paths, pathOf(1+rng.IntN(6)))
	}
	rng.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	return &genFile{name: name, body: b.Bytes(), urls: paths}
}

// --- checks ----------------------------------------------------------------

var (
	sinkVerdict Verdict
	sinkBool    bool
	sinkInt     int
	sinkAny     any
	sinkRuleset *Ruleset
)

// ourDialects are the dialects given their own "impl" in check benchmarks.
var ourDialects = []*Dialect{RFC9309, Google, CocCoc, Koster1994}

// BenchmarkCheck: one op is one Ruleset.Check (or temoto Group.Test) of the
// next URL of the file's URL list, cycling.
func BenchmarkCheck(b *testing.B) {
	for _, g := range generated() {
		b.Run("file="+g.name, func(b *testing.B) { benchCheckFile(b, g.body, g.urls) })
	}
	b.Run("corpus", func(b *testing.B) {
		c := loadCorpus(b)
		for _, f := range c.benchSubjects() {
			b.Run("file="+shortName(f.name), func(b *testing.B) { benchCheckFile(b, f.body, f.urls) })
		}
	})
}

func benchCheckFile(b *testing.B, body []byte, urls []string) {
	for _, d := range ourDialects {
		rs := d.Parse(body).For(benchAgent)
		b.Run("impl=ours-"+d.Name(), func(b *testing.B) {
			b.SetBytes(0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sinkVerdict = rs.Check(urls[i%len(urls)])
			}
		})
	}
	b.Run("impl=temoto", func(b *testing.B) {
		r, err := robotstxt.FromBytes(body)
		if err != nil {
			b.Skipf("temoto rejects the file: %v", err)
		}
		g := r.FindGroup(benchAgent)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			sinkBool = g.Test(urls[i%len(urls)])
		}
	})
}

// BenchmarkCheckPerURL times each URL of urls.txt on its own (best of five
// runs of many repetitions) and reports the median, p90, p99 and maximum
// time of one check as custom metrics. pairing=own checks every path of
// urls_by_file.tsv against the corpus file it was derived from (generic
// paths against en.wikipedia); file=X checks all of urls.txt against X.
func BenchmarkCheckPerURL(b *testing.B) {
	c := loadCorpus(b)
	for _, d := range []*Dialect{RFC9309, Google} {
		b.Run("pairing=own/dialect="+d.Name(), func(b *testing.B) {
			rss := map[*corpusFile]*Ruleset{}
			jobs := make([]perURLJob, 0, len(c.own))
			for _, o := range c.own {
				rs := rss[o.file]
				if rs == nil {
					rs = d.Parse(o.file.body).For(benchAgent)
					rss[o.file] = rs
				}
				jobs = append(jobs, perURLJob{rs, o.path})
			}
			benchPerURL(b, jobs)
		})
	}
	for _, n := range benchFiles[:3] {
		f := c.byKey[n]
		if f == nil {
			continue
		}
		b.Run("file="+shortName(n)+"/dialect=google", func(b *testing.B) {
			rs := Google.Parse(f.body).For(benchAgent)
			jobs := make([]perURLJob, 0, len(c.urls))
			for _, u := range c.urls {
				jobs = append(jobs, perURLJob{rs, u})
			}
			benchPerURL(b, jobs)
		})
	}
}

type perURLJob struct {
	rs   *Ruleset
	path string
}

func benchPerURL(b *testing.B, jobs []perURLJob) {
	const reps, trials = 64, 5
	per := make([]float64, len(jobs))
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for i, j := range jobs {
			best := time.Duration(1 << 62)
			for range trials {
				t0 := time.Now()
				for range reps {
					sinkVerdict = j.rs.Check(j.path)
				}
				if d := time.Since(t0); d < best {
					best = d
				}
			}
			per[i] = float64(best) / reps
		}
	}
	b.StopTimer()
	slices.Sort(per)
	q := func(p float64) float64 { return per[int(p*float64(len(per)-1))] }
	b.ReportMetric(q(0.5), "p50-ns/url")
	b.ReportMetric(q(0.9), "p90-ns/url")
	b.ReportMetric(q(0.99), "p99-ns/url")
	b.ReportMetric(per[len(per)-1], "max-ns/url")
	b.ReportMetric(float64(len(per)), "urls")
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(len(jobs)*reps*trials), "ns/op")
}

// --- parsing ---------------------------------------------------------------

// BenchmarkParse: one op parses the whole body.
//
//	impl=ours-<dialect>   Dialect.Parse
//	impl=ours-google+for-only  Dialect.Parse and For(agent): the work robots.cc's
//	                      parse does
//	impl=ours-google+for  Dialect.Parse, For(agent) and one CheckURL
//	impl=ours-google+for-googlebot  the same for "Googlebot", a token that
//	                      many files name
//	impl=ours-google+index  Parse, For(agent), the index built (as after
//	                      indexAfter checks) and one CheckURL
//	impl=lines            splitLines: the bytes split into lines, nothing
//	                      else (the floor a parse is measured against)
//	impl=temoto           robotstxt.FromBytes
func BenchmarkParse(b *testing.B) {
	for _, g := range generated() {
		b.Run("file="+g.name, func(b *testing.B) { benchParseFile(b, g.body, g.urls[0]) })
	}
	b.Run("corpus", func(b *testing.B) {
		c := loadCorpus(b)
		for _, f := range c.benchSubjects() {
			b.Run("file="+shortName(f.name), func(b *testing.B) { benchParseFile(b, f.body, f.urls[0]) })
		}
	})
}

// BenchmarkParseCorpus: one op is Google.Parse(body).For("Googlebot") and
// one Check for every corpus file, the work a crawler does once per file.
// Run it with -cpu 1, so that the collector's work is inside the time; it
// also reports the process's CPU time per op (cpu-ns/op), which the
// machine's other work inflates less than the wall time.
func BenchmarkParseCorpus(b *testing.B) {
	c := loadCorpus(b)
	b.ReportAllocs()
	reportCPU(b, func() {
		for _, f := range c.files {
			sinkVerdict = Google.Parse(f.body).For("Googlebot").Check(f.urls[0])
		}
	})
}

// reportCPU runs f b.N times and reports the process's CPU time per call,
// where it can be measured.
func reportCPU(b *testing.B, f func()) {
	c0, ok := processCPU()
	for b.Loop() {
		f()
	}
	if c1, _ := processCPU(); ok {
		b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
	}
}

// splitLines is the line-splitting baseline: it finds the lines of the
// bytes a parse reads (the first MaxBodyBytes of body), one bytes.IndexByte
// per line (ended by LF, a CR before it dropped), and does nothing with them
// but count the non-empty ones.
func splitLines(body []byte) int {
	body = body[:min(len(body), MaxBodyBytes)]
	n := 0
	for len(body) > 0 {
		line, rest, _ := bytes.Cut(body, []byte{'\n'})
		if len(bytes.TrimSuffix(line, []byte{'\r'})) > 0 {
			n++
		}
		body = rest
	}
	return n
}

func benchParseFile(b *testing.B, body []byte, url string) {
	run := func(name string, f func()) {
		b.Run("impl="+name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			reportCPU(b, f)
		})
	}
	run("ours-google", func() { sinkAny = Google.Parse(body) })
	run("ours-rfc9309", func() { sinkAny = RFC9309.Parse(body) })
	run("ours-google+for-only", func() { sinkRuleset = Google.Parse(body).For(benchAgent) })
	run("ours-google+for", func() { sinkVerdict = Google.Parse(body).For(benchAgent).CheckURL(url) })
	run("ours-google+for-googlebot", func() { sinkVerdict = Google.Parse(body).For("Googlebot").CheckURL(url) })
	run("ours-google+index", func() {
		rs := Google.Parse(body).For(benchAgent)
		rs.index()
		sinkVerdict = rs.CheckURL(url)
	})
	run("lines", func() { sinkInt = splitLines(body) })
	if _, err := robotstxt.FromBytes(body); err != nil {
		b.Run("impl=temoto", func(b *testing.B) { b.Skipf("temoto rejects the file: %v", err) })
		return
	}
	run("temoto", func() { sinkAny, _ = robotstxt.FromBytes(body) })
}

// --- pathological patterns -------------------------------------------------

// BenchmarkPathological checks /*a*a*a*a*a*a*a*a*a*b against 2 KB paths in
// every dialect (and in temoto's): no 'b' at all, a 'b' only at the start
// (the byte filter passes, the segments are searched), and a match.
func BenchmarkPathological(b *testing.B) {
	const rule = "/*a*a*a*a*a*a*a*a*a*b"
	body := []byte("User-agent: *\nDisallow: " + rule + "\n")
	as := strings.Repeat("a", 2046)
	paths := map[string]string{
		"no-b":    "/a" + as,
		"b-first": "/b" + as,
		"match":   "/" + as + "ab",
	}
	for _, pn := range []string{"no-b", "b-first", "match"} {
		p := paths[pn]
		for _, d := range ourDialects {
			rs := d.Parse(body).For(benchAgent)
			b.Run("path="+pn+"/impl=ours-"+d.Name(), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					sinkVerdict = rs.Check(p)
				}
			})
		}
		b.Run("path="+pn+"/impl=temoto", func(b *testing.B) {
			r, err := robotstxt.FromBytes(body)
			if err != nil {
				b.Skip(err)
			}
			g := r.FindGroup(benchAgent)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				sinkBool = g.Test(p)
			}
		})
	}
}

// BenchmarkRepeatedGram checks paths of 1 and 8 KB of 'a' against 40
// wildcard rules all indexed by the gram "aaa" (see
// TestWildcardRulesTriedOncePerCheck): the time must grow with the path,
// not with its square.
func BenchmarkRepeatedGram(b *testing.B) {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
	var sb strings.Builder
	sb.WriteString("User-agent: *\n")
	for k := range len(letters) {
		fmt.Fprintf(&sb, "Disallow: /*aaa*x%c\n", letters[k])
	}
	rs := Google.ParseString(sb.String()).For(benchAgent)
	for _, n := range []int{1024, 8192} {
		p := "/" + strings.Repeat("a", n)
		b.Run(fmt.Sprintf("path=%dB", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				sinkVerdict = rs.Check(p)
			}
		})
	}
}

// --- allocation goal (not a timing assertion) -------------------------------

// TestCheckDoesNotAllocate asserts that checking a path against a parsed
// file allocates nothing, over the corpus URLs against several files in
// every dialect, and over the generated files.
func TestCheckDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	type subject struct {
		name string
		body []byte
		urls []string
	}
	var subjects []subject
	for _, g := range generated() {
		subjects = append(subjects, subject{g.name, g.body, g.urls[:500]})
	}
	if c, err := corpusIfPresent(); err == nil {
		for _, n := range benchFiles {
			if f := c.byKey[n]; f != nil {
				subjects = append(subjects, subject{f.name, f.body, c.urls})
			}
		}
	} else {
		t.Logf("shared corpus not available (%v): generated files only", err)
	}
	for _, s := range subjects {
		for _, d := range ourDialects {
			rs := d.Parse(s.body).For(benchAgent)
			var urls []string
			for _, u := range s.urls {
				if len(u) > 512 || d.s.encoding == encRFC3986 && len(appendRFC3986(nil, u, true)) > 512 {
					continue // documented to allocate beyond 512 bytes
				}
				urls = append(urls, u)
			}
			batch := testing.AllocsPerRun(3, func() {
				for _, u := range urls {
					sinkVerdict = rs.Check(u)
				}
			})
			if batch == 0 {
				continue
			}
			for _, u := range urls {
				if a := testing.AllocsPerRun(3, func() { sinkVerdict = rs.Check(u) }); a != 0 {
					t.Errorf("%s %s: Check(%q) allocates %.0f times", d, s.name, u, a)
				}
			}
		}
	}
}

func corpusIfPresent() (*benchCorpus, error) {
	corpusOnce.Do(func() { corpus, corpusErr = readCorpus(corpusDir()) })
	return corpus, corpusErr
}

// BenchmarkUsage: one op is one Ruleset.Usage (a crawl check and the usage
// lookup) of the next path, cycling, against a file with Content-Usage
// rules with and without paths and a Content-Signal line.
func BenchmarkUsage(b *testing.B) {
	body := attachExample + "\nUser-agent: *\nContent-Signal: search=yes, ai-train=no\nContent-Usage: /docs/*.pdf$ train-ai=n\nContent-Usage: /blog/ search=y\nContent-Usage: /%7Eusers/ train-ai=y\n"
	paths := []string{"/test", "/ai-ok/page", "/never/x", "/docs/a/b.pdf", "/blog/2026/11/post?x=1", "/~users/me", "/"}
	for _, d := range []*Dialect{RFC9309, Google, CocCoc} {
		rs := d.ParseString(body).For(benchAgent)
		b.Run("impl=ours-"+d.Name(), func(b *testing.B) {
			b.ReportAllocs()
			var v UsageVerdict
			for i := 0; i < b.N; i++ {
				v = rs.Usage(paths[i%len(paths)])
			}
			sinkAny = v.Usage
		})
	}
}
