package sitemap

import (
	"bytes"
	"io"
)

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

// Lexer states of markupGuard.
const (
	gText      = iota // character data
	gLT               // after '<'
	gBang             // after "<!"
	gBangDash         // after "<!-"
	gCDOpen           // inside "<![CDATA["
	gTag              // start or end tag
	gComment          // <!-- ... -->
	gCDATA            // <![CDATA[ ... ]]>
	gPI               // <? ... ?>
	gDirective        // <!DOCTYPE ...>, any other <!...>
)

// markupGuard sits between the decompressed bytes and encoding/xml. It
// lexes the bytes just far enough to know where each construct that
// encoding/xml buffers whole (a text node, a tag, a comment, a CDATA
// section, a processing instruction, a directive) starts and ends, and
// fails with a LimitError once one of them is longer than max bytes:
// before the decoder has buffered it. It also refuses a directive with an
// internal subset ('[' outside quotes) with ErrDoctype. Its lexing is a
// superset of encoding/xml's construct boundaries, so no construct the
// decoder buffers can be longer than max plus the decoder's read-ahead.
type markupGuard struct {
	r     io.Reader
	max   int64
	n     int64 // bytes of the current construct
	st    uint8
	k     int  // progress in a delimiter ("[CDATA[", "--", "]]", "?")
	quote byte // the open quote inside a tag or directive
	err   error
	// bareAmp is set at the first '&' in character data that does not
	// start an entity or character reference (read literally by the
	// decoder); one that cannot be decided at the end of a read is not
	// reported.
	bareAmp bool
}

// checkAmp looks for a bare '&' in the character data t.
func (g *markupGuard) checkAmp(t []byte) {
	for {
		i := bytes.IndexByte(t, '&')
		if i < 0 {
			return
		}
		t = t[i+1:]
		j := 0
		if j < len(t) && t[j] == '#' {
			j++
		}
		for j < len(t) && (isNameByte(t[j])) {
			j++
		}
		if j == len(t) {
			return // undecided at the end of the read
		}
		if t[j] != ';' || j == 0 || (j == 1 && t[0] == '#') {
			g.bareAmp = true
			return
		}
	}
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_' || c == ':' || c >= 0x80
}

const cdataOpen = "[CDATA["

func (g *markupGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	if bad := g.scan(p[:n]); bad >= 0 {
		return bad, g.err
	}
	return n, err
}

// scan advances the lexer over b; it returns -1, or the number of bytes of
// b that may be passed on when a limit was hit (g.err is set).
func (g *markupGuard) scan(b []byte) int {
	for i := 0; i < len(b); i++ {
		if g.st == gText {
			j := bytes.IndexByte(b[i:], '<')
			if !g.bareAmp {
				if j < 0 {
					g.checkAmp(b[i:])
				} else {
					g.checkAmp(b[i : i+j])
				}
			}
			if j < 0 {
				g.n += int64(len(b) - i)
				if g.n > g.max {
					return g.fail(len(b))
				}
				return -1
			}
			g.n += int64(j)
			if g.n > g.max {
				return g.fail(i + j)
			}
			i += j
			g.st, g.n = gLT, 1
			continue
		}
		c := b[i]
		g.n++
		if g.n > g.max {
			return g.fail(i)
		}
		switch g.st {
		case gLT:
			switch c {
			case '!':
				g.st = gBang
			case '?':
				g.st, g.k = gPI, 0
			default:
				g.st, g.quote = gTag, 0
				g.tag(c)
			}
		case gBang:
			switch c {
			case '-':
				g.st = gBangDash
			case '[':
				g.st, g.k = gCDOpen, 1
			default:
				g.st, g.quote = gDirective, 0
				if g.directive(c) {
					return i
				}
			}
		case gBangDash:
			if c == '-' {
				g.st, g.k = gComment, 0
			} else {
				g.st, g.quote = gDirective, 0
				if g.directive(c) {
					return i
				}
			}
		case gCDOpen:
			if c == cdataOpen[g.k] {
				g.k++
				if g.k == len(cdataOpen) {
					g.st, g.k = gCDATA, 0
				}
			} else {
				// "<![" not followed by CDATA[: a conditional section,
				// which only an internal subset may hold.
				g.err = ErrDoctype
				return i
			}
		case gTag:
			g.tag(c)
		case gComment:
			switch {
			case c == '-':
				g.k++
			case c == '>' && g.k >= 2:
				g.st, g.n = gText, 0
			default:
				g.k = 0
			}
		case gCDATA:
			switch {
			case c == ']':
				g.k++
			case c == '>' && g.k >= 2:
				g.st, g.n = gText, 0
			default:
				g.k = 0
			}
		case gPI:
			switch {
			case c == '?':
				g.k = 1
			case c == '>' && g.k == 1:
				g.st, g.n = gText, 0
			default:
				g.k = 0
			}
		case gDirective:
			if g.directive(c) {
				return i
			}
		}
	}
	return -1
}

func (g *markupGuard) tag(c byte) {
	switch {
	case g.quote != 0:
		if c == g.quote {
			g.quote = 0
		}
	case c == '"' || c == '\'':
		g.quote = c
	case c == '>':
		g.st, g.n = gText, 0
	}
}

// directive lexes one byte of a <!...> directive; true when it is the '['
// of an internal subset (g.err is set).
func (g *markupGuard) directive(c byte) bool {
	switch {
	case g.quote != 0:
		if c == g.quote {
			g.quote = 0
		}
	case c == '"' || c == '\'':
		g.quote = c
	case c == '[':
		g.err = ErrDoctype
		return true
	case c == '>':
		g.st, g.n = gText, 0
	}
	return false
}

func (g *markupGuard) fail(pass int) int {
	g.err = &LimitError{Limit: LimitTextRun, Max: g.max}
	return pass
}
