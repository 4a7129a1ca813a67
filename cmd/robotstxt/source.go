package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
)

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
