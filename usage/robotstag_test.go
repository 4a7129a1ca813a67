package usage

import (
	"strings"
	"testing"
)

var agents = []string{"ExampleBot"}

func TestXRobotsTag(t *testing.T) {
	const nf, ni, ai, img = NoFollow, NoIndex, NoAI, NoImageAI
	for _, tc := range []struct {
		values []string
		want   Directives
	}{
		{nil, 0},
		{[]string{""}, 0},
		{[]string{"nofollow"}, nf},
		{[]string{"NoFollow"}, nf},
		{[]string{" noindex ,\tnofollow "}, ni | nf},
		{[]string{"none"}, ni | nf},
		{[]string{"noai, noimageai"}, ai | img},
		{[]string{"all"}, 0},
		{[]string{"index, follow"}, 0},
		{[]string{"nofollow, follow"}, nf}, // a restriction stated anywhere holds
		{[]string{"noarchive", "nofollow"}, nf},
		// A crawler's name scopes the element and those after it.
		{[]string{"examplebot: nofollow"}, nf},
		{[]string{"ExampleBot:nofollow"}, nf},
		{[]string{"otherbot: nofollow"}, 0},
		{[]string{"otherbot: noindex, nofollow"}, 0},
		{[]string{"noindex, otherbot: nofollow"}, ni},
		{[]string{"otherbot: nofollow, examplebot: noai"}, ai},
		{[]string{"examplebot: noai, otherbot: nofollow, noindex"}, ai},
		{[]string{"otherbot: nofollow", "noindex"}, ni}, // each field starts for every crawler
		{[]string{"googlebot: nofollow", "otherbot: noindex, nofollow"}, 0},
		{[]string{"examplebot: none"}, ni | nf},
		// Directives with a value are not crawler names.
		{[]string{"unavailable_after: 25 Jun 2010 15:00:00 PST, nofollow"}, nf},
		{[]string{"max-snippet: 20, noai"}, ai},
		{[]string{"MAX-IMAGE-PREVIEW: large, nofollow"}, nf},
		{[]string{"examplebot: max-video-preview: -1, noindex"}, ni},
		{[]string{"otherbot: unavailable_after: 25 Jun 2010, nofollow"}, 0},
		// Oddities read leniently.
		{[]string{",,nofollow,,"}, nf},
		{[]string{"no follow"}, 0},
		{[]string{"nofollow;noindex"}, 0},
		{[]string{": nofollow"}, 0}, // an empty name is no crawler of ours
	} {
		if got := XRobotsTag(tc.values, agents); got != tc.want {
			t.Errorf("Header(%q) = %q, want %q", tc.values, got, tc.want)
		}
	}
}

func TestMetaRobots(t *testing.T) {
	const nf, ni, ai, img = NoFollow, NoIndex, NoAI, NoImageAI
	for _, tc := range []struct {
		doc  string
		want Directives
	}{
		{``, 0},
		{`<html><head><meta name="robots" content="nofollow"></head><body>`, nf},
		{`<meta name=robots content=nofollow>`, nf},
		{`<META NAME="ROBOTS" CONTENT="NOINDEX, NOFOLLOW">`, ni | nf},
		{`<meta content="none" name="robots"/>`, ni | nf},
		{`<meta name='robots' content='noai,noimageai' />`, ai | img},
		{`<meta name="examplebot" content="nofollow">`, nf},
		{`<meta name="otherbot" content="nofollow">`, 0},
		{`<meta name="robots" content="noindex"><meta name="examplebot" content="nofollow">`, ni | nf},
		{`<meta name="description" content="nofollow">`, 0},
		{`<meta name="robots" content="index, follow">`, 0},
		{`<meta name=" robots " content="nofollow">`, nf},
		{`<meta charset="utf-8"><meta name="robots" content="nofollow">`, nf},
		{`<meta name="robots" content="examplebot: nofollow">`, 0}, // no crawler names in content
		// Up to the body.
		{`<head></head><body><meta name="robots" content="nofollow">`, 0},
		{`<head><title>x</title></head><meta name="robots" content="nofollow">`, 0},
		{`<BODY class=x><meta name="robots" content="nofollow">`, 0},
		{`<html><meta name="robots" content="nofollow"><body>`, nf},
		{`<bodyx><meta name="robots" content="nofollow">`, nf},
		// Markup that is not a meta element.
		{`<!-- <meta name="robots" content="nofollow"> --><meta name="robots" content="noai">`, ai},
		{`<!-- unterminated <meta name="robots" content="nofollow">`, 0},
		{`<script>var s = '<meta name="robots" content="nofollow">';</script>`, 0},
		{`<SCRIPT type="x"><meta name="robots" content="nofollow"></Script ><meta name="robots" content="noai">`, ai},
		{`<script></scripts><meta name="robots" content="nofollow"></script><meta name="robots" content="noindex">`, ni},
		{`<style>/* </head> */</style><meta name="robots" content="nofollow">`, nf},
		{`<title><meta name="robots" content="nofollow"></title>`, 0},
		{`<script>unterminated <meta name="robots" content="nofollow">`, 0},
		{`<!DOCTYPE html><?xml x?><meta name="robots" content="nofollow">`, nf},
		{`<meta name="robots" data-x="a>b" content="nofollow">`, nf},
		{`<meta name="robots" content="nofollow`, 0}, // cut in the value: dropped, as HTML parsers do
		{`<meta name="robots"`, 0},
		{`<div title='x'><meta name="robots" content="nofollow">`, nf},
		{`< meta name="robots" content="nofollow">`, 0},
		{`a < b and c <`, 0},
		{`</`, 0},
		{`</ head><meta name="robots" content="nofollow">`, nf},
		{`<<META NAME=ExampleBotCONTENT="none</head><Body`, 0}, // once a hang
		{`<meta name=robots content=nofollow x="a>b`, 0},       // cut short: dropped
	} {
		if got := MetaRobots([]byte(tc.doc), agents); got != tc.want {
			t.Errorf("Meta(%q) = %q, want %q", tc.doc, got, tc.want)
		}
	}
}

func TestDirectivesString(t *testing.T) {
	for d, want := range map[Directives]string{
		0: "", NoFollow: "nofollow", NoIndex | NoFollow: "noindex, nofollow", NoAI | NoImageAI: "noai, noimageai",
	} {
		if got := d.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", d, got, want)
		}
	}
}

func TestRobotsTagNoAllocs(t *testing.T) {
	page := func(paragraphs int) []byte {
		return []byte(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title><script>x</script>` +
			`<meta name="robots" content="noindex, nofollow"><meta name="ExampleBot" content="noai"></head><body>` +
			strings.Repeat(`<p><a href="/x">x</a></p>`, paragraphs))
	}
	values := []string{"otherbot: none", "examplebot: nofollow, noimageai"}
	if n := testing.AllocsPerRun(100, func() {
		if XRobotsTag(values, agents) != NoFollow|NoImageAI {
			t.Fatal("wrong directives")
		}
	}); n != 0 {
		t.Errorf("%v allocations per header read, want 0", n)
	}
	// The head is read with the HTML tokenizer, which allocates; what it
	// allocates does not grow with the body, which is not read.
	allocs := func(doc []byte) float64 {
		return testing.AllocsPerRun(50, func() {
			if MetaRobots(doc, agents) != NoIndex|NoFollow|NoAI {
				t.Fatal("wrong directives")
			}
		})
	}
	if small, large := allocs(page(10)), allocs(page(10000)); large != small || small > 64 {
		t.Errorf("%v allocations per read of a short page, %v of a long one: want the same, at most 64", small, large)
	}
}

// FuzzMetaRobots: any document is read without a panic or a hang (a value cut
// short left a '>' the attribute loop never consumed), and no directive
// comes from a document without a meta element.
func FuzzMetaRobots(f *testing.F) {
	for _, s := range []string{`<meta name="robots" content="nofollow">`, `<!--`, `<script>`, `<meta name='robots`,
		`<html><head><META NAME=ExampleBot CONTENT="none"></head><body>`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		d := MetaRobots([]byte(doc), agents)
		if d&^(NoIndex|NoFollow|NoAI|NoImageAI) != 0 {
			t.Fatalf("unknown bits %b", d)
		}
		if !strings.Contains(strings.ToLower(doc), "<meta") && d != 0 {
			t.Fatalf("directives %q without a meta element", d)
		}
	})
}
