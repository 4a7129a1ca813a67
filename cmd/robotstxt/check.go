package main

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/politecrawl/robots/dialect"
)

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
		for _, f := range c.usage {
			w.WriteString("\t" + f + "=")
			if allowed {
				w.WriteString(usageValue(f, &uv, rs))
			} else {
				w.WriteString("n/a")
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

// usageValue returns what the -usage field f says of an allowed URL: the
// category's preference, the use level and the line that stated it, or the
// License URLs that apply, as written.
func usageValue(f string, uv *dialect.UsageVerdict, rs *dialect.Ruleset) string {
	switch f {
	case "use":
		if l := uv.Usage.Use(); l != dialect.UseUnknown {
			return l.String() + " (line " + strconv.Itoa(uv.UseRule().Line) + ")"
		}
		return "unknown"
	case "license":
		var urls []string
		for _, l := range rs.Licenses() {
			urls = append(urls, l.URL)
		}
		if urls == nil {
			return "none"
		}
		return strings.Join(urls, " ")
	}
	k, _ := dialect.ParseCategory(f)
	return uv.Usage.Pref(k).String()
}
