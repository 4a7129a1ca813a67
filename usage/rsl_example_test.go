package usage

import (
	"fmt"
	"net/url"
	"strings"
)

// A licence found through a Link header field, then a use decided: the
// site permits everything but training under /articles/.
func ExampleParseRSL() {
	base, _ := url.Parse("https://example.com/articles/a.html")
	fmt.Println(licenseLinks([]string{`</license.xml>; rel="license"; type="application/rsl+xml"`}, base)[0].url)

	doc, err := ParseRSL(strings.NewReader(`<rsl xmlns="https://rslstandard.org/rsl">
  <content url="https://example.com/"><license><permits type="usage">all</permits></license></content>
  <content url="/articles/">
    <license><prohibits type="usage">ai-train</prohibits><payment type="attribution"/></license>
  </content>
</rsl>`))
	if err != nil {
		fmt.Println("unlicensed:", err)
		return
	}
	for _, purpose := range []string{"train-ai", "search"} {
		v, _ := doc.Decide(base, RSLUse{Purpose: purpose})
		fmt.Printf("%s: licensed %v by <content url=%q>", purpose, v.Licensed, v.Content.URL)
		if v.License != nil && v.License.Payment != nil {
			fmt.Printf(", payment %s", v.License.Payment.Type)
		}
		fmt.Println()
	}
	// Output:
	// https://example.com/license.xml
	// train-ai: licensed false by <content url="/articles/">
	// search: licensed true by <content url="/articles/">, payment attribution
}
