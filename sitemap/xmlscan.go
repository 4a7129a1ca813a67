package sitemap

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// tokKind is the kind of a token of the XML scanner.
type tokKind uint8

const (
	tokStart     tokKind = iota + 1 // a start tag (an empty-element tag gives a start then an end)
	tokEnd                          // an end tag
	tokText                         // character data, possibly one piece of a longer text node
	tokDirective                    // <!DOCTYPE ...> or another <!...>
)

// token is one token of the XML scanner. Its slices point into the
// scanner's buffer and are valid until the next call of next.
type token struct {
	kind    tokKind
	name    []byte // the qualified name of a start or end tag, as written ("xhtml:link")
	attrs   []byte // a start tag's attributes, raw: decode with attrValue
	text    []byte // character data (entities not decoded unless literal) or a directive's content
	literal bool   // text is taken as it is: CDATA, or already decoded
}

// tokenizer is what Reader reads XML through: xmlScanner, and in the tests
// an adapter of encoding/xml that serves as the reference.
type tokenizer interface {
	next() (token, error)
}

// xmlScanner is a small XML tokenizer for sitemaps and feeds. It reads
// through a buffer that holds at most one tag, comment, processing
// instruction, directive or CDATA section, and never more than max bytes
// of one (a longer one is a LimitError "text run", found before it is
// buffered); character data is handed out in pieces, its run counted
// against the same max. It skips comments and processing instructions,
// switches to the encoding an XML declaration names (through charset), and
// leaves entity decoding to decodeText/attrValue, which only the values
// read pay for. Names are not validated beyond being non-empty; an
// attribute list is only split when a value is asked for.
type xmlScanner struct {
	src      io.Reader
	buf      []byte
	r, w     int   // unread bytes are buf[r:w]
	off      int64 // stream offset of buf[0]
	max      int
	limit    int // the buffer never grows beyond this
	eof      bool
	rerr     error
	run      int // bytes of the current text node so far
	pendEnd  bool
	endName  []byte
	started  bool // a construct was read: an XML declaration no longer counts
	sawStart bool // a start tag was read
	charset  func(label string, r io.Reader) io.Reader
}

func newXMLScanner(src io.Reader, max int, charset func(string, io.Reader) io.Reader) *xmlScanner {
	limit := max + 1024
	return &xmlScanner{src: src, buf: make([]byte, min(limit, 32<<10)), max: max, limit: limit, charset: charset}
}

// fill reads more bytes, moving the unread ones to the front and growing
// the buffer up to its limit; false when nothing more can come.
func (s *xmlScanner) fill() bool {
	if s.eof || s.rerr != nil {
		return false
	}
	if s.r > 0 {
		copy(s.buf, s.buf[s.r:s.w])
		s.w -= s.r
		s.off += int64(s.r)
		s.r = 0
	}
	if s.w == len(s.buf) {
		if len(s.buf) >= s.limit {
			return false
		}
		nb := make([]byte, min(2*len(s.buf), s.limit))
		copy(nb, s.buf[:s.w])
		s.buf = nb
	}
	for range 100 {
		n, err := s.src.Read(s.buf[s.w:])
		s.w += n
		if err == io.EOF {
			s.eof = true
		} else if err != nil {
			s.rerr = err
		}
		if n > 0 || err != nil {
			return n > 0
		}
	}
	s.rerr = io.ErrNoProgress
	return false
}

// stop is the error of a construct (what) that cannot be completed.
func (s *xmlScanner) stop(what string, length int) error {
	switch {
	case length > s.max:
		return &LimitError{Limit: LimitTextRun, Max: int64(s.max)}
	case s.rerr != nil:
		return s.rerr
	}
	return fmt.Errorf("sitemap: document truncated inside %s at byte %d: %w", what, s.off+int64(s.r), io.ErrUnexpectedEOF)
}

// until returns the offset from s.r of delim, searching from offset from.
func (s *xmlScanner) until(from int, delim, what string) (int, error) {
	for {
		if i := bytes.Index(s.buf[s.r+from:s.w], []byte(delim)); i >= 0 {
			if from+i+len(delim) > s.max {
				return 0, s.stop(what, from+i+len(delim))
			}
			return from + i, nil
		}
		from = max(from, s.w-s.r-len(delim)+1)
		if s.w-s.r > s.max || !s.fill() {
			return 0, s.stop(what, s.w-s.r)
		}
	}
}

// tagEnd returns the offset from s.r of the '>' that ends a tag or a
// directive, quotes respected. In a directive, as in encoding/xml, the byte
// after "<!" is taken as it is and '<' ... '>' pairs nest; a '[' outside
// quotes in a DOCTYPE before the first element is an internal subset:
// ErrDoctype, at once.
func (s *xmlScanner) tagEnd(directive bool) (int, error) {
	var quote byte
	i, depth := 1, 0
	what := "a tag"
	if directive {
		i, what = 3, "a directive"
	}
	for {
		for ; s.r+i < s.w; i++ {
			c := s.buf[s.r+i]
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				}
			case c == '"' || c == '\'':
				quote = c
			case c == '>' && depth > 0:
				depth--
			case c == '>':
				if i+1 > s.max {
					return 0, s.stop(what, i+1)
				}
				return i, nil
			case c == '<' && directive:
				depth++
			case c == '<':
				return 0, s.syntax("'<' inside a tag")
			case c == '[' && directive && !s.sawStart && len(s.buf[s.r:s.w]) >= 9 && bytes.EqualFold(s.buf[s.r+2:s.r+9], []byte("DOCTYPE")):
				return 0, ErrDoctype
			}
		}
		if i > s.max || !s.fill() {
			return 0, s.stop(what, i)
		}
	}
}

func (s *xmlScanner) syntax(msg string) error {
	return fmt.Errorf("sitemap: XML syntax error at byte %d: %s", s.off+int64(s.r), msg)
}

// need makes n unread bytes available if the document has them.
func (s *xmlScanner) need(n int) bool {
	for s.w-s.r < n {
		if !s.fill() {
			return false
		}
	}
	return true
}

func (s *xmlScanner) next() (token, error) {
	if s.pendEnd {
		s.pendEnd = false
		return token{kind: tokEnd, name: s.endName}, nil
	}
	for {
		if s.r == s.w && !s.fill() {
			if s.rerr != nil {
				return token{}, s.rerr
			}
			return token{}, io.EOF
		}
		if s.buf[s.r] != '<' {
			return s.text()
		}
		s.run = 0
		if !s.need(2) {
			return token{}, s.stop("a tag", 1)
		}
		switch s.buf[s.r+1] {
		case '/':
			j, err := s.tagEnd(false)
			if err != nil {
				return token{}, err
			}
			name := bytes.TrimSpace(s.buf[s.r+2 : s.r+j])
			s.r += j + 1
			if len(name) == 0 {
				return token{}, s.syntax("end tag without a name")
			}
			return token{kind: tokEnd, name: name}, nil
		case '?':
			j, err := s.until(2, "?>", "a processing instruction")
			if err != nil {
				return token{}, err
			}
			pi := s.buf[s.r+2 : s.r+j]
			s.r += j + 2
			if !s.started && bytes.HasPrefix(pi, []byte("xml")) && (len(pi) == 3 || isSpace(pi[3])) {
				s.started = true
				if label := piParam(pi, "encoding"); label != "" && s.charset != nil {
					s.switchTo(label)
				}
			}
			continue
		case '!':
			s.started = true
			s.need(9)
			rest := s.buf[s.r:s.w]
			switch {
			case bytes.HasPrefix(rest, []byte("<!--")):
				j, err := s.until(4, "-->", "a comment")
				if err != nil {
					return token{}, err
				}
				s.r += j + 3
				continue
			case bytes.HasPrefix(rest, []byte("<![CDATA[")):
				j, err := s.until(9, "]]>", "a CDATA section")
				if err != nil {
					return token{}, err
				}
				t := token{kind: tokText, text: s.buf[s.r+9 : s.r+j], literal: true}
				s.r += j + 3
				return t, nil
			case bytes.HasPrefix(rest, []byte("<![")):
				return token{}, s.syntax("invalid <![ sequence")
			}
			j, err := s.tagEnd(true)
			if err != nil {
				return token{}, err
			}
			t := token{kind: tokDirective, text: s.buf[s.r+2 : s.r+j]}
			s.r += j + 1
			return t, nil
		}
		s.started = true
		j, err := s.tagEnd(false)
		if err != nil {
			return token{}, err
		}
		tag := s.buf[s.r+1 : s.r+j]
		s.r += j + 1
		self := false
		if n := len(tag); n > 0 && tag[n-1] == '/' {
			self, tag = true, tag[:n-1]
		}
		k := 0
		for k < len(tag) && !isSpace(tag[k]) && tag[k] != '/' {
			k++
		}
		if k == 0 {
			return token{}, s.syntax("expected an element name after <")
		}
		t := token{kind: tokStart, name: tag[:k], attrs: tag[k:]}
		s.sawStart = true
		if self {
			s.pendEnd, s.endName = true, t.name
		}
		return t, nil
	}
}

// text hands out the character data at s.r, up to the next '<' or the end
// of the buffer (a piece), never cutting an entity reference in two.
func (s *xmlScanner) text() (token, error) {
	s.started = true
	i := bytes.IndexByte(s.buf[s.r:s.w], '<')
	for i < 0 && s.w-s.r < len(s.buf)/2 && s.fill() { // a piece of at least half the buffer
		i = bytes.IndexByte(s.buf[s.r:s.w], '<')
	}
	if i < 0 {
		i = s.w - s.r
		if !s.eof {
			// keep back a possible entity reference cut by the buffer's end
			tail := s.buf[max(s.r, s.w-32):s.w]
			if a := bytes.LastIndexByte(tail, '&'); a >= 0 && bytes.IndexByte(tail[a:], ';') < 0 {
				if cut := s.w - len(tail) + a - s.r; cut > 0 {
					i = cut
				}
			}
		}
	}
	if s.run += i; s.run > s.max {
		return token{}, &LimitError{Limit: LimitTextRun, Max: int64(s.max)}
	}
	t := token{kind: tokText, text: s.buf[s.r : s.r+i]}
	s.r += i
	return t, nil
}

// switchTo decodes the rest of the document from the encoding label names,
// when charset gives a decoder for it.
func (s *xmlScanner) switchTo(label string) {
	rest := bytes.Clone(s.buf[s.r:s.w])
	dec := s.charset(label, io.MultiReader(bytes.NewReader(rest), s.src))
	if dec == nil {
		return
	}
	s.src = dec
	s.off += int64(s.r)
	s.r, s.w = 0, 0
	s.eof = false // the rest comes through dec
}

// piParam returns the value of param="..." in a processing instruction.
func piParam(pi []byte, param string) string {
	i := bytes.Index(pi, []byte(param))
	for i >= 0 {
		rest := bytes.TrimLeft(pi[i+len(param):], " \t\r\n")
		if len(rest) > 0 && rest[0] == '=' {
			rest = bytes.TrimLeft(rest[1:], " \t\r\n")
			if len(rest) > 0 && (rest[0] == '"' || rest[0] == '\'') {
				if j := bytes.IndexByte(rest[1:], rest[0]); j >= 0 {
					return string(rest[1 : 1+j])
				}
			}
			return ""
		}
		pi = pi[i+len(param):]
		i = bytes.Index(pi, []byte(param))
	}
	return ""
}

// attrValue returns the decoded value of the attribute whose local name is
// local (any prefix, ASCII case-insensitive; xmlns declarations skipped).
// A value may be quoted with " or ', or unquoted (up to a space); an
// attribute without a value has its name as value.
func attrValue(attrs []byte, local string) (string, bool) {
	for len(attrs) > 0 {
		attrs = bytes.TrimLeft(attrs, " \t\r\n/")
		k := 0
		for k < len(attrs) && attrs[k] != '=' && !isSpace(attrs[k]) {
			k++
		}
		name := attrs[:k]
		attrs = bytes.TrimLeft(attrs[k:], " \t\r\n")
		var val []byte
		if len(attrs) > 0 && attrs[0] == '=' {
			attrs = bytes.TrimLeft(attrs[1:], " \t\r\n")
			if len(attrs) > 0 && (attrs[0] == '"' || attrs[0] == '\'') {
				j := bytes.IndexByte(attrs[1:], attrs[0])
				if j < 0 {
					val, attrs = attrs[1:], nil
				} else {
					val, attrs = attrs[1:1+j], attrs[2+j:]
				}
			} else {
				j := 0
				for j < len(attrs) && !isSpace(attrs[j]) {
					j++
				}
				val, attrs = attrs[:j], attrs[j:]
			}
		} else {
			val = name
		}
		if len(name) == 0 {
			continue
		}
		if bytes.HasPrefix(name, []byte("xmlns")) && (len(name) == 5 || name[5] == ':') {
			continue
		}
		if c := bytes.LastIndexByte(name, ':'); c >= 0 {
			name = name[c+1:]
		}
		if bytes.EqualFold(name, []byte(local)) {
			v, _ := decodeText(nil, val)
			return string(v), true
		}
	}
	return "", false
}

// decodeText appends text to dst with its entity and character references
// decoded: the five XML entities, decimal and hexadecimal references, and
// the HTML entities (&nbsp;, ...); anything else, a bare '&' included, is
// kept as written (bare reports that).
func decodeText(dst, text []byte) (out []byte, bare bool) {
	for {
		i := bytes.IndexByte(text, '&')
		if i < 0 {
			return append(dst, text...), bare
		}
		dst = append(dst, text[:i]...)
		text = text[i:]
		j := bytes.IndexByte(text[:min(len(text), 34)], ';')
		if j < 0 {
			dst, text, bare = append(dst, '&'), text[1:], true
			continue
		}
		ref := text[1:j]
		if r, ok := charRef(ref); ok {
			dst = utf8.AppendRune(dst, r)
		} else if s, ok := xmlEntity(ref); ok {
			dst = append(dst, s...)
		} else {
			dst, text, bare = append(dst, '&'), text[1:], true
			continue
		}
		text = text[j+1:]
	}
}

func charRef(ref []byte) (rune, bool) {
	if len(ref) < 2 || ref[0] != '#' {
		return 0, false
	}
	var n uint64
	var err error
	if ref[1] == 'x' || ref[1] == 'X' {
		n, err = strconv.ParseUint(string(ref[2:]), 16, 32)
	} else {
		n, err = strconv.ParseUint(string(ref[1:]), 10, 32)
	}
	if err != nil || n == 0 || n > utf8.MaxRune || !utf8.ValidRune(rune(n)) {
		return 0, false
	}
	return rune(n), true
}

func xmlEntity(ref []byte) (string, bool) {
	switch string(ref) {
	case "amp":
		return "&", true
	case "lt":
		return "<", true
	case "gt":
		return ">", true
	case "quot":
		return "\"", true
	case "apos":
		return "'", true
	}
	s, ok := xml.HTMLEntity[string(ref)]
	return s, ok
}
