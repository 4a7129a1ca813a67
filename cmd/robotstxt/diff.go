package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"github.com/temoto/robotstxt"
)

// defaultCollyUA is colly.NewCollector's UserAgent in v2.3.0 (colly.go:490).
const defaultCollyUA = "colly - https://github.com/gocolly/colly"

// collyURLParser parses a URL as Colly v2.3.0's Visit does (colly.go:307, 633).
var collyURLParser = whatwg.NewParser(whatwg.WithPercentEncodeSinglePercentSign())

// collyTimeout is the timeout of Colly's HTTP client (http_backend.go:97).
const collyTimeout = 10 * time.Second

// collyCheck is Colly v2.3.0's robots.txt check (Collector.checkRobots,
// colly.go:843-899) for one host.
type collyCheck struct {
	group *robotstxt.Group // the group temoto picks for the UserAgent; nil when robots.txt decided as a whole
	why   string           // when group is nil: why every URL is disallowed
}

// allowed is the check of a URL as Colly parsed it.
func (cc *collyCheck) allowed(u *url.URL) bool {
	if cc.group == nil {
		return false
	}
	eu := u.EscapedPath()
	if u.RawQuery != "" {
		eu += "?" + u.Query().Encode()
	}
	return cc.group.Test(eu)
}

// newCollyCheck reads robots.txt as Colly does: robotstxt.FromResponse (that
// is, FromStatusAndBytes), then FindGroup with the collector's whole
// UserAgent. An error there makes Colly's Visit return it for every URL of
// the host, fetching none: said on stderr, and counted as disallowed.
func newCollyCheck(status int, body []byte, userAgent, file string, stderr io.Writer) *collyCheck {
	robot, err := robotstxt.FromStatusAndBytes(status, body)
	if err != nil {
		msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
		msg = strings.TrimSuffix(strings.Replace(msg, "Parse error(s): ;", "parse error(s):", 1), ";")
		fmt.Fprintf(stderr, "robotstxt: colly: temoto/robotstxt rejects %s (%s): Colly's Visit returns this error for every URL of the host and fetches none; counted as disallowed\n", file, msg)
		return &collyCheck{why: "temoto rejects robots.txt"}
	}
	if status >= 500 && status < 600 {
		fmt.Fprintf(stderr, "robotstxt: colly: %s answered %d %s: temoto reads it as disallow all, but Colly asks it for a group, finds none and allows every URL\n", file, status, http.StatusText(status))
	}
	// FindGroup returns an empty group (every URL allowed) rather than nil,
	// for allow-all and disallow-all results too.
	return &collyCheck{group: robot.FindGroup(userAgent)}
}

// collyFetch fetches robots.txt as Colly's check does: a GET with the
// collector's User-Agent on Colly's default client (10 s timeout, at most
// ten redirects, the tenth response kept), the whole body read.
func collyFetch(robotsURL, userAgent string) (int, []byte, error) {
	req, err := http.NewRequest("GET", robotsURL, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	client := &http.Client{
		Timeout: collyTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxWholeBytes+1))
	if err != nil {
		return 0, nil, err
	}
	if len(body) > maxWholeBytes {
		return 0, nil, fmt.Errorf("robots.txt is larger than %d MiB", maxWholeBytes>>20)
	}
	return resp.StatusCode, body, nil
}

// collyURL is the URL Colly's Visit makes of a URL argument: a path joined to
// base, then parsed by the WHATWG parser and again by net/url.
func collyURL(base, arg string) (*url.URL, error) {
	if arg == "" || arg[0] == '/' {
		arg = base + arg
	}
	wu, err := collyURLParser.Parse(arg)
	if err != nil {
		return nil, fmt.Errorf("%w: URL %q: Colly's URL parser rejects it: %v", errUsage, arg, err)
	}
	u, err := url.Parse(wu.Href(false))
	if err != nil {
		return nil, fmt.Errorf("%w: URL %q: Colly's URL parser rejects it: %v", errUsage, arg, err)
	}
	return u, nil
}

// requestPath is the path and query of u as sent: what the plugin checks.
func requestPath(u *url.URL) string {
	p := u.EscapedPath()
	if u.RawQuery != "" || u.ForceQuery {
		p += "?" + u.RawQuery
	}
	return p
}

func verdictWord(allowed bool) string {
	if allowed {
		return "allowed"
	}
	return "disallowed"
}

func diffCmd(c *common, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	src, err := load(c, stderr, true)
	if err != nil {
		return 2, err
	}
	base := "http://example.com"
	var cc *collyCheck
	if src.policy != nil {
		base = src.base.String()
		robotsURL := base + "/robots.txt"
		status, body, err := collyFetch(robotsURL, c.collyUA)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			fmt.Fprintf(stderr, "robotstxt: colly: %s: %v: Colly's Visit returns this error for every URL of the host and fetches none; counted as disallowed\n", robotsURL, err)
			cc = &collyCheck{why: "robots.txt fetch failed"}
		} else {
			cc = newCollyCheck(status, body, c.collyUA, robotsURL, stderr)
		}
	} else {
		if len(src.body) > maxWholeBytes {
			return 2, fmt.Errorf("%s is larger than %d MiB", c.file, maxWholeBytes>>20)
		}
		cc = newCollyCheck(http.StatusOK, src.body, c.collyUA, c.file, stderr)
	}
	rs := src.robots.For(c.agents...)
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	changed, total := 0, 0
	err = eachURL(c, stdin, func(arg string) error {
		u, err := collyURL(base, arg)
		if err != nil {
			return err
		}
		total++
		colly := cc.allowed(u)
		var allowed bool
		var why string
		if src.policy != nil {
			v := src.policy.CheckPath(requestPath(u))
			allowed, why = v.Allowed, v.String()
		} else {
			v := rs.Check(requestPath(u))
			allowed, why = v.Allowed, v.String()
		}
		if colly == allowed {
			return nil
		}
		changed++
		collyWhy := "-"
		if cc.group == nil {
			collyWhy = cc.why
		}
		_, err = fmt.Fprintf(w, "%s\tcolly: %s (%s)\t%s: %s (%s)\n", arg, verdictWord(colly), collyWhy, c.d, verdictWord(allowed), why)
		return err
	})
	if err != nil {
		w.Flush()
		return 2, err
	}
	if err := w.Flush(); err != nil {
		return 2, err
	}
	fmt.Fprintf(stderr, "robotstxt: %d of %d URLs change verdict\n", changed, total)
	if changed > 0 {
		return 1, nil
	}
	return 0, nil
}
