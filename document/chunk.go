package document

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Boundary strengths, weakest first: where Chunk prefers to cut.
const (
	cutInWord = iota
	cutWord
	cutSentence
	cutLine
	cutParagraph
)

// Chunk splits text into pieces of at most maxTokens tokens, as measured by
// count, with about overlap tokens repeated at the start of each piece from
// the end of the one before. It cuts at paragraph breaks (blank lines) when
// it can, else at line breaks, then sentence ends, then spaces; a "word"
// longer than maxTokens is cut inside. Pieces are trimmed of surrounding
// white space; empty or blank text gives no pieces.
//
// count is called once on each paragraph, on the lines, sentences and words
// of only those that do not fit, a few times on the pieces of a word that
// does not fit, and once on every finished chunk: never on growing
// prefixes, so the time is linear in the length of text. The check on
// finished chunks keeps them within the limit even when count is not
// additive (BPE tokenizers nearly are). Only a single character that counts
// as more than maxTokens can exceed the limit.
//
// overlap is clamped to [0, maxTokens/2] so that every piece moves forward.
// Chunk panics if maxTokens < 1 or count is nil.
func Chunk(text string, maxTokens, overlap int, count func(string) int) []string {
	spans := chunkSpans(text, maxTokens, overlap, count)
	if len(spans) == 0 {
		return nil
	}
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = text[s[0]:s[1]]
	}
	return out
}

// unit is a piece of text that is never cut: text[start:end], leading white
// space included. cut is the strength of the boundary after it.
type unit struct {
	start, end int
	tokens     int
	cut        int
}

type splitter struct {
	text  string
	max   int
	count func(string) int
	units []unit
}

// chunkSpans returns the byte ranges of the chunks.
func chunkSpans(text string, maxTokens, overlap int, count func(string) int) [][2]int {
	if maxTokens < 1 {
		panic("document.Chunk: maxTokens must be at least 1")
	}
	if count == nil {
		panic("document.Chunk: count is nil")
	}
	if strings.TrimSpace(text) == "" {
		return nil
	}
	overlap = min(max(overlap, 0), maxTokens/2)
	s := &splitter{text: text, max: maxTokens, count: count}
	// The whole text is not counted first: if it fits, its paragraphs do
	// too and pack puts them back together.
	s.parts(0, len(text), cutParagraph, cutParagraph, -1)
	return s.pack(overlap)
}

// split makes units of text[start:end]. level is the boundary strength to
// split at if the span does not fit; after is the boundary that follows the
// span; tokens is the span's count if already known (else -1).
func (s *splitter) split(start, end, level, after, tokens int) {
	if tokens < 0 {
		tokens = s.count(s.text[start:end])
	}
	if tokens <= s.max {
		s.units = append(s.units, unit{start, end, tokens, after})
		return
	}
	if level == cutInWord {
		s.hardSplit(start, end, tokens, after)
		return
	}
	s.parts(start, end, level, after, tokens)
}

// parts cuts text[start:end] before every run of white space whose
// strength reaches level and splits each part at the next level.
func (s *splitter) parts(start, end, level, after, tokens int) {
	partStart, found := start, false
	for i := start; i < end; {
		if c := s.text[i]; c < utf8.RuneSelf && !asciiSpace[c] {
			i++
			continue
		}
		j, strength := s.space(i, end, level)
		if j == i {
			_, size := utf8.DecodeRuneInString(s.text[i:end])
			i += size
			continue
		}
		if i > start && j < end && strength >= level {
			s.split(partStart, i, level-1, strength, -1)
			partStart, found = i, true
		}
		i = j
	}
	if !found {
		s.split(start, end, level-1, after, tokens) // nothing to cut at this level
		return
	}
	s.split(partStart, end, level-1, after, -1)
}

var asciiSpace = [utf8.RuneSelf]bool{' ': true, '\t': true, '\n': true, '\v': true, '\f': true, '\r': true}

// space returns the end of the white space starting at i (i itself if there
// is none) and the strength of a cut there. Sentence ends are only told
// apart from word breaks when level asks for it.
func (s *splitter) space(i, end, level int) (int, int) {
	newlines := 0
	j := i
	for j < end {
		r, size := rune(s.text[j]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s.text[j:end])
			if !unicode.IsSpace(r) {
				break
			}
		} else if !asciiSpace[r] {
			break
		}
		if r == '\n' {
			newlines++
		}
		j += size
	}
	switch {
	case j == i:
		return i, cutInWord
	case newlines >= 2:
		return j, cutParagraph
	case newlines == 1:
		return j, cutLine
	case level <= cutSentence && endsSentence(s.text[:i]):
		return j, cutSentence
	}
	return j, cutWord
}

// endsSentence reports whether s ends with . ! ? (or their CJK forms),
// possibly followed by closing quotes or brackets.
func endsSentence(s string) bool {
	for s != "" {
		r, size := utf8.DecodeLastRuneInString(s)
		switch r {
		case '.', '!', '?', '…', '。', '！', '？':
			return true
		case '"', '\'', ')', ']', '}', '’', '”', '»':
			s = s[:len(s)-size]
		default:
			return false
		}
	}
	return false
}

// hardSplit cuts a span with no white space into pieces that fit. The size
// of a piece is guessed from the span's bytes per token and shrunk until
// count agrees, so each piece is counted a few times at most.
func (s *splitter) hardSplit(start, end, tokens, after int) {
	perToken := float64(end-start) / float64(max(tokens, 1))
	// The span's leading white space goes with the first piece, which must
	// hold at least one more character.
	body := start + len(s.text[start:end]) - len(strings.TrimLeftFunc(s.text[start:end], unicode.IsSpace))
	for start < end {
		size := max(1, int(perToken*float64(s.max)*0.9))
		least := s.nextRune(max(start, body))
		for {
			stop := max(least, s.runeStart(start, min(end, start+size)))
			n := s.count(s.text[start:stop])
			if n <= s.max || stop == least {
				cut := cutInWord
				if stop == end {
					cut = after
				}
				s.units = append(s.units, unit{start, stop, n, cut})
				start = stop
				break
			}
			size = max(1, int(float64(stop-start)*float64(s.max)/float64(n)*0.9))
		}
	}
}

// runeStart moves i back to the start of a rune, but never to or before
// start.
func (s *splitter) runeStart(start, i int) int {
	for i > start && i < len(s.text) && !utf8.RuneStart(s.text[i]) {
		i--
	}
	if i <= start {
		return s.nextRune(start)
	}
	return i
}

func (s *splitter) nextRune(i int) int {
	_, size := utf8.DecodeRuneInString(s.text[i:])
	return i + max(size, 1)
}

// pack groups units into chunks. A chunk takes units while they fit; it
// then ends at the strongest boundary among those that leave it more than
// half full (between the overlap and the limit), the latest on a tie. The
// next chunk starts with the last units of this one that fit in overlap,
// unless the overlap leaves no room for anything new.
func (s *splitter) pack(overlap int) [][2]int {
	var spans [][2]int
	u := s.units
	low := (s.max + overlap) / 2
	first, done := 0, 0 // done: units [0, done) are in chunks already
	for done < len(u) {
		end := s.grow(first)
		if end <= done && first < done {
			first = done // the overlap leaves no room for the next unit
			end = s.grow(first)
		}
		end = max(end, done+1) // a unit alone over the limit (one big character)
		if end < len(u) {
			end = s.bestCut(first, done, end, low)
		}
		first, end = s.fit(first, done, end)
		if a, b := s.trim(u[first].start, u[end-1].end); a < b {
			spans = append(spans, [2]int{a, b})
		}
		done = end
		next, kept := end, 0
		for next-1 > first && kept+u[next-1].tokens <= overlap {
			next--
			kept += u[next].tokens
		}
		first = next
	}
	return spans
}

// grow returns the end of the longest run of units from first that fits.
func (s *splitter) grow(first int) int {
	end, tokens := first, 0
	for end < len(s.units) && tokens+s.units[end].tokens <= s.max {
		tokens += s.units[end].tokens
		end++
	}
	return end
}

// bestCut picks where a chunk of units[first:end] ends, after done; see
// pack.
func (s *splitter) bestCut(first, done, end, low int) int {
	best, bestCut := end, -1
	fallback, fallbackCut := end, -1
	tokens := 0
	for i := first; i < end; i++ {
		tokens += s.units[i].tokens
		if i < done {
			continue
		}
		c := s.units[i].cut
		if tokens > low && c >= bestCut {
			best, bestCut = i+1, c
		}
		if c >= fallbackCut {
			fallback, fallbackCut = i+1, c
		}
	}
	if bestCut >= 0 {
		return best
	}
	return fallback
}

// fit makes count agree that units[first:end] fit: it drops units from the
// end (never those up to done, so the chunk still adds something), then the
// overlap. Only a single unit that is one big character stays over.
func (s *splitter) fit(first, done, end int) (int, int) {
	for {
		a, b := s.trim(s.units[first].start, s.units[end-1].end)
		over := s.count(s.text[a:b]) - s.max
		switch {
		case over <= 0:
			return first, end
		case end-1 > done:
			for dropped := 0; end-1 > done && dropped < over; {
				end--
				dropped += max(s.units[end].tokens, 1)
			}
		case first < done:
			first = done
		default:
			return first, end
		}
	}
}

// trim narrows text[a:b] to exclude surrounding white space.
func (s *splitter) trim(a, b int) (int, int) {
	t := s.text[a:b]
	lead := len(t) - len(strings.TrimLeftFunc(t, unicode.IsSpace))
	trail := len(t) - len(strings.TrimRightFunc(t, unicode.IsSpace))
	if lead == len(t) {
		return a, a
	}
	return a + lead, b - trail
}
