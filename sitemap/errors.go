package sitemap

import (
	"errors"
	"fmt"
)

// ErrNotSitemap reports a document that is not a sitemap at all: an HTML
// page (a "soft 404" served with status 200), JSON, an XML document with
// another root element, a text file whose first line is not an http(s) URL,
// an empty body. It is returned wrapped with what the document looked like
// ("sitemap: not a sitemap: an HTML page"); nothing of it is parsed. It
// judges the bytes read only: a document whose reading failed before they
// showed what it is (a connection lost, a DocTimeout, a broken gzip stream)
// ends with the read's error instead.
var ErrNotSitemap = errors.New("sitemap: not a sitemap")

// ErrDoctype reports a document type declaration with an internal subset
// (<!DOCTYPE x [ ... ]>), the vehicle of entity-expansion attacks, before
// the root element. It is refused as soon as its '[' is seen in the byte
// stream; entities are never expanded anyway. A DOCTYPE without an internal
// subset is allowed (and ignored); <!DOCTYPE html> is ErrNotSitemap.
var ErrDoctype = errors.New("sitemap: DOCTYPE with an internal subset refused")

// ErrLimit is the target for errors.Is matching every [*LimitError].
var ErrLimit = errors.New("sitemap: limit reached")

// The names of the limits a [*LimitError] reports in its Limit field.
const (
	LimitBytes      = "bytes"       // Limits.MaxBytes: decompressed bytes of the document
	LimitEntries    = "entries"     // Limits.MaxEntries: entries of the document
	LimitDepth      = "depth"       // Limits.MaxDepth: XML element nesting
	LimitTextRun    = "text run"    // Limits.MaxTextRun: one text node, tag, comment, line, ...
	LimitGzipLayers = "gzip layers" // a third gzip layer (the maximum is two, fixed)
)

// LimitError reports a per-document limit reached while streaming. Every
// entry read before it was returned; the rest of the document is not read.
// errors.Is(err, ErrLimit) is true for every LimitError.
type LimitError struct {
	Limit string // one of the Limit* names
	Max   int64  // the limit in force (bytes, entries, levels or layers)
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("sitemap: %s limit reached (max %d)", e.Limit, e.Max)
}

// Is makes errors.Is(err, ErrLimit) true.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// The reasons under which [Reader.Rejected] counts skipped entries. A
// rejected entry is counted, never returned, and never fatal.
const (
	RejectNoLoc         = "empty loc"                     // the entry has no loc (or an empty one)
	RejectLocTooLong    = "loc too long"                  // longer than Limits.MaxLocLength bytes
	RejectUnparsable    = "unparsable loc"                // net/url cannot parse it
	RejectNotHTTP       = "not http(s)"                   // another scheme (ftp:, javascript:, mailto:, ...)
	RejectNoHost        = "no host"                       // http(s) without a host
	RejectRelativeNoDoc = "relative loc, no base"         // relative, and the document URL is not absolute
	RejectTextNotURL    = "text line not an absolute URL" // a text sitemap line that is not an absolute http(s) URL
	RejectAlternates    = "alternates over limit"         // xhtml:link beyond Limits.MaxAlternates in one <url> (the entry is kept)
)
