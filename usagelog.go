package robots

import (
	"log/slog"
	"net/http"
	"net/url"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/usage"
)

// logStop appends to the usage log the record of a URL the plugin did not
// send (not a sitemap document's: it is no content): robots.txt or a
// usage term disallows it, the page it was found on says nofollow, its
// host's Crawl-delay is above the largest honoured, or the crawl's context
// ended. A request handed back as Deferred is not decided yet: it has its
// record once it is (Plugin.RetryDeferred).
func (p *core) logStop(b Block) {
	if p.cfg.usageLog == nil || b.Sitemap || b.Kind == Deferred {
		return
	}
	u, err := url.Parse(b.URL)
	if b.Request != nil && b.Request.URL != nil && !b.Redirect {
		u, err = b.Request.URL, nil
	}
	if err != nil {
		return
	}
	reason := b.Reason
	if b.Kind != Disallowed && b.Kind != UsageDisallowed {
		reason = b.Kind.String() + ": " + reason
	}
	p.logAppend(usage.Decision{URL: u, Outcome: usage.Stopped, Reason: reason, Report: b.Usage})
}

// attachUsageLog registers the usage log's OnResponse callback on c
// (WithUsage's Log): every fetched URL is recorded.
func (p *core) attachUsageLog(c *colly.Collector) {
	c.OnResponse(func(r *colly.Response) {
		if responded(r) {
			p.logResponse(r)
		}
	})
}

// logResponse appends the record of a fetched URL, refused or not, whatever
// its status.
func (p *core) logResponse(r *colly.Response) {
	if p.cfg.usageLog == nil {
		return
	}
	d := usage.Decision{URL: r.Request.URL, Outcome: usage.Fetched, Status: r.StatusCode}
	if ru, ok := UsageOf(r); ok {
		d.Report = &ru.Report
		if ru.Refused != "" {
			d.Outcome, d.Reason = usage.Refused, ru.Refused
		}
	}
	p.logAppend(d)
}

// logError appends the record of a request of the collector c that
// reached OnError with err, not a stop of the plugin's (those are logged
// as they are reported): an answer Colly calls an error (a status of 203
// or more, without c.ParseHTTPErrorResponse) is fetched with its status; a
// request without answer (a network error, a timeout, a callback's abort)
// failed, with the error as its reason. An error Colly reports after
// OnResponse (the HTML could not be parsed) adds nothing: OnResponse
// logged the URL.
func (p *core) logError(c *colly.Collector, r *colly.Response, err error) {
	switch {
	case p.cfg.usageLog == nil || r.Request.URL == nil:
	case r.StatusCode >= http.StatusNonAuthoritativeInfo && !c.ParseHTTPErrorResponse:
		p.logResponse(r)
	case r.StatusCode == 0 && err != nil:
		p.logAppend(usage.Decision{URL: r.Request.URL, Outcome: usage.Failed, Reason: err.Error()})
	}
}

func (p *core) logAppend(d usage.Decision) {
	res := p.resolver()
	d.Purposes, d.Use = p.cfg.purposes, p.cfg.useLevel
	if err := p.cfg.usageLog.Append(usage.NewLogRecord(res, res.Now(), d)); err != nil && p.logFailed.CompareAndSwap(false, true) {
		p.log.Error("robots: a record could not be written to the usage log (further failures are not logged)", slog.Any("error", err))
	}
}
