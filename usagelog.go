package robots

import (
	"log/slog"
	"net/url"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/usage"
)

// logStop appends to the usage log the record of a URL robots.txt or a
// usage term stopped (not a sitemap document's: it is no content).
func (p *core) logStop(b Block) {
	if p.cfg.usageLog == nil || b.Sitemap || (b.Kind != Disallowed && b.Kind != UsageDisallowed) {
		return
	}
	u, err := url.Parse(b.URL)
	if b.Request != nil && b.Request.URL != nil && !b.Redirect {
		u, err = b.Request.URL, nil
	}
	if err != nil {
		return
	}
	p.logAppend(usage.Decision{URL: u, Outcome: usage.Stopped, Reason: b.Reason, Report: b.Usage})
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

// logResponse appends the record of a fetched URL, refused or not.
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

func (p *core) logAppend(d usage.Decision) {
	res := p.resolver()
	d.Purposes, d.Use = p.cfg.purposes, p.cfg.useLevel
	if err := p.cfg.usageLog.Append(usage.NewLogRecord(res, res.Now(), d)); err != nil && p.logFailed.CompareAndSwap(false, true) {
		p.log.Error("robots: a record could not be written to the usage log (further failures are not logged)", slog.Any("error", err))
	}
}
