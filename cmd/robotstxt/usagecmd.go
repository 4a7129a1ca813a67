package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
	usagepkg "github.com/politecrawl/robots/usage"
)

const usageSynopsis = "-purpose P[,P...] [-use LEVEL] [-json] [-dialect D] [-agent A[,B...]] [-user-agent UA] URL"

const usageAbout = `Says whether the content of URL may be used for each purpose, as the
plugin decides in a crawl: robots.txt first (a URL it disallows is not
fetched), then what the site states before the fetch (robots.txt's usage
lines, the origin's tdmrep.json, the RSL licences robots.txt names; a
refusal there stops the URL unfetched), then, fetched, what the response
states (its headers and the meta and link elements of its head, the
licences they name). Prints per purpose the signal that decides, as
"train-ai=n: tdmrep.json rule 1 (location /archive/*.pdf$): 1" (or
"search=unknown: nothing stated"), and with -use a line for the site's use
level; with -json the evidence as a usage log record (docs/usage.md).
Exit status 0 when no declared purpose (nor the use level) is refused, 1
when one is or robots.txt disallows URL (said on stderr), 2 on a usage or
I/O error.`

// maxPageBytes bounds the page read, as Colly's default MaxBodySize does.
const maxPageBytes = 10 << 20

// pageClient fetches the page; tests replace it. Its CheckRedirect is set
// per call.
var pageClient = &http.Client{Timeout: 30 * time.Second}

// errStopped ends a redirect chain at a hop the crawl would stop.
var errStopped = errors.New("stopped")

func usageCmd(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("usage", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	purposes := fs.String("purpose", "", "what the content is used for, `P[,P...]`: train-ai (or ai-train), search, ai-input")
	use := fs.String("use", "", "how far the content is used, `LEVEL`: immediate, reference, full")
	asJSON := fs.Bool("json", false, "print the evidence as JSON: a usage log record")
	dn := fs.String("dialect", "rfc9309", "the dialect `D`: "+strings.Join(dialect.Names(), ", "))
	agent := fs.String("agent", "", "the crawler's product tokens `A[,B...]`, most specific first (default: -user-agent's product token)")
	ua := fs.String("user-agent", "Mozilla/5.0 (compatible; robotstxt/1.0)", "the User-Agent `UA` of every request")
	pos, help, err := parseArgs(fs, args)
	if help {
		fmt.Fprintf(stdout, "usage: robotstxt usage %s\n\n%s\n\n", usageSynopsis, usageAbout)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0, nil
	}
	if err != nil {
		return 2, err
	}
	if len(pos) != 1 {
		return 2, fmt.Errorf("%w: usage takes one URL", errUsage)
	}
	u, err := url.Parse(pos[0])
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 2, fmt.Errorf("%w: usage: %q is not an http(s) URL", errUsage, pos[0])
	}
	cfg := usagepkg.Config{Use: *use}
	for _, p := range strings.Split(*purposes, ",") {
		if p = strings.TrimSpace(p); p != "" {
			cfg.Purposes = append(cfg.Purposes, p)
		}
	}
	cats, level, err := cfg.Parse()
	if err != nil {
		return 2, fmt.Errorf("%w: usage: %v", errUsage, err)
	}
	d, err := dialect.Lookup(*dn)
	if err != nil {
		return 2, fmt.Errorf("%w: %v", errUsage, err)
	}
	agents := splitAgents(*agent)
	if len(agents) == 0 {
		agents = []string{dialect.ProductToken(*ua)}
	}
	res, err := policy.NewResolver(policy.WithDialect(d), policy.WithAgents(agents...), policy.WithUserAgent(*ua))
	if err != nil {
		return 2, err
	}
	dec, err := decide(context.Background(), res, u, *ua, cats, level)
	if err != nil {
		return 2, err
	}
	if *asJSON {
		out, err := json.MarshalIndent(usagepkg.NewLogRecord(res, res.Now(), dec), "", "  ")
		if err != nil {
			return 2, err
		}
		fmt.Fprintf(stdout, "%s\n", out)
	} else if dec.Report != nil {
		for _, line := range verdictLines(dec.Report, cats, level) {
			fmt.Fprintln(stdout, line)
		}
	}
	switch dec.Outcome {
	case usagepkg.Stopped:
		fmt.Fprintf(stderr, "robotstxt: %s: stopped before the fetch: %s\n", dec.URL, dec.Reason)
		return 1, nil
	case usagepkg.Refused:
		fmt.Fprintf(stderr, "robotstxt: %s: refused after the fetch: %s\n", dec.URL, dec.Reason)
		return 1, nil
	}
	return 0, nil
}

// decide decides u as the plugin does: robots.txt, the usage terms before
// the fetch, then (each redirect hop checked as u is) the response's.
func decide(ctx context.Context, res *policy.Resolver, u *url.URL, ua string, cats []dialect.Category, level dialect.UseLevel) (usagepkg.Decision, error) {
	dec := usagepkg.Decision{URL: u, Purposes: cats, Use: level}
	before := func(u *url.URL) (bool, error) {
		dec.URL = u
		pol, err := res.Policy(ctx, u)
		if err != nil {
			return false, err
		}
		if v := pol.Check(u); !v.Allowed {
			dec.Outcome, dec.Reason, dec.Report = usagepkg.Stopped, v.String(), nil
			return false, nil
		}
		rep, err := usagepkg.Check(ctx, res, u, cats...)
		if err != nil {
			return false, err
		}
		dec.Report = &rep
		if s, refused := rep.Refusal(cats, level, false); refused {
			dec.Outcome, dec.Reason = usagepkg.Stopped, s.String()
			return false, nil
		}
		return true, nil
	}
	if ok, err := before(u); !ok || err != nil {
		return dec, err
	}
	client := *pageClient
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("more than 10 redirects")
		}
		ok, err := before(req.URL)
		if !ok || err != nil {
			// As the plugin's transport says it of a redirect hop.
			dec.Reason = "redirect from " + via[len(via)-1].URL.Redacted() + " not followed: " + dec.Reason
			return errors.Join(errStopped, err)
		}
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return dec, err
	}
	req.Header.Set("User-Agent", ua)
	resp, err := client.Do(req)
	if errors.Is(err, errStopped) && dec.Outcome == usagepkg.Stopped {
		return dec, nil
	}
	if err != nil {
		return dec, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPageBytes))
	if err != nil {
		return dec, fmt.Errorf("%s: %w", dec.URL, err)
	}
	rep, err := usagepkg.CheckResponse(ctx, res, dec.URL, resp.Header, body, cats...)
	if err != nil {
		return dec, err
	}
	dec.Outcome, dec.Status, dec.Report = usagepkg.Fetched, resp.StatusCode, &rep
	if s, refused := rep.Refusal(cats, level, false); refused {
		dec.Outcome, dec.Reason = usagepkg.Refused, s.String()
	}
	return dec, nil
}

// verdictLines says, per declared purpose and for the use level, the
// signal that decides.
func verdictLines(rep *usagepkg.Report, cats []dialect.Category, level dialect.UseLevel) []string {
	var lines []string
	for _, c := range cats {
		line := c.String() + "=unknown: nothing stated"
		want := rep.Usage.Pref(c)
		for _, s := range rep.Signals {
			if want != dialect.PrefUnknown && s.Purpose == c && s.Use == dialect.UseUnknown && s.Pref == want && !s.Replaced {
				line = s.String()
				break
			}
		}
		lines = append(lines, line)
	}
	if level != dialect.UseUnknown {
		line := "use=unknown: nothing stated"
		if site := rep.Usage.Use(); site != dialect.UseUnknown {
			for _, s := range rep.Signals {
				if s.Use == site {
					line = s.String()
					break
				}
			}
		}
		lines = append(lines, line)
	}
	return lines
}
