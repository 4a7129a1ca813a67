// RSL: the package reads RSL 1.0 (Really Simple Licensing, RSL-SPEC-1.0 with
// its errata): licence documents that say, per URL scope, which uses of
// content are licensed and on what terms, and the pointers that lead to
// them (robots.txt License lines, Link header fields, HTML link elements).
//
// The model: a [RSL] holds <content> elements, each a URL scope with
// one or more <license> elements; a licence permits and prohibits usage
// tokens (and users and regions), and may ask for payment, reporting or a
// licence-server token. [RSL.Decide] answers whether a use (a
// purpose, with the user and region when known) of a URL is licensed, and
// which content element and licence decided; terms it cannot act on
// (payment, reporting, server) are surfaced as data, never acted on.
//
// Decisions, with the passage they follow:
//
//   - Parsing is namespace-aware: the root must be <rsl> in
//     "https://rslstandard.org/rsl"; an element of that namespace that the
//     specification does not define where it appears makes the document
//     non-conformant (an error), elements of other namespaces are skipped.
//     A <content> needs a url attribute and at least one <license>; a
//     second <permits> or <prohibits> of one type in a licence, or a
//     second <payment>, is an error. A document that fails to parse
//     licenses nothing: "no fallback to permitted".
//
//   - Token lists are split at white space and commas (1.0 uses spaces,
//     0.9 commas). Usage and user tokens compare case-insensitively; geo
//     tokens are ISO 3166-1 alpha-2 codes or "EU", which stands for each
//     member state. A <permits> or <prohibits> without a type is "usage";
//     one of a type this package does not know is kept but not applied.
//
//   - Scope ("narrower scope wins", order irrelevant): a url is an
//     absolute URL (its scheme and host must equal the target's, its path
//     and query are the pattern), a robots.txt path pattern starting with
//     "/" or "*" (any host the document is applied to), or "" (the whole
//     placement). Among the content elements whose url matches, the one
//     with the longest pattern is the narrowest, as RFC 9309 measures
//     specificity (octets of the normalised pattern, "$" counted); content
//     elements tied at that length all apply, and the use is licensed only
//     if each of them licenses it (the most restrictive combination).
//
//   - Usage tokens onto purposes: a purpose is covered by its own token and
//     by the tokens that are supersets of it:
//     train-ai by ai-train, ai-all, all; ai-input by ai-input, ai-all, all;
//     ai-index by ai-index, ai-all, all; search by search, all. ai-all does
//     not cover search ("search" excludes AI summaries; "ai-all" is AI use
//     only), and ai-input does not imply ai-index nor the reverse: each
//     names its own use.
//
//   - Within a content element, each licence is an alternative offer: the
//     use is licensed if one licence grants it. A licence grants it when
//     no prohibits list names a covering token (or the user or region),
//     and every permits list of a known type names a covering token (or
//     the user or region): a permits list is closed, and permitted and
//     prohibited at once is not licensed. An undeclared user or region
//     meets no list of that type, permits or prohibits: a licence that
//     lists users (regions) licenses only a use that declares its own.
//     [RSLVerdict.Unmet] names the user or geo term not met.
//
//   - [RSLVerdict.License] is the granting licence, a free one (no payment or
//     payment type "free") preferred. Its payment and reporting terms, and
//     its content's server, remain for the caller to meet; a caller that
//     cannot (an unrecognised reporting profile, a server token it will
//     not fetch) treats the use as unlicensed.
//
//   - Pointers: robots.txt License lines apply by group (dialect.Ruleset.Licenses:
//     the crawler's group's lines if it has any, else the lines before the
//     first group); Link header fields ([licenseLinks]) and <link> elements
//     of the HTML head ([htmlLicenses]) count when rel holds "license" and
//     the type is application/rsl+xml: any other licence link (a Creative
//     Commons deed) is recorded, never fetched. A pointed-to document
//     whose root is not named rsl is not RSL: it decides nothing. Every
//     RSL pointer is a candidate licence; fetching them and combining their verdicts (the
//     specification asks for the most restrictive combination, a
//     page-level pointer before a site-wide one) is the caller's. Not read
//     here: documents embedded in <script type="application/rsl+xml">,
//     RSS feeds, and file metadata (XMP, ID3, EPUB, PNG).
//
//   - A content url with a host matches that exact host (port included, as
//     written): "https://example.com/" does not cover
//     "https://example.com:443/".
//
// Limits: a document is read up to [MaxRSLSize] bytes and holds at most
// [MaxContents] content elements; text values are cut at [MaxText] bytes.

package usage

import "time"

// rslNamespace is the XML namespace of RSL documents.
const rslNamespace = "https://rslstandard.org/rsl"

// RSLMediaType is the media type of RSL documents.
const RSLMediaType = "application/rsl+xml"

// The limits on a document.
const (
	MaxRSLSize  = 1 << 20 // bytes
	MaxContents = 4096    // <content> elements
	MaxText     = 4096    // bytes of one element's text
)

// rslDefaultMaxAge is how long a document stays valid without a max-age
// attribute: 30 days.
const rslDefaultMaxAge = 30 * 24 * time.Hour

// RSL is a parsed RSL document.
type RSL struct {
	// MaxAge is how long the document and its discovery point stay valid
	// (max-age, in days): rslDefaultMaxAge when absent or not a positive
	// integer.
	MaxAge   time.Duration
	Contents []RSLContent
}

// RSLContent is a <content> element: a URL scope and its licences.
type RSLContent struct {
	Index     int    // its position among the document's content elements
	URL       string // the url attribute, as written
	Server    string // the server attribute: a licence server to get a token from before use, "" for none
	Encrypted bool   // encrypted="true"
	LastMod   string // the lastmod attribute, as written
	Licenses  []RSLLicense

	scope scope
}

// RSLLicense is a <license> element.
type RSLLicense struct {
	// Permits and Prohibits hold the tokens of the <permits> and
	// <prohibits> elements by type ("usage", "user", "geo"): a type
	// present is a stated list, even an empty one. Usage and user tokens
	// are lower-cased, geo tokens upper-cased.
	Permits, Prohibits map[string][]string
	Payment            *Payment // nil: free
	Reporting          []Reporting
	Legal              []Legal
}

// Payment is a <payment> element.
type Payment struct {
	Type     string // purchase, subscription, training, crawl, use, contribution, attribution, free
	Standard []string
	Custom   []string
	Amount   []Amount
	Accepts  []Accepts
}

// Amount is an <amount> element.
type Amount struct {
	Value    string `json:"value"`
	Currency string `json:"currency"`
}

// Accepts is an <accepts> element: a payment method.
type Accepts struct{ Type, Value string }

// Reporting is a <reporting> element: a duty to report use.
type Reporting struct{ Type, Profile, Endpoint string }

// Legal is a <legal> element: a warranty, disclaimer, attestation, contact
// or proof.
type Legal struct{ Type, Value string }

// free reports whether the licence asks for no payment.
func (l *RSLLicense) free() bool { return l.Payment == nil || l.Payment.Type == "free" }
