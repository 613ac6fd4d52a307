package secrets

import "strings"

// PartialMask replaces, at the end of a stream, a held partial value of at
// least MinMasked bytes (see [Stream.Flush]).
const PartialMask = "***"

// span is one occurrence chosen for masking: input bytes [start, end) are
// replaced by the placeholder of pattern pat.
type span struct {
	start, end int
	pat        int32
}

// scan is the masking state shared by [Set.Mask] and [Stream]. Positions
// are absolute offsets in the input.
//
// The rule it applies: at each input position the automaton reports the
// longest pattern ending there. That occurrence removes the chosen
// occurrences it contains (those starting at or after its start: they
// ended earlier, so they lie inside it) and is chosen itself. Overlapping
// occurrences are thus all kept, each as its placeholder, so no byte of
// any occurrence is ever written in clear; an occurrence inside a longer
// one gives way to it (longest first).
type scan struct {
	m     *matcher
	state int32
	pos   int    // input bytes read
	done  int    // input before done is written (in clear or as a placeholder)
	spans []span // chosen occurrences; spans[head:] are not written yet
	head  int
}

// feed runs the automaton over text, the input bytes from sc.pos on.
func (sc *scan) feed(text string) {
	m, s, base := sc.m, sc.state, sc.pos
	n := len(text)
	switch {
	case m.delta != nil && !m.skip:
		delta, class, outMin, nc := m.delta, &m.class, m.outMin, int32(m.nclass)
		for i := 0; i < n; i++ {
			s = delta[s+int32(class[text[i]])]
			if s >= outMin {
				k := s / nc
				sc.choose(base+i+1-int(m.outLen[k]), base+i+1, m.outPat[k])
			}
		}
	case m.delta != nil:
		// Few bytes start a pattern: in the root state, jump to the next
		// one (with strings.IndexByte when there is only one).
		delta, class, outMin, nc, first1 := m.delta, &m.class, m.outMin, int32(m.nclass), m.first1
		for i := 0; i < n; i++ {
			if s == 0 {
				if first1 >= 0 {
					j := strings.IndexByte(text[i:], byte(first1))
					if j < 0 {
						break
					}
					i += j
				} else {
					for i < n && m.rootStay[text[i]] {
						i++
					}
					if i == n {
						break
					}
				}
			}
			s = delta[s+int32(class[text[i]])]
			if s >= outMin {
				k := s / nc
				sc.choose(base+i+1-int(m.outLen[k]), base+i+1, m.outPat[k])
			}
		}
	default: // sparse
		for i := 0; i < n; {
			if s == 0 {
				for i < n && m.rootStay[text[i]] {
					i++
				}
				if i == n {
					break
				}
			}
			s = m.next(s, text[i])
			i++
			if l := m.outLen[s]; l > 0 {
				sc.choose(base+i-int(l), base+i, m.outPat[s])
			}
		}
	}
	sc.state, sc.pos = s, base+n
}

func (sc *scan) choose(start, end int, pat int32) {
	k := len(sc.spans)
	for k > sc.head && sc.spans[k-1].start >= start {
		k--
	}
	sc.spans = append(sc.spans[:k], span{start, end, pat})
}

// write writes to out the chosen occurrences that start before limit (all
// of them when all is set) and the input in clear up to limit. text holds
// the input from base on, base <= sc.done.
//
// A caller passes as limit a position no future occurrence can start
// before (the start of the longest tail that is a proper prefix of a
// pattern): what is written then never changes with more input.
func (sc *scan) write(out *strings.Builder, text string, base, limit int, all bool) {
	for sc.head < len(sc.spans) && (all || sc.spans[sc.head].start < limit) {
		c := sc.spans[sc.head]
		sc.head++
		if c.start > sc.done {
			out.WriteString(text[sc.done-base : c.start-base])
		}
		out.WriteString(sc.m.placeholder[c.pat])
		sc.done = max(sc.done, c.end)
	}
	if sc.head == len(sc.spans) {
		sc.spans, sc.head = sc.spans[:0], 0
	}
	if limit > sc.done {
		out.WriteString(text[sc.done-base : limit-base])
		sc.done = limit
	}
}

// safe is the position up to which output is final: no occurrence can
// start before it.
func (sc *scan) safe() int { return sc.pos - sc.partial() }

// partial is the length of the longest tail that is a proper prefix of a
// pattern.
func (sc *scan) partial() int { return int(sc.m.hold[sc.m.info(sc.state)]) }

// Stream masks text that arrives in chunks (a model's streamed reply, a
// command's live output), so that a value split across chunks, even one
// byte per chunk, is masked as a whole. Get one from [Set.NewStream]; a
// Stream is not safe for concurrent use.
//
// Write returns what can be shown now and holds back the longest tail that
// could still grow into a value: at most the longest masked value minus one
// byte. The concatenation of everything Write and Flush return equals
// [Set.Mask] of the concatenated input, except when the input ends with a
// held partial value of MinMasked bytes or more (see Flush). No prefix of
// what Write returned ever changes: it can be sent at once.
//
// For input that is valid UTF-8, with values that are valid UTF-8, the held
// tail starts on a rune boundary, so Write splits no rune the chunks did
// not split.
type Stream struct {
	sc      scan
	pending string // input not yet written: from sc.done to sc.pos
}

// NewStream returns a streaming masker for the Set's values. A nil or empty
// Set gives a Stream that passes text through.
func (s *Set) NewStream() *Stream {
	return &Stream{sc: scan{m: s.matcher()}}
}

// Write adds chunk to the stream and returns the text that is safe to emit
// now (possibly empty).
func (st *Stream) Write(chunk string) string {
	if st.sc.m == nil {
		return chunk
	}
	if chunk == "" {
		return ""
	}
	sc := &st.sc
	text, base := st.pending+chunk, sc.done
	sc.feed(chunk)
	var out string
	if limit := sc.safe(); sc.head == len(sc.spans) && limit >= sc.done { // nothing to mask
		out = text[sc.done-base : limit-base]
		sc.done = limit
	} else {
		var b strings.Builder
		sc.write(&b, text, base, limit, false)
		out = b.String()
	}
	// A copy, so a large chunk is not kept alive for its last bytes.
	st.pending = strings.Clone(text[sc.done-base:])
	return out
}

// Flush ends the stream: it returns the rest of the masked text and
// resets the Stream for reuse.
//
// The rest may end with a partial value: the stream stopped (a reply cut
// off, a command that printed half a key) after the first bytes of a value.
// Agent Zero masks such a tail with "***"; so does Flush when the partial
// value is MinMasked bytes or longer. A shorter one is returned in clear,
// as [Set.Mask] would return it: a few bytes tell little about a value,
// and masking them would eat the last letters of ordinary text that happen
// to begin some value.
func (st *Stream) Flush() string {
	sc := &st.sc
	if sc.m == nil {
		return ""
	}
	var out strings.Builder
	text, base := st.pending, sc.done
	if sc.partial() >= MinMasked {
		sc.write(&out, text, base, sc.safe(), false)
		if sc.done < sc.pos {
			out.WriteString(PartialMask)
		}
	} else {
		sc.write(&out, text, base, sc.pos, true)
	}
	*st = Stream{sc: scan{m: sc.m, spans: sc.spans[:0]}}
	return out.String()
}

// held reports how many input bytes the Stream holds back (for tests).
func (st *Stream) held() int { return len(st.pending) }
