package main

import (
	"bufio"
	"io"

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
		for _, k := range c.usage {
			w.WriteByte('\t')
			w.WriteString(k.String())
			if allowed {
				w.WriteString("=" + uv.Usage.Pref(k).String())
			} else {
				w.WriteString("=n/a")
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
