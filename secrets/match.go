package secrets

import "slices"

// matcher is an Aho–Corasick automaton over the byte patterns to mask.
//
// Each state is a node of the patterns' trie: the longest suffix of the
// text read so far that is a prefix of some pattern. That one number gives
// both things the masker needs at every byte: the longest pattern that ends
// here (out) and how much of the text's tail could still grow into a
// pattern (hold), which a stream must not emit yet.
//
// Bytes are first mapped to classes (bytes that occur in no pattern share
// class 0), so the transition table has nodes×classes entries. When that
// table would be too large (megabytes of secret values), the automaton
// keeps the trie's own edges and failure links instead: slower per byte,
// bounded in memory.
type matcher struct {
	class  [256]uint16
	nclass int

	// delta is the dense table (nil in sparse mode): the state after s
	// is delta[s+c]. Dense states are row offsets; outMin is the first
	// state where a pattern ends.
	delta  []int32
	outMin int32

	// Sparse mode: the children of s are edgeC/edgeT[first[s]:first[s+1]],
	// sorted by class; fail is the failure link.
	first []int32
	edgeC []uint16
	edgeT []int32
	fail  []int32

	// rootStay[b]: reading b in the root state stays there, so a run of
	// such bytes can be skipped without stepping. The dense form skips
	// only when at most maxSkipFirst bytes start a pattern (skip), with
	// strings.IndexByte when one does (first1, else -1): otherwise the
	// test costs more than the steps it saves.
	rootStay [256]bool
	skip     bool
	first1   int

	// Per state (indexed by info(s)): the length of the longest pattern
	// ending there (0: none), that pattern, and the length of the longest
	// suffix that is a proper prefix of a pattern.
	outLen []int32
	outPat []int32
	hold   []int32

	placeholder []string // per pattern: §§secret(NAME)
	maxLen      int
}

// denseBudget caps the dense table at 8 MiB (2M int32 entries); past it the
// sparse form is used.
const denseBudget = 1 << 21

type pattern struct {
	text string
	name string
}

// newMatcher builds the automaton, dense when its table has at most budget
// entries. pats must be non-empty, distinct and each at least one byte long.
func newMatcher(pats []pattern, budget int) *matcher {
	m := &matcher{placeholder: make([]string, len(pats))}
	for i, p := range pats {
		m.placeholder[i] = Alias(p.name)
		m.maxLen = max(m.maxLen, len(p.text))
		for j := 0; j < len(p.text); j++ {
			if b := p.text[j]; m.class[b] == 0 {
				m.nclass++
				m.class[b] = uint16(m.nclass)
			}
		}
	}
	m.nclass++ // class 0

	// The trie, with children as small sorted lists while it is built.
	type edge = struct {
		c  uint16
		to int32
	}
	kids := [][]edge{nil}
	depth := []int32{0}
	term := []int32{-1}
	for i, p := range pats {
		s := int32(0)
		for j := 0; j < len(p.text); j++ {
			c := m.class[p.text[j]]
			k, found := slices.BinarySearchFunc(kids[s], c, func(e edge, c uint16) int { return int(e.c) - int(c) })
			if found {
				s = kids[s][k].to
				continue
			}
			n := int32(len(kids))
			kids = append(kids, nil)
			depth = append(depth, depth[s]+1)
			term = append(term, -1)
			kids[s] = slices.Insert(kids[s], k, edge{c, n})
			s = n
		}
		term[s] = int32(i)
	}
	nodes := len(kids)

	m.first = make([]int32, nodes+1)
	for s := range nodes {
		m.first[s+1] = m.first[s] + int32(len(kids[s]))
	}
	m.edgeC = make([]uint16, 0, m.first[nodes])
	m.edgeT = make([]int32, 0, m.first[nodes])
	for s := range nodes {
		for _, e := range kids[s] {
			m.edgeC = append(m.edgeC, e.c)
			m.edgeT = append(m.edgeT, e.to)
		}
	}

	// Failure links, outputs and holds in breadth-first order, so that
	// fail[s] is complete before s is reached.
	m.fail = make([]int32, nodes)
	m.outLen = make([]int32, nodes)
	m.outPat = make([]int32, nodes)
	m.hold = make([]int32, nodes)
	queue := make([]int32, 0, nodes)
	queue = append(queue, 0)
	m.outPat[0] = -1
	for qi := 0; qi < len(queue); qi++ {
		s := queue[qi]
		for _, e := range kids[s] {
			t := e.to
			if s != 0 {
				m.fail[t] = m.gotoFail(m.fail[s], e.c)
			}
			if term[t] >= 0 {
				m.outLen[t], m.outPat[t] = depth[t], term[t]
			} else {
				m.outLen[t], m.outPat[t] = m.outLen[m.fail[t]], m.outPat[m.fail[t]]
			}
			if len(kids[t]) > 0 {
				m.hold[t] = depth[t]
			} else {
				m.hold[t] = m.hold[m.fail[t]]
			}
			queue = append(queue, t)
		}
	}

	if nodes*m.nclass <= budget {
		m.dense(queue, kids)
	}
	starts := 0
	m.first1 = -1
	for b := range 256 {
		m.rootStay[b] = m.next(0, byte(b)) == 0
		if !m.rootStay[b] {
			starts++
			m.first1 = b
		}
	}
	m.skip = starts <= maxSkipFirst
	if starts != 1 {
		m.first1 = -1
	}
	return m
}

// maxSkipFirst: see matcher.skip.
const maxSkipFirst = 4

// dense builds the transition table and renumbers the states for it: a
// state is its row's offset in delta (so a step is an add and a load), and
// the states where a pattern ends come last (so finding one is a compare,
// s >= outMin). outLen, outPat and hold are renumbered to match; the
// sparse form is dropped.
func (m *matcher) dense(bfs []int32, kids [][]struct {
	c  uint16
	to int32
}) {
	nodes, nc := len(bfs), int32(m.nclass)
	perm := make([]int32, nodes) // trie node -> dense row
	next := int32(0)
	for _, out := range []bool{false, true} {
		for _, s := range bfs { // the root is first: row 0
			if (m.outLen[s] > 0) == out {
				perm[s] = next
				next++
			}
		}
	}
	m.outMin = nc * int32(nodes)
	outLen, outPat, hold := make([]int32, nodes), make([]int32, nodes), make([]int32, nodes)
	for s := range nodes {
		p := perm[s]
		outLen[p], outPat[p], hold[p] = m.outLen[s], m.outPat[s], m.hold[s]
		if m.outLen[s] > 0 {
			m.outMin = min(m.outMin, p*nc)
		}
	}
	m.outLen, m.outPat, m.hold = outLen, outPat, hold

	m.delta = make([]int32, nodes*m.nclass)
	for _, s := range bfs { // breadth-first: the fail state's row is ready
		row := m.delta[perm[s]*nc : (perm[s]+1)*nc]
		if s != 0 {
			f := perm[m.fail[s]]
			copy(row, m.delta[f*nc:(f+1)*nc])
		}
		for _, e := range kids[s] {
			row[e.c] = perm[e.to] * nc
		}
	}
	m.first, m.edgeC, m.edgeT, m.fail = nil, nil, nil, nil
}

// info returns the index of state s in outLen, outPat and hold.
func (m *matcher) info(s int32) int32 {
	if m.delta != nil {
		return s / int32(m.nclass)
	}
	return s
}

// child returns the trie child of s for class c, or -1.
func (m *matcher) child(s int32, c uint16) int32 {
	lo, hi := m.first[s], m.first[s+1]
	for lo < hi { // binary search; most nodes have one child
		mid := int32(uint32(lo+hi) >> 1)
		switch ec := m.edgeC[mid]; {
		case ec == c:
			return m.edgeT[mid]
		case ec < c:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return -1
}

// gotoFail follows failure links from s until a state has a child for c.
func (m *matcher) gotoFail(s int32, c uint16) int32 {
	for {
		if t := m.child(s, c); t >= 0 {
			return t
		}
		if s == 0 {
			return 0
		}
		s = m.fail[s]
	}
}

// next is the automaton's transition.
func (m *matcher) next(s int32, b byte) int32 {
	c := m.class[b]
	if m.delta != nil {
		return m.delta[s+int32(c)]
	}
	if c == 0 {
		return 0
	}
	return m.gotoFail(s, c)
}
