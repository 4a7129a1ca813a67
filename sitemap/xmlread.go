package sitemap

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/net/html/charset"
)

// Field kinds collected from an entry's children.
const (
	fNone = iota
	fLoc
	fLastmod
	fChangefreq
	fPriority
)

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
	if rerr := r.readErr(); r.spec == nil && (rerr == nil || !errors.Is(err, rerr)) {
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
