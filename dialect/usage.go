package dialect

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/dunglas/httpsfv"

	"github.com/politecrawl/robots/internal/pathpat"
)

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
	// time (retrieval, grounding). Only Content-Signal states it.
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
	i := slices.Index(categoryNames[:], label)
	return Category(max(i, 0)), i >= 0
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
func (p Pref) String() string { return [...]string{"unknown", "y", "n", "unknown"}[p&3] }

// UseLevel is Content-Signal's use= key: how far a consumer may use the
// content, ordered from the most to the least restrictive. A site's level is
// the most it allows: a crawler that declares a higher level than the
// site's is refused (as Cloudflare's crawl endpoint refuses it).
type UseLevel uint8

const (
	UseUnknown   UseLevel = iota // no level stated (not a default: the crawler's choice)
	UseImmediate                 // "immediate": interact, store and reuse nothing
	UseReference                 // "reference": index, excerpt and link back
	UseFull                      // "full": summarise and reproduce
)

var useNames = [...]string{"unknown", "immediate", "reference", "full"}

// String returns "unknown", "immediate", "reference" or "full".
func (l UseLevel) String() string { return useNames[l&3] }

// ParseUseLevel returns the level named "immediate", "reference" or "full",
// in any case; anything else (including "unknown") is no level.
func ParseUseLevel(s string) (UseLevel, bool) {
	for i := UseImmediate; i <= UseFull; i++ {
		if strings.EqualFold(s, useNames[i]) {
			return i, true
		}
	}
	return UseUnknown, false
}

// Usage is a statement of preference: a [Pref] per category and a
// [UseLevel]. The zero value states nothing.
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

// Use returns the use level stated.
func (u Usage) Use() UseLevel { return UseLevel(u >> (2 * numCategories)) }

// WithUse returns u with the use level set to l.
func (u Usage) WithUse(l UseLevel) Usage {
	return u&^(3<<(2*numCategories)) | Usage(l&3)<<(2*numCategories)
}

// Combine returns the statements u and o combined, the most restrictive of
// each: per category any disallow is disallow, else any allow is allow, else
// unknown (as the vocabulary combines them); of the use levels the lower
// known one.
func (u Usage) Combine(o Usage) Usage {
	for c := range Category(numCategories) {
		if o.Pref(c) > u.Pref(c) {
			u = u.With(c, o.Pref(c))
		}
	}
	if l := o.Use(); l != UseUnknown && (u.Use() == UseUnknown || l < u.Use()) {
		u = u.WithUse(l)
	}
	return u
}

// String returns what u states, as a Dictionary in the order of the
// categories, the level last ("train-ai=n, search=y, use=reference"); ""
// when u states nothing.
func (u Usage) String() string {
	var b strings.Builder
	u.each(func(k, v string) {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "=" + v)
	})
	return b.String()
}

// each calls add with each key and value u states, in the order of the
// categories, the level last.
func (u Usage) each(add func(k, v string)) {
	for c := range Category(numCategories) {
		if p := u.Pref(c); p != PrefUnknown {
			add(c.String(), p.String())
		}
	}
	if l := u.Use(); l != UseUnknown {
		add("use", l.String())
	}
}

// ParseUsage reads a Content-Usage value (a robots.txt rule's preference or
// a response header field) as draft-ietf-aipref-vocab-08 says: the value is
// parsed as an RFC 9651 Dictionary; for train-ai and search the Token y is
// allow and the Token n disallow, anything else (absent, a Boolean, the
// String "n", another Token, an Inner List) unknown. Parameters and other
// keys (ai-input, no label of the vocabulary) are ignored; a key given twice
// keeps its last value. A value that is not a valid Dictionary (an uppercase
// key, say) states nothing. Several field lines of a header are joined with
// ", " first, as RFC 9651 §4.2 does.
func ParseUsage(value string) Usage {
	d, err := httpsfv.UnmarshalDictionary([]string{value})
	if strings.TrimSpace(value) == "" || err != nil {
		return 0
	}
	var u Usage
	for _, c := range [...]Category{TrainAI, Search} {
		m, _ := d.Get(c.String())
		if it, ok := m.(httpsfv.Item); ok {
			switch it.Value {
			case httpsfv.Token("y"):
				u = u.With(c, PrefAllow)
			case httpsfv.Token("n"):
				u = u.With(c, PrefDisallow)
			}
		}
	}
	return u
}

// ParseContentSignal reads a Content-Signal value, the robots.txt line's or
// the response header's: comma-separated key=value pairs, read leniently as
// Cloudflare gives no grammar (keys and values in any case, whitespace around
// ',' and '=', parameters ";..." dropped, other keys and free text ignored, a
// key given twice keeps its last value). ai-train, search and ai-input take
// yes or no, and also allow or disallow (a variant of plain meaning: ignoring
// "disallow" would turn a refusal into silence); use takes a [UseLevel]. Any
// other value, or none, is no preference for that key.
func ParseContentSignal(value string) Usage {
	var u Usage
	for item := range strings.SplitSeq(value, ",") {
		k, v, _ := strings.Cut(item, "=")
		v, _, _ = strings.Cut(v, ";")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if strings.EqualFold(k, "use") {
			l, _ := ParseUseLevel(v)
			u = u.WithUse(l)
			continue
		}
		for c, name := range [numCategories]string{"ai-train", "search", "ai-input"} {
			if strings.EqualFold(k, name) {
				p := PrefUnknown
				if strings.EqualFold(v, "yes") || strings.EqualFold(v, "allow") {
					p = PrefAllow
				} else if strings.EqualFold(v, "no") || strings.EqualFold(v, "disallow") {
					p = PrefDisallow
				}
				u = u.With(Category(c), p)
			}
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
	// Usage is the preference in force for the path: per category, and
	// the use level.
	Usage Usage
	rules [numCategories + 1]*UsageRule // per category, then the level's
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

// UseRule returns the rule that decided the use level, as [UsageVerdict.Rule]
// does for a category: the first in file order that states the level in
// force, or the first rule that applies; nil when none applies.
func (v *UsageVerdict) UseRule() *UsageRule { return v.rules[numCategories] }

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

// UsageRules returns the usage rules in force in file order.
func (rs *Ruleset) UsageRules() []UsageRule {
	if rs.usage == nil {
		return nil
	}
	return append([]UsageRule(nil), rs.usage.rules...)
}

// Usage returns the usage preference in force for path (given as to
// [Ruleset.Check]), as draft-ietf-aipref-attach-05 decides it: a path the
// crawler may not fetch has none; otherwise the usage rules of the group(s)
// in force whose patterns match the longest part of the path (as Allow and
// Disallow match; no path is "/") apply, combined as [Usage.Combine] does. A
// group selected for the crawler's token that has no usage rule states
// nothing, even when the "*" group has some. Usage costs a crawl check and
// one more lookup, and allocates no more than Check does.
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
		u := v.Usage.Combine(r.Usage)
		for c := range Category(numCategories) {
			if u.Pref(c) != v.Usage.Pref(c) {
				v.rules[c] = r
			}
		}
		if u.Use() != v.Usage.Use() {
			v.rules[numCategories] = r
		}
		v.Usage = u
	}
}

// matchNorm reports whether the normalised pattern pat matches the
// normalised path p (the matcher's rules, for one pattern).
func (s *spec) matchNorm(pat, p string) bool {
	if !s.wildcards {
		return strings.HasPrefix(p, pat)
	}
	return pathpat.Split(pat).Match(p)
}

// ReadsUsage reports whether the dialect reads Content-Usage and
// Content-Signal lines (all but koster1994).
func (d *Dialect) ReadsUsage() bool {
	return d.s.classify("content-usage") == keyContentUsage
}

// License is a License line of RSL 1.0 (Really Simple Licensing): the URL of
// the licence document that governs the site's content, as written (an
// absolute URL by the standard; resolving it is the caller's).
type License struct {
	Line int
	URL  string
}

// Licenses returns the License lines that apply to the crawler, in file
// order, as RSL 1.0 with its errata selects them: those of the group(s)
// selected for the crawler if they have any, else the global ones (before
// the first User-agent line); nil when none apply. A License line belongs to
// the group it stands in, as any line does under RFC 9309, even after a
// blank line or a Sitemap; like Sitemap it never ends a group's user-agent
// lines. koster1994 reads no License lines (an unknown key there).
func (rs *Ruleset) Licenses() []License { return slices.Clone(rs.lic) }

// MarshalText returns the category's label.
func (c Category) MarshalText() ([]byte, error) {
	if int(c) >= numCategories {
		return nil, errors.New("dialect: unknown category " + strconv.Itoa(int(c)))
	}
	return []byte(c.String()), nil
}

// UnmarshalText reads a category's label.
func (c *Category) UnmarshalText(b []byte) error { return unmarshalName(c, b, categoryNames[:]) }

// MarshalText returns "unknown", "y" or "n".
func (p Pref) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads "unknown", "y" or "n".
func (p *Pref) UnmarshalText(b []byte) error {
	return unmarshalName(p, b, []string{"unknown", "y", "n"})
}

// MarshalText returns the level's name.
func (l UseLevel) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads a level's name, "unknown" included.
func (l *UseLevel) UnmarshalText(b []byte) error { return unmarshalName(l, b, useNames[:]) }

// unmarshalName sets *v to the index of the name b in names.
func unmarshalName[T ~uint8](v *T, b []byte, names []string) error {
	i := slices.Index(names, string(b))
	if i < 0 {
		return errors.New("dialect: unknown name " + strconv.Quote(string(b)))
	}
	*v = T(i)
	return nil
}

// MarshalJSON returns u as an object of what it states: a preference per
// category and the use level, each by name ({"train-ai":"n","use":"reference"});
// {} when it states nothing.
func (u Usage) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	u.each(func(k, v string) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, `"`+k+`":"`+v+`"`...)
	})
	return append(b, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (u *Usage) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	var v Usage
	for k, s := range m {
		var c Category
		var p Pref
		var l UseLevel
		switch {
		case k == "use" && l.UnmarshalText([]byte(s)) == nil:
			v = v.WithUse(l)
		case c.UnmarshalText([]byte(k)) == nil && p.UnmarshalText([]byte(s)) == nil:
			v = v.With(c, p)
		default:
			return errors.New("dialect: unknown usage " + strconv.Quote(k+"="+s))
		}
	}
	*u = v
	return nil
}
