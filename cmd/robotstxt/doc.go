// Command robotstxt checks URLs against a robots.txt file as a chosen crawler
// reads it, shows what it read, and shows what changes for a Colly crawler
// that moves from Colly's own robots.txt check to this module's.
//
// Usage:
//
//	robotstxt check   [-dialect D] [-agent A[,B...]] [-usage C[,C...]] [-explain] FILE [URL...]
//	robotstxt inspect [-dialect D] [-agent A[,B...]] FILE
//	robotstxt diff    [-dialect D] [-agent A[,B...]] [-user-agent UA] FILE [URL...]
//	robotstxt sitemaps [-dialect D] [-agent A[,B...]] [-since DATE] URL
//	robotstxt COMMAND -h
//
// Flags may come before or after FILE and the URLs; "--" ends them. COMMAND
// -h (or -help, --help, "robotstxt help COMMAND") lists the command's flags
// on standard output.
//
// check prints one line per URL, in order: "allowed<TAB>URL" or
// "disallowed<TAB>URL", with -explain a third field naming the deciding rule
// and its line ("line 4: Disallow: /private") or "no matching rule". The exit
// status is 0 when every URL is allowed, 1 when any is disallowed, 2 on a
// usage or I/O error.
//
// check -usage C[,C...] adds, after URL and before the -explain field, one
// field per usage category asked, in the order asked: the preference
// robots.txt states for the URL (dialect.Ruleset.Usage: Content-Usage of
// draft-ietf-aipref-attach-05, Cloudflare's Content-Signal), "C=y", "C=n" or
// "C=unknown", or "C=n/a" for a URL the crawl rules disallow (it has none).
// The categories are train-ai, search and ai-input; another name, or a
// dialect that reads no usage lines (koster1994), is a usage error. The exit
// status stays that of the crawl verdicts.
//
// inspect prints JSON: the dialect, the user-agent values of the group(s) in
// force, the crawl delay in seconds (null when the dialect reads none), the
// Sitemap URLs in file order, the rules in force with their lines, the usage
// rules in force (Content-Usage, Content-Signal) with their lines and what
// each states, and the warnings. The Sitemap values of a local file are kept as written (a
// relative one gets a warning line on standard error); those of a fetched
// FILE are resolved against its URL and listed once each, with a warning
// line for each value resolved or left out.
//
// diff is the migration report for a Colly user: for each URL, the verdict of
// Colly v2.3.0's built-in robots.txt check (github.com/temoto/robotstxt, called
// as Colly calls it, for a collector whose UserAgent is -user-agent) and the
// dialect's (this module's plugin on the same collector), and it prints
// the URLs whose verdict changes:
//
//	URL<TAB>colly: allowed|disallowed (-)<TAB>DIALECT: allowed|disallowed (WHY)
//
// WHY is what check -explain gives. temoto/robotstxt does not say which rule
// decided, so the colly field names none ("-"); it names a cause only when
// robots.txt decided as a whole. Both sides see the URL as Colly sends it
// (parsed by the WHATWG URL parser as Colly's Visit parses it, a path joined
// to FILE's scheme and host, or to http://example.com for a local FILE);
// Colly's side then matches temoto's rules against the escaped path and the
// query as url.Values.Encode re-encodes it (keys sorted), as Colly does.
// Colly passes its whole UserAgent to temoto, which picks the group whose
// name is the longest prefix of it (so "Mozilla/5.0 (compatible; ExampleBot/1.0)"
// selects "*", never "examplebot"); the dialect side uses -agent, or, as the
// plugin does by default, the product token of -user-agent. -user-agent
// defaults to the first -agent value as given, or to Colly's default
// ("colly - https://github.com/gocolly/colly") without -agent. A robots.txt
// that temoto rejects (one bad Crawl-delay, a rule before any User-agent) or
// that Colly cannot fetch is said on standard error, and every URL counts as
// disallowed on Colly's side: Colly's Visit returns that error and fetches
// nothing. A 5xx robots.txt, which temoto reads as "disallow all", allows
// everything in Colly, whose check asks only for a group and finds none.
//
// Colly checks only the URL given to Visit; the plugin checks every redirect
// hop. Against a site (FILE a URL), diff fetches each URL that both allow
// once, as Colly sends it (GET, -user-agent, 10 s timeout), without following
// its redirect; a redirect Colly follows into a path the dialect disallows
// is a change too:
//
//	URL -> TARGET<TAB>colly: followed<TAB>DIALECT: stopped (WHY)
//
// TARGET is the path and query, or the whole URL of another host, which is
// "not checked (other host)" (its robots.txt is not fetched). Only the first
// hop is looked at. A local FILE has no site to ask, which is said on
// standard error. Standard error also says how the plugin spaces requests to
// the host (its Crawl-delay for the agents, else the plugin's 1 s default;
// Colly with no LimitRule does not space them) and how its stops and retries
// reach OnError. The last line on standard error is "robotstxt: N of M URLs
// change verdict", followed by "; K redirect(s) now stopped" when some are.
// The exit status is 0 when nothing changes, 1 when a verdict or redirect
// does, 2 on a usage or I/O error.
//
// sitemaps streams the page URLs of a site's sitemaps to standard output,
// one per line, in document order, each once. URL is a site
// ("https://example.com/", or its /robots.txt: the Sitemap lines of its
// robots.txt, resolved against its URL, are the sitemaps) or one sitemap URL.
// Indexes are followed (nesting depth 5); gzip (two layers), plain-text, RSS
// and Atom sitemaps are read as streams, within the limits of package
// github.com/politecrawl/robots/sitemap. A sitemap that robots.txt disallows
// for the agents is not fetched; an index child or page URL on another host
// than the site's is left out (sitemaps.org cross-submission, at host
// level); requests to a host are spaced by its Crawl-delay (else 1 s, at
// most 30 s), robots.txt fetches included, and 5xx, 429 and network errors
// are retried twice, honouring Retry-After. -since DATE (2006-01-02, or an
// RFC 3339 time) leaves out pages and index children whose lastmod is known
// and earlier. Standard error gets one line per sitemap as it ends
// ("URL: urlset, 3 found, 2 printed, rejected 1 (other host)", or its
// error). Page URLs robots.txt disallows for the agent are left out,
// counted in that line ("filtered 1 (disallowed by robots.txt)"). The exit
// status is 0 when every sitemap was read, 1 when some failed or were cut
// by a limit (the URLs read before are printed), or when the site's
// robots.txt announces no sitemap or could not be read (said on standard
// error), 2 on a usage error.
//
// URLs come from the arguments, or one per line on standard input when there
// are none (blank lines are skipped, a trailing CR is dropped). Each is an
// absolute path ("/a/b?c", taken as given: "//x" is the path //x and a stray
// "%" is a character of it; an empty argument is "/") or a URL with a host
// ("https://example.com/a/b?c", "ftp://example.com/pub/x", any scheme in any
// case: RFC 9309 applies to any URI-based protocol, and only the path is
// compared); any other is a usage error naming it, and on standard input its
// line.
//
// FILE is a local file or the http(s) URL of a robots.txt
// ("https://example.com/robots.txt"; a FILE with any other scheme is a usage
// error, so a local name holding a colon is written ./NAME), fetched as the
// chosen dialect's crawler fetches it (package
// github.com/politecrawl/robots/policy: at most five redirects, 500 KiB,
// the dialect's rules for 4xx, 5xx and no answer). A fetch that gives no rules
// to parse is said in one line on standard error ("robotstxt:
// http://127.0.0.1:1/robots.txt: no answer (connection refused), complete
// disallow until 2026-11-23T14:05:00Z"); the verdicts and the exit status are
// the dialect's, as without it. With -explain, a URL that the fetch outcome
// decides says so ("robots.txt: 503 Service Unavailable, complete disallow
// until 2026-11-23T14:05:00Z"), and inspect adds a "fetch" object (URL, status,
// outcome, action, reason, retry time) to its JSON.
//
// Agents are product tokens, most specific first; the first that has a group
// of its own decides. Commas inside parentheses do not separate agents. With
// no -agent (or an empty one) only the "*" group(s) apply (diff: see above).
// An agent holding "/" or "(" is read as a User-Agent ("USpider/1.0",
// "Mozilla/5.0 (compatible; USpider/1.0; +https://example.com/bot)") and
// reduced to the product token dialect.ProductToken finds in it ("USpider");
// the first agent given so is then the User-Agent of a robots.txt fetch.
// A reduced agent, or a token the dialect does not compare whole (see
// dialect.Dialect.AgentToken: "MJ12bot" names no group in google), gets one
// warning line on standard error, "robotstxt: warning: -agent ...", once per
// agent given; it changes neither the output nor the exit status. -dialect
// is one of rfc9309 (default), google, coccoc, koster1994.
package main
