// Command robotstxt checks URLs against a robots.txt file as a chosen crawler
// reads it, shows what it read, and shows what changes for a Colly crawler
// that moves from Colly's own robots.txt check to this module's.
//
// Usage:
//
//	robotstxt check   [-dialect D] [-agent A[,B...]] [-usage C[,C...]] [-explain] FILE [URL...]
//	robotstxt inspect [-dialect D] [-agent A[,B...]] FILE
//	robotstxt diff    [-dialect D] [-agent A[,B...]] [-user-agent UA] FILE [URL...]
//	robotstxt sitemaps [-dialect D] [-agent A[,B...]] [-since DATE] URL
//	robotstxt COMMAND -h
//
// Flags may come before or after FILE and the URLs; "--" ends them. COMMAND
// -h (or -help, --help, "robotstxt help COMMAND") lists the command's flags
// on standard output.
//
// check prints one line per URL, in order: "allowed<TAB>URL" or
// "disallowed<TAB>URL", with -explain a third field naming the deciding rule
// and its line ("line 4: Disallow: /private") or "no matching rule". The exit
// status is 0 when every URL is allowed, 1 when any is disallowed, 2 on a
// usage or I/O error.
//
// check -usage C[,C...] adds, after URL and before the -explain field, one
// field per usage category asked, in the order asked: the preference
// robots.txt states for the URL (dialect.Ruleset.Usage: Content-Usage of
// draft-ietf-aipref-attach-05, Cloudflare's Content-Signal), "C=y", "C=n" or
// "C=unknown", or "C=n/a" for a URL the crawl rules disallow (it has none).
// The categories are train-ai, search and ai-input; another name, or a
// dialect that reads no usage lines (koster1994), is a usage error. The exit
// status stays that of the crawl verdicts.
//
// inspect prints JSON: the dialect, the user-agent values of the group(s) in
// force, the crawl delay in seconds (null when the dialect reads none), the
// Sitemap URLs in file order, the rules in force with their lines, the usage
// rules in force (Content-Usage, Content-Signal) with their lines and what
// each states, and the warnings. The Sitemap values of a local file are kept as written (a
// relative one gets a warning line on standard error); those of a fetched
// FILE are resolved against its URL and listed once each, with a warning
// line for each value resolved or left out.
//
// diff is the migration report for a Colly user: for each URL, the verdict of
// Colly v2.3.0's built-in robots.txt check (github.com/temoto/robotstxt, called
// as Colly calls it, for a collector whose UserAgent is -user-agent) and the
// dialect's (this module's plugin on the same collector), and it prints
// the URLs whose verdict changes:
//
//	URL<TAB>colly: allowed|disallowed (-)<TAB>DIALECT: allowed|disallowed (WHY)
//
// WHY is what check -explain gives. temoto/robotstxt does not say which rule
// decided, so the colly field names none ("-"); it names a cause only when
// robots.txt decided as a whole. Both sides see the URL as Colly sends it
// (parsed by the WHATWG URL parser as Colly's Visit parses it, a path joined
// to FILE's scheme and host, or to http://example.com for a local FILE);
// Colly's side then matches temoto's rules against the escaped path and the
// query as url.Values.Encode re-encodes it (keys sorted), as Colly does.
// Colly passes its whole UserAgent to temoto, which picks the group whose
// name is the longest prefix of it (so "Mozilla/5.0 (compatible; ExampleBot/1.0)"
// selects "*", never "examplebot"); the dialect side uses -agent, or, as the
// plugin does by default, the product token of -user-agent. -user-agent
// defaults to the first -agent value as given, or to Colly's default
// ("colly - https://github.com/gocolly/colly") without -agent. A robots.txt
// that temoto rejects (one bad Crawl-delay, a rule before any User-agent) or
// that Colly cannot fetch is said on standard error, and every URL counts as
// disallowed on Colly's side: Colly's Visit returns that error and fetches
// nothing. A 5xx robots.txt, which temoto reads as "disallow all", allows
// everything in Colly, whose check asks only for a group and finds none.
//
// Colly checks only the URL given to Visit; the plugin checks every redirect
// hop. Against a site (FILE a URL), diff fetches each URL that both allow
// once, as Colly sends it (GET, -user-agent, 10 s timeout), without following
// its redirect; a redirect Colly follows into a path the dialect disallows
// is a change too:
//
//	URL -> TARGET<TAB>colly: followed<TAB>DIALECT: stopped (WHY)
//
// TARGET is the path and query, or the whole URL of another host, which is
// "not checked (other host)" (its robots.txt is not fetched). Only the first
// hop is looked at. A local FILE has no site to ask, which is said on
// standard error. Standard error also says how the plugin spaces requests to
// the host (its Crawl-delay for the agents, else the plugin's 1 s default;
// Colly with no LimitRule does not space them) and how its stops and retries
// reach OnError. The last line on standard error is "robotstxt: N of M URLs
// change verdict", followed by "; K redirect(s) now stopped" when some are.
// The exit status is 0 when nothing changes, 1 when a verdict or redirect
// does, 2 on a usage or I/O error.
//
// sitemaps streams the page URLs of a site's sitemaps to standard output,
// one per line, in document order, each once. URL is a site
// ("https://example.com/", or its /robots.txt: the Sitemap lines of its
// robots.txt, resolved against its URL, are the sitemaps) or one sitemap URL.
// Indexes are followed (nesting depth 5); gzip (two layers), plain-text, RSS
// and Atom sitemaps are read as streams, within the limits of package
// github.com/politecrawl/robots/sitemap. A sitemap that robots.txt disallows
// for the agents is not fetched; an index child or page URL on another host
// than the site's is left out (sitemaps.org cross-submission, at host
// level); requests to a host are spaced by its Crawl-delay (else 1 s, at
// most 30 s), robots.txt fetches included, and 5xx, 429 and network errors
// are retried twice, honouring Retry-After. -since DATE (2006-01-02, or an
// RFC 3339 time) leaves out pages and index children whose lastmod is known
// and earlier. Standard error gets one line per sitemap as it ends
// ("URL: urlset, 3 found, 2 printed, rejected 1 (other host)", or its
// error). Page URLs robots.txt disallows for the agent are left out,
// counted in that line ("filtered 1 (disallowed by robots.txt)"). The exit
// status is 0 when every sitemap was read, 1 when some failed or were cut
// by a limit (the URLs read before are printed), or when the site's
// robots.txt announces no sitemap or could not be read (said on standard
// error), 2 on a usage error.
//
// URLs come from the arguments, or one per line on standard input when there
// are none (blank lines are skipped, a trailing CR is dropped). Each is an
// absolute path ("/a/b?c", taken as given: "//x" is the path //x and a stray
// "%" is a character of it; an empty argument is "/") or a URL with a host
// ("https://example.com/a/b?c", "ftp://example.com/pub/x", any scheme in any
// case: RFC 9309 applies to any URI-based protocol, and only the path is
// compared); any other is a usage error naming it, and on standard input its
// line.
//
// FILE is a local file or the http(s) URL of a robots.txt
// ("https://example.com/robots.txt"; a FILE with any other scheme is a usage
// error, so a local name holding a colon is written ./NAME), fetched as the
// chosen dialect's crawler fetches it (package
// github.com/politecrawl/robots/policy: at most five redirects, 500 KiB,
// the dialect's rules for 4xx, 5xx and no answer). A fetch that gives no rules
// to parse is said in one line on standard error ("robotstxt:
// http://127.0.0.1:1/robots.txt: no answer (connection refused), complete
// disallow until 2026-11-23T14:05:00Z"); the verdicts and the exit status are
// the dialect's, as without it. With -explain, a URL that the fetch outcome
// decides says so ("robots.txt: 503 Service Unavailable, complete disallow
// until 2026-11-23T14:05:00Z"), and inspect adds a "fetch" object (URL, status,
// outcome, action, reason, retry time) to its JSON.
//
// Agents are product tokens, most specific first; the first that has a group
// of its own decides. Commas inside parentheses do not separate agents. With
// no -agent (or an empty one) only the "*" group(s) apply (diff: see above).
// An agent holding "/" or "(" is read as a User-Agent ("USpider/1.0",
// "Mozilla/5.0 (compatible; USpider/1.0; +https://example.com/bot)") and
// reduced to the product token dialect.ProductToken finds in it ("USpider");
// the first agent given so is then the User-Agent of a robots.txt fetch.
// A reduced agent, or a token the dialect does not compare whole (see
// dialect.Dialect.AgentToken: "MJ12bot" names no group in google), gets one
// warning line on standard error, "robotstxt: warning: -agent ...", once per
// agent given; it changes neither the output nor the exit status. -dialect
// is one of rfc9309 (default), google, coccoc, koster1994.
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
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
)

const usage = `usage:
  robotstxt check   [-dialect D] [-agent A[,B...]] [-usage C[,C...]] [-explain] FILE [URL...]
  robotstxt inspect [-dialect D] [-agent A[,B...]] FILE
  robotstxt diff    [-dialect D] [-agent A[,B...]] [-user-agent UA] FILE [URL...]
  robotstxt sitemaps [-dialect D] [-agent A[,B...]] [-since DATE] URL
  robotstxt COMMAND -h      (the command's flags)
FILE: a robots.txt file, or the http(s) URL of one (fetched).
URL: an absolute path (/...) or a URL with a host (http, https, ftp, ...); with none, one per line on
standard input. Flags may come before or after FILE and the URLs; -- ends them.
check: allowed|disallowed<TAB>URL per URL (-usage: C=y|n|unknown|n/a per
category); exit 1 when any is disallowed.
inspect: JSON of the group(s), crawl delay, sitemaps, rules, usage rules and
warnings.
diff: the URLs whose verdict changes from Colly v2.3.0's own check
(temoto/robotstxt) to the dialect's, and (FILE a URL) the redirects the
plugin stops; exit 1 when any does.
sitemaps: the page URLs of a site's sitemaps (URL: http(s)://host/) or of
one sitemap (its URL), one per line; exit 1 when some sitemap failed.
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

// A command is one of check, inspect and diff.
type command struct {
	name     string
	synopsis string // the arguments, after "robotstxt NAME"
	about    string // what -h says after the synopsis
	explain  bool   // takes -explain
	usage    bool   // takes -usage
	ua       bool   // takes -user-agent
	urls     bool   // takes URLs after FILE
	since    bool   // takes -since
	site     bool   // its argument is a URL (site or sitemap), not FILE
	run      func(c *common, stdin io.Reader, stdout, stderr io.Writer) (int, error)
}

// commands are the commands, in the order the usage names them.
var commands = []*command{
	{
		name:     "check",
		synopsis: "[-dialect D] [-agent A[,B...]] [-usage C[,C...]] [-explain] FILE [URL...]",
		about: `Prints "allowed<TAB>URL" or "disallowed<TAB>URL" per URL, in order; exit
status 0 when every URL is allowed, 1 when any is disallowed, 2 on a usage
or I/O error.
With -usage, one field per category asked follows URL, in the order asked:
the usage preference robots.txt states for the URL (Content-Usage,
Content-Signal), C=y, C=n or C=unknown, or C=n/a when the URL is
disallowed; the -explain field comes last. The exit status stays that of
the crawl verdicts.`,
		explain: true, usage: true, urls: true, run: check,
	},
	{
		name:     "inspect",
		synopsis: "[-dialect D] [-agent A[,B...]] FILE",
		about: `Prints JSON: the dialect, the user-agent values of the group(s) in force,
the crawl delay in seconds (null when the dialect reads none), the Sitemap
URLs, the rules in force with their lines, the usage rules in force
(Content-Usage, Content-Signal) with their lines and what each states, the
warnings, and for a fetched FILE what the fetch gave.`,
		run: inspect,
	},
	{
		name:     "diff",
		synopsis: "[-dialect D] [-agent A[,B...]] [-user-agent UA] FILE [URL...]",
		about: `The migration report for a Colly user: prints the URLs whose verdict
changes from Colly v2.3.0's own robots.txt check (temoto/robotstxt, as Colly
calls it with its whole UserAgent) to the dialect's (this module's plugin):
  URL<TAB>colly: allowed|disallowed (-)<TAB>DIALECT: allowed|disallowed (WHY)
WHY is what check -explain gives; temoto/robotstxt does not say which rule
decided, so Colly's side names none ("-"). Both sides see the URL as Colly
sends it (WHATWG-parsed; a path joins FILE's host, or http://example.com);
Colly's side re-sorts the query. A robots.txt temoto rejects, or that Colly
cannot fetch, is said on stderr and counts as disallowed on Colly's side
(its Visit returns the error). Against a site (FILE a URL), each URL both
allow is fetched once without following its redirect; one that Colly
follows into a disallowed path is a change:
  URL -> TARGET<TAB>colly: followed<TAB>DIALECT: stopped (WHY)
stderr also says how the plugin spaces requests (Crawl-delay, else 1 s)
and how its stops reach OnError. The last stderr line is "N of M URLs
change verdict" (and "; K redirects now stopped"); exit status 0 when
nothing changes, 1 when something does, 2 on a usage or I/O error.`,
		ua: true, urls: true, run: diffCmd,
	},
	{
		name:     "sitemaps",
		synopsis: "[-dialect D] [-agent A[,B...]] [-since DATE] URL",
		about:    sitemapsAbout,
		since:    true, site: true, run: sitemapsCmd,
	},
}

func lookupCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run executes one command and returns the exit status; warnings go to
// stderr.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 {
		return 2, fmt.Errorf("%w: no command", errUsage)
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && args[0] == "help" {
			if cmd := lookupCommand(args[1]); cmd != nil {
				cmd.help(stdout)
				return 0, nil
			}
			return 2, fmt.Errorf("%w: unknown command %q", errUsage, args[1])
		}
		fmt.Fprintln(stdout, usage)
		return 0, nil
	}
	cmd := lookupCommand(args[0])
	if cmd == nil {
		return 2, fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	c, help, err := cmd.parse(args[1:])
	if help {
		cmd.help(stdout)
		return 0, nil
	}
	if err != nil {
		return 2, err
	}
	for _, w := range c.warnings {
		fmt.Fprintln(stderr, w)
	}
	return cmd.run(c, stdin, stdout, stderr)
}

// common holds a command's parsed flags and arguments.
type common struct {
	d         *dialect.Dialect
	agents    []string // product tokens, most specific first
	agentSet  bool     // -agent was given a token
	userAgent string   // the User-Agent of a fetch: the first agent given as one, or -user-agent
	collyUA   string   // diff: the collector's UserAgent
	explain   bool
	usage     []dialect.Category // check -usage, in the order asked; nil without it
	file      string             // FILE, or the sitemaps command's URL
	since     string             // -since, as given
	rest      []string
	warnings  []string // one line each, for stderr
}

// flags declares the command's flags on a new FlagSet.
func (cmd *command) flags() (fs *flag.FlagSet, dn, agent, ua *string, explain *bool) {
	fs = flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dn = fs.String("dialect", "rfc9309", "the dialect `D`, how robots.txt is read and fetched:\n"+strings.Join(dialect.Names(), ", "))
	agent = fs.String("agent", "", "the crawler's product tokens `A[,B...]`, most specific first; the first that\nhas a group of its own decides; a User-Agent (\"Name/1.0\", a whole header)\nis reduced to its product token, with a warning")
	if cmd.explain {
		explain = fs.Bool("explain", false, "add a field (the last): the deciding rule and its line, or the fetch outcome")
	}
	if cmd.usage {
		fs.String("usage", "", "add one field per usage category `C[,C...]` (of "+categoryList()+"),\nin the order given: C=y, C=n, C=unknown (nothing stated), or C=n/a\nwhen the URL is disallowed; the dialect must read usage lines (not koster1994)")
	}
	if cmd.since {
		fs.String("since", "", "leave out pages and index children whose lastmod is before `DATE`\n(2006-01-02, or an RFC 3339 time); an unknown lastmod passes")
	}
	if cmd.ua {
		ua = fs.String("user-agent", "", "the collector's UserAgent `UA`, which Colly's check passes whole to\ntemoto/robotstxt (default: the first -agent value as given, or Colly's\ndefault \"colly - https://github.com/gocolly/colly\"); without -agent the\ndialect side uses its product token, as the plugin does")
	}
	return fs, dn, agent, ua, explain
}

// help writes the command's usage and flags to w.
func (cmd *command) help(w io.Writer) {
	fs, _, _, _, _ := cmd.flags()
	fmt.Fprintf(w, "usage: robotstxt %s %s\n\n%s\n\n", cmd.name, cmd.synopsis, cmd.about)
	if cmd.site {
		fmt.Fprint(w, "Flags may come before or after URL; -- ends them.\n\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		return
	}
	fmt.Fprintln(w, "FILE is a robots.txt file or the http(s) URL of one (fetched as the dialect's")
	fmt.Fprintln(w, "crawler fetches it).")
	if cmd.urls {
		fmt.Fprintln(w, "URL is an absolute path (/...) or a URL with a host (http, https, ftp, ...); with none, URLs are read one")
		fmt.Fprintln(w, "per line from standard input.")
	}
	if cmd.urls {
		fmt.Fprint(w, "Flags may come before or after FILE and the URLs; -- ends them.\n\n")
	} else {
		fmt.Fprint(w, "Flags may come before or after FILE; -- ends them.\n\n")
	}
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// isBoolFlag reports whether f takes no value.
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// parseArgs sets the flags of fs found anywhere in args ("-name", "--name",
// "-name=value", "-name value"; a bool flag takes no separate value) and
// returns the other arguments in order. "--" ends the flags; "-" alone is an
// argument. help is true when -h, -help or --help was given.
func parseArgs(fs *flag.FlagSet, args []string) (pos []string, help bool, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...), false, nil
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name := a[1:]
		if name[0] == '-' {
			name = name[1:]
		}
		name, value, hasValue := strings.Cut(name, "=")
		if name == "" || name[0] == '-' || name[0] == '=' {
			return nil, false, fmt.Errorf("%w: bad flag syntax: %s", errUsage, a)
		}
		if (name == "h" || name == "help") && !hasValue {
			return nil, true, nil
		}
		f := fs.Lookup(name)
		if f == nil {
			return nil, false, fmt.Errorf("%w: flag provided but not defined: -%s", errUsage, name)
		}
		if !hasValue {
			if isBoolFlag(f) {
				value = "true"
			} else {
				if i+1 == len(args) {
					return nil, false, fmt.Errorf("%w: flag needs an argument: -%s", errUsage, name)
				}
				i++
				value = args[i]
			}
		}
		if err := fs.Set(name, value); err != nil {
			return nil, false, fmt.Errorf("%w: invalid value %q for flag -%s: %v", errUsage, value, name, errors.Unwrap(err))
		}
	}
	return pos, false, nil
}

// parse reads the command's flags and arguments.
func (cmd *command) parse(args []string) (c *common, help bool, err error) {
	fs, dn, agent, ua, explain := cmd.flags()
	pos, help, err := parseArgs(fs, args)
	if help || err != nil {
		return nil, help, err
	}
	d, err := dialect.Lookup(*dn)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", errUsage, err)
	}
	c = &common{d: d}
	if explain != nil {
		c.explain = *explain
	}
	c.setAgents(*agent)
	if cmd.ua {
		c.collyUA = *ua
		if c.collyUA == "" {
			c.collyUA = firstAgent(*agent)
		}
		if c.collyUA == "" {
			c.collyUA = defaultCollyUA
		}
		if !c.agentSet {
			// The plugin's default: the product token of the collector's
			// User-Agent.
			if t := dialect.ProductToken(c.collyUA); t != "" {
				c.agents = []string{t}
			}
		}
		c.userAgent = c.collyUA
	}
	if f := fs.Lookup("since"); f != nil {
		c.since = f.Value.String()
	}
	if err := c.setUsage(fs); err != nil {
		return nil, false, err
	}
	if len(pos) == 0 {
		if cmd.site {
			return nil, false, fmt.Errorf("%w: URL is required", errUsage)
		}
		return nil, false, fmt.Errorf("%w: FILE is required", errUsage)
	}
	c.file, c.rest = pos[0], pos[1:]
	if cmd.site && len(c.rest) > 0 {
		return nil, false, fmt.Errorf("%w: %s takes one URL", errUsage, cmd.name)
	}
	if !cmd.urls && len(c.rest) > 0 {
		return nil, false, fmt.Errorf("%w: %s takes no URLs", errUsage, cmd.name)
	}
	for _, u := range c.rest {
		if err := checkTarget(u); err != nil {
			return nil, false, fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	return c, false, nil
}

// categoryList names the known usage categories: "train-ai, search, ai-input".
func categoryList() string {
	var names []string
	for _, k := range dialect.Categories() {
		names = append(names, k.String())
	}
	return strings.Join(names, ", ")
}

// setUsage reads -usage when it was given: a comma-separated list of
// usage categories, none empty or unknown, for a dialect that reads usage
// lines.
func (c *common) setUsage(fs *flag.FlagSet) error {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "usage" })
	if !given {
		return nil
	}
	v := fs.Lookup("usage").Value.String()
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("%w: -usage: no category given (known: %s)", errUsage, categoryList())
	}
	for _, name := range strings.Split(v, ",") {
		k, ok := dialect.ParseCategory(strings.TrimSpace(name))
		if !ok {
			return fmt.Errorf("%w: -usage: unknown usage category %q (known: %s)", errUsage, strings.TrimSpace(name), categoryList())
		}
		c.usage = append(c.usage, k)
	}
	if !c.d.ReadsUsage() {
		return fmt.Errorf("%w: -usage: the %s dialect reads no Content-Usage or Content-Signal lines", errUsage, c.d)
	}
	return nil
}

// splitAgents splits an -agent value at the commas that are not inside
// parentheses (a User-Agent comment may hold one: "(KHTML, like Gecko)") and
// drops empty agents.
func splitAgents(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '(':
				depth++
				continue
			case ')':
				depth = max(depth-1, 0)
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if a := strings.TrimSpace(s[start:i]); a != "" {
			out = append(out, a)
		}
		start = i + 1
	}
	return out
}

// firstAgent is the first agent of an -agent value, as given.
func firstAgent(s string) string {
	if as := splitAgents(s); len(as) > 0 {
		return as[0]
	}
	return ""
}

// setAgents reads -agent: each agent given as a User-Agent is reduced to its
// product token, and each agent that is reduced or that the dialect does not
// compare whole gets one warning.
func (c *common) setAgents(s string) {
	seen := map[string]bool{}
	for i, a := range splitAgents(s) {
		token, reduced := a, false
		if strings.ContainsAny(a, "/(") {
			if t := dialect.ProductToken(a); t != "" && t != a {
				token, reduced = t, true
			}
		}
		if i == 0 && reduced {
			c.userAgent = a
		}
		c.agentSet = true
		if !seen[token] {
			seen[token] = true
			c.agents = append(c.agents, token)
		}
		if seen["\x00"+a] {
			continue
		}
		seen["\x00"+a] = true
		compared, whole := c.d.AgentToken(token)
		var msg string
		switch {
		case reduced && whole:
			msg = fmt.Sprintf("read as a User-Agent; using its product token %q", token)
		case reduced && compared == "":
			msg = fmt.Sprintf("read as a User-Agent; using its product token %q, which the %s dialect matches to no user-agent line", token, c.d)
		case reduced:
			msg = fmt.Sprintf("read as a User-Agent; using its product token %q, of which the %s dialect compares only %q", token, c.d, compared)
		case whole:
			continue
		case compared == "":
			msg = fmt.Sprintf("the %s dialect matches it to no user-agent line", c.d)
		default:
			msg = fmt.Sprintf("the %s dialect compares only %q", c.d, compared)
		}
		c.warnings = append(c.warnings, fmt.Sprintf("robotstxt: warning: -agent %q: %s", a, msg))
	}
}

// schemeOf returns the scheme of s when s starts with one (RFC 3986: a
// letter, then letters, digits, '+', '-', '.', then ':').
func schemeOf(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z':
		case i > 0 && ('0' <= b && b <= '9' || b == '+' || b == '-' || b == '.'):
		case i > 0 && b == ':':
			return s[:i], true
		default:
			return "", false
		}
	}
	return "", false
}

// isHTTP reports whether scheme is http or https, in any case.
func isHTTP(scheme string) bool {
	return strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")
}

// targetError says why a URL argument is not one.
type targetError struct{ url, why string }

func (e *targetError) Error() string { return fmt.Sprintf("URL %q: %s", e.url, e.why) }

// checkTarget accepts a URL argument: an absolute path ("" is "/"), taken as
// given, or a URL with a scheme and a host (http, https, ftp, ...); its path
// is taken as given too. Its errors are *targetError.
func checkTarget(s string) error {
	if s == "" || s[0] == '/' {
		return nil
	}
	scheme, ok := schemeOf(s)
	if !ok {
		return &targetError{s, "not an absolute path (/...) or an http(s) URL"}
	}
	// Any scheme with an authority: RFC 9309 applies to any URI-based
	// protocol (FTP included), and a local FILE binds no scheme.
	rest, ok := strings.CutPrefix(s[len(scheme)+1:], "//")
	if !ok {
		return &targetError{s, "no host"}
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	u, err := url.Parse("http://" + rest)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &targetError{s, err.Error()}
	}
	if u.Hostname() == "" {
		return &targetError{s, "no host"}
	}
	return nil
}

// pathOf is the path and query of a URL argument that checkTarget accepted,
// as the dialects compare it: an absolute path as given, an http(s) URL's
// after its authority; without the fragment.
func pathOf(s string) string {
	if s == "" || s[0] == '/' {
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		return s
	}
	return dialect.PathOf(s)
}

// eachURL calls one for each URL argument, or for each line of stdin when
// there are none; it stops at the first error (of one, or a line that is no
// URL).
func eachURL(c *common, stdin io.Reader, one func(u string) error) error {
	if len(c.rest) > 0 {
		for _, u := range c.rest {
			if err := one(u); err != nil {
				return err
			}
		}
		return nil
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		u := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(u) == "" {
			continue
		}
		if err := checkTarget(u); err != nil {
			var te *targetError
			errors.As(err, &te)
			return fmt.Errorf("%w: URL %q (line %d of standard input): %s", errUsage, te.url, n, te.why)
		}
		if err := one(u); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading URLs from standard input: %w", err)
	}
	return nil
}

// source is what FILE gave: parsed rules, or (for a fetched file) an outcome
// that decides every URL.
type source struct {
	robots *dialect.Robots // the rules read (empty when the fetch outcome decides)
	policy *policy.Policy  // for a fetched FILE
	body   []byte          // a local FILE's bytes, when asked for
	base   *url.URL        // a fetched FILE's scheme and authority
}

// verdict says whether the path and query path are allowed, and why.
func (s *source) verdict(rs *dialect.Ruleset, path string, explain bool) (bool, string) {
	if s.policy != nil {
		v := s.policy.CheckPath(path)
		if !explain {
			return v.Allowed, ""
		}
		return v.Allowed, v.String()
	}
	v := rs.Check(path)
	if !explain {
		return v.Allowed, ""
	}
	return v.Allowed, v.String()
}

// usage is verdict with the usage preference robots.txt states for path
// (none when the path is disallowed, or when the fetch outcome decides);
// the explanation is verdict's.
func (s *source) usage(rs *dialect.Ruleset, path string, explain bool) (dialect.UsageVerdict, string) {
	if s.policy != nil {
		v := s.policy.UsagePath(path)
		if !explain {
			return v.UsageVerdict, ""
		}
		return v.UsageVerdict, policy.Verdict{Verdict: v.Crawl, Policy: v.Policy}.String()
	}
	v := rs.Usage(path)
	if !explain {
		return v, ""
	}
	return v, v.Crawl.String()
}

// load reads or fetches FILE. A fetch that gives no rules to parse is said
// on stderr. whole keeps a local file's bytes, all of them.
func load(c *common, stderr io.Writer, whole bool) (*source, error) {
	if scheme, ok := schemeOf(c.file); ok && len(scheme) > 1 {
		if !isHTTP(scheme) {
			return nil, fmt.Errorf("%w: FILE %s: scheme %q: only http and https robots.txt URLs are fetched (a local file whose name holds a colon is ./NAME)", errUsage, c.file, strings.ToLower(scheme))
		}
		src, err := fetchSource(c)
		if err != nil {
			return nil, err
		}
		if p := src.policy; p.Action() != dialect.ActionParse {
			fmt.Fprintf(stderr, "robotstxt: %s: %s\n", p.Fetch().URL, strings.TrimPrefix(p.Reason(), "robots.txt: "))
		}
		warnCut(stderr, c.file, src.robots)
		return src, nil
	}
	limit := int64(dialect.MaxBodyBytes + 1)
	if whole {
		limit = maxWholeBytes + 1
	}
	body, err := readFile(c.file, limit)
	if err != nil {
		return nil, err
	}
	src := &source{robots: c.d.Parse(body)}
	if whole {
		src.body = body
	}
	if ct := http.DetectContentType(body); len(body) > 0 && !strings.HasPrefix(ct, "text/") {
		fmt.Fprintf(stderr, "robotstxt: %s: not a text file (it looks like %s); read as robots.txt all the same\n", c.file, ct)
	}
	warnCut(stderr, c.file, src.robots)
	return src, nil
}

// warnCut says on stderr when the dialect read only the start of FILE: the
// rules past its limit are ignored, as a crawler of that dialect ignores
// them.
func warnCut(stderr io.Writer, file string, r *dialect.Robots) {
	if n, cut := r.Size(); cut {
		fmt.Fprintf(stderr, "robotstxt: %s: longer than the %s dialect reads; only its first %d bytes are read, the rules past them are ignored\n", file, r.Dialect(), n)
	}
}

// maxWholeBytes bounds a file read whole (Colly reads robots.txt with no
// bound; this is a CLI's).
const maxWholeBytes = 64 << 20

// cliUserAgent is the User-Agent header of a fetch: the agent given as a
// User-Agent, or the first agent's name, so that a server that answers per
// crawler shows that crawler's file.
func cliUserAgent(c *common) string {
	if c.userAgent != "" {
		return c.userAgent
	}
	if len(c.agents) == 0 {
		return policy.DefaultUserAgent
	}
	return c.agents[0] + " (robotstxt; +https://github.com/politecrawl/robots)"
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
	r, err := policy.NewResolver(policy.WithDialect(c.d), policy.WithAgents(c.agents...), policy.WithUserAgent(cliUserAgent(c)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	p, err := r.Policy(context.Background(), u)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", c.file, err)
	}
	src := &source{robots: p.Robots(), policy: p, base: &url.URL{Scheme: u.Scheme, Host: u.Host}}
	if src.robots == nil {
		src.robots = c.d.Parse(nil)
	}
	return src, nil
}

// readFile reads at most limit bytes of the file.
func readFile(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Size the buffer from the file, so that reading it does not grow (and
	// copy, and fault in) a chain of ever larger buffers.
	n := limit
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() < n {
		n = st.Size()
	}
	buf := bytes.NewBuffer(make([]byte, 0, n+bytes.MinRead))
	_, err = buf.ReadFrom(io.LimitReader(f, limit))
	b := buf.Bytes()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return b, nil
}

func check(c *common, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	src, err := load(c, stderr, false)
	if err != nil {
		return 2, err
	}
	rs := src.robots.For(c.agents...)
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	code := 0
	err = eachURL(c, stdin, func(u string) error {
		var (
			allowed bool
			why     string
			uv      dialect.UsageVerdict
		)
		if c.usage != nil {
			uv, why = src.usage(rs, pathOf(u), c.explain)
			allowed = uv.Crawl.Allowed
		} else {
			allowed, why = src.verdict(rs, pathOf(u), c.explain)
		}
		if allowed {
			w.WriteString("allowed\t")
		} else {
			w.WriteString("disallowed\t")
			code = 1
		}
		w.WriteString(u)
		for _, k := range c.usage {
			w.WriteByte('\t')
			w.WriteString(k.String())
			if allowed {
				w.WriteString("=" + uv.Usage.Pref(k).String())
			} else {
				w.WriteString("=n/a")
			}
		}
		if c.explain {
			w.WriteByte('\t')
			w.WriteString(why)
		}
		return w.WriteByte('\n')
	})
	if err != nil {
		return 2, err
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
