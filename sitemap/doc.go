// Package sitemap reads sitemaps as streams and walks them over HTTP. A
// [Reader] yields the entries of one document (sitemaps.org urlset or
// sitemap index, plain text, RSS 2.0 or Atom, gzipped or not) one at a
// time, within limits enforced while reading and with no network I/O; a
// [Walker] fetches documents, follows indexes and hands each page over.
//
// It knows nothing of Colly.
//
//	r := sitemap.NewReader(resp.Body, "https://example.com/sitemap.xml.gz", sitemap.Limits{})
//	for e, err := range r.All() {
//		if err != nil { ... } // every entry before the error was yielded
//		fmt.Println(e.Loc, e.LastMod)
//	}
//	// r.Format(), r.Warnings(), r.Rejected(), r.Bytes()
//
// # Format detection
//
// The format and the compression are decided from the bytes, never from a
// Content-Type or a file name:
//
//   - gzip: a document starting with the gzip magic (1f 8b) is gunzipped, and
//     so is the result if it starts with the magic again (a .xml.gz served
//     with Content-Encoding: gzip). A third layer is refused with a
//     [*LimitError] "gzip layers": no real server produces one, and each
//     layer multiplies what a bomb can hold.
//   - byte order marks: a UTF-8 BOM is dropped; a UTF-16 BOM (LE or BE), or
//     "<?" in UTF-16 without one, makes the document UTF-16, transcoded to
//     UTF-8. A BOM wins over the encoding an XML declaration names.
//   - after leading whitespace, a document starting with '<' is XML; its
//     root element decides: urlset ([FormatURLSet]), sitemapindex
//     ([FormatIndex]), rss or rdf:RDF ([FormatRSS]), feed ([FormatAtom]),
//     whatever their namespace (none, the sitemaps.org one, or any other)
//     and in any letter case. An html root or <!DOCTYPE html> (a soft 404
//     served with status 200), or any other root, is [ErrNotSitemap]:
//     nothing of it is parsed.
//   - otherwise the document is a text sitemap ([FormatText]) when its first
//     non-blank line starts with http:// or https:// (any case) and a host;
//     anything else (JSON, a plain-text error page, binary) is
//     [ErrNotSitemap].
//
// # What an entry is
//
// In a urlset, an entry is a <url> child of the root with its <loc>,
// <lastmod>, <changefreq>, <priority> and <xhtml:link rel="alternate">
// children; in an index, a <sitemap> with <loc> and <lastmod>; in RSS an
// <item> with <link> (its text, or the href of an <atom:link>) and <pubDate>
// (or dc:date); in Atom an <entry> with the href of its first <link> whose
// rel is absent or "alternate", and <updated> (else <published>). Only these
// positions count: extension elements (<image:image><image:loc>,
// <video:video><video:content_loc>, <news:news>, ...) stand one level
// deeper and never become entries or locs. A text sitemap's entries are its
// non-blank lines.
//
// # Lenient readings
//
// Real sitemaps are sloppy; these are read, not refused:
//
//   - whitespace and line breaks around and inside a loc (tabs and line
//     breaks are removed, surrounding spaces trimmed);
//   - a bare '&' is kept as written (one warning); the XML entities,
//     character references and HTML entities (&nbsp;, &eacute;) are decoded,
//     an unknown entity is kept as written;
//   - a relative loc is resolved against the document URL given to
//     [NewReader], with a warning; without an absolute document URL it is
//     rejected;
//   - the encoding an XML declaration names (ISO-8859-1, windows-1252,
//     Shift_JIS, ... anything golang.org/x/net/html/charset knows) is decoded;
//     an unknown one is read as UTF-8 with a warning;
//   - lastmod as a W3C datetime (with or without seconds, fraction, time
//     zone), a date, a year-month or a year, with a space for the 'T', an
//     offset without a colon, or RFC 1123/822/850 forms; a form without a
//     time zone is UTC; an unreadable lastmod is the zero Time ("unknown"),
//     never an error; a priority outside 0..1 or unreadable is -1;
//   - a missing end tag is forgiven (the enclosing end tag closes it) and a
//     stray end tag is ignored, with a warning; after the root element's
//     end tag nothing more is read.
//
// An entry that cannot give a page URL is skipped and counted by reason in
// [Reader.Rejected] (the Reject* constants): no or empty loc, loc too long,
// unparsable, not http(s), no host, relative without a base, a text line
// that is not an absolute URL. A rejection is never fatal.
//
// # Limits
//
// Every limit is per document, enforced while streaming, and has a default
// used when its [Limits] field is zero:
//
//	MaxBytes       50 MiB   decompressed bytes                 LimitError "bytes"
//	MaxEntries     50,000   entries (rejected ones included)   LimitError "entries"
//	MaxLocLength   2,048    bytes of one loc                   entry rejected, "loc too long"
//	MaxDepth       32       XML element nesting (root = 1)     LimitError "depth"
//	MaxTextRun     256 KiB  one text node, tag, comment,       LimitError "text run"
//	                        CDATA, PI, directive or text line
//	MaxAlternates  1,000    xhtml:link alternates of one <url> further ones dropped, counted
//	gzip layers    2        fixed                              LimitError "gzip layers"
//
// The XML is read by a small purpose-built tokenizer (not encoding/xml,
// which reads byte by byte and allocates every name; the tests hold the
// two to the same entries). It reads through one buffer of 32 KiB that
// grows only for a single tag, comment, CDATA section, processing
// instruction or directive longer than that, up to MaxTextRun; a longer one
// is refused before it is buffered. Character data is passed on in pieces,
// so a text node costs no memory, only its run is counted; entities are
// decoded only in the values read. With the defaults a Reader holds the
// buffer, the current entry and the gzip windows (32 KiB per layer),
// whatever the document's size: 3.7 MB peak heap for a 15 MB urlset (see
// docs/performance.md).
//
// # Errors
//
// Next returns io.EOF at the clean end. A document that fails yields every
// entry completed before the failure, then the error, and keeps returning
// it:
//
//   - [ErrNotSitemap] (wrapped with what it looked like): not a sitemap, nothing read;
//   - [ErrDoctype]: a DOCTYPE with an internal subset before the root element,
//     refused when its '[' is seen (entities are never expanded);
//   - [*LimitError] (errors.Is(err, [ErrLimit])): a limit above was reached;
//   - an error wrapping io.ErrUnexpectedEOF: the document ends inside an element
//     (truncated); an entry whose end tag was not read is not returned;
//   - "sitemap: XML syntax error at byte N: ...", a gzip error or the reader's
//     own error: a broken document or a failed read. Syntax is checked only
//     as far as reading needs (a '<' without a name, a '<' inside a tag);
//     names, attribute syntax and character ranges are not validated.
//
// # Walking
//
// A [Walker] ([NewWalker], [Walker.Walk]) fetches sitemaps and follows
// indexes with this Reader, one document at a time, adding the limits that
// span documents (index nesting, sitemaps per walk, a visited set), robots
// checks, retries and scope; its [Config] and [Report] document them.
// (This paragraph is the walker's to extend.)
package sitemap
