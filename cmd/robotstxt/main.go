// Command robotstxt checks URLs against a robots.txt file as a chosen crawler
// reads it, and shows what it read.
//
// Usage:
//
//	robotstxt check   [-dialect D] -agent A[,B...] [-explain] FILE [URL...]
//	robotstxt inspect [-dialect D] -agent A[,B...] FILE
//
// check prints one line per URL, in order: "allowed<TAB>URL" or
// "disallowed<TAB>URL", with -explain a third field naming the deciding rule
// and its line ("line 4: Disallow: /private") or "no matching rule". URLs
// come from the arguments, or one per line on standard input when there are
// none (blank lines are skipped, a trailing CR is dropped). The exit status
// is 0 when every URL is allowed, 1 when any is disallowed, 2 on a usage or
// I/O error.
//
// inspect prints JSON: the dialect, the user-agent values of the group(s) in
// force, the crawl delay in seconds (null when the dialect reads none), the
// Sitemap URLs in file order, the rules in force with their lines, and the
// warnings.
//
// FILE is a local file or the http(s) URL of a robots.txt
// ("https://example.com/robots.txt"), fetched as the chosen dialect's
// crawler fetches it (package github.com/politecrawl/robots/policy: at most five
// redirects, 500 KiB, the dialect's rules for 4xx, 5xx and no answer). When
// the fetch outcome decides instead of rules, check -explain names it
// ("robots.txt: 503 Service Unavailable, complete disallow until
// 2026-11-23T14:05:00Z") and inspect adds a "fetch" object (URL, status,
// outcome, action, reason, retry time) to its JSON.
//
// Agents are product tokens, most specific first; the first that has a group
// of its own decides. With no -agent (or an empty one) only the "*" group(s)
// apply. A token the dialect does not compare whole (see
// dialect.Dialect.AgentToken: "Googlebot/2.1" is compared as "Googlebot" in
// rfc9309, and names no group in google) gets one warning line on standard
// error, "robotstxt: warning: -agent ...", which changes neither the output
// nor the exit status. -dialect is one of rfc9309 (default), google, coccoc,
// koster1994.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
)

const usage = `usage:
  robotstxt check   [-dialect D] -agent A[,B...] [-explain] FILE [URL...]
  robotstxt inspect [-dialect D] -agent A[,B...] FILE
dialects: rfc9309 (default), google, coccoc, koster1994`

// errUsage marks errors that are the caller's.
var errUsage = errors.New("usage")

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// runMain runs the command and writes an error as one line on stderr (a
// usage error points to -h for the usage text).
func runMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	code, err := run(args, stdin, stdout, stderr)
	if err != nil {
		msg := "robotstxt: " + strings.ReplaceAll(err.Error(), "\n", " ")
		if errors.Is(err, errUsage) {
			msg += " (robotstxt -h shows the usage)"
		}
		fmt.Fprintln(stderr, msg)
	}
	return code
}

// run executes one command and returns the exit status; warnings go to
// stderr.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 {
		return 2, fmt.Errorf("%w: no command", errUsage)
	}
	switch args[0] {
	case "check":
		return check(args[1:], stdin, stdout, stderr)
	case "inspect":
		return inspect(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return 0, nil
	}
	return 2, fmt.Errorf("%w: unknown command %q", errUsage, args[0])
}

type common struct {
	d      *dialect.Dialect
	agents []string
	file   string
	rest   []string
}

func parseFlags(name string, args []string, explain *bool) (*common, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dn := fs.String("dialect", "rfc9309", "dialect: "+strings.Join(dialect.Names(), ", "))
	agent := fs.String("agent", "", "product tokens, comma-separated, most specific first")
	if explain != nil {
		fs.BoolVar(explain, "explain", false, "name the deciding rule")
	}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	d, err := dialect.Lookup(*dn)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	c := &common{d: d}
	for _, a := range strings.Split(*agent, ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.agents = append(c.agents, a)
		}
	}
	if fs.NArg() == 0 {
		return nil, fmt.Errorf("%w: FILE is required", errUsage)
	}
	c.file, c.rest = fs.Arg(0), fs.Args()[1:]
	return c, nil
}

// warnAgents writes one line to stderr for each agent token the dialect does
// not compare whole.
func warnAgents(c *common, stderr io.Writer) {
	for _, a := range c.agents {
		compared, whole := c.d.AgentToken(a)
		switch {
		case whole:
		case compared == "":
			fmt.Fprintf(stderr, "robotstxt: warning: -agent %q: the %s dialect matches it to no user-agent line\n", a, c.d)
		default:
			fmt.Fprintf(stderr, "robotstxt: warning: -agent %q: the %s dialect compares only %q\n", a, c.d, compared)
		}
	}
}

// source is what FILE gave: parsed rules, or (for a fetched file) an outcome
// that decides every URL.
type source struct {
	robots *dialect.Robots // the rules read (empty when the fetch outcome decides)
	policy *policy.Policy  // for a fetched FILE
}

// verdict says whether rawURL is allowed, and why.
func (s *source) verdict(rs *dialect.Ruleset, rawURL string, explain bool) (bool, string) {
	if s.policy != nil {
		v := s.policy.CheckPath(dialect.PathOf(rawURL))
		if !explain {
			return v.Allowed, ""
		}
		return v.Allowed, v.String()
	}
	v := rs.CheckURL(rawURL)
	if !explain {
		return v.Allowed, ""
	}
	return v.Allowed, v.String()
}

func load(c *common) (*source, error) {
	if strings.HasPrefix(c.file, "http://") || strings.HasPrefix(c.file, "https://") {
		return fetchSource(c)
	}
	body, err := readFile(c.file)
	if err != nil {
		return nil, err
	}
	return &source{robots: c.d.Parse(body)}, nil
}

// cliUserAgent is the User-Agent header of a fetch: the first agent's name,
// so that a server that answers per crawler shows that crawler's file.
func cliUserAgent(agents []string) string {
	if len(agents) == 0 {
		return policy.DefaultUserAgent
	}
	return agents[0] + " (robotstxt; +https://github.com/politecrawl/robots)"
}

// fetchSource fetches the robots.txt that FILE names, with the dialect's
// fetch rules.
func fetchSource(c *common) (*source, error) {
	u, err := url.Parse(c.file)
	if err != nil {
		return nil, fmt.Errorf("%w: FILE: %v", errUsage, err)
	}
	if p := u.EscapedPath(); p != "" && p != "/" && p != "/robots.txt" || u.RawQuery != "" {
		return nil, fmt.Errorf("%w: FILE %s: a URL must name the robots.txt of its authority (scheme://host[:port]/robots.txt)", errUsage, c.file)
	}
	r := policy.NewResolver(policy.WithDialect(c.d), policy.WithAgents(c.agents...), policy.WithUserAgent(cliUserAgent(c.agents)))
	p, err := r.Policy(context.Background(), u)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", c.file, err)
	}
	src := &source{robots: p.Robots(), policy: p}
	if src.robots == nil {
		src.robots = c.d.Parse(nil)
	}
	return src, nil
}

// readFile reads at most one byte more than the dialects parse.
func readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Size the buffer from the file, so that reading it does not grow (and
	// copy, and fault in) a chain of ever larger buffers.
	n := int64(dialect.MaxBodyBytes + 1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() < n {
		n = st.Size()
	}
	buf := bytes.NewBuffer(make([]byte, 0, n+bytes.MinRead))
	_, err = buf.ReadFrom(io.LimitReader(f, dialect.MaxBodyBytes+1))
	b := buf.Bytes()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return b, nil
}

func check(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	var explain bool
	c, err := parseFlags("check", args, &explain)
	if err != nil {
		return 2, err
	}
	warnAgents(c, stderr)
	src, err := load(c)
	if err != nil {
		return 2, err
	}
	rs := src.robots.For(c.agents...)
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	code := 0
	one := func(u string) {
		allowed, why := src.verdict(rs, u, explain)
		if allowed {
			w.WriteString("allowed\t")
		} else {
			w.WriteString("disallowed\t")
			code = 1
		}
		w.WriteString(u)
		if explain {
			w.WriteByte('\t')
			w.WriteString(why)
		}
		w.WriteByte('\n')
	}
	if len(c.rest) > 0 {
		for _, u := range c.rest {
			one(u)
		}
		return code, nil
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		u := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(u) == "" {
			continue
		}
		one(u)
	}
	if err := sc.Err(); err != nil {
		return 2, fmt.Errorf("reading URLs from standard input: %w", err)
	}
	return code, nil
}

type jsonRule struct {
	Line    int    `json:"line"`
	Allow   bool   `json:"allow"`
	Pattern string `json:"pattern"`
	Rule    string `json:"rule"`
	Note    string `json:"note,omitempty"`
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
	Dialect           string        `json:"dialect"`
	Agents            []string      `json:"agents"`
	AgentGroup        []string      `json:"agent_group"`
	CrawlDelaySeconds *float64      `json:"crawl_delay_seconds"`
	CrawlDelayLine    int           `json:"crawl_delay_line,omitempty"`
	Sitemaps          []string      `json:"sitemaps"`
	Rules             []jsonRule    `json:"rules"`
	Warnings          []jsonWarning `json:"warnings"`
	Bytes             int           `json:"bytes"`
	Truncated         bool          `json:"truncated"`
	Fetch             *jsonFetch    `json:"fetch,omitempty"`
}

func inspect(args []string, stdout, stderr io.Writer) (int, error) {
	c, err := parseFlags("inspect", args, nil)
	if err != nil {
		return 2, err
	}
	if len(c.rest) > 0 {
		return 2, fmt.Errorf("%w: inspect takes no URLs", errUsage)
	}
	warnAgents(c, stderr)
	src, err := load(c)
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
	for _, s := range r.Sitemaps() {
		out.Sitemaps = append(out.Sitemaps, s.URL)
	}
	for _, ru := range rs.Rules() {
		out.Rules = append(out.Rules, jsonRule{Line: ru.Line, Allow: ru.Allow, Pattern: ru.Pattern, Rule: ru.String(), Note: ru.Note})
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
