package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/politecrawl/robots/dialect"
)

// common holds a command's parsed flags and arguments.
type common struct {
	d         *dialect.Dialect
	agents    []string // product tokens, most specific first
	agentSet  bool     // -agent was given a token
	userAgent string   // the User-Agent of a fetch: the first agent given as one, or -user-agent
	collyUA   string   // diff: the collector's UserAgent
	explain   bool
	usage     []string // check -usage fields in the order asked (categories, "use", "license"); nil without it
	file      string   // FILE, or the sitemaps command's URL
	since     string   // -since, as given
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
		fs.String("usage", "", "add one field per usage category `C[,C...]` (of "+categoryList()+"),\nin the order given: C=y, C=n, C=unknown (nothing stated), or C=n/a\nwhen the URL is disallowed; use=LEVEL (line N) is Content-Signal's use level,\nlicense=URL[ URL...] the License lines that apply (or none); the dialect\nmust read usage lines (not koster1994)")
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

// categoryList names the fields -usage knows: "train-ai, search, ai-input,
// use, license".
func categoryList() string {
	var names []string
	for _, k := range dialect.Categories() {
		names = append(names, k.String())
	}
	return strings.Join(append(names, "use", "license"), ", ")
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
		name = strings.TrimSpace(name)
		if _, ok := dialect.ParseCategory(name); !ok && name != "use" && name != "license" {
			return fmt.Errorf("%w: -usage: unknown usage category %q (known: %s)", errUsage, name, categoryList())
		}
		c.usage = append(c.usage, name)
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
