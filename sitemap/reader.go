package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
)

// Entry is one <url> of a urlset, one <sitemap> of an index, one line of a
// text sitemap, one RSS item or one Atom entry.
type Entry struct {
	Loc        string      // absolute http(s) URL; a relative loc is resolved against the document URL (and a warning kept)
	LastMod    time.Time   // zero when absent or unreadable ("unknown", never an error)
	ChangeFreq string      // lower-cased as written, "" when absent
	Priority   float64     // 0..1; -1 when absent or unreadable
	Alternates []Alternate // xhtml:link rel="alternate" of a <url>; nil when none
}

// Alternate is one <xhtml:link rel="alternate" hreflang="..." href="..."/>
// of a <url>: the same page in another language or for another audience.
// Href is absolute (resolved like a loc); Hreflang is as written.
type Alternate struct{ Href, Hreflang string }

// Limits bound one document. A zero (or negative) field means its default.
// Each is enforced while streaming; none needs the whole document.
type Limits struct {
	// MaxBytes bounds the decompressed bytes of the document (default
	// 50 MiB, the sitemaps.org limit). Byte MaxBytes+1 is a LimitError
	// "bytes".
	MaxBytes int64
	// MaxEntries bounds the entries of the document (default 50,000):
	// the start of entry MaxEntries+1 is a LimitError "entries", the first
	// MaxEntries are kept. Rejected entries count.
	MaxEntries int
	// MaxLocLength bounds one loc in bytes (default 2,048): a longer loc
	// rejects its entry (Rejected "loc too long"), it is not fatal.
	MaxLocLength int
	// MaxDepth bounds XML element nesting (default 32): the root is depth
	// 1; an element at depth MaxDepth+1 is a LimitError "depth".
	MaxDepth int
	// MaxTextRun bounds, in bytes, each XML construct: one text node, tag,
	// comment, CDATA section, processing instruction or directive, and the
	// whitespace before the first; in a text sitemap, one line (default
	// 256 KiB). A longer one is a LimitError "text run", found before it is
	// buffered (a text node is never buffered whole).
	MaxTextRun int
	// MaxAlternates bounds the xhtml:link alternates kept for one <url>
	// (default 1,000); further ones are dropped and counted under
	// Rejected "alternates over limit", the entry is kept.
	MaxAlternates int
}

// The default limits (each field of Limits states its value).
const (
	defaultMaxBytes      = 50 << 20
	defaultMaxEntries    = 50_000
	defaultMaxLocLength  = 2_048
	defaultMaxDepth      = 32
	defaultMaxTextRun    = 256 << 10
	defaultMaxAlternates = 1_000
	maxGzipLayers        = 2
	maxWarnings          = 20
	maxFieldBytes        = 128 // lastmod, changefreq, priority, hreflang: longer is unreadable
)

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = defaultMaxBytes
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = defaultMaxEntries
	}
	if l.MaxLocLength <= 0 {
		l.MaxLocLength = defaultMaxLocLength
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = defaultMaxDepth
	}
	if l.MaxTextRun <= 0 {
		l.MaxTextRun = defaultMaxTextRun
	}
	if l.MaxAlternates <= 0 {
		l.MaxAlternates = defaultMaxAlternates
	}
	return l
}

// Field kinds collected from an entry's children.
const (
	fNone = iota
	fLoc
	fLastmod
	fChangefreq
	fPriority
)

// Reader reads one document as a stream: gzip (up to two layers), byte
// order marks, the XML-declared encoding and the format are detected from
// the bytes. It holds one entry and one token at a time, never the whole
// document. A Reader is not safe for concurrent use.
type Reader struct {
	src     io.Reader
	lim     Limits
	base    *url.URL // nil when the document URL is not absolute
	baseStr string

	started bool
	format  Format
	err     error
	count   *countReader
	utf16   bool // transcoded from UTF-16 (BOM or sniffed): a declared encoding is ignored
	bom8    bool // a UTF-8 BOM: a declared encoding is ignored

	// XML
	tok          tokenizer
	newTokenizer func(io.Reader) tokenizer // the tests' encoding/xml reference; nil: xmlScanner
	names        map[string]string         // interned element names
	scratch      []byte
	spec         *docSpec
	stack        []string // lower-cased local names, the root first
	inEntry      bool
	entryDep     int // depth of the entry element
	field        int // fNone or the field being collected
	fieldDep     int
	lmRank       int // rank in spec.lastmod of the lastmod kept; len when none
	buf          []byte
	locSet       bool
	locTooLong   bool
	cur          Entry
	pending      Entry // completed by the start of the next entry
	hasPending   bool
	entries      int

	ampWarned bool

	// text
	lines *bufio.Scanner

	warnings []string
	dropped  int
	rejected map[string]int
}

// NewReader returns a Reader of the document r, fetched from docURL (the
// base of relative locs; "" or a relative URL when unknown: relative locs
// are then rejected). It reads nothing before the first Next.
func NewReader(r io.Reader, docURL string, lim Limits) *Reader {
	rd := &Reader{src: r, lim: lim.withDefaults(), baseStr: docURL, rejected: map[string]int{}}
	if u, err := url.Parse(docURL); err == nil && u.IsAbs() && u.Host != "" {
		rd.base = u
	}
	return rd
}

// Format is the document's format, known after the first call of Next
// (FormatUnknown before, and when the document failed before its format
// was known).
func (r *Reader) Format() Format { return r.format }

// Warnings returns the lenient readings made so far (a relative loc
// resolved, a declared encoding ignored, a stray end tag, ...): the first
// 20, then one line saying how many more there were.
func (r *Reader) Warnings() []string {
	if r.dropped == 0 {
		return r.warnings
	}
	return append(r.warnings[:len(r.warnings):len(r.warnings)], fmt.Sprintf("(%d more warnings)", r.dropped))
}

// Rejected counts the entries skipped so far, by reason (the Reject*
// constants). The map is the Reader's own: read it, do not keep it across
// calls of Next.
func (r *Reader) Rejected() map[string]int { return r.rejected }

// Bytes is the number of decompressed bytes read so far (at most
// Limits.MaxBytes). The tokenizer reads ahead, so it may exceed what the
// entries returned so far cover by a few KiB.
func (r *Reader) Bytes() int64 {
	if r.count == nil {
		return 0
	}
	return r.count.n
}

func (r *Reader) warn(format string, args ...any) {
	if len(r.warnings) >= maxWarnings {
		r.dropped++
		return
	}
	r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
}

// Next returns the next entry, or io.EOF at the clean end of the document.
// A truncated or broken document yields every entry completed before the
// break, then its error; after an error (io.EOF included) Next keeps
// returning it.
func (r *Reader) Next() (Entry, error) {
	if r.err != nil {
		return Entry{}, r.err
	}
	if !r.started {
		r.started = true
		if err := r.start(); err != nil {
			r.err = err
			return Entry{}, err
		}
	}
	var e Entry
	var err error
	if r.format == FormatText {
		e, err = r.nextText()
	} else {
		e, err = r.nextXML()
	}
	if err != nil {
		r.err = err
	}
	return e, err
}

// All is Next as an iterator: it yields every entry with a nil error, then,
// if the document failed, one (Entry{}, err). Breaking out of the loop is
// fine; the Reader can go on with Next after.
func (r *Reader) All() iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		for {
			e, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(Entry{}, err)
				return
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}

// start builds the byte pipeline: gzip layers, the byte count, the BOM and
// the decision between XML and text.
func (r *Reader) start() error {
	br := bufio.NewReaderSize(r.src, 4096)
	for layer := 0; ; layer++ {
		magic, _ := br.Peek(2)
		if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
			break
		}
		if layer == maxGzipLayers {
			return &LimitError{Limit: LimitGzipLayers, Max: maxGzipLayers}
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("sitemap: gzip layer %d: %w", layer+1, err)
		}
		br = bufio.NewReaderSize(zr, 4096)
	}
	r.count = &countReader{r: br, max: r.lim.MaxBytes}
	size := max(4096, r.lim.MaxLocLength+64)
	sr := bufio.NewReaderSize(r.count, size)

	var u io.Reader = sr
	head, _ := sr.Peek(4)
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		sr.Discard(3)
		r.bom8 = true
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{'<', 0, '?', 0}):
		if head[0] == 0xFF {
			sr.Discard(2)
		}
		u = mustCharset("utf-16le", sr)
		r.utf16 = true
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}), bytes.HasPrefix(head, []byte{0, '<', 0, '?'}):
		if head[0] == 0xFE {
			sr.Discard(2)
		}
		u = mustCharset("utf-16be", sr)
		r.utf16 = true
	}
	if r.utf16 {
		sr = bufio.NewReaderSize(u, size)
	}

	// Skip leading whitespace (bounded), then decide.
	skipped := 0
	for {
		b, err := sr.Peek(1)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("%w: empty document", ErrNotSitemap)
			}
			return fmt.Errorf("sitemap: %w", err)
		}
		if !isSpace(b[0]) {
			break
		}
		sr.Discard(1)
		if skipped++; skipped > r.lim.MaxTextRun {
			return &LimitError{Limit: LimitTextRun, Max: int64(r.lim.MaxTextRun)}
		}
	}
	first, _ := sr.Peek(1)
	if first[0] == '<' {
		return r.startXML(sr)
	}
	return r.startText(sr, size)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func mustCharset(label string, r io.Reader) io.Reader {
	cr, err := charset.NewReaderLabel(label, r)
	if err != nil {
		panic("sitemap: charset " + label + " missing: " + err.Error())
	}
	return cr
}

func (r *Reader) startXML(src io.Reader) error {
	if r.newTokenizer != nil {
		r.tok = r.newTokenizer(src)
	} else {
		r.tok = newXMLScanner(src, r.lim.MaxTextRun, r.charsetReader)
	}
	r.stack = make([]string, 0, 8)
	r.names = make(map[string]string)
	return nil
}

// charsetReader decodes the encoding an XML declaration names, or returns
// nil to read on as UTF-8: for UTF-8, when a byte order mark decided
// already, for UTF-16 (the declaration was read as 8-bit text, so it is
// not), and, with a warning, for an unknown label.
func (r *Reader) charsetReader(label string, input io.Reader) io.Reader {
	switch l := strings.ToLower(strings.TrimSpace(label)); {
	case l == "utf-8" || l == "utf8":
		return nil
	case r.utf16 || r.bom8:
		r.warn("declared encoding %q ignored: the byte order mark decides", label)
		return nil
	case strings.HasPrefix(l, "utf-16") || l == "ucs-2":
		r.warn("declared encoding %q ignored: the document is not UTF-16", label)
		return nil
	}
	cr, err := charset.NewReaderLabel(label, input)
	if err != nil {
		r.warn("unknown declared encoding %q read as UTF-8", truncate(label, 40))
		return nil
	}
	return cr
}

func (r *Reader) startText(sr *bufio.Reader, size int) error {
	head, _ := sr.Peek(size)
	line := head
	if i := bytes.IndexAny(head, "\r\n"); i >= 0 {
		line = head[:i]
	}
	line = bytes.TrimRightFunc(line, func(c rune) bool { return c < 0x80 && isSpace(byte(c)) }) // not empty: line[0] is not a space
	if !looksLikeURL(line) {
		what := "neither XML nor a text sitemap"
		switch {
		case line[0] == '{' || line[0] == '[':
			what = "JSON"
		case bytes.ContainsFunc(line, func(c rune) bool { return c < ' ' && c != '\t' || c == utf8.RuneError }):
			what = "binary data"
		}
		if what == "binary data" {
			return fmt.Errorf("%w: %s", ErrNotSitemap, what)
		}
		if len(line) > 40 {
			line = line[:40]
		}
		return fmt.Errorf("%w: %s (first line %q)", ErrNotSitemap, what, line)
	}
	r.format = FormatText
	sc := bufio.NewScanner(sr)
	sc.Buffer(make([]byte, 0, min(4096, r.lim.MaxTextRun+1)), r.lim.MaxTextRun+1)
	sc.Split(scanLines)
	r.lines = sc
	return nil
}

// looksLikeURL: the rule that makes a document a text sitemap: its first
// non-blank line starts with http:// or https:// (any case) followed by a
// host.
func looksLikeURL(b []byte) bool {
	for _, p := range []string{"http://", "https://"} {
		if len(b) > len(p) && strings.EqualFold(string(b[:len(p)]), p) {
			c := b[len(p)]
			return c != '/' && c != '?' && c != '#' && !isSpace(c)
		}
	}
	return false
}

// scanLines splits on \n, \r\n and a lone \r.
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\r' {
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if !atEOF {
				return 0, nil, nil // need to know whether \n follows
			}
		}
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

func (r *Reader) nextText() (Entry, error) {
	for r.lines.Scan() {
		line := bytes.TrimSpace(r.lines.Bytes())
		if len(line) == 0 {
			continue
		}
		if r.entries++; r.entries > r.lim.MaxEntries {
			return Entry{}, &LimitError{Limit: LimitEntries, Max: int64(r.lim.MaxEntries)}
		}
		if len(line) > r.lim.MaxLocLength {
			r.rejected[RejectLocTooLong]++
			continue
		}
		if !looksLikeURL(line) {
			r.rejected[RejectTextNotURL]++
			continue
		}
		loc, reason := r.resolve(string(line))
		if reason != "" {
			r.rejected[reason]++
			continue
		}
		return Entry{Loc: loc, Priority: -1}, nil
	}
	err := r.lines.Err()
	switch {
	case err == nil:
		return Entry{}, io.EOF
	case errors.Is(err, bufio.ErrTooLong):
		return Entry{}, &LimitError{Limit: LimitTextRun, Max: int64(r.lim.MaxTextRun)}
	case errors.Is(err, ErrLimit):
		return Entry{}, err
	}
	return Entry{}, fmt.Errorf("sitemap: reading text: %w", err)
}

// resolve makes a loc absolute and checks it; reason is "" when it is
// kept.
func (r *Reader) resolve(s string) (loc, reason string) {
	if strings.ContainsAny(s, "\t\r\n") {
		s = strings.Map(func(c rune) rune {
			if c == '\t' || c == '\r' || c == '\n' {
				return -1
			}
			return c
		}, s)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", RejectNoLoc
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", RejectUnparsable
	}
	resolved := false
	if !u.IsAbs() {
		resolved = true
		if r.base == nil {
			return "", RejectRelativeNoDoc
		}
		u = r.base.ResolveReference(u)
		r.warn("relative loc %q resolved against %s", truncate(s, 80), r.baseStr)
	}
	if sc := strings.ToLower(u.Scheme); sc != "http" && sc != "https" {
		return "", RejectNotHTTP
	}
	if u.Host == "" {
		return "", RejectNoHost
	}
	out := s // as written when u.String() would give it back unchanged
	if resolved || !plainURL(s) {
		out = u.String()
	}
	if len(out) > r.lim.MaxLocLength {
		return "", RejectLocTooLong
	}
	return out, ""
}

// plainURL: s (an absolute URL that parsed) has a lower-case http(s)
// scheme and holds only bytes that url.URL.String writes back as they are:
// no percent sign (whose escapes String may rewrite), no fragment, no
// userinfo (String escapes it).
func plainURL(s string) bool {
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '%' || c == '#' || c == '@' || c == '"' || c == '<' || c == '>' || c == '\\' || c == '^' || c == '`' || c == '{' || c == '|' || c == '}' {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func (r *Reader) nextXML() (Entry, error) {
	for {
		if r.spec != nil && len(r.stack) == 0 {
			return Entry{}, io.EOF // the root is closed: what follows is not read
		}
		t, err := r.tok.next()
		if err != nil {
			return Entry{}, r.xmlError(err)
		}
		switch t.kind {
		case tokStart:
			if e := r.startElement(t); e != nil {
				return Entry{}, e
			}
			if r.hasPending {
				r.hasPending = false
				return r.pending, nil
			}
		case tokEnd:
			if e, ok := r.endElement(t); ok {
				return e, nil
			}
		case tokText:
			if r.field != fNone && len(r.stack) == r.fieldDep {
				r.collect(t.text, t.literal)
			}
		case tokDirective:
			if r.spec == nil {
				if err := r.directive(t.text); err != nil {
					return Entry{}, err
				}
			}
		}
	}
}

func (r *Reader) xmlError(err error) error {
	var le *LimitError
	switch {
	case errors.As(err, &le), errors.Is(err, ErrDoctype):
		return err
	case err == io.EOF:
		if r.spec == nil {
			return fmt.Errorf("%w: no root element", ErrNotSitemap)
		}
		return fmt.Errorf("sitemap: document truncated inside <%s>: %w", r.stack[len(r.stack)-1], io.ErrUnexpectedEOF)
	}
	if r.spec == nil {
		return fmt.Errorf("%w: XML broken before the root element: %w", ErrNotSitemap, err)
	}
	if se := (*xml.SyntaxError)(nil); errors.As(err, &se) && se.Msg == "unexpected EOF" {
		return fmt.Errorf("sitemap: document truncated: %w (%w)", io.ErrUnexpectedEOF, err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	return fmt.Errorf("sitemap: %w", err)
}

func (r *Reader) directive(d []byte) error {
	s := strings.TrimSpace(string(d))
	if len(s) >= 7 && strings.EqualFold(s[:7], "doctype") {
		if strings.ContainsRune(s, '[') {
			return ErrDoctype
		}
		if f := strings.Fields(s[7:]); len(f) > 0 && strings.EqualFold(f[0], "html") {
			return fmt.Errorf("%w: an HTML page", ErrNotSitemap)
		}
	}
	return nil
}

func attr(t token, name string) (string, bool) { return attrValue(t.attrs, name) }

// elemName is the name an element is kept under on the stack: its local
// name (the prefix dropped), lower-cased, at most maxFieldBytes bytes (a
// longer one is no name this package reads). Names are interned: a
// document's few distinct names cost one string each.
func (r *Reader) elemName(qname []byte) string {
	if c := bytes.LastIndexByte(qname, ':'); c >= 0 {
		qname = qname[c+1:]
	}
	if len(qname) > maxFieldBytes {
		qname = qname[:maxFieldBytes]
	}
	b := qname
	for _, c := range qname {
		if 'A' <= c && c <= 'Z' {
			b = append(r.scratch[:0], qname...)
			for i, c := range b {
				if 'A' <= c && c <= 'Z' {
					b[i] = c + 'a' - 'A'
				}
			}
			r.scratch = b
			break
		}
	}
	if s, ok := r.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(r.names) < 256 {
		r.names[s] = s
	}
	return s
}

func (r *Reader) startElement(t token) error {
	name := r.elemName(t.name)
	if len(r.stack) >= r.lim.MaxDepth {
		return &LimitError{Limit: LimitDepth, Max: int64(r.lim.MaxDepth)}
	}
	r.stack = append(r.stack, name)
	depth := len(r.stack)
	if r.spec == nil {
		r.spec = specFor(name)
		if r.spec == nil {
			if what, ok := notSitemapRoots[name]; ok {
				return fmt.Errorf("%w: %s", ErrNotSitemap, what)
			}
			return fmt.Errorf("%w: XML with root element <%s>", ErrNotSitemap, truncate(string(t.name), 40))
		}
		r.format = r.spec.format
		return nil
	}
	sp := r.spec
	if r.inEntry && depth == r.entryDep+1 && name == sp.path[len(sp.path)-1] {
		// <url><loc>a</loc><url>: the first <url> was not closed.
		r.warn("<%s> not closed before the next one", name)
		r.stack = r.stack[:depth-1]
		if e, ok := r.closeTo(r.entryDep - 1); ok {
			r.pending, r.hasPending = e, true
		}
		r.stack = append(r.stack, name)
		depth = len(r.stack)
	}
	if !r.inEntry {
		if depth == 1+len(sp.path) && r.atEntryPath() {
			if r.entries++; r.entries > r.lim.MaxEntries {
				return &LimitError{Limit: LimitEntries, Max: int64(r.lim.MaxEntries)}
			}
			r.inEntry, r.entryDep = true, depth
			r.cur = Entry{Priority: -1}
			r.locSet, r.locTooLong = false, false
			r.lmRank = len(sp.lastmod)
		}
		return nil
	}
	if depth != r.entryDep+1 {
		return nil
	}
	switch {
	case name == sp.loc && sp.locHref:
		if r.locSet {
			return nil
		}
		if rel, ok := attr(t, "rel"); ok && !strings.EqualFold(strings.TrimSpace(rel), "alternate") {
			return nil
		}
		if href, ok := attr(t, "href"); ok {
			r.setLoc(href)
		}
		return nil
	case name == sp.loc:
		if r.locSet {
			return nil // a second loc: the first wins
		}
		if href, ok := attr(t, "href"); ok && sp.format == FormatRSS {
			r.setLoc(href) // <atom:link href> in an item; replaced by a text link
		}
		r.locTooLong = false
		r.startField(fLoc, depth)
		return nil
	}
	if sp.page && name == "link" {
		r.alternate(t)
		return nil
	}
	for i, lm := range sp.lastmod {
		if name == lm && i < r.lmRank {
			r.lmRank = i
			r.startField(fLastmod, depth)
			return nil
		}
	}
	if sp.page {
		switch name {
		case "changefreq":
			r.startField(fChangefreq, depth)
		case "priority":
			r.startField(fPriority, depth)
		}
	}
	return nil
}

// atEntryPath: the stack (root excluded) is the spec's path to an entry.
func (r *Reader) atEntryPath() bool {
	for i, p := range r.spec.path {
		if r.stack[i+1] != p {
			return false
		}
	}
	return true
}

func (r *Reader) startField(f, depth int) {
	r.field, r.fieldDep = f, depth
	r.buf = r.buf[:0]
}

// collect appends a piece of a field's text, decoded, keeping at most the
// field's limit (a loc beyond it is marked too long).
func (r *Reader) collect(b []byte, literal bool) {
	limit := maxFieldBytes
	if r.field == fLoc {
		limit = r.lim.MaxLocLength + 64 // room for surrounding whitespace
	}
	room := limit - len(r.buf)
	if len(b) > 8*room+64 { // decoding never makes text longer, and rarely 8 times shorter
		b = b[:max(8*room+64, 0)]
		if r.field == fLoc {
			r.locTooLong = true
		}
	}
	if literal {
		r.buf = append(r.buf, b...)
	} else {
		var bare bool
		if r.buf, bare = decodeText(r.buf, b); bare && !r.ampWarned {
			r.ampWarned = true
			r.warn("a bare & read as written")
		}
	}
	if len(r.buf) > limit {
		r.buf = r.buf[:limit]
		if r.field == fLoc {
			r.locTooLong = true
		}
	}
}

func (r *Reader) setLoc(s string) {
	r.cur.Loc = s
	r.locSet = true
	r.locTooLong = len(s) > r.lim.MaxLocLength+64
}

func (r *Reader) alternate(t token) {
	rel, _ := attr(t, "rel")
	href, ok := attr(t, "href")
	if !ok || !strings.EqualFold(strings.TrimSpace(rel), "alternate") {
		return
	}
	if len(r.cur.Alternates) >= r.lim.MaxAlternates {
		r.rejected[RejectAlternates]++
		return
	}
	if len(href) > r.lim.MaxLocLength+64 {
		r.rejected[RejectLocTooLong]++
		return
	}
	h, reason := r.resolve(href)
	if reason != "" {
		r.rejected[reason]++
		return
	}
	lang, _ := attr(t, "hreflang")
	if lang = strings.TrimSpace(lang); len(lang) > maxFieldBytes {
		lang = "" // unreadable; and a substring would keep the whole tag alive
	}
	r.cur.Alternates = append(r.cur.Alternates, Alternate{Href: h, Hreflang: lang})
}

func (r *Reader) endField() {
	if r.field == fNone {
		return
	}
	s := string(bytes.TrimSpace(r.buf))
	switch r.field {
	case fLoc:
		if s != "" || !r.locSet {
			r.cur.Loc = s
			r.locSet = true
		}
	case fLastmod:
		r.cur.LastMod = parseLastmod(s)
	case fChangefreq:
		r.cur.ChangeFreq = strings.ToLower(s)
	case fPriority:
		if p, err := strconv.ParseFloat(s, 64); err == nil && p >= 0 && p <= 1 {
			r.cur.Priority = p
		}
	}
	r.field = fNone
}

// endElement closes the innermost open element of that name, and any left
// open inside it (a missing end tag is forgiven); an end tag matching
// nothing open is ignored with a warning. ok when an entry was completed
// and accepted.
func (r *Reader) endElement(t token) (e Entry, ok bool) {
	name := r.elemName(t.name)
	i := len(r.stack) - 1
	for i >= 0 && r.stack[i] != name {
		i--
	}
	if i < 0 {
		r.warn("end tag </%s> without a start tag ignored", truncate(string(t.name), 40))
		return Entry{}, false
	}
	if i < len(r.stack)-1 {
		r.warn("<%s> closed by </%s>", truncate(r.stack[len(r.stack)-1], 40), truncate(string(t.name), 40))
	}
	return r.closeTo(i)
}

// closeTo pops the open elements down to n of them, finishing the field and
// the entry they close.
func (r *Reader) closeTo(n int) (e Entry, ok bool) {
	for len(r.stack) > n {
		depth := len(r.stack)
		if r.field != fNone && depth == r.fieldDep {
			r.endField()
		}
		if r.inEntry && depth == r.entryDep {
			r.inEntry = false
			if en, accepted := r.finishEntry(); accepted {
				e, ok = en, true
			}
		}
		r.stack = r.stack[:depth-1]
	}
	return e, ok
}

func (r *Reader) finishEntry() (Entry, bool) {
	e := r.cur
	r.cur = Entry{}
	if r.locTooLong {
		r.rejected[RejectLocTooLong]++
		return Entry{}, false
	}
	loc, reason := r.resolve(e.Loc)
	if reason != "" {
		r.rejected[reason]++
		return Entry{}, false
	}
	e.Loc = loc
	return e, true
}
