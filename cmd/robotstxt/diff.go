package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/internal/defaults"
	"github.com/politecrawl/robots/policy"
	"github.com/temoto/robotstxt"
)

// defaultCollyUA is colly.NewCollector's UserAgent in v2.3.0 (colly.go:490).
const defaultCollyUA = "colly - https://github.com/gocolly/colly"

// collyURLParser parses a URL as Colly v2.3.0's Visit does (colly.go:307, 633).
var collyURLParser = whatwg.NewParser(whatwg.WithPercentEncodeSinglePercentSign())

// collyTimeout is the timeout of Colly's HTTP client (http_backend.go:97).
const collyTimeout = 10 * time.Second

// collyCheck is Colly v2.3.0's robots.txt check (Collector.checkRobots,
// colly.go:843-899) for one host.
type collyCheck struct {
	group *robotstxt.Group // the group temoto picks for the UserAgent; nil when robots.txt decided as a whole
	why   string           // when group is nil: why every URL is disallowed
}

// allowed is the check of a URL as Colly parsed it.
func (cc *collyCheck) allowed(u *url.URL) bool {
	if cc.group == nil {
		return false
	}
	eu := u.EscapedPath()
	if u.RawQuery != "" {
		eu += "?" + u.Query().Encode()
	}
	return cc.group.Test(eu)
}

// newCollyCheck reads robots.txt as Colly does: robotstxt.FromResponse (that
// is, FromStatusAndBytes), then FindGroup with the collector's whole
// UserAgent. An error there makes Colly's Visit return it for every URL of
// the host, fetching none: said on stderr, and counted as disallowed.
func newCollyCheck(status int, body []byte, userAgent, file string, stderr io.Writer) *collyCheck {
	robot, err := robotstxt.FromStatusAndBytes(status, body)
	if err != nil {
		msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
		msg = strings.TrimSuffix(strings.Replace(msg, "Parse error(s): ;", "parse error(s):", 1), ";")
		fmt.Fprintf(stderr, "robotstxt: colly: temoto/robotstxt rejects %s (%s): Colly's Visit returns this error for every URL of the host and fetches none; counted as disallowed\n", file, msg)
		return &collyCheck{why: "temoto rejects robots.txt"}
	}
	if status >= 500 && status < 600 {
		fmt.Fprintf(stderr, "robotstxt: colly: %s answered %d %s: temoto reads it as disallow all, but Colly asks it for a group, finds none and allows every URL\n", file, status, http.StatusText(status))
	}
	// FindGroup returns an empty group (every URL allowed) rather than nil,
	// for allow-all and disallow-all results too.
	return &collyCheck{group: robot.FindGroup(userAgent)}
}

// collyFetch fetches robots.txt as Colly's check does: a GET with the
// collector's User-Agent on Colly's default client (10 s timeout, at most
// ten redirects, the tenth response kept), the whole body read.
func collyFetch(robotsURL, userAgent string) (int, []byte, error) {
	req, err := http.NewRequest("GET", robotsURL, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	client := &http.Client{
		Timeout: collyTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxWholeBytes+1))
	if err != nil {
		return 0, nil, err
	}
	if len(body) > maxWholeBytes {
		return 0, nil, fmt.Errorf("robots.txt is larger than %d MiB", maxWholeBytes>>20)
	}
	return resp.StatusCode, body, nil
}

// collyURL is the URL Colly's Visit makes of a URL argument: a path joined to
// base, then parsed by the WHATWG parser and again by net/url.
func collyURL(base, arg string) (*url.URL, error) {
	if arg == "" || arg[0] == '/' {
		arg = base + arg
	}
	wu, err := collyURLParser.Parse(arg)
	if err != nil {
		return nil, fmt.Errorf("%w: URL %q: Colly's URL parser rejects it: %v", errUsage, arg, err)
	}
	u, err := url.Parse(wu.Href(false))
	if err != nil {
		return nil, fmt.Errorf("%w: URL %q: Colly's URL parser rejects it: %v", errUsage, arg, err)
	}
	return u, nil
}

// requestPath is the path and query of u as sent: what the plugin checks.
func requestPath(u *url.URL) string {
	p := u.EscapedPath()
	if u.RawQuery != "" || u.ForceQuery {
		p += "?" + u.RawQuery
	}
	return p
}

// pluginDefers reports whether the plugin hands a request with verdict v
// back as Deferred rather than stopping it as Disallowed: robots.txt's
// fetch outcome (a 5xx, or no answer) disallows everything for a time, and
// the plugin keeps such requests for RetryDeferred (robots.temporary).
func pluginDefers(p *policy.Policy, v dialect.Verdict) bool {
	a := p.Action()
	return !v.Allowed && v.Reason == dialect.ReasonFetch && (a == dialect.ActionDisallowAll || a == dialect.ActionExcludeHost)
}

func verdictWord(allowed bool) string {
	if allowed {
		return "allowed"
	}
	return "disallowed"
}

// The plugin's defaults (package github.com/politecrawl/robots, which the
// command does not import: it imports Colly).
const (
	pluginDefaultDelay  = defaults.Delay
	pluginMaxCrawlDelay = defaults.MaxCrawlDelay
	pluginRetries       = defaults.Retries
)

// errorNotes say how the plugin's stops and retries reach a Colly program,
// next to Colly's own check, which fails Visit with colly.ErrRobotsTxtBlocked
// before any callback runs.
var errorNotes = []string{
	"robotstxt: errors: a disallowed request reaches OnError, and a sync Visit's error, as a *robots.BlockedError wrapping robots.ErrBlocked and colly.ErrRobotsTxtBlocked (errors.Is(err, colly.ErrRobotsTxtBlocked) still holds); Colly's own check failed Visit only, without OnError",
	"robotstxt: errors: a request deferred while robots.txt is unreachable (a 5xx or no answer: \"deferred\" above) matches robots.ErrBlocked and colly.ErrRobotsTxtBlocked too, and is kept for robots.Plugin.RetryDeferred",
	"robotstxt: errors: other Deferred, Skipped and Canceled stops (the host paused too long, a Crawl-delay above the largest honoured with robots.SkipHost, the context ended) match robots.ErrBlocked only; errors.As with *robots.BlockedError gives the Block",
	fmt.Sprintf("robotstxt: errors: a page answered 429 or 5xx (but 501, 505) pauses its host (Retry-After, else a backoff) and is sent again after the pause, up to %d times (robots.WithRetries); OnError sees only a request out of retries", pluginRetries),
}

// spacingNote says how requests to the host are spaced: Colly with no
// LimitRule sends them back to back; the plugin spaces them end-to-start by
// the Crawl-delay the dialect reads for the agents (capped at
// pluginMaxCrawlDelay), else by its default delay.
func spacingNote(d *dialect.Dialect, rs *dialect.Ruleset) string {
	var what string
	cd, ok := time.Duration(0), false
	if rs != nil {
		cd, ok = rs.CrawlDelay()
	}
	switch {
	case ok && cd > pluginMaxCrawlDelay:
		what = fmt.Sprintf("%s between requests to this host (line %d: Crawl-delay: %s, above the largest the plugin honours, robots.WithMaxCrawlDelay)", pluginMaxCrawlDelay, rs.CrawlDelayLine(), seconds(cd))
	case ok && cd == 0:
		what = fmt.Sprintf("no spacing (line %d: Crawl-delay: 0)", rs.CrawlDelayLine())
	case ok && !readsDelayAsWritten(d):
		what = fmt.Sprintf("%s between requests to this host (line %d: Crawl-delay, which %s reads as %s)", cd, rs.CrawlDelayLine(), d, seconds(cd))
	case ok:
		what = fmt.Sprintf("%s between requests to this host (line %d: Crawl-delay: %s)", cd, rs.CrawlDelayLine(), seconds(cd))
	case !readsCrawlDelay(d):
		what = fmt.Sprintf("%s between requests to this host (%s reads no Crawl-delay: the plugin's default delay, robots.WithDefaultDelay)", pluginDefaultDelay, d)
	default:
		what = fmt.Sprintf("%s between requests to this host (no Crawl-delay: the plugin's default delay, robots.WithDefaultDelay)", pluginDefaultDelay)
	}
	return fmt.Sprintf("robotstxt: spacing: colly: none (no LimitRule) -> %s: %s", d, what)
}

// seconds is a crawl delay as robots.txt writes it.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// readsCrawlDelay reports whether the dialect reads Crawl-delay at all.
func readsCrawlDelay(d *dialect.Dialect) bool {
	_, ok := d.ParseString("User-agent: *\nCrawl-delay: 1\n").For().CrawlDelay()
	return ok
}

// readsDelayAsWritten reports whether the dialect reads a Crawl-delay value
// as written (coccoc rounds it up to whole seconds and caps it), so that the
// value read can be quoted as the file's.
func readsDelayAsWritten(d *dialect.Dialect) bool {
	cd, _ := d.ParseString("User-agent: *\nCrawl-delay: 12.5\n").For().CrawlDelay()
	return cd == 12500*time.Millisecond
}

// redirectStatus reports whether Go's client, and so Colly's, follows a
// response of this status.
func redirectStatus(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// redirectFetcher fetches each URL once, as Colly sends it (GET, the
// collector's User-Agent, Colly's timeout), without following a redirect.
type redirectFetcher struct {
	client    *http.Client
	userAgent string
	seen      map[string]redirectResult
}

type redirectResult struct {
	target *url.URL // the redirect Colly follows; nil when none
	err    error
}

func newRedirectFetcher(userAgent string) *redirectFetcher {
	return &redirectFetcher{
		client: &http.Client{
			Timeout:       collyTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		userAgent: userAgent,
		seen:      map[string]redirectResult{},
	}
}

// redirect returns the target of u's redirect, nil when it answers none
// that Colly follows.
func (f *redirectFetcher) redirect(u *url.URL) (*url.URL, error) {
	key := u.String()
	if r, ok := f.seen[key]; ok {
		return r.target, r.err
	}
	target, err := f.fetch(key)
	f.seen[key] = redirectResult{target, err}
	return target, err
}

func (f *redirectFetcher) fetch(u string) (*url.URL, error) {
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", f.userAgent)
	resp, err := f.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if !redirectStatus(resp.StatusCode) {
		return nil, nil
	}
	target, err := resp.Location()
	if errors.Is(err, http.ErrNoLocation) {
		return nil, nil // Go's client does not follow it either
	}
	if err != nil {
		return nil, fmt.Errorf("%d with Location %q: %v", resp.StatusCode, resp.Header.Get("Location"), err)
	}
	if !isHTTP(target.Scheme) {
		return nil, nil // Colly's client fails on it; neither side fetches it
	}
	return target, nil
}

func diffCmd(c *common, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	src, err := load(c, stderr, true)
	if err != nil {
		return 2, err
	}
	base := "http://example.com"
	var cc *collyCheck
	var rf *redirectFetcher
	if src.policy != nil {
		base = src.base.String()
		robotsURL := base + "/robots.txt"
		status, body, err := collyFetch(robotsURL, c.collyUA)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			fmt.Fprintf(stderr, "robotstxt: colly: %s: %v: Colly's Visit returns this error for every URL of the host and fetches none; counted as disallowed\n", robotsURL, err)
			cc = &collyCheck{why: "robots.txt fetch failed"}
		} else {
			cc = newCollyCheck(status, body, c.collyUA, robotsURL, stderr)
		}
		rf = newRedirectFetcher(c.collyUA)
	} else {
		if len(src.body) > maxWholeBytes {
			return 2, fmt.Errorf("%s is larger than %d MiB", c.file, maxWholeBytes>>20)
		}
		cc = newCollyCheck(http.StatusOK, src.body, c.collyUA, c.file, stderr)
	}
	rs := src.robots.For(c.agents...)
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	changed, total, stopped, unchecked, otherURLs := 0, 0, 0, 0, 0
	err = eachURL(c, stdin, func(arg string) error {
		u, err := collyURL(base, arg)
		if err != nil {
			return err
		}
		total++
		colly := cc.allowed(u)
		var allowed, deferred bool
		var why string
		if src.policy != nil {
			v := src.policy.CheckPath(requestPath(u))
			allowed, why = v.Allowed, v.String()
			deferred = pluginDefers(src.policy, v.Verdict)
		} else {
			v := rs.Check(requestPath(u))
			allowed, why = v.Allowed, v.String()
		}
		if colly != allowed {
			changed++
			collyWhy := "-"
			if cc.group == nil {
				collyWhy = cc.why
			}
			word := verdictWord(allowed)
			if deferred {
				word = "deferred"
			}
			_, err = fmt.Fprintf(w, "%s\tcolly: %s (%s)\t%s: %s (%s)\n", arg, verdictWord(colly), collyWhy, c.d, word, why)
			return err
		}
		if !allowed || rf == nil {
			return nil
		}
		// Allowed by both: Colly follows a redirect unchecked; the plugin
		// checks the hop.
		if a, err := policy.Authority(u); err != nil || a != src.policy.Authority() {
			otherURLs++
			return nil
		}
		target, err := rf.redirect(u)
		if err != nil {
			fmt.Fprintf(stderr, "robotstxt: redirects: %s: %v: its redirect, if any, is not seen\n", arg, err)
			return nil
		}
		if target == nil {
			return nil
		}
		if a, err := policy.Authority(target); err != nil || a != src.policy.Authority() {
			unchecked++
			_, err = fmt.Fprintf(w, "%s -> %s\tcolly: followed\t%s: not checked (other host)\n", arg, target.Redacted(), c.d)
			return err
		}
		v := src.policy.Check(target)
		if v.Allowed {
			return nil
		}
		stopped++
		_, err = fmt.Fprintf(w, "%s -> %s\tcolly: followed\t%s: stopped (%s)\n", arg, requestPath(target), c.d, v.String())
		return err
	})
	if err != nil {
		w.Flush()
		return 2, err
	}
	if err := w.Flush(); err != nil {
		return 2, err
	}
	switch {
	case rf == nil:
		fmt.Fprintln(stderr, "robotstxt: redirects: FILE is a local file: a redirect into a disallowed path (Colly follows it, the plugin stops it) cannot be seen without the site; give FILE as the site's robots.txt URL")
	case otherURLs > 0:
		fmt.Fprintf(stderr, "robotstxt: redirects: %d URL(s) of another host than FILE's not fetched: their redirects are not seen\n", otherURLs)
	}
	prs := rs
	if src.policy != nil {
		prs = src.policy.Rules()
	}
	fmt.Fprintln(stderr, spacingNote(c.d, prs))
	for _, n := range errorNotes {
		fmt.Fprintln(stderr, n)
	}
	summary := fmt.Sprintf("robotstxt: %d of %d URLs change verdict", changed, total)
	if stopped > 0 {
		summary += fmt.Sprintf("; %d %s now stopped", stopped, plural(stopped, "redirect"))
	}
	if unchecked > 0 {
		summary += fmt.Sprintf("; %d %s to another host not checked", unchecked, plural(unchecked, "redirect"))
	}
	fmt.Fprintln(stderr, summary)
	if changed+stopped > 0 {
		return 1, nil
	}
	return 0, nil
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
