// Command crawl crawls one site politely with Colly and the robots plugin:
// robots.txt as the chosen dialect reads it, Crawl-delay honoured, every page
// fetched or stopped printed with its reason, progress shown while it runs.
//
// Usage:
//
//	go run ./examples/crawl [flags] URL
//
// Flags (before URL):
//
//	-agent A[,B...]  the crawler's robots.txt product tokens, most specific
//	                 first (default "PoliteCrawl"); the first that has a group
//	                 of its own decides. A User-Agent given here ("Name/1.0",
//	                 a whole header: anything holding '/' or '(') is reduced to
//	                 its product token, with a warning, as robotstxt check does.
//	-user-agent UA   the User-Agent header of every request, robots.txt
//	                 included (default "Mozilla/5.0 (compatible; A/0.1;
//	                 +https://github.com/politecrawl/robots)", A the first
//	                 product token).
//	-dialect D       how robots.txt is read and fetched: rfc9309 (default),
//	                 google, coccoc, koster1994.
//	-allow H[,H...]  other hosts the crawl may follow links and redirects to
//	                 (by default only URL's).
//	-max N           follow at most N links (default 50).
//	-min-delay D     least time between two requests to one host (default 1s);
//	                 a Crawl-delay can raise it.
//	-progress        a progress line on standard error at most once a second
//	                 (default true; -progress=false turns it off).
//	-sign-key FILE   sign every request (Web Bot Auth) with the Ed25519 key in
//	                 FILE: PKCS#8 PEM (openssl genpkey -algorithm ed25519) or
//	                 a private JWK. Needs -signature-agent.
//	-signature-agent URL
//	                 the https URL of the crawler's key directory, sent in
//	                 each signed request. Needs -sign-key. Without the two
//	                 nothing is signed. With these two alone, requests are
//	                 signed as Cloudflare's verifiers accept them.
//	-signature-form F
//	                 cloudflare (default): Signature-Agent a String, covered
//	                 as "signature-agent", no covered component with a
//	                 parameter, the form Cloudflare's verifiers accept;
//	                 dictionary: the working group's sig1="...", covered as
//	                 "signature-agent";key="sig1". A challenge asking for the
//	                 other form is answered in it.
//	-cover C[,C...]  what each signature covers beyond @authority and
//	                 signature-agent: @method, @path, @query (with the
//	                 cloudflare form, @query only for a URL with a query).
//	-write-card FILE write the crawler's Signature Agent Card (JSON) to FILE
//	                 before crawling, for examples/keydirectory -card: its
//	                 client_id https://HOST/signature-agent-card.json on the
//	                 directory's host, its key directory, product token,
//	                 purposes and rate control from these flags.
//	-evidence FILE   append to the usage log FILE one JSON line per URL
//	                 decided (fetched with any status, refused after the
//	                 fetch, stopped before it, or failed without answer:
//	                 docs/usage.md has the table), each chained to the
//	                 one before and, with -sign-key, signed with its key; the
//	                 documents that decided (robots.txt, tdmrep.json, RSL
//	                 licences) are kept beside it, as sha256/HEX in FILE's
//	                 directory. Needs -purpose or -use. robotstxt evidence
//	                 verify checks it (docs/usage.md).
//	-purpose P[,P...]
//	                 what the content is used for: train-ai, search, ai-input.
//	                 A page whose robots.txt, tdmrep.json or licence refuses
//	                 one is not fetched; a fetched page whose headers or meta
//	                 elements refuse one is reported as refused. Without it,
//	                 nothing is fetched for usage.
//	-use LEVEL       how far the content is used: immediate, reference or
//	                 full (Content-Signal's use=). A site whose stated level
//	                 is lower refuses the crawl.
//	-v               log robots.txt fetches on standard error.
//
// Standard output has one line per page: "fetched  STATUS URL", "stopped  URL:
// REASON" (robots.txt disallows it, a declared purpose is refused before the
// fetch, or it waited too long), "refused  URL: REASON" (fetched, then refused
// for a declared purpose or the use level) or "error    URL: ERROR". A usage
// REASON names the purpose (or use=LEVEL), its preference and the signal
// that decided, with its carrier:
// "train-ai=n: robots.txt line 4: Content-Usage: train-ai=n", "train-ai=n:
// tdmrep.json rule 0 (location /): 1", "train-ai=n: Content-Usage header:
// train-ai=n", "train-ai=n: meta <meta name=\"robots\">: noai", "train-ai=n:
// license https://example.com/license.xml (robots.txt line 2), content \"/\":
// not licensed", "use=reference: robots.txt line 3: Content-Signal:
// use=reference".
// Standard error has, at most once a second, a progress line from the
// plugin's Totals and Stats:
//
//	crawl: 12s: 31 fetched (1.0/s), 4 stopped, 0 errors; hosts: 1, 1 waiting
//
// (the rate is that of the last interval; a host is waiting while requests
// queue at its gate or a 429/5xx pause holds it), and at the end a summary:
// the totals and one line per host. An interrupt (Ctrl-C) stops the crawl;
// the summary is still printed. The exit status is 0, or 2 on a usage error,
// or 130 when interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/usage"
)

const usageLine = "usage: crawl [-agent A[,B...]] [-user-agent UA] [-dialect D] [-allow H[,H...]] [-max N] [-min-delay D] [-progress=false] [-sign-key FILE -signature-agent URL [-signature-form F] [-cover C[,C...]] [-write-card FILE]] [-evidence FILE] [-purpose P[,P...]] [-use LEVEL] [-user U] [-geo CC] [-reach] [-v] URL"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// progressEvery is the least time between two progress lines.
var progressEvery = time.Second

// lockedWriter serialises the lines written by Colly's goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}

// agentTokens reads -agent: product tokens separated by commas (not those
// inside parentheses); one given as a User-Agent is reduced to its product
// token, with a warning.
func agentTokens(s string) (tokens, warnings []string) {
	var agents []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			if c := s[i]; c == '(' {
				depth++
			} else if c == ')' {
				depth = max(depth-1, 0)
			}
			if s[i] != ',' || depth > 0 {
				continue
			}
		}
		if a := strings.TrimSpace(s[start:i]); a != "" {
			agents = append(agents, a)
		}
		start = i + 1
	}
	for _, a := range agents {
		t := a
		if strings.ContainsAny(a, "/(") {
			if pt := dialect.ProductToken(a); pt != "" && pt != a {
				t = pt
				w := fmt.Sprintf("-agent %q: read as a User-Agent; using its product token %q", a, t)
				if !slices.Contains(warnings, w) {
					warnings = append(warnings, w)
				}
			}
		}
		if !slices.Contains(tokens, t) {
			tokens = append(tokens, t)
		}
	}
	return tokens, warnings
}

// totals is what the crawl has done so far.
type totals struct {
	fetched, errors int64
	stopped         int64 // Totals: disallowed, deferred, skipped, canceled, usage-disallowed
	hosts, waiting  int
}

func snapshot(p *robots.Plugin, fetched, errs *atomic.Int64, now time.Time) totals {
	t := p.Totals()
	s := totals{
		fetched: fetched.Load(),
		errors:  errs.Load(),
		stopped: t.Disallowed + t.Deferred + t.Skipped + t.Canceled + t.UsageDisallowed,
	}
	for _, h := range p.Stats() {
		s.hosts++
		if h.Limiter.Queued > 0 || h.Limiter.PausedUntil.After(now) {
			s.waiting++
		}
	}
	return s
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("crawl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, usageLine)
		fs.PrintDefaults()
	}
	agent := fs.String("agent", "PoliteCrawl", "the crawler's robots.txt product tokens `A[,B...]`, most specific first (a User-Agent is reduced to its token)")
	userAgent := fs.String("user-agent", "", "the User-Agent header `UA` (default \"Mozilla/5.0 (compatible; A/0.1; +https://github.com/politecrawl/robots)\", A the first token)")
	dialectName := fs.String("dialect", "rfc9309", "robots.txt dialect `D`: "+strings.Join(dialect.Names(), ", "))
	allow := fs.String("allow", "", "other hosts `H[,H...]` the crawl may follow links and redirects to")
	maxPages := fs.Int("max", 50, "follow at most `N` links")
	minDelay := fs.Duration("min-delay", time.Second, "least time `D` between two requests to one host")
	showProgress := fs.Bool("progress", true, "a progress line on standard error at most once a second")
	verbose := fs.Bool("v", false, "log robots.txt fetches")
	purposes := fs.String("purpose", "", "what the content is used for, `P[,P...]`: train-ai, search, ai-input")
	useLevel := fs.String("use", "", "how far the content is used, `LEVEL`: immediate, reference, full")
	user := fs.String("user", "", "who uses the content, for RSL licences, `U`: commercial, non-commercial, education, government, personal")
	geo := fs.String("geo", "", "where the content is used, for RSL licences: an ISO 3166-1 alpha-2 code `CC`")
	reach := fs.Bool("reach", false, "fetch pages the usage signals refuse (robots.txt allowing them) to follow their links; they are reported refused")
	signing := addSignFlags(fs)
	evidence := fs.String("evidence", "", "append one chained (with -sign-key, signed) JSON record per URL decided to the usage log `FILE`; needs -purpose or -use")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, usageLine)
		return 2
	}
	start, err := url.Parse(fs.Arg(0))
	if err != nil || (start.Scheme != "http" && start.Scheme != "https") || start.Host == "" {
		fmt.Fprintln(stderr, "crawl: need an http(s) URL")
		return 2
	}
	d, err := dialect.Lookup(*dialectName)
	if err != nil {
		fmt.Fprintln(stderr, "crawl:", err)
		return 2
	}
	tokens, warnings := agentTokens(*agent)
	for _, w := range warnings {
		fmt.Fprintln(stderr, "crawl: warning:", w)
	}
	if len(tokens) == 0 {
		fmt.Fprintln(stderr, "crawl: -agent: give the crawler's product token")
		return 2
	}
	ua := *userAgent
	if ua == "" {
		ua = "Mozilla/5.0 (compatible; " + tokens[0] + "/0.1; +https://github.com/politecrawl/robots)"
	}
	opts := []robots.Option{
		robots.WithDialect(d),
		robots.WithAgents(tokens...),
		robots.WithMinDelay(*minDelay),
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	signer, err := signing.signer(set)
	if err != nil {
		fmt.Fprintln(stderr, "crawl:", err)
		return 2
	}
	if signer != nil {
		opts = append(opts, robots.WithSigner(signer))
	}
	declared := list(*purposes)
	if *evidence != "" && len(declared) == 0 && *useLevel == "" {
		fmt.Fprintln(stderr, "crawl: -evidence needs -purpose or -use")
		return 2
	}
	if len(declared) > 0 || *useLevel != "" || *user != "" || *geo != "" || *reach {
		cfg := usage.Config{Purposes: declared, Use: *useLevel, User: *user, Geo: *geo, Reach: *reach}
		if *evidence != "" {
			l, err := openEvidence(*evidence, *signing.key)
			if err != nil {
				fmt.Fprintln(stderr, "crawl:", err)
				return 2
			}
			defer func() {
				if err := l.Close(); err != nil {
					fmt.Fprintln(stderr, "crawl:", err)
				}
			}()
			cfg.Log = l
		}
		opts = append(opts, robots.WithUsage(cfg))
	}
	domains := append([]string{start.Hostname()}, list(*allow)...)
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	out := &lockedWriter{w: stdout}
	errOut := &lockedWriter{w: stderr}

	c := colly.NewCollector(colly.UserAgent(ua), colly.AllowedDomains(domains...), colly.Async(true), colly.StdlibContext(ctx))
	p, err := robots.Attach(c, append(opts,
		robots.WithLogger(log),
		robots.WithOnBlocked(func(b robots.Block) { out.printf("stopped  %s: %s\n", b.URL, b.Reason) }),
	)...)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	defer p.Close()
	if err := signing.writeCard(p, ua); err != nil {
		fmt.Fprintln(stderr, "crawl:", err)
		return 2
	}
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4})
	var links, fetched, errs atomic.Int64
	c.OnResponse(func(r *colly.Response) {
		fetched.Add(1)
		if u, _ := robots.UsageOf(r); u.Refused != "" {
			out.printf("refused  %s: %s\n", r.Request.URL, u.Refused)
			return
		}
		out.printf("fetched  %d %s\n", r.StatusCode, r.Request.URL)
	})
	c.OnError(func(r *colly.Response, err error) {
		if errors.Is(err, robots.ErrBlocked) {
			return // reported by WithOnBlocked
		}
		errs.Add(1)
		out.printf("error    %s: %v\n", r.Request.URL, err)
	})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		if links.Add(1) <= int64(*maxPages) {
			e.Request.Visit(e.Attr("href"))
		}
	})

	began := time.Now()
	done := make(chan struct{})
	var progress sync.WaitGroup
	if *showProgress {
		progress.Add(1)
		go func() {
			defer progress.Done()
			tick := time.NewTicker(progressEvery)
			defer tick.Stop()
			var last totals
			lastAt := began
			for {
				select {
				case <-done:
					return
				case now := <-tick.C:
					s := snapshot(p, &fetched, &errs, now)
					if s == last && s.waiting == 0 {
						continue // nothing to say
					}
					rate := float64(s.fetched-last.fetched) / now.Sub(lastAt).Seconds()
					errOut.printf("crawl: %s: %d fetched (%.1f/s), %d stopped, %d errors; hosts: %d, %d waiting\n",
						now.Sub(began).Round(time.Second), s.fetched, rate, s.stopped, s.errors, s.hosts, s.waiting)
					last, lastAt = s, now
				}
			}
		}()
	}
	if err := c.Visit(start.String()); err != nil {
		out.printf("error    %s: %v\n", start, err)
	}
	c.Wait()
	close(done)
	progress.Wait()

	elapsed := time.Since(began)
	s := snapshot(p, &fetched, &errs, time.Now())
	t := p.Totals()
	how := "done"
	if ctx.Err() != nil {
		how = "interrupted"
	}
	errOut.printf("crawl: %s in %s: %d fetched (%.1f/s), %d stopped (%d disallowed, %d deferred, %d skipped, %d canceled), %d errors; requests waited %s in all\n",
		how, elapsed.Round(time.Millisecond), s.fetched, float64(s.fetched)/elapsed.Seconds(),
		s.stopped, t.Disallowed, t.Deferred, t.Skipped, t.Canceled, s.errors, t.Waited.Round(time.Millisecond))
	if len(declared) > 0 || *useLevel != "" {
		errOut.printf("crawl: usage: %d stopped before the fetch, %d refused after it\n", t.UsageDisallowed, t.UsageMarked)
	}
	stats := p.Stats()
	hosts := make([]string, 0, len(stats))
	for a := range stats {
		hosts = append(hosts, a)
	}
	slices.Sort(hosts)
	for _, a := range hosts {
		h := stats[a]
		errOut.printf("crawl: %s: allowed %d, disallowed %d, deferred %d, skipped %d, canceled %d, waited %s\n",
			a, h.Allowed, h.Disallowed, h.Deferred, h.Skipped, h.Canceled, h.Waited.Round(time.Millisecond))
	}
	if ctx.Err() != nil {
		return 130
	}
	return 0
}

// list is the items of a comma-separated flag value, trimmed, without
// empty ones.
func list(s string) []string {
	var items []string
	for _, it := range strings.Split(s, ",") {
		if it = strings.TrimSpace(it); it != "" {
			items = append(items, it)
		}
	}
	return items
}
