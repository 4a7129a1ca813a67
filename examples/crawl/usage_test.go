package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
)

// usageSite states a usage signal in each carrier, one page per carrier,
// all linked from "/"; it counts the requests of each path.
func usageSite(t *testing.T) (*httptest.Server, func(string) int) {
	t.Helper()
	var mu sync.Mutex
	hits := map[string]int{}
	pages := map[string]func(h http.Header) string{
		"/ok":        func(http.Header) string { return "" },
		"/cu/a":      func(http.Header) string { return "" }, // robots.txt Content-Usage
		"/tdm/a":     func(http.Header) string { return "" }, // tdmrep.json
		"/hdr-cu":    func(h http.Header) string { h.Set("Content-Usage", "train-ai=n"); return "" },
		"/hdr-tdm":   func(h http.Header) string { h.Set("tdm-reservation", "1"); return "" },
		"/xrt":       func(h http.Header) string { h.Set("X-Robots-Tag", "noai"); return "" },
		"/rt":        func(h http.Header) string { h.Set("Robots-Tag", "testbot;noai"); return "" },
		"/meta-tdm":  func(http.Header) string { return `<meta name="tdm-reservation" content="1">` },
		"/meta-noai": func(http.Header) string { return `<meta name="robots" content="noai">` },
		"/lic-link": func(h http.Header) string {
			h.Set("Link", `</license.xml>; rel="license"; type="application/rsl+xml"`)
			return ""
		},
		"/lic-html": func(http.Header) string { return `<link rel="license" type="application/rsl+xml" href="/license.xml">` },
		"/hdr-cs":   func(h http.Header) string { h.Set("Content-Signal", "ai-train=no"); return "" },
		"/hdr-use":  func(h http.Header) string { h.Set("Content-Signal", "use=immediate"); return "" },
		"/xcs":      func(h http.Header) string { h.Set("X-Content-Signal", "ai-train=no"); return "" }, // not read
		"/meta-cs":  func(http.Header) string { return `<meta name="content-signal" content="ai-train=disallow">` },
		"/rsl-no/a": func(http.Header) string { return "" }, // robots.txt License
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\nCrawl-delay: 0.01\nContent-Usage: /cu/ train-ai=n\n"+
				"Content-Signal: use=reference\nLicense: /site-license.xml\n")
			return
		case "/.well-known/tdmrep.json":
			io.WriteString(w, `[{"location": "/tdm/", "tdm-reservation": 1}]`)
			return
		case "/site-license.xml":
			io.WriteString(w, `<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license><permits type="usage">all</permits></license></content>`+
				`<content url="/rsl-no/"><license><prohibits type="usage">ai-train</prohibits></license></content></rsl>`)
			return
		case "/license.xml":
			io.WriteString(w, `<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license>`+
				`<permits type="usage">search</permits></license></content></rsl>`)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/" {
			for p := range pages {
				io.WriteString(w, `<a href="`+p+`">x</a>`)
			}
			return
		}
		page, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "<html><head>"+page(w.Header())+"</head><body>page</body></html>")
	}))
	t.Cleanup(srv.Close)
	return srv, func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return hits[path]
	}
}

// -purpose train-ai -use reference over a site that states a signal in
// each carrier: one line per URL, stopped before the fetch (robots.txt,
// tdmrep.json, robots.txt's licence) or refused after it, with the
// purpose and the carrier; tdmrep.json and each licence are fetched once.
// Without -purpose every page is fetched and neither file is asked for;
// with -use full, the site's use=reference stops the crawl at its start.
func TestCrawlPurpose(t *testing.T) {
	srv, hits := usageSite(t)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-agent", "testbot", "-min-delay", "0", "-progress=false", "-purpose", "train-ai", "-use", "reference", srv.URL + "/"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	u := srv.URL
	want := []string{
		"fetched  200 " + u + "/",
		"fetched  200 " + u + "/ok",
		"fetched  200 " + u + "/xcs",
		"refused  " + u + "/hdr-cs: train-ai=n: Content-Signal header: ai-train=no",
		"refused  " + u + "/hdr-use: use=immediate: Content-Signal header: use=immediate",
		"refused  " + u + `/meta-cs: train-ai=n: meta <meta name="content-signal">: ai-train=disallow`,
		"stopped  " + u + "/rsl-no/a: train-ai=n: license " + u + `/site-license.xml (robots.txt line 6), content "/rsl-no/": not licensed`,
		"refused  " + u + "/hdr-cu: train-ai=n: Content-Usage header: train-ai=n",
		"refused  " + u + "/hdr-tdm: train-ai=n: tdm-reservation header: 1",
		"refused  " + u + "/lic-html: train-ai=n: license " + u + `/license.xml (<link rel=license>), content "/": not licensed`,
		"refused  " + u + "/lic-link: train-ai=n: license " + u + `/license.xml (Link header), content "/": not licensed`,
		"refused  " + u + `/meta-noai: train-ai=n: meta <meta name="robots">: noai`,
		"refused  " + u + `/meta-tdm: train-ai=n: meta <meta name="tdm-reservation">: 1`,
		"refused  " + u + "/rt: train-ai=n: Robots-Tag header, for testbot: noai",
		"refused  " + u + "/xrt: train-ai=n: X-Robots-Tag header: noai",
		"stopped  " + u + "/cu/a: train-ai=n: robots.txt line 4: Content-Usage: /cu/ train-ai=n",
		"stopped  " + u + "/tdm/a: train-ai=n: tdmrep.json rule 0 (location /tdm/): 1",
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stdout:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n, m, k := hits("/.well-known/tdmrep.json"), hits("/license.xml"), hits("/site-license.xml"); n != 1 || m != 1 || k != 1 {
		t.Errorf("tdmrep.json fetched %d times, the licences %d and %d, want once each", n, m, k)
	}
	if hits("/cu/a")+hits("/tdm/a")+hits("/rsl-no/a") != 0 {
		t.Errorf("a stopped page reached the server")
	}
	if !strings.Contains(errb.String(), "crawl: usage: 3 stopped before the fetch, 11 refused after it\n") {
		t.Errorf("stderr:\n%s", errb.String())
	}

	srv, hits = usageSite(t)
	out.Reset()
	if code := run(context.Background(), []string{"-agent", "testbot", "-min-delay", "0", "-progress=false", srv.URL + "/"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if n := strings.Count(out.String(), "fetched  200 "); n != 17 || hits("/.well-known/tdmrep.json")+hits("/license.xml")+hits("/site-license.xml") != 0 {
		t.Errorf("without -purpose: %d fetched, tdmrep.json %d, licence %d:\n%s", n, hits("/.well-known/tdmrep.json"), hits("/license.xml"), out.String())
	}
}

// -use full against the site's use=reference: nothing fetched but robots.txt.
func TestCrawlUseLevel(t *testing.T) {
	srv, hits := usageSite(t)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"-agent", "testbot", "-min-delay", "0", "-progress=false", "-use", "full", srv.URL + "/"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "stopped  " + srv.URL + "/: use=reference: robots.txt line 5: Content-Signal: use=reference\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if hits("/")+hits("/.well-known/tdmrep.json") != 0 {
		t.Errorf("fetched / %d, tdmrep.json %d times", hits("/"), hits("/.well-known/tdmrep.json"))
	}
}

// An unknown purpose is a usage error.
func TestCrawlPurposeUnknown(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"-purpose", "mining", "http://127.0.0.1:1/"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `WithUsage: unknown purpose "mining"`) {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// -reach with -use full against the site's use=reference: every page is
// fetched, its links followed, and each is reported refused.
func TestCrawlReach(t *testing.T) {
	srv, hits := usageSite(t)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"-agent", "testbot", "-min-delay", "0", "-progress=false", "-use", "full", "-reach", srv.URL + "/"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "refused  " + srv.URL + "/: use=reference: robots.txt line 5: Content-Signal: use=reference\n"; !strings.Contains(out.String(), want) {
		t.Errorf("stdout %q, want %q in it", out.String(), want)
	}
	if hits("/")+hits("/ok") != 2 || strings.Contains(out.String(), "stopped") {
		t.Errorf("fetched / %d, /ok %d times:\n%s", hits("/"), hits("/ok"), out.String())
	}
}

// An unknown user, or a region that is not a country code, is a usage error.
func TestCrawlUserGeo(t *testing.T) {
	for _, args := range [][]string{{"-purpose", "train-ai", "-user", "robot"}, {"-purpose", "train-ai", "-geo", "France"}, {"-user", "education"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), append(args, "http://127.0.0.1:1/"), &out, &errb); code != 2 || !strings.Contains(errb.String(), "WithUsage: ") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errb.String())
		}
	}
}
