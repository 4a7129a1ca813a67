// Package dialect reads robots.txt the way one chosen crawler does and
// answers whether that crawler may fetch a URL; it does no network I/O. A
// [Dialect] parses a body into an immutable [*Robots], whose [Robots.For]
// selects the rules in force for a crawler's product tokens as a [*Ruleset],
// whose [Ruleset.Check] decides a path with a [Verdict] naming the rule and
// line that decided.
//
// Four dialects are provided, each a package variable and selectable by name
// ([Lookup]):
//
//	RFC9309     "rfc9309"     RFC 9309 (the Robots Exclusion Protocol), read strictly
//	Google      "google"      Google's crawlers, as documented by Google and as its
//	                          open-source parser behaves
//	CocCoc      "coccoc"      Coc Coc's robots
//	Koster1994  "koster1994"  the original 1994 standard by Martijn Koster
//
// Every difference between the dialects is data: a [Dialect] value holds a
// table of behaviours (see the unexported spec type) and the parser and the
// matcher consult it; there are no per-dialect code paths.
//
// # Use
//
// Parse a body once with [Dialect.Parse]; the resulting [*Robots] is
// immutable and safe for concurrent use. Select the rules in force for a
// crawler with [Robots.For], which returns a [*Ruleset] (also immutable and
// safe for concurrent use) whose [Ruleset.Check] answers for a path in about
// the time of a map lookup without allocating. For does no indexing: a
// Ruleset answers its first checks by going over its rules, as Google's
// parser does, and indexes them once it has been asked enough to repay the
// cost, so that a file checked for a URL or two costs little more than its
// parse.
//
// Parsing never fails: what cannot be read becomes a [Warning] with its line
// number and the rest is used. Matching is linear in the length of the path
// times the length of the pattern at worst; no input backtracks.
//
// # Choices where the sources are silent
//
//   - A UTF-8 byte-order mark at the start of the body is skipped in every
//     dialect (Google documents it; the others are lenient the same way).
//   - Bodies are cut at 500 KiB (512,000 bytes) in every dialect; a line cut
//     in the middle by that limit is dropped whole, so that a half rule never
//     applies, and a warning says so.
//   - rfc9309 and coccoc: a user-agent value, and a crawler's token, are
//     each reduced to a product token, their leading run of [A-Za-z0-9_-]:
//     "Googlebot/2.1" is read as "Googlebot", "MJ12bot" whole. (RFC 9309
//     §2.2.1 allows only letters, '_' and '-' in a product token; digits are
//     kept so that "MJ12bot" is not read as "MJ", which would also match
//     "MJ99bot".) google keeps Google's parser: the value's leading run of
//     [A-Za-z_-] ("MJ12bot" is read as "MJ") compared with the crawler's
//     token whole, so a token with other characters names no group.
//     koster1994 compares each whitespace-separated name of the value with
//     the crawler's token whole, case-insensitively, digits and all (seed
//     004). [Dialect.AgentToken] says what a dialect compares of a token.
//   - Only Allow and Disallow lines end a group's user-agent lines, in every
//     dialect: a Sitemap, Crawl-delay (valid or not) or unknown line between
//     user-agent lines does not, so "User-agent: a / Crawl-delay: 5 /
//     User-agent: b / Disallow: /" is one group whose rule binds a and b (RFC
//     9309 §2.2.4: other records must not interfere with the groups; Google
//     says so of Sitemap). coccoc reads files so too: its seed ignores empty
//     lines and never says what ends a group, and with Crawl-delay read per
//     user-agent line (below) the seed's Crawl-delay example keeps its stated
//     meaning ("*" 10 s, coccocbot 5 s).
//   - rfc9309 and coccoc: a valid Crawl-delay belongs to the user-agent lines
//     above it in its group that have none yet, so that in "User-agent: a /
//     Crawl-delay: 5 / User-agent: b / Crawl-delay: 7" a and b share the
//     group's rules and keep 5 s and 7 s; an invalid one is skipped ("b" in
//     "User-agent: b / Crawl-delay: -1 / User-agent: c / Crawl-delay: 8" gets
//     8 s). A crawler obeys the first, in file order, of the Crawl-delays of
//     the user-agent lines that selected its groups (its token's, or the "*"
//     lines), not a delay written for another name of the same group.
//   - rfc9309 and coccoc: a valid Crawl-delay before the first User-agent
//     line, which no source places, is the file's: it applies to every
//     crawler that gets none from its user-agent lines, also when no group
//     applies (the first such line counts). A site that writes one asks it of
//     every crawler; ignoring it would be the impolite reading.
//   - coccoc and koster1994: an empty Disallow "allows everything": it is kept
//     as the weakest possible rule, an allow that matches every path, so it
//     decides (and is reported) only when no other rule matches.
//   - koster1994: a record that does not start with a User-agent line is
//     ignored up to the next blank line; a User-agent line after Disallow
//     lines of the same record starts a new record; several records for the
//     same name are merged; paths are compared byte for byte, without
//     percent-decoding.
//   - The crawler may name itself with several product tokens, most specific
//     first; the first token that has a group of its own decides, else the
//     "*" group(s), else no rules apply. In every dialect.
//   - A malformed percent sign ("/100%") compares as "%25" in rfc9309 and
//     coccoc, in rules and URLs alike.
//   - rfc9309 and coccoc: a reserved character (":", "/", "?", "=", ...)
//     and its percent-encoded form are different octets, as RFC 3986 §2.2
//     has it: a rule "/q?u=http://x" matches that URL as written, not
//     "/q?u=http%3A%2F%2Fx". The seed's table (fig. 4, row 2) shows how such
//     a query is encoded when a URI is built; the crawler compares the URL
//     it sends. Percent-encoding both sides would also change the length of
//     rules and so which one wins.
//   - rfc9309 and coccoc: the printable ASCII characters RFC 3986 has no
//     place for in a URI (" < > \ ^ ` { | }) are percent-encoded in rules and
//     URLs alike before they are compared, as octets outside ASCII are (RFC
//     9309 §2.2.2), so that "Disallow: /a<d.html" blocks "/a%3Cd.html" and
//     "/a<d.html" both. An encoded rule ranks by its encoded length ("/a<"
//     counts as "/a%3C"). "[" and "]" are reserved characters and compare as
//     written, like the others.
//   - /robots.txt is exempt from the rules only in rfc9309 (RFC 9309 §2.5);
//     google (as Google's parser), coccoc and koster1994 check it like any
//     path. (The plugin always fetches robots.txt itself.)
//   - Crawl-delay values above one year are read as one year, so that the
//     duration cannot overflow; the plugin's WithMaxCrawlDelay then applies.
//   - google: a NUL byte ends a line's content, as in Google's parser.
//
// # Usage preferences and licences
//
// Besides where a crawler may go, robots.txt may say what the content may be
// used for ([Usage]): draft-ietf-aipref-attach-05's Content-Usage rule over
// the vocabulary of draft-ietf-aipref-vocab-08 (train-ai, search), and
// Cloudflare's Content-Signal line (ai-train, search, ai-input and the
// [UseLevel] use=). [Ruleset.Usage] gives the preference in force for a path
// with the line that decided each category and the level; [ParseUsage] and
// [ParseContentSignal] read the response headers. RSL's License lines name
// licence documents ([Ruleset.Licenses]). Where the sources leave a choice:
//
//   - rfc9309 reads both usage lines, Content-Usage as a rule of its group
//     (it ends the group's user-agent lines, as Allow does). google and
//     coccoc read them too, but neither ends a group's user-agent lines, so
//     their crawl verdicts stay those of Google's and Coc Coc's parsers.
//     Content-Signal and License end no group's user-agent lines in any
//     dialect, like Sitemap. koster1994 reads none of the three lines
//     ([Dialect.ReadsUsage]); they are unknown keys there.
//   - Content-Signal, with no normative scope, belongs to its group as
//     RFC 9309 groups lines (one group may be a single crawler's); it and a
//     Content-Usage rule without a path apply to every path as a rule for
//     "/" would: combined with Content-Usage rules for "/", beaten by any
//     longer path. Rules whose patterns differ but match a path with the
//     same length ("/a*" and "/ab" for "/abc") are combined, the most
//     restrictive per category and the lower known level.
//   - A Content-Signal without use= states no level: [UseUnknown] is no
//     default (Cloudflare always writes one, and says nothing of its
//     absence), and what it means is the crawler's choice.
//   - A usage line before any User-agent line is ignored with a warning, as
//     a rule would be; a line that states nothing the dialect knows still
//     applies, stating nothing, and gets a warning.
//
// # Other parsers' Crawl-delay and Sitemap cases
//
// The project's conformance data from other parsers (crawl_delay.jsonl and
// sitemaps.jsonl: texting_robots, crawler-commons, temoto/robotstxt,
// CPython, ...) holds except in these cases, by choice. google reads no
// Crawl-delay (Google says so) and koster1994 reads neither Crawl-delay nor
// Sitemap (the 1994 standard has neither), so every case of those lines
// fails there by design. The others, in rfc9309 and coccoc (and, for
// Sitemap, google):
//
//   - Keys are read exactly (in any case); google alone accepts misspellings,
//     and only Google's: "crawl delay" and "crawldelay"
//     (texting_robots:test_forgiveness_crawl_delay_variations/2 and /3,
//     temoto/robotstxt:TestCrawlDelays/1), "site-map" and "site map"
//     (texting_robots:test_forgiveness_sitemap_variations/1; google reads
//     "site-map", not "site map", as Google's parser does) are unknown keys.
//   - Lines are not unwrapped from HTML: "Crawl-Delay: 10<BR>" holds no
//     number and "User-agent: *<BR>" is no "*" line
//     (crawler-commons:testHtmlMarkupInRobotsTxt/1 and /2).
//   - A crawler's token is a product token, reduced as [Dialect.AgentToken]
//     says, not a User-Agent header searched for a name: "Mozilla delaybot
//     99.9" is compared as "Mozilla" (crawler-commons:testHeritrixCases/2).
//     [ProductToken] derives a token from a header.
//   - A Crawl-delay above one year is read as one year
//     (texting_robots:test_robot_excessive_crawl_delay/1 wants more than
//     3e38 s).
//   - coccoc reads Crawl-delay as its seed says, integer seconds up to 10:
//     the cases of texting_robots and crawler-commons with a longer delay
//     are capped (test_robot_retrieve_crawl_delay, testCrawlDelayGroupMerging/3,
//     ...) and those with a fraction rounded up
//     (test_robot_crawl_delay_not_integer/2, testFloatingPointCrawlDelay/1, ...).
//   - Sitemap values are kept as written, one per Sitemap line, in file
//     order, as Google's parser keeps them (google's answer is that parser's
//     in every case): a relative value is not resolved, for the body comes without its
//     URL and resolving is the caller's (crawler-commons:testRelativeSitemap/1);
//     a value that is no URL, or not UTF-8, is kept
//     (texting_robots:test_robot_crawl_evil_utf8/1); the same URL on two lines
//     is listed twice (crawler-commons:testSitemapDedup/1); a bare URL line is
//     no Sitemap line (crawler-commons:testSitemap/1).
package dialect

import (
	"fmt"
	"strings"
	"time"
)

// MaxBodyBytes is how much of a robots.txt body is read: 500 KiB. Content
// after it is ignored in every dialect.
const MaxBodyBytes = 500 * 1024

// A Dialect is one way of reading robots.txt. The four dialects are package
// variables; compare them by pointer or by [Dialect.Name].
type Dialect struct {
	s     spec
	empty Robots // what an empty body parses to
	// emptyRules is what For returns for empty: no rules, no delay
	// (immutable, so one serves every caller).
	emptyRules Ruleset
}

func newDialect(s spec) *Dialect {
	d := &Dialect{s: s}
	d.s.keyTab = newKeyTable(&d.s)
	d.s.lineStop = newLineStop(&d.s)
	d.empty.d = d
	d.emptyRules.r = &d.empty
	return d
}

// Name returns the dialect's name, as accepted by [Lookup].
func (d *Dialect) Name() string { return d.s.name }

func (d *Dialect) String() string { return d.s.name }

// Description returns a one-line summary of the dialect.
func (d *Dialect) Description() string { return d.s.description }

// RFC9309 ("rfc9309") reads robots.txt as RFC 9309 has it, strictly;
// Crawl-delay is read as an extension (seconds, decimals).
var RFC9309 = newDialect(rfc9309Spec)

// Google ("google") reads robots.txt as Google's crawlers do: key prefixes
// and typos, exact product tokens, no Crawl-delay, the index.html rule.
var Google = newDialect(googleSpec)

// CocCoc ("coccoc") reads robots.txt as Coc Coc's robots do: the most
// closely matching user-agent, an integer Crawl-delay capped at 10 s.
var CocCoc = newDialect(coccocSpec)

// Koster1994 ("koster1994") reads robots.txt as the original 1994 standard
// has it: blank-line records, Disallow only, plain prefix match.
var Koster1994 = newDialect(koster1994Spec)

var all = []*Dialect{RFC9309, Google, CocCoc, Koster1994}

// All returns the four dialects, rfc9309 first.
func All() []*Dialect { return append([]*Dialect(nil), all...) }

// Names returns the names of the dialects, rfc9309 first.
func Names() []string {
	n := make([]string, len(all))
	for i, d := range all {
		n[i] = d.s.name
	}
	return n
}

// Lookup returns the dialect with the given name (case-insensitive).
func Lookup(name string) (*Dialect, error) {
	for _, d := range all {
		if strings.EqualFold(d.s.name, name) {
			return d, nil
		}
	}
	return nil, fmt.Errorf("dialect: unknown dialect %q (known: %s)", name, strings.Join(Names(), ", "))
}

// keyKind is what a line's key means.
type keyKind uint8

const (
	keyUnknown keyKind = iota
	keyUserAgent
	keyAllow
	keyDisallow
	keySitemap
	keyCrawlDelay
	keyUnused        // recognised by the dialect but without effect (e.g. crawl-delay in google)
	keyContentUsage  // draft-ietf-aipref-attach's usage rule
	keyContentSignal // Cloudflare's Content Signals line
	keyLicense       // RSL's License line
)

func (k keyKind) String() string {
	return [...]string{"unknown", "user-agent", "allow", "disallow", "sitemap", "crawl-delay", "unused", "content-usage", "content-signal", "license"}[k]
}

// keySet is a set of key kinds.
type keySet uint16

func keySetOf(kinds ...keyKind) keySet {
	var s keySet
	for _, k := range kinds {
		s |= 1 << k
	}
	return s
}

func (s keySet) has(k keyKind) bool { return s&(1<<k) != 0 }

// rulesEndAgents: only rule lines end a group's user-agent lines; sitemap,
// crawl-delay and unknown lines, valid or not, never do (RFC 9309 §2.2.4:
// "a Sitemaps record MUST NOT terminate a group"; Google: "Rules other than
// allow, disallow, and user-agent are ignored by the robots.txt parser").
var rulesEndAgents = keySetOf(keyAllow, keyDisallow)

// usageRulesEndAgents: rfc9309 as draft-ietf-aipref-attach updates it, where
// Content-Usage is a rule of the group like Allow and Disallow.
var usageRulesEndAgents = keySetOf(keyAllow, keyDisallow, keyContentUsage)

type agentMatch uint8

const (
	// matchToken: the value's product token (its leading run of
	// spec.agentChars) equals the crawler's token, case-insensitively; "*"
	// counts when alone or followed by whitespace.
	matchToken agentMatch = iota
	// matchLongestPrefix: as matchToken, but the longest product token that
	// equals or prefixes the crawler's token wins; groups with that same
	// token are merged.
	matchLongestPrefix
	// matchNames: the value is a whitespace-separated list of names, each
	// compared whole, case-insensitively.
	matchNames
)

// byteSet is a set of bytes.
type byteSet [256]bool

// newByteSet returns the set of the bytes of chars, with the ASCII letters
// and, when digits is set, the ASCII digits.
func newByteSet(digits bool, chars string) *byteSet {
	s := new(byteSet)
	for c := 'A'; c <= 'Z'; c++ {
		s[c], s[c+'a'-'A'] = true, true
	}
	if digits {
		for c := '0'; c <= '9'; c++ {
			s[c] = true
		}
	}
	for i := 0; i < len(chars); i++ {
		s[chars[i]] = true
	}
	return s
}

// prefixLen returns the length of the leading run of members of s in v.
func (s *byteSet) prefixLen(v string) int {
	i := 0
	for i < len(v) && s[v[i]] {
		i++
	}
	return i
}

var (
	// lettersToken: RFC 9309 §2.2.1 and Google's parser: [A-Za-z_-].
	lettersToken = newByteSet(false, "_-")
	// digitsToken: [A-Za-z0-9_-], so that "MJ12bot" is not read as "MJ".
	digitsToken = newByteSet(true, "_-")
)

type encoding uint8

const (
	// encRFC3986: rule and URL both normalised: %XX of unreserved characters
	// decoded, other %xx upper-cased, octets outside printable ASCII and the
	// characters outside RFC 3986's grammar (outsideURI) percent-encoded; in
	// URLs a literal '*' or '$' is encoded so that only %2A / %24 in a rule
	// match it.
	encRFC3986 encoding = iota
	// encGoogle: only the rule is touched: octets >= 0x80 percent-encoded
	// and %xx upper-cased; the URL is compared as given.
	encGoogle
	// encLiteral: bytes compared as they are.
	encLiteral
)

type emptyDisallow uint8

const (
	emptyDisallowMatchesNothing emptyDisallow = iota
	emptyDisallowAllowsAll
)

type crawlDelayKind uint8

const (
	crawlDelayNone    crawlDelayKind = iota // not read
	crawlDelayDecimal                       // seconds, decimals allowed
	crawlDelayInteger                       // integer seconds, fraction rounds up, capped
)

// spec is the table of behaviours of one dialect: every place where the
// dialects differ is a field here.
type spec struct {
	name, description string

	// Line form.
	keys             map[string]keyKind // exact keys, lower case
	keyPrefixes      []keyPrefix        // keys recognised by case-insensitive prefix (google), in order
	keyTab           *keyTable          // keys or keyPrefixes by first letter (derived)
	lineStop         [256]uint8         // the bytes readLine looks for (derived)
	colonlessTwoWord bool               // "key value" without ':' read when exactly two words, split at spaces or tabs only (as Google)
	maxLineBytes     int                // bytes of a line kept; 0 = no limit
	nulEndsLine      bool               // a NUL byte ends the line's content (google)
	blankLineRecords bool               // records end at blank lines (koster1994)

	// Groups.
	endsAgents keySet // lines after which a User-agent line opens a new group
	agentMatch agentMatch
	// agentChars (matchToken, matchLongestPrefix): a user-agent value's
	// product token is its leading run of these; so is the crawler's token
	// unless crawlerTokenWhole.
	agentChars *byteSet
	// crawlerTokenWhole: the crawler's token is compared whole (google, as
	// Google's parser), so one holding other characters names no group.
	crawlerTokenWhole bool

	// Rules.
	allowLines    bool // Allow lines are honoured
	emptyDisallow emptyDisallow
	wildcards     bool // '*' and '$' are special
	encoding      encoding
	indexHTML     bool // allow .../index.htm(l) also allows .../ exactly
	robotsTxtFree bool // /robots.txt is always allowed

	crawlDelay    crawlDelayKind
	crawlDelayCap time.Duration // 0 = no cap
	sitemaps      bool

	fetch [numOutcomes]fetchRule // what each fetch outcome means
}

type keyPrefix struct {
	prefix string // lower case
	kind   keyKind
	typo   bool
}

var standardKeys = map[string]keyKind{
	"user-agent":     keyUserAgent,
	"allow":          keyAllow,
	"disallow":       keyDisallow,
	"sitemap":        keySitemap,
	"crawl-delay":    keyCrawlDelay,
	"content-usage":  keyContentUsage,
	"content-signal": keyContentSignal,
	"license":        keyLicense,
}

var rfc9309Spec = spec{
	name:          "rfc9309",
	description:   "RFC 9309, read strictly; Crawl-delay read as an extension (seconds, decimals)",
	keys:          standardKeys,
	endsAgents:    usageRulesEndAgents,
	agentMatch:    matchToken,
	agentChars:    digitsToken,
	allowLines:    true,
	emptyDisallow: emptyDisallowMatchesNothing,
	wildcards:     true,
	encoding:      encRFC3986,
	robotsTxtFree: true,
	crawlDelay:    crawlDelayDecimal,
	sitemaps:      true,
	fetch:         rfc9309Fetch,
}

var googleSpec = spec{
	name:        "google",
	description: "Google's crawlers: key prefixes and typos, exact product tokens, no Crawl-delay, index.html rule",
	keyPrefixes: []keyPrefix{
		{"user-agent", keyUserAgent, false},
		{"useragent", keyUserAgent, true},
		{"user agent", keyUserAgent, true},
		{"allow", keyAllow, false},
		{"disallow", keyDisallow, false},
		{"dissallow", keyDisallow, true},
		{"dissalow", keyDisallow, true},
		{"disalow", keyDisallow, true},
		{"diasllow", keyDisallow, true},
		{"disallaw", keyDisallow, true},
		{"sitemap", keySitemap, false},
		{"site-map", keySitemap, true},
		{"crawl-delay", keyUnused, false},
		{"content-usage", keyContentUsage, false},
		{"content-signal", keyContentSignal, false},
		{"license", keyLicense, false},
	},
	colonlessTwoWord:  true,
	maxLineBytes:      2083*8 - 1,
	nulEndsLine:       true,
	endsAgents:        rulesEndAgents,
	agentMatch:        matchToken,
	agentChars:        lettersToken,
	crawlerTokenWhole: true,
	allowLines:        true,
	emptyDisallow:     emptyDisallowMatchesNothing,
	wildcards:         true,
	encoding:          encGoogle,
	indexHTML:         true,
	crawlDelay:        crawlDelayNone,
	sitemaps:          true,
	fetch:             googleFetch,
}

var coccocSpec = spec{
	name:          "coccoc",
	description:   "Coc Coc's robots: most closely matching user-agent, integer Crawl-delay capped at 10 s",
	keys:          standardKeys,
	endsAgents:    rulesEndAgents,
	agentMatch:    matchLongestPrefix,
	agentChars:    digitsToken,
	allowLines:    true,
	emptyDisallow: emptyDisallowAllowsAll,
	wildcards:     true,
	encoding:      encRFC3986,
	crawlDelay:    crawlDelayInteger,
	crawlDelayCap: 10 * time.Second,
	sitemaps:      true,
	fetch:         coccocFetch,
}

var koster1994Spec = spec{
	name:        "koster1994",
	description: "the original 1994 standard: blank-line records, Disallow only, plain prefix match",
	keys: map[string]keyKind{
		"user-agent": keyUserAgent,
		"disallow":   keyDisallow,
		"allow":      keyUnused,
	},
	blankLineRecords: true,
	endsAgents:       rulesEndAgents,
	agentMatch:       matchNames,
	allowLines:       false,
	emptyDisallow:    emptyDisallowAllowsAll,
	wildcards:        false,
	encoding:         encLiteral,
	crawlDelay:       crawlDelayNone,
	sitemaps:         false,
	fetch:            koster1994Fetch,
}
