package policy

import (
	"testing"

	"github.com/politecrawl/robots/dialect"
)

// The usage of a URL under a fetched policy; a fetch outcome that decides
// every URL states nothing.
func TestPolicyUsage(t *testing.T) {
	body := "User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\nContent-Signal: search=yes\n"
	srv := newRobotsServer(t, text(200, body))
	r := newResolver(t, WithUserAgent("examplebot/1.0"))
	p := mustPolicy(t, r, srv.URL+"/")
	cases := []struct {
		url     string
		crawl   bool
		usage   string // robots.txt's
		line    int    // the line that decided train-ai (0: none)
		explain string
	}{
		{"/test", true, "train-ai=n, search=y", 4, "line 4: Content-Usage: train-ai=n"},
		{"/ai-ok/a?q=1", true, "train-ai=y", 5, "line 5: Content-Usage: /ai-ok/ train-ai=y"},
		{"/ai-ok/a", true, "train-ai=y", 5, "line 5: Content-Usage: /ai-ok/ train-ai=y"},
		{"/never/x", false, "", 0, "disallowed (line 3: Disallow: /never/)"},
	}
	for _, c := range cases {
		v := p.Usage(mustURL(t, srv.URL+c.url))
		if v.Crawl.Allowed != c.crawl || v.Usage.String() != c.usage {
			t.Errorf("%s: crawl=%v usage %q, want %v %q", c.url, v.Crawl.Allowed, v.Usage, c.crawl, c.usage)
		}
		line := 0
		if rule := v.Rule(dialect.TrainAI); rule != nil {
			line = rule.Line
		}
		if line != c.line || v.Explain(dialect.TrainAI) != c.explain {
			t.Errorf("%s: line %d %q, want %d %q", c.url, line, v.Explain(dialect.TrainAI), c.line, c.explain)
		}
	}

	// 404: no restrictions and no preference; 503 under rfc9309: complete
	// disallow, and the explanation is the fetch outcome.
	srv.set(text(404, ""))
	p = mustPolicy(t, newResolver(t), srv.URL+"/")
	if v := p.Usage(mustURL(t, srv.URL+"/a")); !v.Crawl.Allowed || v.Usage != 0 || v.Explain(dialect.TrainAI) != "no usage rule" {
		t.Errorf("404: %+v %q", v.Crawl, v.Explain(dialect.TrainAI))
	}
	srv.set(text(503, ""))
	p = mustPolicy(t, newResolver(t), srv.URL+"/")
	if v := p.Usage(mustURL(t, srv.URL+"/a")); v.Crawl.Allowed || v.Explain(dialect.TrainAI) != "disallowed ("+p.Reason()+")" {
		t.Errorf("503: %+v %q", v.Crawl, v.Explain(dialect.TrainAI))
	}
}

// Policy.Usage allocates nothing for an ordinary URL.
func TestPolicyUsageAllocs(t *testing.T) {
	srv := newRobotsServer(t, text(200, "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /a/ train-ai=y\n"))
	p := mustPolicy(t, newResolver(t), srv.URL+"/")
	u := mustURL(t, srv.URL+"/a/b?c=d")
	if n := testing.AllocsPerRun(100, func() { _ = p.Usage(u) }); n != 0 {
		t.Errorf("Usage allocates %v", n)
	}
}
