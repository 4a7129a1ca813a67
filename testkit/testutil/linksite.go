package testutil

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// LinkSite is a site whose root links to /p1../pN, each page linking back
// to the root and to the next page (links found twice: the seen set's
// work); slow, if not nil, may answer a request first (it returns true
// when it did).
func LinkSite(delay string, pages int, slow func(w http.ResponseWriter, r *http.Request) bool) *Site {
	return &Site{
		Robots: "User-agent: *\nCrawl-delay: " + delay + "\n",
		Handle: func(w http.ResponseWriter, r *http.Request) bool {
			if slow != nil && slow(w, r) {
				return true
			}
			var b strings.Builder
			b.WriteString("<html><body>")
			if r.URL.Path == "/" {
				for i := 1; i <= pages; i++ {
					fmt.Fprintf(&b, `<a href="/p%d">p%d</a>`, i, i)
				}
			} else {
				n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p"))
				fmt.Fprintf(&b, `<a href="/">home</a><a href="/p%d">next</a>`, n%pages+1)
			}
			b.WriteString("</body></html>")
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, b.String())
			return true
		},
	}
}
