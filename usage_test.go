package robots

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/testkit/testutil"
	"github.com/politecrawl/robots/usage"
)

// usageSite is the attach draft's worked example with pages: "/ai-ok/" links to
// every page; /ai-ok/hdr answers with "Content-Usage: train-ai=n";
// /ai-ok/go redirects to /other (train-ai=n in robots.txt).
func usageSite() map[string]*testutil.Site {
	pages := []string{"/test", "/never/x", "/ai-ok/a", "/ai-ok/hdr", "/ai-ok/go", "/ai-ok/sig"}
	return map[string]*testutil.Site{"ai.test": {
		Robots: "User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			switch r.URL.Path {
			case "/ai-ok/":
				w.Header().Set("Content-Type", "text/html")
				for _, p := range pages {
					fmt.Fprintf(w, "<a href=%q>x</a>\n", p)
				}
				return true
			case "/ai-ok/hdr":
				w.Header().Add("Content-Usage", "search=y")
				w.Header().Add("Content-Usage", "train-ai=n")
			case "/ai-ok/go":
				http.Redirect(w, r, "/other", http.StatusFound)
				return true
			}
			return false
		}}}
}

// A crawl with WithUsage(usage.Config{Purposes: []string{"train-ai"}}) never fetches a URL whose
// robots.txt says train-ai=n (a redirect hop included), reports each such
// stop once with its line (OnError, WithOnBlocked, stats), and marks the
// response whose header says train-ai=n; sync and Async alike.
func TestPluginPurposes(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			f := testutil.NewFarm(t, usageSite())
			var (
				blocks  blockLog
				mu      sync.Mutex
				errs    = map[string]string{}
				scraped = map[string]string{} // URL → the Refused of its ResponseUsage
				called  []string
			)
			p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add),
				WithUsage(usage.Config{Purposes: []string{"train-ai"}}, func(r *colly.Response, u ResponseUsage) {
					mu.Lock()
					called = append(called, r.Request.URL.Path+" "+u.Refused)
					mu.Unlock()
				}))
			c := newCollector(async, p.opt(t))
			c.AllowURLRevisit = false
			c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
			c.OnScraped(func(r *colly.Response) {
				u, ok := UsageOf(r)
				mu.Lock()
				defer mu.Unlock()
				if !ok {
					scraped[r.Request.URL.Path] = "NO MARK"
					return
				}
				scraped[r.Request.URL.Path] = u.Refused
			})
			c.OnError(func(r *colly.Response, err error) {
				mu.Lock()
				defer mu.Unlock()
				errs[r.Request.URL.Path] = err.Error()
				var be *BlockedError
				if !errors.As(err, &be) {
					t.Errorf("%s: %v is no BlockedError", r.Request.URL, err)
				}
			})
			returnsWithin(t, 30*time.Second, "the crawl", func() {
				if err := c.Visit("http://ai.test/ai-ok/"); err != nil {
					t.Error(err)
				}
				c.Wait()
			})

			// Never fetched: what robots.txt says train-ai=n for, and the
			// disallowed path.
			got := f.Paths("ai.test")
			for _, p := range []string{"/test", "/never/x", "/other"} {
				if slices.Contains(got, p) {
					t.Errorf("%s reached the server: %v", p, got)
				}
			}
			want := map[string]string{
				"/ai-ok/":    "",
				"/ai-ok/a":   "",
				"/ai-ok/sig": "",
				"/ai-ok/hdr": "train-ai=n: Content-Usage header: search=y, train-ai=n",
			}
			mu.Lock()
			defer mu.Unlock()
			for path, refused := range want {
				if r, ok := scraped[path]; !ok || r != refused {
					t.Errorf("%s scraped with mark %q (%v), want %q", path, r, ok, refused)
				}
			}
			if len(scraped) != len(want) {
				t.Errorf("scraped %v, want %v", scraped, want)
			}
			if !slices.Equal(called, []string{"/ai-ok/hdr train-ai=n: Content-Usage header: search=y, train-ai=n"}) {
				t.Errorf("WithUsage's function called with %q", called)
			}
			// Stopped, each once, with its reason and line.
			wantErr := map[string]string{
				"/test":     "robots: usage-disallowed: train-ai=n: robots.txt line 4: Content-Usage: train-ai=n",
				"/ai-ok/go": `Get "http://ai.test/other": robots: usage-disallowed: redirect from http://ai.test/ai-ok/go not followed: train-ai=n: robots.txt line 4: Content-Usage: train-ai=n`,
				"/never/x":  "robots: disallowed: line 3: Disallow: /never/",
			}
			for path, w := range wantErr {
				if e := errs[path]; !strings.Contains(e, w) {
					t.Errorf("OnError for %s: %q, want it to hold %q", path, e, w)
				}
			}
			bs := blocks.all()
			kinds := map[BlockKind]int{}
			for _, b := range bs {
				kinds[b.Kind]++
				if b.Request == nil {
					t.Errorf("%s reported without its request", b.URL)
				}
			}
			if len(bs) != 3 || kinds[UsageDisallowed] != 2 || kinds[Disallowed] != 1 {
				t.Errorf("reports %v", bs)
			}
			tot := p.Totals()
			if tot.UsageDisallowed != 2 || tot.UsageMarked != 1 || tot.Disallowed != 1 {
				t.Errorf("totals %+v", tot)
			}
		})
	}
}

// usage.Config.Strict: nothing stated refuses, y allows; a response is
// marked unless robots.txt or its header says y.
func TestPluginStrictPurposes(t *testing.T) {
	f := testutil.NewFarm(t, map[string]*testutil.Site{"s.test": {
		Robots: "User-agent: *\nContent-Usage: /open/ train-ai=y\nContent-Usage: /hdr/ search=y\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/hdr/y" {
				w.Header().Set("Content-Usage", "train-ai=y")
			}
			return false
		}}})
	var blocks blockLog
	p := mustNew(t, WithTransport(farmTransport(t, f)), WithDefaultDelay(0), WithOnBlocked(blocks.add),
		WithUsage(usage.Config{Purposes: []string{"train-ai", "train-ai"}, Strict: true}))
	c := newCollector(false, p.opt(t))
	marks := map[string]ResponseUsage{}
	c.OnScraped(func(r *colly.Response) { marks[r.Request.URL.Path], _ = UsageOf(r) })
	for _, u := range []string{"/open/a", "/closed", "/hdr/y"} {
		_ = c.Visit("http://s.test" + u)
	}
	if got := f.Paths("s.test"); slices.Contains(got, "/closed") || !slices.Contains(got, "/open/a") {
		t.Errorf("server saw %v", got)
	}
	bs := blocks.all()
	if len(bs) != 2 || bs[0].Reason != "train-ai=unknown: nothing stated (WithUsage Strict)" {
		t.Errorf("blocks %v", bs)
	}
	if m := marks["/open/a"]; m.Refused != "" || m.Usage.Pref(dialect.TrainAI) != dialect.PrefAllow {
		t.Errorf("/open/a marked %+v", m)
	}
	if _, ok := marks["/hdr/y"]; ok {
		t.Errorf("/hdr/y was fetched although robots.txt states nothing for train-ai there")
	}
}

// WithUsage refuses what cannot act.
func TestPurposesOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want string // "" for a valid configuration
	}{
		{[]Option{WithUsage(usage.Config{Purposes: []string{"train-ai", "search", "ai-input"}})}, ""},
		{[]Option{WithUsage(usage.Config{Purposes: []string{"ai-train"}})}, ""},
		{[]Option{WithUsage(usage.Config{Purposes: []string{"train-ai"}, Strict: true}), WithDialect(dialect.Google)}, ""},
		{[]Option{WithUsage(usage.Config{})}, "robots: WithUsage: no purpose and no use level"},
		{[]Option{WithUsage(usage.Config{Purposes: []string{"Train-AI"}})}, `robots: WithUsage: unknown purpose "Train-AI" (known: train-ai, search, ai-input)`},
		{[]Option{WithUsage(usage.Config{Purposes: []string{"train-ai"}}), WithDialect(dialect.Koster1994)}, "robots: WithUsage: the koster1994 dialect reads no usage preferences"},
		{[]Option{WithUsage(usage.Config{Strict: true})}, "robots: WithUsage: no purpose and no use level"},
		{[]Option{WithUsage(usage.Config{Strict: true, Use: "full"})}, "robots: WithUsage: strict without a purpose"},
		{[]Option{WithUsage(usage.Config{Use: "reference"}, func(*colly.Response, ResponseUsage) {})}, ""},
		{[]Option{WithUsage(usage.Config{Use: "reference"}, nil, nil)}, "robots: WithUsage: more than one onRefused function"},
		{[]Option{WithUsage(usage.Config{Use: "max"})}, `robots: WithUsage: unknown use level "max" (known: immediate, reference, full)`},
		{[]Option{WithUsage(usage.Config{Use: "full"}), WithDialect(dialect.Koster1994)}, "robots: WithUsage: the koster1994 dialect reads no usage preferences"},
	} {
		_, err := New(tc.opts...)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.want, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
