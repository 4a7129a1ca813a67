package usage

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/politecrawl/robots/dialect"
)

// A tdmrep.json of more rules than MaxTDMRules is read up to the limit:
// its rule 0's reservation holds, and the evidence says how many rules
// were not read.
func TestUsageTDMRepPastRuleLimit(t *testing.T) {
	body := `[{"location": "/", "tdm-reservation": 1}` + strings.Repeat(`,{"location": "/x", "tdm-reservation": 0}`, MaxTDMRules+99) + `]`
	if len(body) > MaxTDMRepSize {
		t.Fatalf("the file is %d bytes, over the size limit", len(body))
	}
	site := newUsageSite(t, map[string]string{"/robots.txt": "User-agent: *\nAllow: /\n", tdmPath: body})
	got := refusal(usage(t, newResolver(t), site.URL+"/a", trainAI), trainAI)
	if want := "train-ai=n: tdmrep.json rule 0 (location /) (100 rules past 4096 not read): 1"; got != want {
		t.Errorf("refusal %q, want %q", got, want)
	}
}

// A tdmrep.json redirected to another origin is read (the protocol lets
// the file's URL redirect), and the evidence names the URL it was read
// from.
func TestUsageTDMRepOtherOrigin(t *testing.T) {
	other := newUsageSite(t, map[string]string{"/rules.json": `[{"location": "/", "tdm-reservation": 1}]`})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = w.Write([]byte("User-agent: *\nAllow: /\n"))
		case tdmPath:
			http.Redirect(w, r, other.URL+"/rules.json", http.StatusFound)
		}
	}))
	defer site.Close()
	got := refusal(usage(t, newResolver(t), site.URL+"/a", trainAI), trainAI)
	if want := "train-ai=n: tdmrep.json rule 0 (location /) of " + other.URL + "/rules.json: 1"; got != want {
		t.Errorf("refusal %q, want %q", got, want)
	}
}

// A value a site states is quoted in a signal up to 256 bytes, at a rune
// boundary, then "…": a header of 1 MB does not make a reason of 1 MB.
func TestUsageQuotedValuesBounded(t *testing.T) {
	site := newUsageSite(t, map[string]string{"/robots.txt": "User-agent: *\nAllow: /\n"})
	big := "train-ai=n, x=\"" + strings.Repeat("é", 512<<10) + "\""
	h := http.Header{"Content-Usage": {big}, "Tdm-Reservation": {"1"}, "Tdm-Policy": {"https://p.example/" + strings.Repeat("a", 1<<20)}}
	rep, err := CheckResponse(context.Background(), newResolver(t), mustURL(t, site.URL+"/a"), h, nil, dialect.TrainAI)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Signals) == 0 {
		t.Fatal("no signal")
	}
	for _, s := range rep.Signals {
		str := s.String()
		if len(str) > 1024 || !utf8.ValidString(str) {
			t.Errorf("a signal of %d bytes (valid UTF-8 %v): %.80s…", len(str), utf8.ValidString(str), str)
		}
	}
	for _, s := range rep.Signals {
		if s.Carrier == ContentUsageHeader && (!strings.HasSuffix(s.Value, "…") || len(s.Value) > maxQuoted+len("…")) {
			t.Errorf("Content-Usage value of %d bytes: %.80s", len(s.Value), s.Value)
		}
		if s.Carrier == TDMHeader && (!strings.HasSuffix(s.Policy, "…") || len(s.Policy) > maxQuoted+len("…")) {
			t.Errorf("tdm-policy of %d bytes: %.80s", len(s.Policy), s.Policy)
		}
	}
}

// licenseLines returns a robots.txt with n License lines, each a distinct
// licence on base.
func licenseLines(base string, n int) string {
	var b strings.Builder
	b.WriteString("User-agent: *\nAllow: /\n")
	for i := range n {
		b.WriteString("License: " + base + "/l" + strconv.Itoa(i) + ".xml\n")
	}
	return b.String()
}

// checkCost returns the bytes and allocations of one Check of a URL whose
// robots.txt holds n License lines, everything in memory.
func checkCost(t testing.TB, n int) (bytes uint64, allocs float64) {
	site := newUsageSite(t, map[string]string{})
	site.mu.Lock()
	site.files["/robots.txt"] = licenseLines(site.URL, n)
	site.mu.Unlock()
	r := newResolver(t)
	ctx := context.Background()
	u := mustURL(t, site.URL+"/a")
	check := func() {
		if _, err := Check(ctx, r, u, dialect.TrainAI); err != nil {
			t.Fatal(err)
		}
	}
	check()
	const runs = 50
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for range runs {
		check()
	}
	runtime.ReadMemStats(&m1)
	allocs = testing.AllocsPerRun(runs, check)
	return (m1.TotalAlloc - m0.TotalAlloc) / runs, allocs
}

// 16,000 License lines cost a check no more than 8 do, within a small
// constant: the licences of a robots.txt are read once, and a check
// considers at most MaxLicenses+1 of them.
func TestUsageLicenseLinesCost(t *testing.T) {
	b8, a8 := checkCost(t, 8)
	b16k, a16k := checkCost(t, 16000)
	t.Logf("8 lines: %d B, %.0f allocs per check; 16,000 lines: %d B, %.0f allocs", b8, a8, b16k, a16k)
	if b16k > 2*b8+4<<10 || a16k > 2*a8+20 {
		t.Errorf("16,000 lines: %d B, %.0f allocs per check; 8 lines: %d B, %.0f allocs", b16k, a16k, b8, a8)
	}
}

// A page's licences are fetched together: the server answers none until
// all have been asked (or 5 s after the first), so one fetch after
// another would see each licence refused.
func TestUsageLicencesFetchedTogether(t *testing.T) {
	const n = MaxLicenses
	lic := `<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license>` +
		`<permits type="usage">ai-train</permits></license></content></rsl>`
	var (
		mu      sync.Mutex
		arrived int
		all     = make(chan struct{})
		expired = make(chan struct{})
		timer   *time.Timer
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			_, _ = w.Write([]byte(licenseLines("", 0)))
		case strings.HasPrefix(r.URL.Path, "/l"):
			mu.Lock()
			if arrived++; arrived == n {
				close(all)
			}
			if timer == nil {
				timer = time.AfterFunc(5*time.Second, func() { close(expired) })
			}
			mu.Unlock()
			select {
			case <-all:
				_, _ = w.Write([]byte(lic))
			case <-expired:
				http.Error(w, "alone", http.StatusServiceUnavailable)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	var links []string
	for i := range n {
		links = append(links, "</l"+strconv.Itoa(i)+`.xml>; rel="license"; type="application/rsl+xml"`)
	}
	h := http.Header{"Link": {strings.Join(links, ", ")}}
	rep, err := CheckResponse(context.Background(), newResolver(t), mustURL(t, srv.URL+"/a"), h, nil, dialect.TrainAI)
	if err != nil {
		t.Fatal(err)
	}
	licensed := 0
	for _, s := range rep.Signals {
		if s.Carrier == LicenseDocument && s.Value == "licensed" {
			licensed++
		}
	}
	if licensed != n {
		t.Errorf("%d licences licensed, want %d: %v", licensed, n, rep.Signals)
	}
}

// The licences read once per policy are shared by concurrent checks, each
// adding the licences its response points to (go test -race).
func TestUsageSharedLicencesConcurrent(t *testing.T) {
	site := newUsageSite(t, map[string]string{})
	site.mu.Lock()
	site.files["/robots.txt"] = licenseLines(site.URL, 3)
	site.mu.Unlock()
	r := newResolver(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := http.Header{"Link": {"</own" + strconv.Itoa(i) + `.xml>; rel="license"; type="application/rsl+xml"`}}
			rep, err := CheckResponse(context.Background(), r, mustURL(t, site.URL+"/a"), h, nil, dialect.TrainAI)
			if err != nil {
				t.Error(err)
				return
			}
			want := "/own" + strconv.Itoa(i) + ".xml"
			var found bool
			for _, s := range rep.Signals {
				found = found || s.License != nil && strings.HasSuffix(s.License.URL, want)
			}
			if !found {
				t.Errorf("check %d: no signal for %s: %v", i, want, rep.Signals)
			}
		}()
	}
	wg.Wait()
}
