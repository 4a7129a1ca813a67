package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
)

type jsonRule struct {
	Line    int    `json:"line"`
	Allow   bool   `json:"allow"`
	Pattern string `json:"pattern"`
	Rule    string `json:"rule"`
	Note    string `json:"note,omitempty"`
}

// jsonUsageRule is a Content-Usage or Content-Signal line in force.
type jsonUsageRule struct {
	Line  int    `json:"line"`
	Path  string `json:"path"`  // as written; "" when the line has none (every path)
	Rule  string `json:"rule"`  // the line, key and value
	Usage string `json:"usage"` // what it states ("train-ai=n, search=y"; "" nothing the dialect knows)
}

type jsonWarning struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// jsonFetch is what a fetched FILE gave.
type jsonFetch struct {
	URL       string `json:"url"`
	FinalURL  string `json:"final_url"`
	Redirects int    `json:"redirects"`
	Status    int    `json:"status"`
	Error     string `json:"error,omitempty"`
	Outcome   string `json:"outcome"`
	Action    string `json:"action"`
	Reason    string `json:"reason"`
	Bytes     int    `json:"bytes"`
	Truncated bool   `json:"truncated"`
	Expires   string `json:"expires"` // when robots.txt would be fetched again (the retry time after a failure)
}

type inspectOutput struct {
	Dialect           string          `json:"dialect"`
	Agents            []string        `json:"agents"`
	AgentGroup        []string        `json:"agent_group"`
	CrawlDelaySeconds *float64        `json:"crawl_delay_seconds"`
	CrawlDelayLine    int             `json:"crawl_delay_line,omitempty"`
	Sitemaps          []string        `json:"sitemaps"`
	Rules             []jsonRule      `json:"rules"`
	UsageRules        []jsonUsageRule `json:"usage_rules"`
	Warnings          []jsonWarning   `json:"warnings"`
	Bytes             int             `json:"bytes"`
	Truncated         bool            `json:"truncated"`
	Fetch             *jsonFetch      `json:"fetch,omitempty"`
}

func inspect(c *common, _ io.Reader, stdout, stderr io.Writer) (int, error) {
	src, err := load(c, stderr, false)
	if err != nil {
		return 2, err
	}
	r := src.robots
	rs := r.For(c.agents...)
	out := inspectOutput{
		Dialect:    c.d.Name(),
		Agents:     c.agents,
		AgentGroup: []string{},
		Sitemaps:   []string{},
		Rules:      []jsonRule{},
		UsageRules: []jsonUsageRule{},
		Warnings:   []jsonWarning{},
	}
	for _, a := range rs.Agents() {
		out.AgentGroup = append(out.AgentGroup, a.Value)
	}
	if d, ok := rs.CrawlDelay(); ok {
		s := d.Seconds()
		out.CrawlDelaySeconds = &s
		out.CrawlDelayLine = rs.CrawlDelayLine()
	}
	if src.policy != nil {
		// Fetched: resolved against the robots.txt URL, each once.
		out.Sitemaps = append(out.Sitemaps, src.policy.Sitemaps()...)
		for _, w := range src.policy.SitemapWarnings() {
			fmt.Fprintln(stderr, "robotstxt: warning: "+w)
		}
	} else {
		// A local file has no URL: the values are kept as written.
		for _, s := range r.Sitemaps() {
			out.Sitemaps = append(out.Sitemaps, s.URL)
			if u, err := url.Parse(strings.TrimSpace(s.URL)); err == nil && !u.IsAbs() {
				fmt.Fprintf(stderr, "robotstxt: warning: line %d: relative Sitemap %q kept as written (a local file has no URL to resolve it against)\n", s.Line, s.URL)
			}
		}
	}
	for _, ru := range rs.Rules() {
		out.Rules = append(out.Rules, jsonRule{Line: ru.Line, Allow: ru.Allow, Pattern: ru.Pattern, Rule: ru.String(), Note: ru.Note})
	}
	for _, ru := range rs.UsageRules() {
		out.UsageRules = append(out.UsageRules, jsonUsageRule{Line: ru.Line, Path: ru.Path, Rule: ru.String(), Usage: ru.Usage.String()})
	}
	for _, w := range r.Warnings() {
		out.Warnings = append(out.Warnings, jsonWarning{Line: w.Line, Message: w.Message})
	}
	out.Bytes, out.Truncated = r.Size()
	if p := src.policy; p != nil {
		f := p.Fetch()
		out.Fetch = &jsonFetch{
			URL: f.URL, FinalURL: f.FinalURL, Redirects: f.Redirects, Status: f.Status, Error: f.Err,
			Outcome: f.Outcome.String(), Action: p.Action().String(), Reason: p.Reason(),
			Bytes: f.Bytes, Truncated: f.Truncated, Expires: p.Expires().UTC().Format(time.RFC3339),
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return 2, err
	}
	return 0, nil
}
