package usage

import (
	"iter"
	"strings"
	"unsafe"
)

// MetaRobots returns the directives the <meta> elements of the HTML document doc
// state for a crawler known by the product tokens agents, read up to the
// <body> start tag or the </head> end tag. doc is only read, and not
// retained.
func MetaRobots(doc []byte, agents []string) Directives {
	var d Directives
	scanHead(doc, func(e element) bool {
		if strings.EqualFold(e.Name, "meta") {
			d |= meta(e, agents, nil)
		}
		return true
	})
	return d
}

// element is a start tag of the head of an HTML document: its name as
// written and its attributes.
type element struct {
	Name  string
	attrs string
}

// headElements returns the start tags of the HTML document doc in the order they
// appear, up to the <body> start tag or the </head> end tag, the body's
// excluded: comments, doctypes and the contents of script, style, title
// and textarea elements are skipped. The strings of an element share doc's
// memory: a caller keeping one while changing doc must copy it.
func headElements(doc []byte) iter.Seq[element] {
	return func(yield func(element) bool) { scanHead(doc, yield) }
}

// Attr returns the value of e's first attribute named name (compared
// ASCII case-insensitively), "" for an attribute without a value, and
// whether e has it. Character references are not decoded.
func (e element) Attr(name string) (string, bool) {
	for attrs := e.attrs; attrs != ""; {
		var k, v string
		k, v, attrs = nextAttr(attrs)
		if k != "" && strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// scanHead calls visit with each start tag of the head of doc until visit
// returns false.
func scanHead(doc []byte, visit func(element) bool) {
	s := unsafe.String(unsafe.SliceData(doc), len(doc))
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			return
		}
		i += j + 1
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, "!--"):
			k := strings.Index(rest[3:], "-->")
			if k < 0 {
				return
			}
			i += 3 + k + 3
		case rest == "":
			return
		case rest[0] == '!' || rest[0] == '?': // a doctype, a bogus comment
			k := strings.IndexByte(rest, '>')
			if k < 0 {
				return
			}
			i += k + 1
		case rest[0] == '/' && len(rest) > 1 && isLetter(rest[1]):
			name := tagName(rest[1:])
			if strings.EqualFold(name, "head") {
				return
			}
			_, end := tagEnd(rest[1+len(name):])
			i += 1 + len(name) + end
		case isLetter(rest[0]):
			name := tagName(rest)
			attrs, end := tagEnd(rest[len(name):])
			i += len(name) + end
			if strings.EqualFold(name, "body") || !visit(element{name, attrs}) {
				return
			}
			if isRawText(name) {
				k := closeTag(s[i:], name)
				if k < 0 {
					return
				}
				i += k
			}
		}
	}
}

// meta returns the directives of one meta element; emit is as for list.
func meta(e element, agents []string, emit func(scope, elem string)) Directives {
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

// nextAttr reads the first attribute of s: its name, its value ("" when it
// has none) and what follows.
func nextAttr(s string) (name, value, rest string) {
	s = strings.TrimLeft(s, " \t\r\n\f/>") // a > left in a value cut short
	i := 0
	for i < len(s) && !isSpace(s[i]) && s[i] != '=' && s[i] != '/' && s[i] != '>' {
		i++
	}
	name, s = s[:i], strings.TrimLeft(s[i:], " \t\r\n\f")
	if s == "" || s[0] != '=' {
		return name, "", s
	}
	s = strings.TrimLeft(s[1:], " \t\r\n\f")
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		if k := strings.IndexByte(s[1:], s[0]); k >= 0 {
			return name, s[1 : 1+k], s[2+k:]
		}
		return name, s[1:], ""
	}
	i = 0
	for i < len(s) && !isSpace(s[i]) && s[i] != '>' {
		i++
	}
	return name, s[:i], s[i:]
}

// tagEnd returns the attributes of a tag whose name ended at s[0], and the
// offset just past its '>' (len(s) when it has none). A '>' inside a
// quoted attribute value does not end the tag.
func tagEnd(s string) (attrs string, end int) {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '>':
			return s[:i], i + 1
		case c == '"' || c == '\'':
			// A quote starts a value only after '=' (with spaces between).
			if j := strings.TrimRight(s[:i], " \t\r\n\f"); strings.HasSuffix(j, "=") {
				quote = c
			}
		}
	}
	return s, len(s)
}

// closeTag returns the offset in s just past the end tag </name>, or -1.
func closeTag(s, name string) int {
	for i := 0; ; {
		j := strings.Index(s[i:], "</")
		if j < 0 {
			return -1
		}
		i += j + 2
		if len(s)-i >= len(name) && strings.EqualFold(s[i:i+len(name)], name) &&
			(len(s)-i == len(name) || !isLetter(s[i+len(name)]) && !isDigit(s[i+len(name)])) {
			_, end := tagEnd(s[i+len(name):])
			return i + len(name) + end
		}
	}
}

// rawText are the elements whose content is not markup.
var rawText = [...]string{"script", "style", "title", "textarea"}

func isRawText(name string) bool {
	for _, r := range rawText {
		if strings.EqualFold(name, r) {
			return true
		}
	}
	return false
}

// tagName returns the tag name at the start of s.
func tagName(s string) string {
	i := 0
	for i < len(s) && !isSpace(s[i]) && s[i] != '/' && s[i] != '>' {
		i++
	}
	return s[:i]
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isSpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
