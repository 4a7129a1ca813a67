package usage

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/politecrawl/robots/internal/ascii"
)

// ErrInvalidRSL is wrapped by every error of [ParseRSL] about the document (not
// about reading it): the document is not valid RSL and licenses nothing.
var ErrInvalidRSL = errors.New("rsl: invalid document")

// ParseRSL reads an RSL document from r, up to [MaxRSLSize] bytes. Errors
// about the document wrap [ErrInvalidRSL]; r's own errors are wrapped as
// they are.
func ParseRSL(r io.Reader) (*RSL, error) {
	body, err := readAtMost(r, MaxRSLSize, "rsl: reading the document", ErrInvalidRSL)
	if err != nil {
		return nil, err
	}
	p := parser{d: xml.NewDecoder(bytes.NewReader(body))}
	doc, err := p.document()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRSL, err)
	}
	return doc, nil
}

type parser struct{ d *xml.Decoder }

// notRSLError is the error of a document that is not RSL at all: it has
// no XML root element, or its root is not named rsl (an HTML page, a text
// licence). A root named rsl in another namespace is RSL, and invalid.
type notRSLError struct{ why string }

func (e notRSLError) Error() string { return "not an RSL document: " + e.why }

func (p *parser) document() (*RSL, error) {
	for {
		tok, err := p.d.Token()
		if err == io.EOF {
			return nil, notRSLError{"no root element"}
		}
		if err != nil {
			return nil, notRSLError{"not XML"}
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if se.Name.Local != "rsl" {
			return nil, notRSLError{"the root is <" + ascii.Clip(se.Name.Local, 64) + ">"}
		}
		if se.Name.Space != rslNamespace {
			return nil, fmt.Errorf("the root is <%s> in %q, not <rsl> in %q", se.Name.Local, se.Name.Space, rslNamespace)
		}
		doc := &RSL{MaxAge: rslDefaultMaxAge}
		if days, err := strconv.Atoi(attr(se, "max-age")); err == nil && days > 0 && days <= 36500 {
			doc.MaxAge = time.Duration(days) * 24 * time.Hour
		}
		err = p.children(se, func(se xml.StartElement) error {
			if se.Name.Local != "content" {
				return unknown(se, "rsl")
			}
			if len(doc.Contents) == MaxContents {
				return fmt.Errorf("more than %d content elements", MaxContents)
			}
			c, err := p.content(se)
			c.Index = len(doc.Contents)
			doc.Contents = append(doc.Contents, c)
			return err
		}, nil)
		if err != nil {
			return nil, err
		}
		if len(doc.Contents) == 0 {
			return nil, errors.New("no content element")
		}
		return doc, nil
	}
}

func (p *parser) content(se xml.StartElement) (RSLContent, error) {
	c := RSLContent{URL: attr(se, "url"), Server: attr(se, "server"), Encrypted: attr(se, "encrypted") == "true",
		LastMod: attr(se, "lastmod")}
	if _, ok := attrOK(se, "url"); !ok {
		return c, errors.New("a content element without a url")
	}
	var err error
	if c.scope, err = parseScope(c.URL); err != nil {
		return c, err
	}
	err = p.children(se, func(se xml.StartElement) error {
		switch se.Name.Local {
		case "license":
			l, err := p.license(se)
			c.Licenses = append(c.Licenses, l)
			return err
		case "alternate", "schema", "copyright", "terms":
			return p.d.Skip()
		}
		return unknown(se, "content")
	}, nil)
	if err == nil && len(c.Licenses) == 0 {
		err = fmt.Errorf("content %q has no license", c.URL)
	}
	return c, err
}

func (p *parser) license(se xml.StartElement) (RSLLicense, error) {
	var l RSLLicense
	return l, p.children(se, func(se xml.StartElement) error {
		switch se.Name.Local {
		case "permits", "prohibits":
			m := &l.Permits
			if se.Name.Local == "prohibits" {
				m = &l.Prohibits
			}
			typ := cmp.Or(attr(se, "type"), "usage")
			if _, dup := (*m)[typ]; dup {
				return fmt.Errorf("a second <%s type=%q> in a license", se.Name.Local, typ)
			}
			text, err := p.text(se)
			if *m == nil {
				*m = map[string][]string{}
			}
			(*m)[typ] = tokens(text, typ)
			return err
		case "payment":
			if l.Payment != nil {
				return errors.New("a second <payment> in a license")
			}
			l.Payment = &Payment{Type: attr(se, "type")}
			return p.payment(se, l.Payment)
		case "reporting":
			l.Reporting = append(l.Reporting, Reporting{attr(se, "type"), attr(se, "profile"), attr(se, "endpoint")})
			return p.d.Skip()
		case "legal":
			text, err := p.text(se)
			l.Legal = append(l.Legal, Legal{attr(se, "type"), text})
			return err
		}
		return unknown(se, "license")
	}, nil)
}

func (p *parser) payment(se xml.StartElement, pay *Payment) error {
	return p.children(se, func(se xml.StartElement) error {
		if !slices.Contains([]string{"standard", "custom", "amount", "accepts"}, se.Name.Local) {
			return unknown(se, "payment")
		}
		text, err := p.text(se)
		switch se.Name.Local {
		case "standard":
			pay.Standard = append(pay.Standard, text)
		case "custom":
			pay.Custom = append(pay.Custom, text)
		case "amount":
			pay.Amount = append(pay.Amount, Amount{text, attr(se, "currency")})
		default:
			pay.Accepts = append(pay.Accepts, Accepts{attr(se, "type"), text})
		}
		return err
	}, nil)
}

// children calls fn with each child element of start in the RSL namespace,
// up to start's end tag, and chars (when not nil) with its character data;
// fn reads the child to its end. Children of other namespaces are skipped.
func (p *parser) children(start xml.StartElement, fn func(xml.StartElement) error, chars func(xml.CharData)) error {
	for {
		tok, err := p.d.Token()
		if err != nil {
			return eof(err)
		}
		switch t := tok.(type) {
		case xml.CharData:
			if chars != nil {
				chars(t)
			}
		case xml.StartElement:
			if t.Name.Space != rslNamespace {
				err = p.d.Skip()
			} else {
				err = fn(t)
			}
			if err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		}
	}
}

// text returns the text of the element start, trimmed and cut at MaxText
// bytes, up to its end tag. Elements of other namespaces in it are
// skipped; one of RSL's is an error.
func (p *parser) text(start xml.StartElement) (string, error) {
	var b []byte
	err := p.children(start, func(se xml.StartElement) error { return unknown(se, start.Name.Local) },
		func(t xml.CharData) { b = append(b, t[:min(len(t), MaxText-len(b))]...) })
	return strings.TrimSpace(string(b)), err
}

// tokens splits a token list at white space and commas, with the case of
// its type.
func tokens(s, typ string) []string {
	list := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
	for i, t := range list {
		if typ == "geo" {
			list[i] = strings.ToUpper(t)
		} else {
			list[i] = strings.ToLower(t)
		}
	}
	return list
}

// attr returns the value of the attribute of se without a namespace named
// name.
func attr(se xml.StartElement, name string) string {
	v, _ := attrOK(se, name)
	return v
}

func attrOK(se xml.StartElement, name string) (string, bool) {
	for _, a := range se.Attr {
		if a.Name.Space == "" && a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

func unknown(se xml.StartElement, parent string) error {
	return fmt.Errorf("<%s> is not an RSL element of <%s>", se.Name.Local, parent)
}

// eof turns the end of the input inside an element into an error of its
// own.
func eof(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
