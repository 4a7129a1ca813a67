package usage

import (
	"fmt"
	"net/http"
	"slices"
)

// A response's three carriers, read for a crawler: the union of what
// each states for it or for every crawler, with the evidence.
func ExampleRobotsTag() {
	agents := []string{"ExampleBot"}
	robotsTag := []string{"*;nosnippet, ExampleBot;noai, OtherBot;noindex"}
	xRobotsTag := []string{"examplebot: nofollow"}
	doc := []byte(`<html><head><meta name="robots" content="noimageai"></head><body>`)

	fmt.Println(RobotsTag(robotsTag, agents))
	rules, all := robotsRules(robotsTag, xRobotsTag, slices.Collect(headElements(doc)), agents)
	for _, r := range rules {
		fmt.Printf("%s %q: %s\n", r.Carrier, r.Scope, r.Name)
	}
	fmt.Println(all)
	// Output:
	// noai
	// Robots-Tag "*": nosnippet
	// Robots-Tag "ExampleBot": noai
	// X-Robots-Tag "examplebot": nofollow
	// meta "robots": noimageai
	// nofollow, noai, noimageai
}

// Which carrier of a response says nofollow for the crawler.
func ExampleNofollow() {
	h := http.Header{"Content-Type": {"text/html"}, "X-Robots-Tag": {"otherbot: nofollow"}}
	body := []byte(`<html><head><meta name="ExampleBot" content="nofollow"></head><body>`)
	c, ok := Nofollow(h, body, []string{"ExampleBot"})
	fmt.Println(c, ok)
	// Output: meta true
}
