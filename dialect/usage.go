package dialect

import (
	"strconv"
	"strings"

	"github.com/dunglas/httpsfv"
)

// Usage preferences say what a site allows to be done with its content
// beyond crawling it: whether it may train AI models, feed a search index or
// be given to an AI model at answer time. Two robots.txt lines state them,
// inside a group like Allow and Disallow:
//
//	Content-Usage: train-ai=n                 # draft-ietf-aipref-attach-05
//	Content-Usage: /ai-ok/ train-ai=y         # only under /ai-ok/
//	Content-Signal: search=yes, ai-train=no   # Cloudflare's Content Signals
//
// A Content-Usage value is an RFC 9651 Dictionary over the vocabulary of
// draft-ietf-aipref-vocab-08 (Token y: allow, Token n: disallow); a
// Content-Signal value is read the same way with Cloudflare's names and
// values (ai-train=yes/no for train-ai, search, ai-input), and applies to
// every path. See [Ruleset.Usage] for which statement applies to a path.

// Category is a usage category: what the content would be used for.
type Category uint8

const (
	// TrainAI ("train-ai"): training or fine-tuning AI models
	// (Content-Signal: ai-train).
	TrainAI Category = iota
	// Search ("search"): building a search index and showing links and
	// excerpts (Content-Signal: search).
	Search
	// AIInput ("ai-input"): feeding the content to an AI model at answer
	// time (retrieval, grounding). Only Content-Signal states it; the IETF
	// vocabulary has no such category yet.
	AIInput

	numCategories = 3
)

var categoryNames = [numCategories]string{"train-ai", "search", "ai-input"}

// String returns the category's label: "train-ai", "search", "ai-input".
func (c Category) String() string {
	if int(c) < numCategories {
		return categoryNames[c]
	}
	return "Category(" + strconv.Itoa(int(c)) + ")"
}

// Categories returns the known categories in the order of their constants.
func Categories() []Category { return []Category{TrainAI, Search, AIInput} }

// ParseCategory returns the category of a label. Labels are case-sensitive,
// as the vocabulary has them.
func ParseCategory(label string) (Category, bool) {
	for i, n := range categoryNames {
		if n == label {
			return Category(i), true
		}
	}
	return 0, false
}

// Pref is a preference for one category.
type Pref uint8

// The preferences, from the least to the most restrictive.
const (
	PrefUnknown  Pref = iota // no statement: what it means is the crawler's choice
	PrefAllow                // "y"
	PrefDisallow             // "n"
)

// String returns "unknown", "y" or "n".
func (p Pref) String() string {
	switch p {
	case PrefAllow:
		return "y"
	case PrefDisallow:
		return "n"
	}
	return "unknown"
}

// Usage is a statement of preference: a [Pref] per category. The zero value
// states nothing (every category unknown).
type Usage uint8

// Pref returns the preference for c.
func (u Usage) Pref(c Category) Pref {
	if int(c) >= numCategories {
		return PrefUnknown
	}
	return Pref(u >> (2 * c) & 3)
}

// With returns u with the preference for c set to p.
func (u Usage) With(c Category, p Pref) Usage {
	if int(c) >= numCategories || p > PrefDisallow {
		return u
	}
	return u&^(3<<(2*c)) | Usage(p)<<(2*c)
}

// Combine returns the statements u and o combined as the vocabulary
// combines them, per category the most restrictive: any disallow is
// disallow, else any allow is allow, else unknown.
func (u Usage) Combine(o Usage) Usage {
	for c := range Category(numCategories) {
		if o.Pref(c) > u.Pref(c) {
			u = u.With(c, o.Pref(c))
		}
	}
	return u
}

// String returns the preferences stated, as a Dictionary in the order of
// the categories ("train-ai=n, search=y"); "" when u states none.
func (u Usage) String() string {
	var b strings.Builder
	for c := range Category(numCategories) {
		if p := u.Pref(c); p != PrefUnknown {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.String())
			b.WriteByte('=')
			b.WriteString(p.String())
		}
	}
	return b.String()
}

// ParseUsage reads a Content-Usage value (a robots.txt rule's preference or
// a response header field) as draft-ietf-aipref-vocab-08 says: the value is
// parsed as an RFC 9651 Dictionary; for each known category the Token y is
// allow and the Token n disallow, anything else (absent, a Boolean, the
// String "n", another Token, an Inner List) unknown. Parameters and unknown
// keys are ignored; a key given twice keeps its last value. A value that is
// not a valid Dictionary (an uppercase key, say) states nothing. Several
// field lines of a header are joined with ", " first, as RFC 9651 §4.2 does.
//
// ai-input is no label of the vocabulary: ParseUsage ignores it like any
// unknown key.
func ParseUsage(value string) Usage { return parsePrefs(value, vocabNames, "y", "n") }

// vocabNames are the vocabulary's labels of the categories ("": none).
var vocabNames = [numCategories]string{"train-ai", "search", ""}

// signalNames are Content-Signal's names of the categories.
var signalNames = [numCategories]string{"ai-train", "search", "ai-input"}

// parseSignal reads a Content-Signal value: a Dictionary whose keys are
// Cloudflare's signals and whose values are the Tokens yes and no.
func parseSignal(value string) Usage { return parsePrefs(value, signalNames, "yes", "no") }

func parsePrefs(value string, names [numCategories]string, yes, no string) Usage {
	if strings.TrimSpace(value) == "" {
		return 0
	}
	d, err := httpsfv.UnmarshalDictionary([]string{value})
	if err != nil {
		return 0
	}
	var u Usage
	for c, name := range names {
		if name == "" {
			continue
		}
		m, ok := d.Get(name)
		if !ok {
			continue
		}
		it, ok := m.(httpsfv.Item)
		if !ok {
			continue
		}
		switch it.Value {
		case httpsfv.Token(yes):
			u = u.With(Category(c), PrefAllow)
		case httpsfv.Token(no):
			u = u.With(Category(c), PrefDisallow)
		}
	}
	return u
}

// UsageRule is one Content-Usage or Content-Signal line of a group.
type UsageRule struct {
	Key   string // the key as written ("Content-Usage", "content-signal")
	Path  string // the path pattern as written; "" when the line has none (it applies to every path, as "/")
	Value string // the preference as written
	Usage Usage  // what the dialect reads of Value
	Line  int    // 1-based line number
	Group int    // index of the rule's group in Robots.Groups()

	norm string // the path pattern as compared
}

// String returns the rule as written, key and value
// ("Content-Usage: /ai-ok/ train-ai=y").
func (r *UsageRule) String() string {
	v := r.Value
	if r.Path != "" {
		v = r.Path + " " + v
	}
	return r.Key + ": " + v
}

// UsageVerdict is the answer of [Ruleset.Usage] for a path.
type UsageVerdict struct {
	// Crawl is the path's crawl verdict. A path the crawler may not fetch
	// has no usage preference: Usage is then zero.
	Crawl Verdict
	// Usage is the preference in force for the path, per category.
	Usage Usage
	rules [numCategories]*UsageRule
}

// Rule returns the rule that decided category c for the path: among the
// rules that apply (see [Ruleset.Usage]), the first in file order that
// states the preference in force, or, when none states one, the first of
// them. It is nil when no usage rule applies to the path.
func (v *UsageVerdict) Rule(c Category) *UsageRule {
	if int(c) >= numCategories {
		return nil
	}
	return v.rules[c]
}

// Explain says what decided category c: "line 4: Content-Usage: train-ai=n",
// "no usage rule" or, for a path the crawler may not fetch, "disallowed
// (line 3: Disallow: /never/)".
func (v *UsageVerdict) Explain(c Category) string {
	if !v.Crawl.Allowed {
		return "disallowed (" + v.Crawl.String() + ")"
	}
	r := v.Rule(c)
	if r == nil {
		return "no usage rule"
	}
	return "line " + strconv.Itoa(r.Line) + ": " + r.String()
}

// HasUsage reports whether the rules in force hold any Content-Usage or
// Content-Signal line. When they hold none, [Ruleset.Usage] states nothing
// for every path.
func (rs *Ruleset) HasUsage() bool { return rs.usage != nil }

// UsageRules returns the usage rules in force in file order.
func (rs *Ruleset) UsageRules() []UsageRule {
	if rs.usage == nil {
		return nil
	}
	return append([]UsageRule(nil), rs.usage.rules...)
}

// Usage returns the usage preference in force for path (given as to
// [Ruleset.Check]), as draft-ietf-aipref-attach-05 decides it: a path the
// crawler may not fetch has none; otherwise the usage rule of the group(s)
// in force whose path pattern matches the longest part of the path applies
// (the length and matching of Allow and Disallow; a rule without a path
// matches every path as "/"), and the rules whose patterns match with that
// same length are combined, per category the most restrictive (a choice for
// equal-length patterns that differ, such as "/a*" and "/ab", which the
// draft does not cover). A group selected for the crawler's token that has
// no usage rule states nothing, even when the "*" group has some.
//
// Usage costs a crawl check and one more lookup; it does not allocate when
// the path in the form the dialect compares it is at most 512 bytes long.
func (rs *Ruleset) Usage(path string) UsageVerdict {
	v := UsageVerdict{Crawl: rs.Check(path)}
	if !v.Crawl.Allowed || rs.usage == nil {
		return v
	}
	if path == "" {
		path = "/"
	}
	p := path
	var buf [maxStackPath]byte
	if rs.r.d.s.encoding == encRFC3986 {
		if i := rfcURLSpecial(path); i >= 0 {
			b := buf[:0]
			if n := rfcURLLen(path, i); n > maxStackPath {
				b = make([]byte, 0, n)
			}
			p = bytesString(appendRFC3986URL(b, path, i))
		}
	}
	rs.usageAt(p, &v)
	return v
}

// usageAt fills v's usage for the normalised path p.
func (rs *Ruleset) usageAt(p string, v *UsageVerdict) {
	m := &rs.usage.m // Usage calls usageAt only when there are usage rules
	rank := m.fixed
	if rank == pathDependent {
		rank = m.lookup(p)
	}
	if rank == noRule {
		return
	}
	first := &rs.usage.rules[m.order[rank]]
	for c := range v.rules {
		v.rules[c] = first
	}
	n := len(first.norm)
	for k := int(rank); k < len(m.order); k++ {
		r := &rs.usage.rules[m.order[k]]
		if len(r.norm) != n {
			break
		}
		if k != int(rank) && r.norm != first.norm && !rs.r.d.s.matchNorm(r.norm, p) {
			continue
		}
		for c := range Category(numCategories) {
			if r.Usage.Pref(c) > v.Usage.Pref(c) {
				v.Usage = v.Usage.With(c, r.Usage.Pref(c))
				v.rules[c] = r
			}
		}
	}
}

// matchNorm reports whether the normalised pattern pat matches the
// normalised path p (the matcher's rules, for one pattern).
func (s *spec) matchNorm(pat, p string) bool {
	prefix, kind, rest := s.split(pat)
	if !strings.HasPrefix(p, prefix) {
		return false
	}
	switch kind {
	case restNone:
		return true
	case restEnd:
		return len(p) == len(prefix)
	}
	i := len(prefix)
	last := ""
	if strings.HasSuffix(rest, "$") {
		rest = rest[:len(rest)-1]
		if !strings.HasSuffix(rest, "*") {
			// Anchored: the last segment must end the path.
			k := strings.LastIndexByte(rest, '*')
			rest, last = rest[:k+1], rest[k+1:]
		}
	}
	for rest != "" {
		seg := rest
		if k := strings.IndexByte(rest, '*'); k >= 0 {
			seg, rest = rest[:k], rest[k+1:]
		} else {
			rest = ""
		}
		if seg == "" {
			continue
		}
		x := strings.Index(p[i:], seg)
		if x < 0 {
			return false
		}
		i += x + len(seg)
	}
	return len(p)-i >= len(last) && strings.HasSuffix(p, last)
}

// ReadsUsage reports whether the dialect reads Content-Usage and
// Content-Signal lines (all but koster1994).
func (d *Dialect) ReadsUsage() bool {
	return d.s.classify("content-usage") == keyContentUsage
}
