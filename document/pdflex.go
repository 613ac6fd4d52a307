package document

import (
	"bytes"
	"errors"
	"strconv"
)

// This file holds a small PDF lexer and object parser. They read the file's
// cross-reference sections (pdfcheck.go), content streams (pdfcontent.go)
// and ToUnicode CMaps (pdffont.go). Everything is iterative or depth-limited
// and never allocates more than the input it has already seen.

type tokKind uint8

const (
	tokEOF     tokKind = iota
	tokInt             // num and i hold the value
	tokReal            // num holds the value
	tokName            // b holds the name without the slash, #xx decoded
	tokString          // b holds the decoded bytes of a literal or hex string
	tokKeyword         // b holds the keyword, or a delimiter: [ ] << >> { } and stray ) >
)

type token struct {
	kind tokKind
	i    int64
	num  float64
	b    []byte
}

func (t token) is(kw string) bool { return t.kind == tokKeyword && string(t.b) == kw }

type lexer struct {
	data []byte
	pos  int
}

func isPDFSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isPDFDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

// skipSpace skips white space and comments.
func (l *lexer) skipSpace() {
	for l.pos < len(l.data) {
		c := l.data[l.pos]
		switch {
		case isPDFSpace(c):
			l.pos++
		case c == '%':
			for l.pos < len(l.data) && l.data[l.pos] != '\n' && l.data[l.pos] != '\r' {
				l.pos++
			}
		default:
			return
		}
	}
}

// next returns the next token. Strings and names without escapes point into
// the input instead of being copied.
func (l *lexer) next() token {
	l.skipSpace()
	if l.pos >= len(l.data) {
		return token{kind: tokEOF}
	}
	c := l.data[l.pos]
	switch c {
	case '(':
		return l.literal()
	case '<':
		if l.pos+1 < len(l.data) && l.data[l.pos+1] == '<' {
			l.pos += 2
			return token{kind: tokKeyword, b: l.data[l.pos-2 : l.pos]}
		}
		return l.hex()
	case '>':
		if l.pos+1 < len(l.data) && l.data[l.pos+1] == '>' {
			l.pos += 2
			return token{kind: tokKeyword, b: l.data[l.pos-2 : l.pos]}
		}
		l.pos++
		return token{kind: tokKeyword, b: l.data[l.pos-1 : l.pos]}
	case '[', ']', '{', '}', ')':
		l.pos++
		return token{kind: tokKeyword, b: l.data[l.pos-1 : l.pos]}
	case '/':
		l.pos++
		return token{kind: tokName, b: l.regular(true)}
	}
	word := l.regular(false)
	if t, ok := number(word); ok {
		return t
	}
	return token{kind: tokKeyword, b: word}
}

// regular reads a run of regular characters; in a name, #xx is decoded.
func (l *lexer) regular(name bool) []byte {
	start := l.pos
	escaped := false
	for l.pos < len(l.data) && !isPDFSpace(l.data[l.pos]) && !isPDFDelim(l.data[l.pos]) {
		escaped = escaped || l.data[l.pos] == '#'
		l.pos++
	}
	word := l.data[start:l.pos]
	if !name || !escaped {
		return word
	}
	out := make([]byte, 0, len(word))
	for i := 0; i < len(word); i++ {
		if word[i] == '#' && i+2 < len(word) {
			if v, err := strconv.ParseUint(string(word[i+1:i+3]), 16, 8); err == nil {
				out = append(out, byte(v))
				i += 2
				continue
			}
		}
		out = append(out, word[i])
	}
	return out
}

// number parses a PDF integer or real ("12", "-3", "+.5", "4.").
func number(w []byte) (token, bool) {
	if len(w) == 0 || len(w) > 64 {
		return token{}, false
	}
	digits, dots := 0, 0
	for i, c := range w {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		case (c == '+' || c == '-') && i == 0:
		default:
			return token{}, false
		}
	}
	if digits == 0 || dots > 1 {
		return token{}, false
	}
	if dots == 0 {
		if i, err := strconv.ParseInt(string(w), 10, 64); err == nil {
			return token{kind: tokInt, i: i, num: float64(i)}, true
		}
	}
	f, err := strconv.ParseFloat(string(w), 64)
	if err != nil {
		return token{}, false
	}
	return token{kind: tokReal, num: f}, true
}

// literal reads a (string), with balanced parentheses and escapes.
func (l *lexer) literal() token {
	l.pos++ // (
	start := l.pos
	depth := 1
	plain := true // no escapes: the token can point into the input
	for l.pos < len(l.data) {
		c := l.data[l.pos]
		if c == '\\' {
			plain = false
			l.pos += 2
			continue
		}
		if c == '\r' {
			plain = false
		}
		if c == '(' {
			depth++
		} else if c == ')' {
			depth--
			if depth == 0 {
				break
			}
		}
		l.pos++
	}
	end := min(l.pos, len(l.data))
	l.pos = min(l.pos+1, len(l.data)) // )
	raw := l.data[start:end]
	if plain {
		return token{kind: tokString, b: raw}
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\r' { // an end of line in a string is read as \n
			out = append(out, '\n')
			if i+1 < len(raw) && raw[i+1] == '\n' {
				i++
			}
			continue
		}
		if c != '\\' || i+1 >= len(raw) {
			out = append(out, c)
			continue
		}
		i++
		switch c = raw[i]; c {
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case '\r': // line continuation
			if i+1 < len(raw) && raw[i+1] == '\n' {
				i++
			}
		case '\n':
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(c - '0')
			for n := 0; n < 2 && i+1 < len(raw) && raw[i+1] >= '0' && raw[i+1] <= '7'; n++ {
				i++
				v = v*8 + int(raw[i]-'0')
			}
			out = append(out, byte(v))
		default: // \( \) \\ and unknown escapes: the character itself
			out = append(out, c)
		}
	}
	return token{kind: tokString, b: out}
}

// hex reads a <hex string>; white space is ignored, a missing last digit is 0.
func (l *lexer) hex() token {
	l.pos++ // <
	end := bytes.IndexByte(l.data[l.pos:], '>')
	if end < 0 {
		end = len(l.data) - l.pos
	}
	raw := l.data[l.pos : l.pos+end]
	l.pos = min(l.pos+end+1, len(l.data))
	out := make([]byte, 0, len(raw)/2+1)
	var v byte
	half := false
	for _, c := range raw {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			continue
		}
		if half {
			out = append(out, v<<4|d)
		} else {
			v = d
		}
		half = !half
	}
	if half {
		out = append(out, v<<4)
	}
	return token{kind: tokString, b: out}
}

// PDF objects as parsed by parseObject.
type (
	pdfName string
	pdfRef  struct {
		id  int64
		gen int64
	}
	pdfArray []any
	pdfDict  map[pdfName]any
	pdfKW    string // true, false, null or another bare keyword
)

const maxObjectDepth = 64

var errObjectSyntax = errors.New("object syntax")

// parseObject parses one object: number, name, string, array, dictionary or
// "id gen R" reference. Streams are left to the caller, which sees the
// "stream" keyword after the dictionary.
func (l *lexer) parseObject(depth int) (any, error) {
	if depth > maxObjectDepth {
		return nil, errors.New("objects nested too deeply")
	}
	t := l.next()
	switch t.kind {
	case tokEOF:
		return nil, errObjectSyntax
	case tokInt:
		// "id gen R" needs two tokens of look-ahead.
		save := l.pos
		t2 := l.next()
		if t2.kind == tokInt {
			if t3 := l.next(); t3.is("R") {
				return pdfRef{t.i, t2.i}, nil
			}
		}
		l.pos = save
		return t.i, nil
	case tokReal:
		return t.num, nil
	case tokName:
		return pdfName(t.b), nil
	case tokString:
		return t.b, nil
	}
	switch string(t.b) {
	case "[":
		var a pdfArray
		for {
			l.skipSpace()
			if l.pos < len(l.data) && l.data[l.pos] == ']' {
				l.pos++
				return a, nil
			}
			v, err := l.parseObject(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
	case "<<":
		d := pdfDict{}
		for {
			k := l.next()
			if k.is(">>") {
				return d, nil
			}
			if k.kind != tokName {
				return nil, errObjectSyntax
			}
			v, err := l.parseObject(depth + 1)
			if err != nil {
				return nil, err
			}
			d[pdfName(k.b)] = v
		}
	case "]", ">>", ")", ">", "{", "}":
		return nil, errObjectSyntax
	}
	return pdfKW(t.b), nil
}
