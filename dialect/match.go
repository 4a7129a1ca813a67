package dialect

import (
	"bytes"
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/politecrawl/robots/internal/pathpat"
)

// The matcher answers "which rule wins for this path" in about the time of a
// walk down a trie as deep as the path's matching literal prefix.
//
// Rules are ranked by precedence (rank 0 wins over every other rule it ties
// with: longer normalised pattern first, then allow before disallow, then
// file order); the winner for a path is the matching rule of least rank.
//
// Each pattern is split into a literal prefix (the part before its first
// '*', without a final '$') and what follows. The prefixes are kept in a
// radix trie, flattened into one slice of nodes. Per node:
//
//   - the best prefix rule ("/a": matches whatever follows) and the best
//     end rule ("/a$": matches only when nothing follows) ending there are
//     precomputed, so a walk costs nothing per rule for plain patterns;
//   - the wildcard rules ending there are listed best first, and tried in
//     that order until one matches or one cannot beat the best so far;
//     when a node has many of them they are also indexed by a three-byte
//     piece (a "gram") of their literal segments, so that only the rules
//     whose gram occurs in the path are tried.
//
// A rule whose normalised pattern equals that of a better-ranked rule can
// never win (it matches the same paths), so it is left out of the index.

// noRule is the rank of "no rule matched": worse than any rule.
const noRule = int32(math.MaxInt32)

// pathDependent is matcher.fixed when the verdict depends on the path.
const pathDependent = int32(-1)

type matcher struct {
	// order[rank] is the index in Ruleset.rules of the rule of that rank.
	order []int32
	// fixed is the rank that decides every path (noRule: no rule ever
	// matches), or pathDependent.
	fixed  int32
	nodes  []tnode // nodes[0] is the root
	kidKey []byte  // kidKey[j] is the first byte of node j's label (j > 0)
	labels string  // the nodes' labels
	wild   []wildRule
	segs   []string // the segments of the wildcard rules, each rule a window
	grams  []gramIndex
}

// footprint returns about how many bytes m holds.
func (m *matcher) footprint() int {
	n := sizeOf[matcher]() + 4*len(m.order) + sizeOf[tnode]()*len(m.nodes) + len(m.kidKey) + len(m.labels) +
		sizeOf[wildRule]()*len(m.wild) + 16*len(m.segs)
	for i := range m.grams {
		n += 64 + 4*len(m.grams[i].start) + sizeOf[gramEntry]()*len(m.grams[i].entries) + 4*len(m.grams[i].loose)
	}
	return n
}

// tnode is a node of the flattened radix trie.
type tnode struct {
	lab0, lab1 int32 // edge label from the parent: labels[lab0:lab1]
	kid0, nkid int32 // children: nodes[kid0 : kid0+nkid]
	any        int32 // best rank of a prefix rule whose prefix ends here
	end        int32 // best rank of a "prefix$" rule whose prefix ends here
	min        int32 // best rank anywhere in the subtree
	w0, w1     int32 // wild[w0:w1]: the wildcard rules ending here, best first
	gram       int32 // index in grams when those are indexed, else -1
}

// wildRule is a pattern with a '*' after its literal prefix: the literal
// segments between the '*'s must occur in order in the rest of the path, the
// last one at its very end when the pattern is anchored by '$'.
type wildRule struct {
	rank     int32
	minLen   int32 // total length of the segments: the least rest that can match
	s0, s1   int32 // segments: matcher.segs[s0:s1]
	anchored bool
	mask     uint64 // bytes (mod 64) the segments need
	grams    uint64 // gramBit of each gram of the segments
}

// gramIndex indexes the wildcard rules of one node by one three-byte piece
// of their segments (see indexGrams for which). A rule with no segment of
// three bytes or more is "loose": always tried. A rule whose gram is in the
// path is tried only if the path also holds all its other grams, as far as
// a 64-bit signature of them tells.
type gramIndex struct {
	shift   uint8   // bucket of gram g: gramHash(g) >> shift
	start   []int32 // bucket b: entries[start[b]:start[b+1]], best first
	entries []gramEntry
	loose   []int32 // indexes in matcher.wild, best first
}

type gramEntry struct {
	gram uint32
	rank int32
	w    int32 // index in matcher.wild
}

// gramIndexMin is how many wildcard rules a node needs for a gram index.
const gramIndexMin = 16

func gramAt(s string, i int) uint32 {
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16
}

func gramHash(g uint32) uint32 { return g * 0x9E3779B1 }

// gramBit is one bit of a 64-bit signature of a set of grams.
func gramBit(g uint32) uint64 { return 1 << (gramHash(g) >> 26 & 63) }

const (
	restNone uint8 = iota // prefix match
	restEnd               // prefix, then the end of the path
	restWild              // prefix, then segments between '*'s
)

// split separates a normalised pattern into its literal prefix, the kind of
// what follows, and (restWild) its wildcard parts.
func (s *spec) split(p string) (prefix string, kind uint8, parts pathpat.Parts) {
	if !s.wildcards {
		return p, restNone, parts
	}
	parts = pathpat.Split(p)
	switch {
	case !parts.Wild && parts.Anchored:
		return parts.Prefix, restEnd, parts
	case !parts.Wild, parts.Segments(func(string) bool { return false }):
		// No '*', or nothing but '*'s after the prefix: a prefix match.
		return parts.Prefix, restNone, parts
	}
	return parts.Prefix, restWild, parts
}

// addWild compiles the segments of a wildcard pattern and appends it to
// m.wild.
func (m *matcher) addWild(rank int32, parts pathpat.Parts) {
	w := wildRule{rank: rank, s0: int32(len(m.segs)), anchored: parts.Anchored}
	parts.Segments(func(seg string) bool {
		m.segs = append(m.segs, seg)
		w.minLen += int32(len(seg))
		for j := 0; j < len(seg); j++ {
			w.mask |= 1 << (seg[j] & 63)
			if j+3 <= len(seg) {
				w.grams |= gramBit(gramAt(seg, j))
			}
		}
		return true
	})
	w.s1 = int32(len(m.segs))
	m.wild = append(m.wild, w)
}

// match reports whether w matches p after the literal prefix p[:i].
func (m *matcher) match(w *wildRule, p string, i int, st *lookState) bool {
	st.tries++
	if len(p)-i < int(w.minLen) {
		return false
	}
	if st.mask == 0 {
		st.mask = pathMask(p)
	}
	if w.mask&^st.mask != 0 {
		return false
	}
	segs := m.segs[w.s0:w.s1]
	last := len(segs) - 1
	for k, seg := range segs {
		if k == last && w.anchored {
			return len(p)-i >= len(seg) && p[len(p)-len(seg):] == seg
		}
		x := strings.Index(p[i:], seg)
		if x < 0 {
			return false
		}
		i += x + len(seg)
	}
	return true
}

func pathMask(p string) uint64 {
	m := uint64(1) << 63 // never zero, so that 0 means "not computed"
	// Four accumulators, so that the loop is not one chain of ORs.
	var m1, m2, m3 uint64
	i := 0
	for ; i+4 <= len(p); i += 4 {
		m |= 1 << (p[i] & 63)
		m1 |= 1 << (p[i+1] & 63)
		m2 |= 1 << (p[i+2] & 63)
		m3 |= 1 << (p[i+3] & 63)
	}
	for ; i < len(p); i++ {
		m |= 1 << (p[i] & 63)
	}
	return m | m1 | m2 | m3
}

// lookState is the scratch state of one lookup.
type lookState struct {
	mask  uint64 // pathMask of the path, once computed
	tries int    // wildcard rules tried (for tests: each at most once)
}

// lookup returns the rank of the rule that wins for p, or noRule.
func (m *matcher) lookup(p string) int32 {
	var st lookState
	return m.lookupState(p, &st)
}

func (m *matcher) lookupState(p string, st *lookState) int32 {
	best := noRule
	n, i := &m.nodes[0], 0
	for n.min < best {
		best = min(best, n.any)
		if i == len(p) {
			best = min(best, n.end)
		}
		if n.w0 < n.w1 && m.wild[n.w0].rank < best {
			best = m.lookupWild(n, p, i, best, st)
		}
		if i >= len(p) || n.nkid == 0 {
			break
		}
		kids, b := m.kidKey[n.kid0:n.kid0+n.nkid], p[i]
		k := 0
		if len(kids) <= 8 {
			for k < len(kids) && kids[k] != b {
				k++
			}
			if k == len(kids) {
				break
			}
		} else if k = bytes.IndexByte(kids, b); k < 0 {
			break
		}
		c := &m.nodes[n.kid0+int32(k)]
		label := m.labels[c.lab0:c.lab1]
		if !strings.HasPrefix(p[i:], label) {
			break
		}
		n, i = c, i+len(label)
	}
	return best
}

// maxGramTries is how many distinct wildcard rules lookupWild tries through
// the gram index before it goes over the node's rules in order instead.
const maxGramTries = 32

// lookupWild returns the best of best and the ranks of the wildcard rules of
// n that match p after its prefix p[:i]. Each rule is tried at most twice
// (through the index, then once more if there are many candidates), so that
// the cost stays linear in the length of the path: a rule's gram may occur
// at many places of the path, and match does not depend on where.
func (m *matcher) lookupWild(n *tnode, p string, i int, best int32, st *lookState) int32 {
	if n.gram < 0 {
		return m.lookupWildAll(n, p, i, best, st, ^uint64(0))
	}
	g := &m.grams[n.gram]
	for _, k := range g.loose {
		w := &m.wild[k]
		if w.rank >= best {
			break
		}
		if m.match(w, p, i, st) {
			best = w.rank
			break
		}
	}
	// A rule can match only if all its grams are in the rest of the path.
	var sig uint64
	for j := i; j+3 <= len(p); j++ {
		sig |= gramBit(gramAt(p, j))
	}
	var tried [maxGramTries]int32
	nt := 0
	for j := i; j+3 <= len(p); j++ {
		gr := gramAt(p, j)
		b := gramHash(gr) >> g.shift
	entries:
		for _, e := range g.entries[g.start[b]:g.start[b+1]] {
			if e.rank >= best {
				break
			}
			w := &m.wild[e.w]
			if e.gram != gr || w.grams&^sig != 0 {
				continue
			}
			for _, t := range tried[:nt] {
				if t == e.w {
					continue entries
				}
			}
			if nt == len(tried) {
				// Many candidates: one pass over the rules, best first.
				return m.lookupWildAll(n, p, i, best, st, sig)
			}
			tried[nt] = e.w
			nt++
			if m.match(w, p, i, st) {
				best = e.rank
				break
			}
		}
	}
	return best
}

// lookupWildAll is lookupWild without the gram index: the rules of n whose
// grams are all in sig (the signature of the path's grams) are tried in
// order of rank until one matches or none can beat best.
func (m *matcher) lookupWildAll(n *tnode, p string, i int, best int32, st *lookState, sig uint64) int32 {
	for k := n.w0; k < n.w1; k++ {
		w := &m.wild[k]
		if w.rank >= best {
			break
		}
		if w.grams&^sig == 0 && m.match(w, p, i, st) {
			return w.rank
		}
	}
	return best
}

// ruleKey is what the matcher needs of a rule: its normalised pattern and
// whether it allows.
type ruleKey struct {
	norm  string
	allow bool
}

// build indexes rules (in file order) for lookup.
func (m *matcher) build(s *spec, rules []ruleKey) {
	*m = matcher{fixed: noRule}
	if len(rules) == 0 {
		return
	}
	n := len(rules)
	maxLen := 0
	for i := range rules {
		maxLen = max(maxLen, len(rules[i].norm))
	}
	m.order = rankOrder(rules, maxLen)
	b := trieBuilder{
		s:    s,
		m:    m,
		norm: make([]string, n),
		plen: make([]int32, n),
		kind: make([]uint8, n),
		tmp:  make([]int32, n),
	}
	nlabel, nwild, nseg := 0, 0, 0
	for rank, ri := range m.order {
		norm := rules[ri].norm
		prefix, kind, _ := s.split(norm)
		b.norm[rank], b.plen[rank], b.kind[rank] = norm, int32(len(prefix)), kind
		nlabel += len(prefix)
		if kind == restWild {
			nwild++
			nseg += strings.Count(norm, "*")
		}
	}
	b.label = make([]byte, 0, nlabel)
	m.wild = make([]wildRule, 0, nwild)
	m.segs = make([]string, 0, nseg)
	// The trie builder wants the ranks by prefix length, shortest first.
	idx := make([]int32, n)
	for rank := range idx {
		idx[rank] = int32(rank)
	}
	sortBy(idx, b.tmp, maxLen, func(r int32) int { return int(b.plen[r]) })
	m.nodes = make([]tnode, 1, n+1)
	m.kidKey = make([]byte, 1, n+1)
	b.node(0, idx, 0)
	m.labels = string(b.label)
	if root := &m.nodes[0]; root.min == root.any {
		m.fixed = root.any // an always-matching rule beats all the others
	} else {
		m.fixed = pathDependent
	}
}

// trieBuilder holds what build needs about each rule, by rank.
type trieBuilder struct {
	s     *spec
	m     *matcher
	norm  []string
	plen  []int32 // length of the literal prefix
	kind  []uint8
	tmp   []int32 // scratch for sorting
	label []byte  // the labels so far
}

// prefix returns the literal prefix of the rule of rank r.
func (b *trieBuilder) prefix(r int32) string { return b.norm[r][:b.plen[r]] }

// node fills nodes[ni] and its subtree from the rules of ranks idx, whose
// prefixes all start with the same depth bytes (the node's path from the
// root). It returns the node's min.
// groupEnd returns the end of the run of rules in rest, from j, whose
// prefixes have the same byte at depth as rest[j]'s (rest is sorted by that
// byte): the rules under one child.
func (b *trieBuilder) groupEnd(rest []int32, j, depth int) int {
	c := b.prefix(rest[j])[depth]
	e := j + 1
	for e < len(rest) && b.prefix(rest[e])[depth] == c {
		e++
	}
	return e
}

func (b *trieBuilder) node(ni int32, idx []int32, depth int) int32 {
	m := b.m
	n := m.nodes[ni]
	n.any, n.end, n.gram = noRule, noRule, -1
	// idx is sorted by prefix length: the rules whose prefix ends here go
	// first.
	k := 0
	for k < len(idx) && int(b.plen[idx[k]]) == depth {
		k++
	}
	here, rest := idx[:k], idx[k:]
	nw := 0
	for _, r := range here {
		switch b.kind[r] {
		case restNone:
			n.any = min(n.any, r)
		case restEnd:
			n.end = min(n.end, r)
		default:
			here[nw] = r
			nw++
		}
	}
	if wild := here[:nw]; len(wild) > 0 {
		// A rule with the same pattern as a better one never wins.
		slices.SortFunc(wild, func(x, y int32) int {
			if c := strings.Compare(b.norm[x], b.norm[y]); c != 0 {
				return c
			}
			return cmp.Compare(x, y)
		})
		wild = slices.CompactFunc(wild, func(x, y int32) bool { return b.norm[x] == b.norm[y] })
		slices.Sort(wild)
		n.w0 = int32(len(m.wild))
		for _, r := range wild {
			m.addWild(r, pathpat.Split(b.norm[r]))
		}
		n.w1 = int32(len(m.wild))
		if len(wild) >= gramIndexMin {
			n.gram = int32(len(m.grams))
			m.grams = append(m.grams, m.indexGrams(n.w0, n.w1))
		}
	}
	n.min = min(n.any, n.end)
	if n.w0 < n.w1 {
		n.min = min(n.min, m.wild[n.w0].rank)
	}
	// Children: one per distinct next byte, created together so that they
	// are contiguous.
	b.sortByte(rest, depth)
	n.kid0 = int32(len(m.nodes))
	for j := 0; j < len(rest); {
		e := b.groupEnd(rest, j, depth)
		// The label runs to the longest prefix the group's rules share.
		first := b.prefix(rest[j])
		l := len(first)
		for _, r := range rest[j+1 : e] {
			p := b.prefix(r)
			q := depth + 1
			for q < l && q < len(p) && p[q] == first[q] {
				q++
			}
			l = q
		}
		lab0 := int32(len(b.label))
		b.label = append(b.label, first[depth:l]...)
		m.nodes = append(m.nodes, tnode{lab0: lab0, lab1: int32(len(b.label))})
		m.kidKey = append(m.kidKey, first[depth])
		j = e
	}
	n.nkid = int32(len(m.nodes)) - n.kid0
	m.nodes[ni] = n
	j := 0
	for kid := n.kid0; kid < n.kid0+n.nkid; kid++ {
		e := b.groupEnd(rest, j, depth)
		kn := &m.nodes[kid]
		d := depth + int(kn.lab1-kn.lab0)
		n.min = min(n.min, b.node(kid, rest[j:e], d))
		j = e
	}
	m.nodes[ni].min = n.min
	return n.min
}

// sortByte sorts the ranks idx by the byte at depth of their prefixes (all
// longer than depth), stably.
func (b *trieBuilder) sortByte(idx []int32, depth int) {
	at := func(r int32) byte { return b.norm[r][depth] }
	if len(idx) <= 32 {
		for i := 1; i < len(idx); i++ {
			for j := i; j > 0 && at(idx[j]) < at(idx[j-1]); j-- {
				idx[j], idx[j-1] = idx[j-1], idx[j]
			}
		}
		return
	}
	var count [257]int32
	countingSort(idx, b.tmp, count[:], func(r int32) int { return int(at(r)) })
}

// rankOrder returns the indexes of rules (in file order) from the best to
// the worst precedence: longer normalised pattern first, then allow before
// disallow, then file order. maxLen is the longest pattern's length.
func rankOrder(rules []ruleKey, maxLen int) []int32 {
	order := make([]int32, len(rules))
	for i := range order {
		order[i] = int32(i)
	}
	key := func(i int32) int {
		r := &rules[i]
		k := 2 * (maxLen - len(r.norm))
		if !r.allow {
			k++
		}
		return k
	}
	sortBy(order, make([]int32, len(rules)), 2*maxLen+1, key)
	return order
}

// sortBy sorts idx stably by key, whose values are in [0, maxKey]; tmp is
// scratch of the same length.
func sortBy(idx, tmp []int32, maxKey int, key func(int32) int) {
	if maxKey >= 1<<14 {
		// Only for absurdly long patterns: avoid a huge count table.
		slices.SortStableFunc(idx, func(x, y int32) int { return cmp.Compare(key(x), key(y)) })
		return
	}
	countingSort(idx, tmp, make([]int32, maxKey+2), key)
}

// countingSort sorts idx stably by key, whose values are below
// len(count)-1; count must be zero and tmp as long as idx.
func countingSort(idx, tmp, count []int32, key func(int32) int) {
	for _, r := range idx {
		count[key(r)+1]++
	}
	for c := 1; c < len(count); c++ {
		count[c] += count[c-1]
	}
	tmp = tmp[:len(idx)]
	for _, r := range idx {
		k := key(r)
		tmp[count[k]] = r
		count[k]++
	}
	copy(idx, tmp)
}

// indexGrams builds the gram index of the wildcard rules wild[w0:w1]. Each
// rule is filed under the gram of its segments that is rarest among the
// rules' grams (the paths that come near a rule look like it, so a gram
// that few rules share is one that few paths hold), the least loaded
// bucket breaking ties.
func (m *matcher) indexGrams(w0, w1 int32) gramIndex {
	nb := 1 << bits.Len(uint(w1-w0)) // at least one bucket per rule
	g := gramIndex{shift: uint8(32 - bits.TrailingZeros(uint(nb)))}
	// How many rules hold each gram, counted in a table four times the
	// size of the index (collisions only blur the counts).
	freqShift := g.shift - 2
	freq := make([]int32, nb*4)
	for k := w0; k < w1; k++ {
		w := &m.wild[k]
		for _, seg := range m.segs[w.s0:w.s1] {
			for j := 0; j+3 <= len(seg); j++ {
				freq[gramHash(gramAt(seg, j))>>freqShift]++
			}
		}
	}
	load := make([]int32, nb+1)
	type choice struct {
		gram uint32
		ok   bool
	}
	chosen := make([]choice, w1-w0)
	for k := w0; k < w1; k++ {
		w := &m.wild[k]
		var c choice
		bestFreq, bestLoad := int32(math.MaxInt32), int32(math.MaxInt32)
		for _, seg := range m.segs[w.s0:w.s1] {
			for j := 0; j+3 <= len(seg); j++ {
				gr := gramAt(seg, j)
				h := gramHash(gr)
				f, l := freq[h>>freqShift], load[h>>g.shift]
				if f < bestFreq || f == bestFreq && l < bestLoad {
					bestFreq, bestLoad, c = f, l, choice{gr, true}
				}
			}
		}
		chosen[k-w0] = c
		if c.ok {
			load[gramHash(c.gram)>>g.shift]++
		} else {
			g.loose = append(g.loose, k)
		}
	}
	// Counting sort into buckets; rules are visited best first, so each
	// bucket stays best first.
	g.start = make([]int32, nb+1)
	sum := int32(0)
	for b := 0; b < nb; b++ {
		g.start[b] = sum
		sum += load[b]
	}
	g.start[nb] = sum
	g.entries = make([]gramEntry, sum)
	fill := load[:nb]
	copy(fill, g.start[:nb])
	for k := w0; k < w1; k++ {
		c := chosen[k-w0]
		if !c.ok {
			continue
		}
		b := gramHash(c.gram) >> g.shift
		g.entries[fill[b]] = gramEntry{gram: c.gram, rank: m.wild[k].rank, w: k}
		fill[b]++
	}
	return g
}
