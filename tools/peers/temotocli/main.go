// Command temotocli exists only as the benchmark peer for cmd/robotstxt: it
// has the contract of "robotstxt check" for a local file, but reads the file
// with github.com/temoto/robotstxt v1.1.2 the way Colly v2.3.0 does, so that
// tools/peers/clibench.sh can time the two CLIs as whole processes.
//
// Usage:
//
//	temotocli check [-agent A[,B...]] [-explain] FILE [URL...]
//
// It prints "allowed<TAB>URL" or "disallowed<TAB>URL" per URL, in order.
// URLs come from the arguments, or one per line on standard input (blank
// lines skipped, a trailing CR dropped). Exit status: 0 when every URL is
// allowed, 1 when any is disallowed, 2 on a usage or I/O error. temoto does
// not say which rule decided, so -explain only adds a third field "-".
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/temoto/robotstxt"
)

const usage = "usage: temotocli check [-agent A[,B...]] [-explain] FILE [URL...]"

func main() {
	code, err := run(os.Args[1:], os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "temotocli: "+strings.ReplaceAll(err.Error(), "\n", " "))
	}
	os.Exit(code)
}

func run(args []string, stdin io.Reader, stdout io.Writer) (int, error) {
	if len(args) == 0 || args[0] != "check" {
		return 2, errors.New(usage)
	}
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	agent := fs.String("agent", "", "product tokens, comma-separated, most specific first")
	explain := fs.Bool("explain", false, "add a third field (always \"-\")")
	if err := fs.Parse(args[1:]); err != nil {
		return 2, fmt.Errorf("%v; %s", err, usage)
	}
	if fs.NArg() == 0 {
		return 2, errors.New("FILE is required; " + usage)
	}
	// Colly reads the whole body and gives up on the site when temoto
	// reports an error; here that is an I/O error.
	body, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return 2, err
	}
	robots, err := robotstxt.FromBytes(body)
	if err != nil {
		return 2, fmt.Errorf("parsing %s: %w", fs.Arg(0), err)
	}
	group := findGroup(robots, *agent)

	w := bufio.NewWriter(stdout)
	defer w.Flush()
	code := 0
	one := func(u string) {
		if group.Test(pathOf(u)) {
			w.WriteString("allowed\t")
		} else {
			w.WriteString("disallowed\t")
			code = 1
		}
		w.WriteString(u)
		if *explain {
			w.WriteString("\t-")
		}
		w.WriteByte('\n')
	}
	if urls := fs.Args()[1:]; len(urls) > 0 {
		for _, u := range urls {
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

// findGroup picks the group of the first agent that has one of its own.
// FindGroup falls back to the "*" group (or an empty one), which is what it
// returns for an empty name, so a different answer means the agent matched.
func findGroup(r *robotstxt.RobotsData, agents string) *robotstxt.Group {
	star := r.FindGroup("")
	for _, a := range strings.Split(agents, ",") {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		if g := r.FindGroup(a); g != star {
			return g
		}
	}
	return star
}

// pathOf builds the string Colly tests: the escaped path, plus the query
// re-encoded by url.Values when there is one. A URL that net/url rejects
// (Colly would never request it) is tested as written.
func pathOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	p := u.EscapedPath()
	if u.RawQuery != "" {
		p += "?" + u.Query().Encode()
	}
	return p
}
