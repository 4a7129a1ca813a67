package sitemap

// Format is what a document is, decided from its bytes (never from the
// Content-Type or the file name).
type Format uint8

const (
	FormatUnknown Format = iota // not decided yet / not a sitemap
	FormatURLSet                // <urlset>: entries are pages
	FormatIndex                 // <sitemapindex>: entries are child sitemaps
	FormatText                  // one URL per line
	FormatRSS                   // RSS 2.0 <rss><channel><item><link> (and RSS 1.0 <rdf:RDF><item><link>)
	FormatAtom                  // Atom <feed><entry><link href>
)

var formatNames = [...]string{"unknown", "urlset", "sitemapindex", "text", "rss", "atom"}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "Format(?)"
}

// docSpec is everything that differs between the XML formats: where the
// entries stand and which of their children carry what. Element names are
// local names (any namespace prefix, or none), compared lower-cased.
type docSpec struct {
	format Format
	root   string   // the root element
	path   []string // from the root's child down to the entry element
	loc    string   // the entry's child that holds the loc
	// locHref: the loc is the href attribute of the loc element (Atom),
	// taken from the first such element whose rel is absent or "alternate".
	// Otherwise the loc is the element's text, or its href attribute when
	// the text is empty (an RSS item's <atom:link href>).
	locHref bool
	lastmod []string // children giving the lastmod, most preferred first
	page    bool     // changefreq, priority and xhtml:link alternates are read
}

var specs = []docSpec{
	{format: FormatURLSet, root: "urlset", path: []string{"url"}, loc: "loc", lastmod: []string{"lastmod"}, page: true},
	{format: FormatIndex, root: "sitemapindex", path: []string{"sitemap"}, loc: "loc", lastmod: []string{"lastmod"}},
	{format: FormatRSS, root: "rss", path: []string{"channel", "item"}, loc: "link", lastmod: []string{"pubdate", "date"}},
	{format: FormatRSS, root: "rdf", path: []string{"item"}, loc: "link", lastmod: []string{"date", "pubdate"}},
	{format: FormatAtom, root: "feed", path: []string{"entry"}, loc: "link", locHref: true, lastmod: []string{"updated", "published"}},
}

// notSitemapRoots names root elements that are known not to be sitemaps,
// for a clearer error; any other unknown root is reported by its name.
var notSitemapRoots = map[string]string{
	"html": "an HTML page",
	"head": "an HTML page",
	"body": "an HTML page",
	"svg":  "an SVG image",
}

func specFor(root string) *docSpec {
	for i := range specs {
		if specs[i].root == root {
			return &specs[i]
		}
	}
	return nil
}
