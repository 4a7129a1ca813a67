package main

import (
	"strings"
	"testing"
)

// TestUsage runs the example crawl and holds its whole report: the pages
// robots.txt refuses for train-ai are never asked for (each reported once,
// with its line), the page whose header refuses it is fetched and dropped,
// and the counts of the plugin agree.
func TestUsage(t *testing.T) {
	const want = `crawling notes.demo for "train-ai" (robots.WithUsage)

  fetched, kept     http://notes.demo/open-data/               train-ai=y
  fetched, kept     http://notes.demo/open-data/weather        train-ai=y
  fetched, dropped  http://notes.demo/open-data/photos         train-ai=n: Content-Usage header: train-ai=n
  fetched, dropped  http://notes.demo/open-data/satellite      train-ai=n: X-Robots-Tag header: noai

never fetched (4):
  usage-disallowed http://notes.demo/                         train-ai=n: robots.txt line 4: Content-Signal: search=yes, ai-train=no
  usage-disallowed http://notes.demo/blog/hello               train-ai=n: robots.txt line 4: Content-Signal: search=yes, ai-train=no
  disallowed       http://notes.demo/drafts/census-2027       line 3: Disallow: /drafts/
  usage-disallowed http://notes.demo/open-data/partners/maps  train-ai=n: robots.txt line 6: Content-Usage: /open-data/partners/ train-ai=n

kept for training: 2; dropped after the fetch: 2 (WithUsage's function saw 2, Totals().UsageMarked 2)
never fetched: 3 for the purpose (Totals().UsageDisallowed), 1 by a crawl rule (Totals().Disallowed)
the server saw: /robots.txt /.well-known/tdmrep.json /open-data/ /open-data/weather /open-data/photos /open-data/satellite
`
	var out strings.Builder
	run(&out)
	if got := out.String(); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
}
