package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/url"
	"time"

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
	l.MaxBytes = orDefault(l.MaxBytes, defaultMaxBytes)
	l.MaxEntries = orDefault(l.MaxEntries, defaultMaxEntries)
	l.MaxLocLength = orDefault(l.MaxLocLength, defaultMaxLocLength)
	l.MaxDepth = orDefault(l.MaxDepth, defaultMaxDepth)
	l.MaxTextRun = orDefault(l.MaxTextRun, defaultMaxTextRun)
	l.MaxAlternates = orDefault(l.MaxAlternates, defaultMaxAlternates)
	return l
}

// orDefault returns v, or def when v is zero or less.
func orDefault[T ~int | ~int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

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
		magic, err := br.Peek(2)
		if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
			if len(magic) < 2 && err != nil && err != io.EOF {
				return fmt.Errorf("sitemap: %w", err)
			}
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

// readErr is the error that stopped the reading of the document's bytes
// (the source's, or a broken gzip stream's), or nil when none did: at the
// end of the bytes or at Limits.MaxBytes, what was read is all there is to
// judge the document by. After a failure it is not: a document cut by one
// is never ErrNotSitemap.
func (r *Reader) readErr() error {
	if r.count == nil || r.count.err == io.EOF || errors.Is(r.count.err, ErrLimit) {
		return nil
	}
	return r.count.err
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
