package usage

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestRobotsTag(t *testing.T) {
	const nf, ni, ai, img = NoFollow, NoIndex, NoAI, NoImageAI
	long := "otherbot;" + strings.Repeat("x", MaxRobotsTag) // a member past the limit
	for _, tc := range []struct {
		values []string
		want   Directives
	}{
		{nil, 0},
		{[]string{""}, 0},
		// The draft's example: ExampleBot gets the union of its rules and *'s.
		{[]string{"*;nosnippet, ExampleBot;noindex"}, ni},
		{[]string{"*;noindex"}, ni},
		{[]string{"examplebot;nofollow"}, nf}, // product tokens compare case-insensitively
		{[]string{`"ExampleBot";noai`}, ai},   // a String names a token too
		{[]string{"otherbot;noindex"}, 0},     // another crawler's rules
		{[]string{"ExampleBot;noindex;nofollow"}, ni | nf},
		{[]string{"ExampleBot;noindex, ExampleBot;noai"}, ni | ai}, // repeated token: union
		{[]string{"*;noai", "ExampleBot;noimageai"}, ai | img},     // fields read as one list
		{[]string{"ExampleBot;none"}, ni | nf},
		{[]string{"ExampleBot;noindex=?0"}, 0}, // false does not apply
		{[]string{"ExampleBot;noindex=?1"}, ni},
		{[]string{"ExampleBot;max-snippet=20;noindex"}, ni},
		{[]string{`ExampleBot;unavailable_after="2026-01-01";nofollow`}, nf},
		{[]string{"ExampleBot;NoIndex"}, ni},  // rule names are case-insensitive (lenient)
		{[]string{"ExampleBot ; noindex"}, 0}, // space before ';' is not SF: ends the reading
		{[]string{"ExampleBot; noindex"}, ni}, // space after ';' is
		{[]string{"ExampleBot;noindex , *;nofollow"}, ni | nf},
		// The legacy syntax means nothing here.
		{[]string{"noindex, nofollow"}, 0},
		{[]string{"ExampleBot: noindex"}, 0},
		// An invalid member ends the reading; those before it hold.
		{[]string{"*;noai, ExampleBot;nofollow, 1.2.3;x, ExampleBot;noindex"}, ai | nf},
		{[]string{"*;noai, ExampleBot;noindex=\"unterminated"}, ai},
		{[]string{"ExampleBot;noindex,"}, ni},
		{[]string{"(ExampleBot);noindex"}, 0}, // an inner list names no crawler
		{[]string{"(a b);x, ExampleBot;noindex"}, ni},
		{[]string{"ExampleBot;a=:aGk=:;b=@12;c=-1.5;d=%\"x\";noindex"}, ni},
		// The parse limit.
		{[]string{"ExampleBot;noindex, " + long}, ni},
		{[]string{"ExampleBot;noindex", long}, ni},
		{[]string{long, "ExampleBot;noindex"}, 0},
		{[]string{strings.Repeat(" ", MaxRobotsTag-len("*;noai")) + "*;noai"}, ai},
		{[]string{strings.Repeat(" ", MaxRobotsTag-len("*;noai")+1) + "*;noai"}, 0},
	} {
		if got := RobotsTag(tc.values, agents); got != tc.want {
			t.Errorf("RobotsTag(%.80q) = %q, want %q", tc.values, got, tc.want)
		}
	}
}

func TestRobotsRules(t *testing.T) {
	doc := []byte(`<head><meta name="robots" content="noarchive, NoFollow"><meta name="ExampleBot" content="noai">` +
		`<meta name="otherbot" content="noindex"></head>`)
	rules, d := robotsRules([]string{"*;nosnippet, ExampleBot;noindex;max-snippet=20, otherbot;noai"},
		[]string{"examplebot: max-snippet: 5, otherbot: nofollow", "noimageai"}, readHead(doc), agents)
	want := []robotsRule{
		{RobotsTagHeader, "*", "nosnippet", ""},
		{RobotsTagHeader, "ExampleBot", "noindex", ""},
		{RobotsTagHeader, "ExampleBot", "max-snippet", "20"},
		{XRobotsTagHeader, "examplebot", "max-snippet", "5"},
		{XRobotsTagHeader, "", "noimageai", ""},
		{MetaElement, "robots", "noarchive", ""},
		{MetaElement, "robots", "nofollow", ""},
		{MetaElement, "ExampleBot", "noai", ""},
	}
	if !reflect.DeepEqual(rules, want) {
		t.Errorf("Rules =\n%+v\nwant\n%+v", rules, want)
	}
	if d != NoIndex|NoFollow|NoAI|NoImageAI {
		t.Errorf("Rules directives = %q", d)
	}
	for i := range doc {
		doc[i] = 'x' // the rules do not share the document's memory
	}
	if rules[5].Scope != "robots" || rules[7].Name != "noai" {
		t.Errorf("rules changed with the document: %+v", rules[5:])
	}
	if s := RobotsTagHeader.String() + XRobotsTagHeader.String() + MetaElement.String() + Carrier(0).String(); s != "Robots-TagX-Robots-Tagmetanone" {
		t.Errorf("Source strings: %q", s)
	}
}

// readHead is the head of the HTML document doc, as [check] reads it.
func readHead[T string | []byte](doc T) []element {
	return slices.Collect(headElements([]byte(doc)))
}

func TestHeadElements(t *testing.T) {
	doc := []byte(`<!DOCTYPE html><html><head><script>"<link rel=x>"</script>` +
		`<LINK REL="license" href='/l.xml' type=application/rsl+xml><meta name=tdm-reservation content=1 novalue>` +
		`</head><link rel="after">`)
	var got []string
	for e := range headElements(doc) {
		rel, _ := e.Attr("rel")
		href, ok := e.Attr("HREF")
		_, nv := e.Attr("novalue")
		got = append(got, e.Name+"|"+rel+"|"+href+"|"+map[bool]string{true: "href", false: ""}[ok]+
			map[bool]string{true: "|novalue", false: ""}[nv])
	}
	want := []string{"html|||", "head|||", "script|||", "link|license|/l.xml|href", "meta||||novalue"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Head = %q, want %q", got, want)
	}
	var only []string
	for e := range headElements(doc, "meta", "link", "base") {
		only = append(only, e.Name)
	}
	if want := []string{"link", "meta"}; !reflect.DeepEqual(only, want) {
		t.Errorf("Head with only = %q, want %q", only, want)
	}
	n := 0
	for range headElements(doc) {
		n++
		break // the iterator stops when asked
	}
	if n != 1 {
		t.Errorf("break: %d elements", n)
	}
}

// FuzzRobotsTag: any field value is read without a panic, and the
// directives of members for the crawler are those robotsRules reports.
func FuzzRobotsTag(f *testing.F) {
	for _, s := range []string{"*;nosnippet, ExampleBot;noindex", `"ExampleBot";noai=?1`, "(a;b c);d, x;y=:aGk=:",
		"ExampleBot;noindex=\"", "*;none, otherbot;noindex"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d := RobotsTag([]string{v}, agents)
		rules, d2 := robotsRules([]string{v}, nil, nil, agents)
		if d != d2 {
			t.Fatalf("RobotsTag = %q, robotsRules = %q", d, d2)
		}
		var fromRules Directives
		for _, r := range rules {
			fromRules |= directive(r.Name)
		}
		if fromRules != d {
			t.Fatalf("directives %q, from the rules %q (%+v)", d, fromRules, rules)
		}
	})
}
