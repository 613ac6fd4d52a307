package dirtyjson

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of objects and arrays the parser follows (the root counts as one).
// Opening one more halts the parser instead of growing without bound.
const MaxDepth = 1000

// state is where the parser is in the grammar. Every state resumes at p.pos with no hidden lookahead,
// which is what makes chunked feeding equal to one-shot parsing.
type state uint8

const (
	stKey          state = iota // object: a key, '}' or junk to skip
	stAfterKey                  // object: ':' (or the value itself when the colon is missing)
	stValue                     // a value, or a closer/comma when it is missing
	stAfterValue                // ',' or a closer (or the next entry when the comma is missing)
	stQuoteOpen                 // a value's opening quote was read: plain, empty or triple string
	stString                    // inside a quoted key or value
	stTriple                    // inside a triple-quoted value
	stBare                      // inside an unquoted value
	stBarePause                 // an unquoted number or literal followed by blanks
	stBareKey                   // inside an unquoted key
	stLineComment               // inside // ...; back to p.ret at the newline
	stBlockComment              // inside /* ... */; back to p.ret after it
	stAfterWrapped              // a wrapped object closed: its wrapper's '}' may follow
	stDone                      // the root object was closed; input is ignored
	stHalted                    // nesting went past MaxDepth; input is ignored
)

// frame is one open object or array.
type frame struct {
	obj   map[string]any
	arr   []any
	isArr bool
	key   string // object: the key whose value is being read
	pkey  string // where this container sits in its parent object
	pidx  int    // where this container sits in its parent array
	wrap  int    // extra '{' in front of this object (doubled-brace wrapper)
}

// Parser parses one root JSON-ish value incrementally. It skips any text before the first '{' (prose,
// code fences), so the root is always an object. Feeding is amortised O(len(chunk)): consumed text is
// never scanned again, except for the few bytes a pending decision is waiting on.
//
// The zero Parser is ready to use. A Parser is not safe for concurrent use.
type Parser struct {
	// The input from the root's '{' on (see src). Strings in the tree are substrings of it or of arena,
	// both of which only ever grow, so handing them out never copies and never aliases later writes.
	first    string // the chunk holding the root's '{', used as is while it is all there is
	rawb     text   // first and every later chunk, once there is a second chunk
	buffered bool
	pos      int // next byte of raw to read
	state    state
	ret      state // state to resume after a comment
	end      int   // length of Consumed once done or halted

	root  map[string]any
	stack []frame
	nArr  int // arrays on the stack, so a stray ']' costs O(1)

	// The token being read.
	quote byte
	key   bool // the string is a key
	start int  // string: raw offset of the text not yet in arena; triple or bare: first non-blank byte (triple: -1 until one)
	tEnd  int  // end of the last non-blank byte of a triple or bare token
	esc   bool // the string had an escape, so its text is being built in arena
	aOff  int  // arena offset of the string's text
	num   bool // the bare token so far consists of number characters only

	wrapPending int // wrapper braces still allowed after a wrapped object closed

	arena text // decoded text of strings that contain escapes
	dirty bool // fed since the pending token was last put into the tree
}

// NewParser returns a parser waiting for the root object.
func NewParser() *Parser { return &Parser{} }

// Feed parses chunk as the continuation of everything fed before. It does nothing once the root is
// complete ([Parser.Done]) or nesting went past [MaxDepth].
func (p *Parser) Feed(chunk string) {
	if chunk == "" || p.state >= stDone {
		return
	}
	if p.root == nil {
		i := strings.IndexByte(chunk, '{')
		if i < 0 {
			return // still prose: nothing to keep
		}
		p.first = chunk[i:]
		p.root = make(map[string]any)
		p.stack = append(p.stack, frame{obj: p.root})
		p.pos = 1
		p.state = stKey
	} else {
		if !p.buffered {
			p.buffered = true
			p.rawb.grow(max(4<<10, 2*(len(p.first)+len(chunk))))
			p.rawb.write(p.first)
		}
		p.rawb.write(chunk)
	}
	p.dirty = true
	raw := p.src()
	for p.pos < len(raw) && p.state < stDone && p.step(raw) {
	}
}

// src returns the input from the root's '{' on. The step functions get it as a parameter rather than
// from a field: storing a string header in the parser on every chunk costs a GC write barrier, which
// showed up in the chunked benchmark.
func (p *Parser) src() string {
	if p.buffered {
		return p.rawb.from(0)
	}
	return p.first
}

// Value returns the current root: map[string]any for objects, []any, string, float64, bool and nil
// inside, as encoding/json decodes into any. A value being read is already in its container with what
// has been read so far, so a growing string can be streamed. It returns nil before the first '{'.
//
// The tree is live: callers must not modify it and must not keep it across the next Feed. The cost is
// O(1) apart from moving the bytes fed since the last call into place.
func (p *Parser) Value() any {
	if p.root == nil {
		return nil
	}
	if p.dirty {
		p.dirty = false
		p.expose()
	}
	return p.root
}

// Reading reports whether the value of the root's key is being read right now: a string, or an
// unquoted token, that more input could still extend. Once it is false for a key present in the
// root, that value is complete (a later duplicate key may still replace it).
func (p *Parser) Reading(key string) bool {
	if len(p.stack) != 1 || p.key || p.stack[0].key != key {
		return false
	}
	switch p.state {
	case stQuoteOpen, stString, stTriple, stBare, stBarePause:
		return true
	}
	return false
}

// Done reports whether the root object was explicitly closed (Agent Zero's `completed`).
func (p *Parser) Done() bool { return p.state == stDone }

// Consumed returns the raw text from the root's opening '{' through its closing '}' once Done (what
// Agent Zero's extract_json_root_string returns), and before that the text from '{' fed so far.
func (p *Parser) Consumed() string {
	if p.state >= stDone {
		return p.src()[:p.end]
	}
	return p.src()
}

// Parse parses s in one go. It returns the root object, complete or not, and whether it was closed. The
// error is [ErrNoObject] when s has no '{' at all.
func Parse(s string) (map[string]any, bool, error) {
	var p Parser
	p.Feed(s)
	if p.root == nil {
		return nil, false, ErrNoObject
	}
	p.Value()
	return p.root, p.Done(), nil
}

// step advances from p.pos by at least one byte or one state change. It returns false when it cannot
// decide without bytes that have not arrived yet.
func (p *Parser) step(raw string) bool {
	switch p.state {
	case stKey:
		return p.stepKey(raw)
	case stAfterKey:
		return p.stepAfterKey(raw)
	case stValue:
		return p.stepValue(raw)
	case stAfterValue:
		return p.stepAfterValue(raw)
	case stQuoteOpen:
		return p.stepQuoteOpen(raw)
	case stString:
		return p.stepString(raw)
	case stTriple:
		return p.stepTriple(raw)
	case stBare:
		return p.stepBare(raw)
	case stBarePause:
		return p.stepBarePause(raw)
	case stBareKey:
		return p.stepBareKey(raw)
	case stLineComment:
		if i := strings.IndexByte(raw[p.pos:], '\n'); i >= 0 {
			p.pos += i + 1
			p.state = p.ret
		} else {
			p.pos = len(raw)
		}
		return true
	case stBlockComment:
		if i := strings.Index(raw[p.pos:], "*/"); i >= 0 {
			p.pos += i + 2
			p.state = p.ret
			return true
		}
		// The last byte may be the '*' of a "*/" split across chunks.
		p.pos = max(p.pos, len(raw)-1)
		return false
	case stAfterWrapped:
		return p.stepAfterWrapped(raw)
	}
	return false
}

// blank outcomes.
const (
	blankNone = iota // the byte at p.pos is significant
	blankSkip        // something was skipped or a comment entered: step again
	blankWait        // need more input to tell
)

// blank skips whitespace at p.pos and enters comments.
func (p *Parser) blank(raw string) int {
	c := raw[p.pos]
	switch {
	case isSpace(c):
		p.pos++
		for p.pos < len(raw) && isSpace(raw[p.pos]) {
			p.pos++
		}
		return blankSkip
	case c == '/':
		if p.pos+1 >= len(raw) {
			return blankWait
		}
		switch raw[p.pos+1] {
		case '/':
			p.ret, p.state = p.state, stLineComment
		case '*':
			p.ret, p.state = p.state, stBlockComment
		default:
			return blankNone
		}
		p.pos += 2
		return blankSkip
	case c >= utf8.RuneSelf:
		switch n := unicodeSpace(raw[p.pos:]); {
		case n < 0:
			return blankWait
		case n > 0:
			p.pos += n
			return blankSkip
		}
	}
	return blankNone
}

func (p *Parser) stepKey(raw string) bool {
	switch p.blank(raw) {
	case blankSkip:
		return true
	case blankWait:
		return false
	}
	f := p.top()
	switch c := raw[p.pos]; c {
	case '}':
		p.closeBrace()
	case ']':
		p.closeBracket()
	case ',':
		p.pos++
	case ':':
		p.setKey("")
		p.pos++
		p.state = stValue
	case '"', '\'', '`':
		p.pos++
		p.beginString(c, true)
	case '{':
		if len(f.obj) == 0 {
			f.wrap++
			p.pos++
			return true
		}
		p.setKey("") // a keyless value: keep it rather than lose it
		p.state = stValue
	case '[':
		p.setKey("")
		p.state = stValue
	default:
		p.start = p.pos
		p.state = stBareKey
	}
	return true
}

func (p *Parser) stepBareKey(raw string) bool {
	for i := p.pos; i < len(raw); i++ {
		switch raw[i] {
		case ' ', '\t', '\n', '\r', '\v', '\f', ':', ',', '{', '[', '}', ']':
			p.setKey(raw[p.start:i])
			p.pos = i
			p.state = stAfterKey
			return true
		}
	}
	p.pos = len(raw)
	return true
}

func (p *Parser) stepAfterKey(raw string) bool {
	switch p.blank(raw) {
	case blankSkip:
		return true
	case blankWait:
		return false
	}
	switch raw[p.pos] {
	case ':':
		p.pos++
		p.state = stValue
	case ',':
		p.pos++
		p.state = stKey
	case '}':
		p.closeBrace()
	case ']':
		p.closeBracket()
	default:
		p.state = stValue // missing colon
	}
	return true
}

func (p *Parser) stepValue(raw string) bool {
	switch p.blank(raw) {
	case blankSkip:
		return true
	case blankWait:
		return false
	}
	c := raw[p.pos]
	switch c {
	case '}':
		p.closeBrace()
		return true
	case ']':
		p.closeBracket()
		return true
	case ',':
		p.pos++
		if !p.top().isArr {
			p.state = stKey // the key keeps its nil value
		}
		return true
	case ':':
		p.pos++
		return true
	}
	if f := p.top(); f.isArr {
		f.arr = append(f.arr, nil)
		p.writeBack()
	}
	switch c {
	case '{', '[':
		p.open(c == '[')
	case '"', '\'', '`':
		p.setSlot("")
		p.quote = c
		p.pos++
		p.state = stQuoteOpen
	default:
		p.start = p.pos
		p.tEnd = p.pos
		p.num = true
		p.state = stBare
	}
	return true
}

func (p *Parser) stepAfterValue(raw string) bool {
	switch p.blank(raw) {
	case blankSkip:
		return true
	case blankWait:
		return false
	}
	switch raw[p.pos] {
	case ',':
		p.pos++
		p.state = p.entryState()
	case '}':
		p.closeBrace()
	case ']':
		p.closeBracket()
	case ':':
		p.pos++
	default:
		p.state = p.entryState() // missing comma
	}
	return true
}

// entryState is where the next entry of the innermost container starts.
func (p *Parser) entryState() state {
	if p.top().isArr {
		return stValue
	}
	return stKey
}

func (p *Parser) stepAfterWrapped(raw string) bool {
	switch p.blank(raw) {
	case blankSkip:
		return true
	case blankWait:
		return false
	}
	if raw[p.pos] == '}' {
		p.pos++
		p.end = p.pos
		p.wrapPending--
		if p.wrapPending == 0 {
			p.closed()
		}
		return true
	}
	p.wrapPending = 0 // something else follows: the wrapper closes without its brace
	p.closed()
	return true
}

// stepQuoteOpen decides, with up to two bytes of lookahead, between "text", "" and """text""".
func (p *Parser) stepQuoteOpen(raw string) bool {
	q := p.quote
	if raw[p.pos] != q {
		p.beginString(q, false)
		return true
	}
	if p.pos+1 >= len(raw) {
		return false
	}
	if raw[p.pos+1] != q {
		p.pos++ // "" : the slot already holds the empty string
		p.state = stAfterValue
		return true
	}
	p.pos += 2
	p.start = -1
	p.state = stTriple
	return true
}

func (p *Parser) beginString(q byte, key bool) {
	p.quote = q
	p.key = key
	p.esc = false
	p.start = p.pos
	p.state = stString
}

func (p *Parser) stepString(raw string) bool {
	q := p.quote
	for i := p.pos; i < len(raw); i++ {
		switch raw[i] {
		case q:
			p.pos = i
			s := p.stringSoFar(raw)
			p.pos = i + 1
			if p.key {
				p.setKey(s)
				p.state = stAfterKey
			} else {
				p.setSlot(s)
				p.state = stAfterValue
			}
			return true
		case '\\':
			p.pos = i
			return p.escape(raw)
		}
	}
	p.pos = len(raw)
	return true
}

// stringSoFar returns the text of the string being read, up to p.pos.
func (p *Parser) stringSoFar(raw string) string {
	if !p.esc {
		return raw[p.start:p.pos]
	}
	p.arena.write(raw[p.start:p.pos])
	p.start = p.pos
	return p.arena.from(p.aOff)
}

// escape decodes the escape at p.pos, or returns false when its end has not arrived yet.
func (p *Parser) escape(raw string) bool {
	i := p.pos
	if i+1 >= len(raw) {
		return false
	}
	var r rune
	n := 2
	switch c := raw[i+1]; c {
	case '"', '\'', '`', '\\', '/':
		r = rune(c)
	case 'b':
		r = '\b'
	case 'f':
		r = '\f'
	case 'n':
		r = '\n'
	case 'r':
		r = '\r'
	case 't':
		r = '\t'
	case 'u':
		v, k := hex4(raw, i+2)
		switch {
		case k < 0:
			return false
		case k < 4:
			p.pos = i + 2 + k // kept literally: the text stays in the raw run
			return true
		}
		r, n = v, 6
		if r >= 0xD800 && r < 0xDC00 { // a high surrogate wants "\uDC00".."\uDFFF" next
			j := i + 6
			switch {
			case j >= len(raw) || raw[j] == '\\' && j+1 >= len(raw):
				return false
			case raw[j] == '\\' && raw[j+1] == 'u':
				v2, k2 := hex4(raw, j+2)
				if k2 < 0 {
					return false
				}
				if k2 == 4 && v2 >= 0xDC00 && v2 < 0xE000 {
					r, n = utf16.DecodeRune(r, v2), 12
				}
			}
		}
		if r >= 0xD800 && r < 0xE000 {
			r = utf8.RuneError // lone surrogate, as encoding/json
		}
	default:
		// Unknown escape: keep the backslash; the next byte is ordinary text.
		p.pos = i + 1
		return true
	}
	if !p.esc {
		p.esc = true
		p.aOff = p.arena.n
	}
	p.arena.write(raw[p.start:i])
	p.arena.writeRune(r)
	p.pos = i + n
	p.start = p.pos
	return true
}

// hex4 reads up to four hex digits at raw[i:]. It returns their value and how many there are, or k=-1
// when all available bytes are hex digits but fewer than four have arrived.
func hex4(raw string, i int) (v rune, k int) {
	for k = 0; k < 4; k++ {
		if i+k >= len(raw) {
			return 0, -1
		}
		d := unhex(raw[i+k])
		if d < 0 {
			return v, k
		}
		v = v<<4 | d
	}
	return v, 4
}

func unhex(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

func (p *Parser) stepTriple(raw string) bool {
	q := p.quote
	for i := p.pos; i < len(raw); i++ {
		c := raw[i]
		if c == q {
			if i+1 >= len(raw) || raw[i+1] == q && i+2 >= len(raw) {
				p.pos = i
				return false
			}
			if raw[i+1] == q && raw[i+2] == q {
				p.setSlot(p.tripleSoFar(raw))
				p.pos = i + 3
				p.state = stAfterValue
				return true
			}
		}
		if !isSpace(c) {
			if p.start < 0 {
				p.start = i
			}
			p.tEnd = i + 1
		}
	}
	p.pos = len(raw)
	return true
}

func (p *Parser) tripleSoFar(raw string) string {
	if p.start < 0 {
		return ""
	}
	return raw[p.start:p.tEnd]
}

func (p *Parser) stepBare(raw string) bool {
	for i := p.pos; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case ',', '}', ']', '\n', '\r':
			p.pos = i
			p.finishBare(raw)
			return true
		case ' ', '\t', '\v', '\f':
			if p.blankInBare(raw, i, 1) {
				return true
			}
			continue
		case '/':
			if isSpace(raw[i-1]) { // raw[0] is the root's '{', so i >= 1
				if i+1 >= len(raw) {
					p.pos = i
					return false
				}
				if d := raw[i+1]; d == '/' || d == '*' {
					p.pos = i
					p.finishBare(raw)
					return true
				}
			}
		}
		if c >= utf8.RuneSelf {
			n := unicodeSpace(raw[i:])
			if n < 0 {
				p.pos = i
				return false
			}
			if n > 0 {
				if p.blankInBare(raw, i, n) {
					return true
				}
				i += n - 1
				continue
			}
		}
		if p.num && !isNumberByte(c) {
			p.num = false
		}
		p.tEnd = i + 1
	}
	p.pos = len(raw)
	return true
}

// blankInBare handles n bytes of whitespace at raw[i] inside an unquoted value. It reports true when
// the token so far is a number or literal: in an array that ends it ([1 2 3] lacks commas); in an
// object it pauses to see what follows.
func (p *Parser) blankInBare(raw string, i, n int) bool {
	if _, ok := literal(raw[p.start:p.tEnd], p.num); ok {
		if p.top().isArr {
			p.pos = i
			p.finishBare(raw)
			return true
		}
		p.pos = i + n
		p.state = stBarePause
		return true
	}
	p.num = false
	return false
}

// unicodeSpace returns the length of the non-ASCII space or U+FEFF that s starts with, 0 if it starts
// with another character, or -1 if it starts with an incomplete UTF-8 sequence.
func unicodeSpace(s string) int {
	if !utf8.FullRuneInString(s) {
		return -1
	}
	if r, n := utf8.DecodeRuneInString(s); unicode.IsSpace(r) || r == '\uFEFF' {
		return n
	}
	return 0
}

// stepBarePause decides whether a number or literal in an object, followed by blanks, ends there (a
// quote or bracket follows: a missing comma before the next key) or is the start of longer text.
func (p *Parser) stepBarePause(raw string) bool {
	switch raw[p.pos] {
	case ' ', '\t', '\v', '\f':
		p.pos++
		return true
	case ',', '}', ']', '\n', '\r', '"', '\'', '`', '{', '[':
		p.finishBare(raw)
		return true
	case '/':
		if p.pos+1 >= len(raw) {
			return false
		}
		if d := raw[p.pos+1]; d == '/' || d == '*' {
			p.finishBare(raw)
			return true
		}
	default:
		if raw[p.pos] >= utf8.RuneSelf {
			switch n := unicodeSpace(raw[p.pos:]); {
			case n < 0:
				return false
			case n > 0:
				p.pos += n
				return true
			}
		}
	}
	p.num = false // the blanks are now inside the token
	p.state = stBare
	return true
}

func (p *Parser) finishBare(raw string) {
	p.setSlot(classify(raw[p.start:p.tEnd], p.num))
	p.state = stAfterValue
}

// expose puts the token being read into the tree with the text read so far.
func (p *Parser) expose() {
	raw := p.src()
	switch p.state {
	case stString:
		if !p.key {
			p.setSlot(trimPartialRune(p.stringSoFar(raw)))
		}
	case stTriple:
		p.setSlot(trimPartialRune(p.tripleSoFar(raw)))
	case stBare, stBarePause:
		p.setSlot(classify(trimPartialRune(raw[p.start:p.tEnd]), p.num))
	}
}

func (p *Parser) top() *frame { return &p.stack[len(p.stack)-1] }

// setKey completes a key: it is present (nil) from now on, and its value goes there.
func (p *Parser) setKey(k string) {
	f := p.top()
	f.key = k
	f.obj[k] = nil
}

// setSlot stores v where the current value of the innermost container goes.
func (p *Parser) setSlot(v any) {
	f := p.top()
	if f.isArr {
		f.arr[len(f.arr)-1] = v
	} else {
		f.obj[f.key] = v
	}
}

// writeBack stores the innermost array's slice header in its parent after an append.
func (p *Parser) writeBack() {
	f := &p.stack[len(p.stack)-1]
	parent := &p.stack[len(p.stack)-2] // the root is an object, so an array always has a parent
	if parent.isArr {
		parent.arr[f.pidx] = f.arr
	} else {
		parent.obj[f.pkey] = f.arr
	}
}

// open starts a nested object or array at p.pos.
func (p *Parser) open(isArr bool) {
	if len(p.stack) >= MaxDepth {
		p.end = p.pos
		p.state = stHalted
		return
	}
	parent := p.top()
	f := frame{isArr: isArr, pkey: parent.key, pidx: len(parent.arr) - 1}
	if isArr {
		f.arr = []any{}
		p.setSlot(f.arr)
		p.nArr++
		p.state = stValue
	} else {
		f.obj = make(map[string]any)
		p.setSlot(f.obj)
		p.state = stKey
	}
	p.stack = append(p.stack, f)
	p.pos++
}

func (p *Parser) pop() frame {
	n := len(p.stack) - 1
	f := p.stack[n]
	p.stack[n] = frame{}
	p.stack = p.stack[:n]
	if f.isArr {
		p.nArr--
	}
	return f
}

// closeBrace handles '}' at p.pos: it closes the innermost object and any arrays left open inside it.
func (p *Parser) closeBrace() {
	f := p.pop()
	for f.isArr {
		f = p.pop()
	}
	p.pos++
	p.end = p.pos
	if f.wrap > 0 {
		p.wrapPending = f.wrap
		p.state = stAfterWrapped
		return
	}
	p.closed()
}

// closeBracket handles ']' at p.pos: it closes the innermost array and any objects left open inside
// it, or is ignored when no array is open.
func (p *Parser) closeBracket() {
	p.pos++
	if p.nArr == 0 {
		return
	}
	for !p.pop().isArr {
	}
	p.closed()
}

// closed continues after a container was closed.
func (p *Parser) closed() {
	if len(p.stack) == 0 {
		p.state = stDone
		return
	}
	p.state = stAfterValue
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of s, which is how a string being
// streamed can end when a chunk splits a character.
func trimPartialRune(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax+1; i-- {
		c := s[i]
		if c < utf8.RuneSelf {
			return s
		}
		if utf8.RuneStart(c) {
			if utf8.FullRuneInString(s[i:]) {
				return s
			}
			return s[:i]
		}
	}
	return s
}
