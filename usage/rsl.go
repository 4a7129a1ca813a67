// RSL: the package reads RSL 1.0 (Really Simple Licensing, RSL-SPEC-1.0 with
// its errata): licence documents that say, per URL scope, which uses of
// content are licensed and on what terms. [RSL.Decide] answers whether a
// use of a URL is licensed; the terms it cannot act on (payment,
// reporting, server) are surfaced as data, never acted on. Decisions, with
// the passage they follow:
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
//     absolute URL (its scheme and host, port included as written, must
//     equal the target's; its path and query are the pattern), a
//     robots.txt path pattern starting with "/" or "*", or "" (the whole
//     placement). The longest matching pattern, as RFC 9309 measures
//     specificity, is the narrowest; content elements tied at that length
//     all apply, and the use is licensed only if each of them licenses it
//     (the most restrictive combination).
//
//   - A purpose is covered by its own usage token and by the tokens that
//     are supersets of it ([covers]): ai-all does not cover search
//     ("search" excludes AI summaries), and ai-input and ai-index do not
//     imply each other. Each licence of a content element is an
//     alternative offer; a permits list is closed, and permitted and
//     prohibited at once is not licensed.
//
//   - Not read: documents embedded in <script type="application/rsl+xml">,
//     RSS feeds, and file metadata (XMP, ID3, EPUB, PNG).

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
