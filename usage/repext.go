package usage

import "strings"

// MaxRobotsTag is how many bytes of a response's Robots-Tag field values
// [RobotsTag] reads: 8 KiB, the least draft-illyes-repext-03 allows.
const MaxRobotsTag = 8 << 10

// RobotsTag returns the directives the Robots-Tag field values
// (draft-illyes-repext-03) state for a crawler known by the product tokens
// agents.
//
// The field is a Structured Field List (RFC 8941): each member is an Item
// naming a product token, or "*" for every crawler, and carries that
// crawler's rules as its Parameters ("*;nosnippet, ExampleBot;noindex").
// The rules of the members naming one of agents or "*" apply, all of them
// (the union); a rule whose value is the Boolean false (";noindex=?0")
// does not. A product token may be written as a Token or a String. Several
// field values are read as one list, as HTTP combines them. Only the first
// [MaxRobotsTag] bytes are read: a member cut short there is ignored, as are
// the ones after it.
//
// The reading is lenient where the draft and RFC 8941 part: product tokens
// and rule names compare case-insensitively, so "ExampleBot;NoIndex" holds
// (RFC 8941 rejects an upper-case key), and a member that is not valid
// ends the reading instead of voiding the whole field: the members before
// it hold, as before a cut. The legacy X-Robots-Tag syntax is not read
// here ("noindex, nofollow" names two crawlers without rules): see
// [XRobotsTag].
func RobotsTag(values []string, agents []string) Directives {
	return repext(values, agents, nil)
}

// repext reads Robots-Tag field values; emit, when not nil, is called with
// each applying rule's scope, name (lower-case) and value as written (""
// for a rule without one).
func repext(values []string, agents []string, emit func(scope, name, value string)) Directives {
	s, cut := joinLimited(values)
	var d Directives
	p := sfParser{s: s}
	p.skip(" ")
	for p.i < len(s) {
		item, params, ok := p.member()
		p.skip(" \t")
		complete := p.i < len(s) && s[p.i] == ',' || p.i == len(s) && !cut
		if !ok || !complete {
			break
		}
		if name, ok := productToken(item); ok && (name == "*" || matches(name, agents)) {
			d |= paramRules(params, name, emit)
		}
		if p.i == len(s) {
			break
		}
		p.i++ // the comma
		p.skip(" \t")
	}
	return d
}

// joinLimited joins values as HTTP combines field lines, cut at
// MaxRobotsTag bytes; cut reports a cut.
func joinLimited(values []string) (s string, cut bool) {
	if len(values) == 1 {
		s = values[0]
	} else {
		var b strings.Builder
		for _, v := range values {
			if b.Len() > MaxRobotsTag {
				break
			}
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(v)
		}
		s = b.String()
	}
	if len(s) > MaxRobotsTag {
		return s[:MaxRobotsTag], true
	}
	return s, false
}

// productToken returns the product token a member's item names: a Token
// as written, or a String's content.
func productToken(item string) (string, bool) {
	switch {
	case item[0] == '"':
		if strings.IndexByte(item, '\\') >= 0 {
			item = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(item)
		}
		return item[1 : len(item)-1], true
	case item[0] == '*' || isLetter(item[0]):
		return item, true
	}
	return "", false
}

// paramRules returns the directives of the (valid) parameters params.
func paramRules(params, scope string, emit func(scope, name, value string)) Directives {
	var d Directives
	p := sfParser{s: params}
	for p.i < len(params) {
		p.i++ // the ';'
		p.skip(" ")
		k := p.i
		p.key()
		key, value := params[k:p.i], ""
		if p.i < len(params) && params[p.i] == '=' {
			p.i++
			v := p.i
			p.bareItem()
			value = params[v:p.i]
		}
		if value == "?0" {
			continue
		}
		d |= directive(key)
		if emit != nil {
			emit(scope, strings.ToLower(key), strings.TrimPrefix(value, "?1"))
		}
	}
	return d
}

// sfParser reads Structured Field text from s at i. Each method advances i
// past what it read and reports whether it was valid.
type sfParser struct {
	s string
	i int
}

func (p *sfParser) skip(set string) {
	for p.i < len(p.s) && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *sfParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// member reads a List member: an Item or an Inner List, then its
// Parameters.
func (p *sfParser) member() (item, params string, ok bool) {
	start := p.i
	if p.peek() == '(' {
		p.i++
		for {
			p.skip(" ")
			if p.peek() == ')' {
				p.i++
				break
			}
			if !p.bareItem() || !p.params() {
				return "", "", false
			}
			if c := p.peek(); c != ' ' && c != ')' {
				return "", "", false
			}
		}
	} else if !p.bareItem() {
		return "", "", false
	}
	item = p.s[start:p.i]
	k := p.i
	if !p.params() {
		return "", "", false
	}
	return item, p.s[k:p.i], true
}

func (p *sfParser) params() bool {
	for p.peek() == ';' {
		p.i++
		p.skip(" ")
		if !p.key() {
			return false
		}
		if p.peek() == '=' {
			p.i++
			if !p.bareItem() {
				return false
			}
		}
	}
	return true
}

// key reads a key, upper-case letters allowed.
func (p *sfParser) key() bool {
	if c := p.peek(); c != '*' && !isLetter(c) {
		return false
	}
	for p.i++; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		if !isLetter(c) && !isDigit(c) && strings.IndexByte("_-.*", c) < 0 {
			break
		}
	}
	return true
}

// bareItem reads an Integer or Decimal, a String, a Token, a Byte
// Sequence, a Boolean, a Date or a Display String.
func (p *sfParser) bareItem() bool {
	c := p.peek()
	switch {
	case c == '-' || isDigit(c):
		p.i++
		return p.digits() && (p.peek() != '.' || p.advance() && p.digits())
	case c == '"':
		return p.quoted()
	case c == '%':
		p.i++
		return p.peek() == '"' && p.quoted()
	case c == '*' || isLetter(c):
		for p.i++; p.i < len(p.s) && (isTchar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/'); p.i++ {
		}
		return true
	case c == ':':
		k := strings.IndexByte(p.s[p.i+1:], ':')
		if k < 0 {
			return false
		}
		for _, b := range []byte(p.s[p.i+1 : p.i+1+k]) {
			if !isLetter(b) && !isDigit(b) && b != '+' && b != '/' && b != '=' {
				return false
			}
		}
		p.i += k + 2
		return true
	case c == '?':
		p.i++
		if c := p.peek(); c == '0' || c == '1' {
			p.i++
			return true
		}
		return false
	case c == '@':
		p.i++
		if p.peek() == '-' {
			p.i++
		}
		return p.digits()
	}
	return false
}

func (p *sfParser) advance() bool { p.i++; return true }

// digits reads the digits at i (none is valid after a sign already read).
func (p *sfParser) digits() bool {
	k := p.i
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		p.i++
	}
	return p.i > k || k > 0 && isDigit(p.s[k-1])
}

// quoted reads a String from its opening quote.
func (p *sfParser) quoted() bool {
	for p.i++; p.i < len(p.s); p.i++ {
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			return true
		case c == '\\':
			p.i++
			if c := p.peek(); c != '"' && c != '\\' {
				return false
			}
		case c < 0x20 || c > 0x7E:
			return false
		}
	}
	return false
}

func isTchar(c byte) bool {
	return isLetter(c) || isDigit(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
