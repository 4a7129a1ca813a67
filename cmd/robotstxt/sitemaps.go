package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/sitemap"
)

// Spacing of the sitemaps command's requests to one host: the host's
// Crawl-delay for the agents, else sitemapsDelay, never more than
// sitemapsMaxDelay. sitemapsDelay is a variable for the tests.
var sitemapsDelay = time.Second

const sitemapsMaxDelay = 30 * time.Second

// sitemapsRemember is how many page URLs the sitemaps command remembers to
// print each once (a 16-byte hash each: about 40 MB at the cap, map
// included). Past it, it says so once on stderr, prints the further URLs
// without de-duplicating them, and exits 1. A variable for the tests.
var sitemapsRemember = 1_000_000

// sitemapsAbout is what -h says of the sitemaps command.
const sitemapsAbout = `Streams the page URLs of a site's sitemaps to standard output, one per line,
in document order, each once. URL is a site (http(s)://host/, or its
/robots.txt: the Sitemap lines of its robots.txt are read, resolved against
its URL) or one sitemap URL. Indexes are followed (depth 5); gzip, text,
RSS and Atom sitemaps are read as streams, with the sitemap package's
limits. A sitemap or child that robots.txt disallows for -agent is not
fetched; a child or page URL on another host than the site's is left out;
requests to a host are spaced by its Crawl-delay (else 1 s). -since DATE
(2006-01-02 or RFC 3339) leaves out pages and index children whose lastmod
is earlier. Progress and errors go to standard error, one line per sitemap.
Each URL is printed once up to 1,000,000 different URLs; past them, further
ones are printed without de-duplication (said once on standard error).
Exit status 0 when every sitemap was read, 1 when some failed or were cut
by a limit (the URLs read before are printed; a child too deep or past the
cap of 1,000 sitemaps counts), the de-duplication cap was passed, the site
announces none or standard output failed (the walk stops), 2 on a usage
error.`

// sitemapsCmd runs the sitemaps command.
func sitemapsCmd(c *common, _ io.Reader, stdout, stderr io.Writer) (int, error) {
	target, err := url.Parse(c.file)
	if err != nil || !isHTTP(target.Scheme) || target.Host == "" {
		return 2, fmt.Errorf("%w: URL %q: not an http(s) URL with a host", errUsage, c.file)
	}
	var since time.Time
	if c.since != "" {
		if since, err = parseSince(c.since); err != nil {
			return 2, fmt.Errorf("%w: -since %q: %v", errUsage, c.since, err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	// Every request (robots.txt and sitemaps) passes the host's gate.
	var res *policy.Resolver
	lim := hostlimit.New(hostlimit.Config{Delay: func(host string) time.Duration { return delayOf(res.Cached(host)) }})
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: lim.Transport(base)}
	ua := cliUserAgent(c)
	if res, err = policy.NewResolver(policy.WithDialect(c.d), policy.WithAgents(c.agents...), policy.WithUserAgent(ua), policy.WithHTTPClient(client)); err != nil {
		return 2, fmt.Errorf("%w: %v", errUsage, err)
	}

	scope, err := policy.Authority(target)
	if err != nil {
		return 2, fmt.Errorf("%w: URL %q: %v", errUsage, c.file, err)
	}
	var roots []string
	if p := target.EscapedPath(); (p == "" || p == "/" || p == "/robots.txt") && target.RawQuery == "" {
		pol, err := res.Policy(ctx, target)
		if err != nil {
			return 1, fmt.Errorf("fetching %s/robots.txt: %w", scope, err)
		}
		if pol.Robots() == nil {
			fmt.Fprintf(stderr, "robotstxt: %s: %s\n", pol.Fetch().URL, strings.TrimPrefix(pol.Reason(), "robots.txt: "))
		}
		for _, w := range pol.SitemapWarnings() {
			fmt.Fprintln(stderr, "robotstxt: warning: "+pol.Fetch().URL+": "+w)
		}
		roots = pol.Sitemaps()
		if len(roots) == 0 {
			if pol.Robots() == nil {
				// Not read (an error status, no answer): it announces nothing we know of.
				fmt.Fprintf(stderr, "robotstxt: %s was not read, so no sitemap is known; give a sitemap's URL to walk it\n", pol.Fetch().URL)
			} else {
				fmt.Fprintf(stderr, "robotstxt: %s announces no sitemap\n", pol.Fetch().URL)
			}
			return 1, nil
		}
	} else {
		target.Fragment, target.RawFragment = "", ""
		roots = []string{target.String()}
	}

	// A write error on stdout ends the walk: nothing more can be printed.
	wctx, stopWalk := context.WithCancel(ctx)
	defer stopWalk()
	var writeErr error
	out := bufio.NewWriter(stdout)
	flush := func() {
		if err := out.Flush(); err != nil && writeErr == nil {
			writeErr = err
			stopWalk()
		}
	}
	seen := map[[16]byte]struct{}{}
	h := fnv.New128a() // the key of a printed URL: 16 bytes whatever its length
	failed, unDeduped := false, false
	w := sitemap.NewWalker(sitemap.Config{
		Client:    client,
		UserAgent: ua,
		Since:     since,
		Allow: func(ctx context.Context, u *url.URL) (bool, string) {
			v, err := res.Check(ctx, u)
			if err != nil {
				return false, err.Error()
			}
			// The host's state was made at its robots.txt fetch, before
			// the Crawl-delay was known.
			lim.SetDelay(v.Policy.Authority(), delayOf(v.Policy))
			return v.Allowed, v.String()
		},
		OnReport: func(r sitemap.Report) {
			flush() // the page URLs before the line that reports them
			if writeErr != nil {
				return
			}
			if sitemapFailed(r) {
				failed = true
			}
			fmt.Fprintln(stderr, "robotstxt: "+describeReport(r))
		},
	})
	w.Walk(wctx, scope, roots, func(p sitemap.Page) error {
		if writeErr != nil {
			return writeErr
		}
		// A page robots.txt disallows for the agent is left out, counted in
		// its sitemap's line: the output is what the crawler may fetch.
		if u, err := url.Parse(p.Loc); err == nil {
			if v, err := res.Check(wctx, u); err == nil && !v.Allowed {
				return errors.New("disallowed by robots.txt")
			}
		}
		if !unDeduped {
			h.Reset()
			h.Write([]byte(p.Loc))
			var k [16]byte
			h.Sum(k[:0])
			if _, dup := seen[k]; dup {
				return errors.New("printed already")
			}
			if len(seen) < sitemapsRemember {
				seen[k] = struct{}{}
			} else {
				unDeduped, seen = true, nil
				fmt.Fprintf(stderr, "robotstxt: warning: more than %d different page URLs: the further ones are printed without de-duplication\n", sitemapsRemember)
			}
		}
		out.WriteString(p.Loc)
		if err := out.WriteByte('\n'); err != nil {
			writeErr = err
			stopWalk()
			return err
		}
		return nil
	})
	flush()
	if writeErr != nil {
		return 1, fmt.Errorf("writing the URLs to standard output: %w (the walk was stopped)", writeErr)
	}
	if ctx.Err() != nil {
		return 1, fmt.Errorf("interrupted: %w", ctx.Err())
	}
	if failed || unDeduped {
		return 1, nil
	}
	return 0, nil
}

// delayOf is the spacing of a host whose policy is p (nil: not known yet).
func delayOf(p *policy.Policy) time.Duration {
	if p != nil {
		if d, ok := p.CrawlDelay(); ok {
			return min(d, sitemapsMaxDelay)
		}
	}
	return sitemapsDelay
}

// sitemapFailed reports whether r's document was not read to its end or
// lost children to a limit.
func sitemapFailed(r sitemap.Report) bool {
	return r.Err != nil || r.Cut != "" || r.Rejected[sitemap.ReasonTooDeep] > 0 || r.Rejected[sitemap.ReasonSitemapCap] > 0
}

// describeReport is the progress line of one sitemap: "URL: urlset, 3
// found, 2 printed, filtered 1 (not modified since), rejected 1 (other
// host)", then ": error" when it failed.
func describeReport(r sitemap.Report) string {
	var b strings.Builder
	b.WriteString(r.URL)
	b.WriteString(": ")
	if r.Status == 0 && r.Err != nil {
		b.WriteString("not read: ")
		b.WriteString(r.Err.Error())
		return b.String()
	}
	fmt.Fprintf(&b, "%s, %d found", r.Format, r.Found)
	if r.Format == sitemap.FormatIndex {
		fmt.Fprintf(&b, ", %d children", r.Children)
	} else {
		fmt.Fprintf(&b, ", %d printed", r.Handed)
	}
	for _, part := range []struct {
		name string
		m    map[string]int
	}{{"filtered", r.Filtered}, {"rejected", r.Rejected}} {
		for _, k := range slices.Sorted(maps.Keys(part.m)) {
			fmt.Fprintf(&b, ", %s %d (%s)", part.name, part.m[k], k)
		}
	}
	if r.Cut != "" {
		b.WriteString(", cut: " + r.Cut)
	}
	if r.Err != nil {
		b.WriteString(": error: " + r.Err.Error())
	}
	return b.String()
}

// parseSince reads -since: a date (2006-01-02, midnight UTC) or an RFC 3339
// time.
func parseSince(s string) (time.Time, error) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, errors.New("not a date (2006-01-02) or an RFC 3339 time")
	}
	return t, nil
}
