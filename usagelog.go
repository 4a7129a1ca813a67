package robots

import (
	"log/slog"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/usage"
)

// logStop appends the record of a URL stopped by robots.txt or a usage
// term to the usage log, when there is one.
func (p *Plugin) logStop(b Block) {
	l := p.cfg.usageLog
	if l == nil || (b.Kind != Disallowed && b.Kind != UsageDisallowed) {
		return
	}
	rec := usage.LogRecord{Time: p.now(), URL: b.URL, Outcome: usage.Stopped, Reason: b.Reason}
	p.logAppend(l, rec)
}

// logResponse appends the record of a fetched URL, refused or not.
func (p *Plugin) logResponse(r *colly.Response) {
	l := p.cfg.usageLog
	if l == nil {
		return
	}
	rec := usage.LogRecord{Time: p.now(), URL: r.Request.URL.String(), Outcome: usage.Fetched, Status: r.StatusCode}
	if ru, ok := UsageOf(r); ok {
		if ru.Refused != "" {
			rec.Outcome, rec.Reason = usage.Refused, ru.Refused
		}
		p.verdicts(&rec, ru.Usage)
	}
	p.logAppend(l, rec)
}

// verdicts fills in rec's declared purposes and the preference u states
// for each.
func (p *Plugin) verdicts(rec *usage.LogRecord, u dialect.Usage) {
	if len(p.cfg.purposes) == 0 {
		return
	}
	rec.Purposes = make([]string, len(p.cfg.purposes))
	rec.Verdicts = make(map[string]string, len(p.cfg.purposes))
	for i, c := range p.cfg.purposes {
		rec.Purposes[i] = c.String()
		rec.Verdicts[c.String()] = u.Pref(c).String()
	}
}

func (p *Plugin) logAppend(l *usage.Log, rec usage.LogRecord) {
	if err := l.Append(rec, nil); err != nil && p.logFailed.CompareAndSwap(false, true) {
		p.log.Error("robots: the usage log cannot be written; its later records are lost", slog.Any("error", err))
	}
}

// now is the resolver's clock (WithPolicy(policy.WithClock(...))).
func (p *Plugin) now() time.Time {
	if res := p.res.Load(); res != nil {
		return res.Now()
	}
	return time.Now()
}

// WithUsageLog appends to l one record per URL the crawl decided: each
// fetched URL (refused or not for a declared purpose), each URL stopped
// by robots.txt or a usage term before the fetch, with the time, the
// declared purposes and the preference in force for each, why it was
// stopped or refused, and the documents that decided. The caller opens l
// ([usage.OpenLog], signed with the crawler's key when it has one:
// botauth's Key.CryptoSigner and Key.Thumbprint) and closes it once the
// crawl is over. A write error is logged once; later records are lost.
// l nil is an error.
func WithUsageLog(l *usage.Log) Option {
	return func(c *config) {
		if l == nil {
			c.fail("WithUsageLog(nil): no log")
			return
		}
		c.usageLog = l
	}
}
