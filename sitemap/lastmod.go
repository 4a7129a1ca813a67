package sitemap

import (
	"strings"
	"time"
)

// lastmodLayouts are the forms a lastmod (or RSS pubDate, Atom updated) is
// read in, tried in order; the first that parses wins. A form without a
// time zone is read as UTC.
var lastmodLayouts = []string{
	time.RFC3339Nano,                // W3C datetime: 2006-01-02T15:04:05.999Z07:00 (fraction optional)
	"2006-01-02T15:04Z07:00",        // W3C datetime without seconds
	"2006-01-02",                    // W3C date
	"2006-01-02T15:04:05.999999999", // no time zone
	"2006-01-02T15:04",              // no time zone, no seconds
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999Z0700", // offset without a colon
	"2006-01",                            // W3C year and month
	"2006",                               // W3C year
	time.RFC1123Z,                        // Mon, 02 Jan 2006 15:04:05 -0700
	time.RFC1123,                         // Mon, 02 Jan 2006 15:04:05 MST
	"Mon, 2 Jan 2006 15:04:05 -0700",
	"Mon, 2 Jan 2006 15:04:05 MST",
	"02 Jan 2006 15:04:05 -0700", // RFC 822 without the weekday
	"2 Jan 2006 15:04:05 -0700",
	"02 Jan 2006 15:04:05 MST",
	"2 Jan 2006 15:04:05 MST",
	time.RFC1123Z[:len(time.RFC1123Z)-3] + "-07:00", // Mon, 02 Jan 2006 15:04:05 -07:00
	time.RFC822Z,                                    // 02 Jan 06 15:04 -0700
	time.RFC822,                                     // 02 Jan 06 15:04 MST
	time.RFC850,                                     // Monday, 02-Jan-06 15:04:05 MST
	time.ANSIC,                                      // Mon Jan _2 15:04:05 2006
}

// parseLastmod reads s in any of lastmodLayouts; the zero Time when none
// fits ("unknown"). Surrounding whitespace is ignored; a lower-case "z"
// or a "GMT"/"UT" zone is accepted.
func parseLastmod(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return time.Time{}
	}
	if strings.HasSuffix(s, "z") {
		s = s[:len(s)-1] + "Z"
	}
	for _, layout := range lastmodLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}
