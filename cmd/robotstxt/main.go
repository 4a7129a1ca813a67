package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

const usage = `usage:
  robotstxt check   [-dialect D] [-agent A[,B...]] [-usage C[,C...]] [-explain] FILE [URL...]
  robotstxt inspect [-dialect D] [-agent A[,B...]] FILE
  robotstxt diff    [-dialect D] [-agent A[,B...]] [-user-agent UA] FILE [URL...]
  robotstxt sitemaps [-dialect D] [-agent A[,B...]] [-since DATE] URL
  robotstxt evidence verify [-key FILE | -directory URL] LOG
  robotstxt usage   -purpose P[,P...] [-use LEVEL] [-json] [-agent A[,B...]] URL
  robotstxt COMMAND -h      (the command's flags)
FILE: a robots.txt file, or the http(s) URL of one (fetched).
URL: an absolute path (/...) or a URL with a host (http, https, ftp, ...); with none, one per line on
standard input. Flags may come before or after FILE and the URLs; -- ends them.
check: allowed|disallowed<TAB>URL per URL (-usage: C=y|n|unknown|n/a per
category, use=LEVEL, license=URLs); exit 1 when any is disallowed.
inspect: JSON of the group(s), crawl delay, sitemaps, rules, usage rules and
warnings.
diff: the URLs whose verdict changes from Colly v2.3.0's own check
(temoto/robotstxt) to the dialect's, and (FILE a URL) the redirects the
plugin stops; exit 1 when any does.
sitemaps: the page URLs of a site's sitemaps (URL: http(s)://host/) or of
one sitemap (its URL), one per line; exit 1 when some sitemap failed.
evidence verify: checks a usage log's chain and signatures; exit 1 naming
the first bad record.
usage: per purpose, the signal that decides whether URL's content may be
used, as a crawl decides it; exit 1 when one is refused.
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

// A command is one of check, inspect, diff and sitemaps.
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
			switch args[1] {
			case "evidence":
				return evidenceCmd([]string{"-h"}, stdout, stderr)
			case "usage":
				return usageCmd([]string{"-h"}, stdout, stderr)
			}
			if cmd := lookupCommand(args[1]); cmd != nil {
				cmd.help(stdout)
				return 0, nil
			}
			return 2, fmt.Errorf("%w: unknown command %q", errUsage, args[1])
		}
		fmt.Fprintln(stdout, usage)
		return 0, nil
	}
	switch args[0] {
	case "evidence":
		return evidenceCmd(args[1:], stdout, stderr)
	case "usage":
		return usageCmd(args[1:], stdout, stderr)
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
