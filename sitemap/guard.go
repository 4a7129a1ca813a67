package sitemap

import "io"

// countReader counts the decompressed bytes of a document and stops them at
// max: the reader sees at most max bytes, then a *LimitError if there are
// more.
type countReader struct {
	r   io.Reader
	n   int64
	max int64
	err error
}

func (c *countReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if rest := c.max - c.n + 1; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		n -= int(c.n - c.max)
		c.n = c.max
		c.err = &LimitError{Limit: LimitBytes, Max: c.max}
		return n, c.err
	}
	if err != nil {
		c.err = err
	}
	return n, err
}
