package usage

import (
	"bytes"
	"iter"
	"slices"
	"strings"

	"golang.org/x/net/html"
)

// MetaRobots returns the directives the <meta> elements of the HTML document doc
// state for a crawler known by the product tokens agents, read up to the
// <body> start tag or the </head> end tag. doc is only read, and not
// retained.
func MetaRobots(doc []byte, agents []string) Directives {
	var d Directives
	for e := range headElements(doc, "meta") {
		d |= meta(e, agents, nil)
	}
	return d
}

// element is a start tag of the head of an HTML document: its name,
// lower-cased, and its attributes, their character references decoded.
type element struct {
	Name  string
	attrs []html.Attribute
}

// headElements returns the start tags (those named in only, if any) of the
// HTML document doc up to the <body> start tag or the </head> end tag, in
// order, as the HTML tokenizer reads them, without comments, doctypes or the
// contents of script, style, title and textarea elements. doc is not retained.
func headElements(doc []byte, only ...string) iter.Seq[element] {
	return func(yield func(element) bool) {
		if len(doc) == 0 {
			return
		}
		z := html.NewTokenizer(bytes.NewReader(doc))
		for {
			switch z.Next() {
			case html.ErrorToken:
				return
			case html.EndTagToken:
				if name, _ := z.TagName(); string(name) == "head" {
					return
				}
			case html.StartTagToken, html.SelfClosingTagToken:
				t := z.Token()
				kept := len(only) == 0 || slices.Contains(only, t.Data)
				if t.Data == "body" || kept && !yield(element{Name: t.Data, attrs: t.Attr}) {
					return
				}
			}
		}
	}
}

// Attr returns the value of e's first attribute named name (compared
// ASCII case-insensitively), "" for an attribute without a value, and
// whether e has it.
func (e element) Attr(name string) (string, bool) {
	for _, a := range e.attrs {
		if strings.EqualFold(a.Key, name) {
			return a.Val, true
		}
	}
	return "", false
}

// meta returns the directives of one element if it is a meta element;
// emit is as for list.
func meta(e element, agents []string, emit func(scope, elem string)) Directives {
	if e.Name != "meta" {
		return 0
	}
	name, _ := e.Attr("name")
	name = trim(name)
	content, _ := e.Attr("content")
	if !strings.EqualFold(name, "robots") && !matches(name, agents) {
		return 0
	}
	if emit != nil {
		return list(content, agents, false, func(_, elem string) { emit(name, elem) })
	}
	return list(content, agents, false, nil)
}
