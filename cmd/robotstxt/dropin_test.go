package main

// Tests of the CLI as a drop-in tool: flags anywhere, fetch failures said
// on stderr, FILE schemes, URL arguments checked, per-command help, agents
// given as User-Agents.

import (
	"bytes"
	"net"
	"regexp"
	"strings"
	"testing"
)

// result is what one in-process run of the command gave.
type result struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := runMain(args, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

// usageError asserts exit 2, nothing on stdout, and one line on stderr that
// holds every one of want.
func usageError(t *testing.T, r result, args []string, want ...string) {
	t.Helper()
	if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "robotstxt: ") {
		t.Errorf("%q: exit %d, stdout %q, stderr %q: want 2, nothing, one line", args, r.code, r.stdout, r.stderr)
		return
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("%q: stderr %q does not say %q", args, r.stderr, w)
		}
	}
}

// Flags may come before or after FILE and the URLs; -- ends them.
func TestFlagsAnywhere(t *testing.T) {
	const file = "../../examples/robots.txt"
	cases := []struct {
		args   []string
		code   int
		stdout string
	}{
		// -agent after FILE is a flag, not a URL.
		{[]string{"check", file, "-agent", "examplebot-news", "/drafts/x"}, 1, "disallowed\t/drafts/x\n"},
		{[]string{"check", file, "/drafts/x", "-agent", "examplebot-news"}, 1, "disallowed\t/drafts/x\n"},
		{[]string{"check", "/drafts/x"}, 2, ""}, // the first non-flag is FILE
		{[]string{"check", file, "--agent=examplebot-news", "/drafts/x", "/a"}, 1, "disallowed\t/drafts/x\nallowed\t/a\n"},
		{[]string{"check", file, "/private/x", "-explain", "/about"}, 1, "disallowed\t/private/x\tline 3: Disallow: /private\nallowed\t/about\tno matching rule\n"},
		{[]string{"check", "-explain=false", file, "/private/x"}, 1, "disallowed\t/private/x\n"},
		{[]string{"check", "-dialect", "google", file, "-agent", "examplebot-news", "--", "/drafts/x"}, 1, "disallowed\t/drafts/x\n"},
		// After --, "-explain" is a URL argument, and not one.
		{[]string{"check", file, "--", "-explain"}, 2, ""},
		{[]string{"check", "--", file, "/x"}, 0, "allowed\t/x\n"},
		{[]string{"check", file, "/x", "-agent"}, 2, ""},
		{[]string{"check", file, "/x", "-bogus"}, 2, ""},
		{[]string{"check", file, "/x", "-explain=maybe"}, 2, ""},
		{[]string{"inspect", file, "-agent", "examplebot-news"}, 0, ""},
	}
	for _, c := range cases {
		r := runCLI(t, "", c.args...)
		if r.code != c.code || (c.stdout != "" && r.stdout != c.stdout) {
			t.Errorf("%q: exit %d stdout %q stderr %q; want %d %q", c.args, r.code, r.stdout, r.stderr, c.code, c.stdout)
		}
		if c.code == 2 {
			usageError(t, r, c.args)
		}
	}
	r := runCLI(t, "", "inspect", file, "-agent", "examplebot-news")
	if !strings.Contains(r.stdout, `"agent_group": [
    "examplebot-news"
  ]`) {
		t.Errorf("inspect with -agent after FILE:\n%s", r.stdout)
	}
	usageError(t, runCLI(t, "", "check", file, "/x", "-bogus"), nil, "-bogus")
	usageError(t, runCLI(t, "", "check", file, "/x", "-agent"), nil, "-agent")
}

// closedAddr returns the address of a TCP port that was just closed: a
// connection to it is refused.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// A robots.txt URL that gave no rules says on stderr what happened;
// stdout and the exit status are the dialect's.
func TestFetchFailureSaid(t *testing.T) {
	until := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`
	refused := "http://" + closedAddr(t) + "/robots.txt"
	r := runCLI(t, "", "check", refused, "/x")
	if r.code != 1 || r.stdout != "disallowed\t/x\n" {
		t.Errorf("refused: exit %d stdout %q", r.code, r.stdout)
	}
	if !regexp.MustCompile(`^robotstxt: ` + regexp.QuoteMeta(refused) + `: no answer \([^)]*refused[^)]*\), complete disallow until ` + until + `\n$`).MatchString(r.stderr) {
		t.Errorf("refused: stderr %q", r.stderr)
	}
	srv, _ := fetchServer(t, status(503, cliRobots))
	r = runCLI(t, "", "check", "-dialect", "coccoc", srv.URL+"/robots.txt", "/private/x")
	if r.code != 0 || r.stdout != "allowed\t/private/x\n" || r.stderr != "robotstxt: "+srv.URL+"/robots.txt: 503 Service Unavailable, no restrictions\n" {
		t.Errorf("503 coccoc: %+v", r)
	}
	r = runCLI(t, "", "inspect", srv.URL+"/robots.txt")
	if r.code != 0 || !regexp.MustCompile(`^robotstxt: .*: 503 Service Unavailable, complete disallow until `+until+`\n$`).MatchString(r.stderr) {
		t.Errorf("503 inspect: %+v", r)
	}
	// A fetch that gave rules says nothing.
	ok, _ := fetchServer(t, status(200, cliRobots))
	if r = runCLI(t, "", "check", ok.URL+"/robots.txt", "/x"); r.stderr != "" || r.code != 0 {
		t.Errorf("200: %+v", r)
	}
}

// A FILE with a scheme is a URL: http and https in any case are
// fetched, any other scheme is a usage error naming it.
func TestFileSchemes(t *testing.T) {
	srv, _ := fetchServer(t, status(200, cliRobots))
	upper := "HTTP://" + strings.TrimPrefix(srv.URL, "http://") + "/robots.txt"
	if r := runCLI(t, "", "check", upper, "/private/x"); r.code != 1 || r.stdout != "disallowed\t/private/x\n" || r.stderr != "" {
		t.Errorf("%s: %+v", upper, r)
	}
	if r := runCLI(t, "", "check", "Http://"+strings.TrimPrefix(srv.URL, "http://"), "/a"); r.code != 0 || r.stdout != "allowed\t/a\n" {
		t.Errorf("Http://: %+v", r)
	}
	for _, c := range []struct{ file, scheme string }{
		{"ftp://example.com/robots.txt", `"ftp"`},
		{"FILE:///etc/robots.txt", `"file"`},
		{"gopher:robots.txt", `"gopher"`},
	} {
		args := []string{"check", c.file, "/x"}
		usageError(t, runCLI(t, "", args...), args, c.scheme)
	}
}

// URL arguments and lines are absolute paths or URLs with a host,
// of any scheme (RFC 9309 covers FTP; only the path is compared); any other
// is a usage error naming it, not a check.
func TestURLArguments(t *testing.T) {
	p := writeRobots(t, cliRobots)
	for _, c := range []struct {
		url  string
		want string
	}{
		{"private/x", `"private/x"`},
		{"example.com/private", `"example.com/private"`},
		{"mailto:a@example.com", `"mailto:a@example.com": no host`},
		{"ftp:/private", "no host"},
		{"http://[::1/x", `"http://[::1/x"`},
		{"http:///x", "no host"},
		{"https:x", "no host"},
		{"-", `"-"`},
	} {
		args := []string{"check", p, "/a", c.url}
		usageError(t, runCLI(t, "", args...), args, c.want)
	}
	// An ftp URL is checked by its path, as any other.
	if r := runCLI(t, "", "check", "-explain", p, "ftp://example.com/private/x"); r.code != 1 || r.stdout != "disallowed\tftp://example.com/private/x\tline 2: Disallow: /private\n" {
		t.Errorf("ftp URL: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// Paths are taken as given, as robots.txt testers take them: a stray %
	// is a character of the path, and "//x" is the path //x, not a host.
	r := runCLI(t, "", "check", "-explain", writeRobots(t, "User-agent: *\nDisallow: //x\nDisallow: /100%\n"),
		"//x/1", "/100%", "", "HTTP://Example.com//x", "https://example.com/y%zz")
	want := "disallowed\t//x/1\tline 2: Disallow: //x\n" +
		"disallowed\t/100%\tline 3: Disallow: /100%\n" +
		"allowed\t\tno matching rule\n" +
		"disallowed\tHTTP://Example.com//x\tline 2: Disallow: //x\n" +
		"allowed\thttps://example.com/y%zz\tno matching rule\n"
	if r.code != 1 || r.stdout != want || r.stderr != "" {
		t.Errorf("paths: %+v\nwant %q", r, want)
	}
	// On standard input the line is named; the lines before it were checked.
	r = runCLI(t, "/private/x\n\nprivate/y\n/z\n", "check", p)
	if r.code != 2 || r.stdout != "disallowed\t/private/x\n" || r.stderr != "robotstxt: usage: URL \"private/y\" (line 3 of standard input): not an absolute path (/...) or an http(s) URL (robotstxt -h shows the usage)\n" {
		t.Errorf("stdin: %+v", r)
	}
}

// COMMAND -h lists the command's flags on stdout, exit 0.
func TestCommandHelp(t *testing.T) {
	for _, c := range []struct {
		cmd        string
		has, hasnt []string
	}{
		{"check", []string{"usage: robotstxt check ", "-agent", "-dialect", "-explain", "rfc9309"}, []string{"-user-agent"}},
		{"inspect", []string{"usage: robotstxt inspect ", "-agent", "-dialect"}, []string{"  -explain", "-user-agent"}},
		{"diff", []string{"usage: robotstxt diff ", "-agent", "-dialect", "-user-agent", "temoto"}, []string{"  -explain"}},
	} {
		for _, h := range []string{"-h", "-help", "--help"} {
			for _, args := range [][]string{{c.cmd, h}, {c.cmd, "FILE", h, "/x"}, {"help", c.cmd}} {
				r := runCLI(t, "", args...)
				if r.code != 0 || r.stderr != "" {
					t.Errorf("%q: exit %d stderr %q", args, r.code, r.stderr)
				}
				for _, s := range c.has {
					if !strings.Contains(r.stdout, s) {
						t.Errorf("%q: stdout lacks %q:\n%s", args, s, r.stdout)
					}
				}
				for _, s := range c.hasnt {
					if strings.Contains(r.stdout, s) {
						t.Errorf("%q: stdout has %q:\n%s", args, s, r.stdout)
					}
				}
			}
		}
	}
	r := runCLI(t, "", "-h")
	if r.code != 0 || !strings.Contains(r.stdout, "robotstxt diff") || !strings.Contains(r.stdout, "-- ends them") {
		t.Errorf("-h: %+v", r)
	}
}

// An agent given as a User-Agent ("USpider/1.0", a whole header) is
// reduced to its product token, with one warning per token given.
func TestAgentAsUserAgent(t *testing.T) {
	p := writeRobots(t, "User-agent: *\nDisallow: /private\n\nUser-agent: USpider\nDisallow: /u\n")
	for _, c := range []struct {
		dialect, agents string
		stdout          string
		warnings        []string
	}{
		{"google", "USpider/1.0", "disallowed\t/u\nallowed\t/private\n", []string{
			`robotstxt: warning: -agent "USpider/1.0": read as a User-Agent; using its product token "USpider"`}},
		{"rfc9309", "Mozilla/5.0 (compatible; USpider/1.0; +https://example.com/bot)", "disallowed\t/u\nallowed\t/private\n", []string{
			`robotstxt: warning: -agent "Mozilla/5.0 (compatible; USpider/1.0; +https://example.com/bot)": read as a User-Agent; using its product token "USpider"`}},
		// Once per token given, however often it is given.
		{"koster1994", "USpider/1.0,USpider/1.0,USpider", "disallowed\t/u\nallowed\t/private\n", []string{
			`robotstxt: warning: -agent "USpider/1.0": read as a User-Agent; using its product token "USpider"`}},
		// The token found may still be one the dialect does not compare whole.
		{"google", "MJ12bot/1.4.8", "allowed\t/u\ndisallowed\t/private\n", []string{
			`robotstxt: warning: -agent "MJ12bot/1.4.8": read as a User-Agent; using its product token "MJ12bot", which the google dialect matches to no user-agent line`}},
		// A name with a space and no '/' or '(' is not a User-Agent: google
		// compares it whole (Google's own "Foo Bar" case).
		{"google", "USpider X", "allowed\t/u\ndisallowed\t/private\n", []string{
			`robotstxt: warning: -agent "USpider X": the google dialect matches it to no user-agent line`}},
		// A header with no product token in it is left as it is.
		{"rfc9309", "Mozilla/5.0 (X11; Linux x86_64)", "allowed\t/u\ndisallowed\t/private\n", []string{
			`robotstxt: warning: -agent "Mozilla/5.0 (X11; Linux x86_64)": the rfc9309 dialect compares only "Mozilla"`}},
	} {
		args := []string{"check", "-dialect", c.dialect, "-agent", c.agents, p, "/u", "/private"}
		r := runCLI(t, "", args...)
		if r.stdout != c.stdout || r.code != 1 {
			t.Errorf("%q: exit %d stdout %q, want %q", args, r.code, r.stdout, c.stdout)
		}
		if want := strings.Join(c.warnings, "\n") + "\n"; r.stderr != want {
			t.Errorf("%q: stderr\n%s\nwant\n%s", args, r.stderr, want)
		}
	}
	// The fetch names the crawler with the User-Agent given.
	srv, uas := fetchServer(t, status(200, "User-agent: USpider\nDisallow: /u\n"))
	ua := "Mozilla/5.0 (compatible; USpider/1.0; +https://example.com/bot)"
	if r := runCLI(t, "", "check", "-agent", ua, srv.URL, "/u"); r.code != 1 {
		t.Errorf("fetched: %+v", r)
	}
	if got := uas(); len(got) != 1 || got[0] != ua {
		t.Errorf("User-Agent sent %q, want %q", got, ua)
	}
}
