package document

import (
	"bytes"
	"math"

	"github.com/ledongthuc/pdf"
)

// operand is a value on the content stream's operand stack.
type operand struct {
	kind tokKind // tokInt, tokReal, tokName, tokString, or tokKeyword for anything else
	num  float64
	b    []byte
	arr  []operand // an array, for TJ
}

const (
	maxOperands   = 32      // operators take at most 6; the rest are dropped
	maxArrayElems = 1 << 16 // elements kept of one array
	maxArrayDepth = 8
	maxGStates    = 256 // q nesting kept
)

// textParams is the part of the graphics state that shapes text.
type textParams struct {
	font                 *pdfFont
	size, tc, tw, th, tl float64
}

// content interprets one content stream (a page's or a form's) for text.
type content struct {
	e     *pdfExtractor
	res   pdf.Value
	fonts map[string]*pdfFont // by resource name
	depth int                 // form nesting
	tm    [6]float64          // text matrix
	tlm   [6]float64          // text line matrix
	p     textParams
	saved []textParams // q/Q
}

var identity = [6]float64{1, 0, 0, 1, 0, 0}

func newContent(e *pdfExtractor, res pdf.Value, depth int) *content {
	return &content{e: e, res: res, fonts: map[string]*pdfFont{}, depth: depth,
		tm: identity, tlm: identity, p: textParams{th: 1}}
}

// run interprets data; it stops early once the extractor hits a limit.
func (c *content) run(data []byte) {
	l := &lexer{data: data}
	ops := make([]operand, 0, maxOperands)
	for c.e.err == nil {
		t := l.next()
		switch t.kind {
		case tokEOF:
			return
		case tokKeyword:
		default:
			ops = push(ops, operand{kind: t.kind, num: t.num, b: t.b})
			continue
		}
		switch string(t.b) {
		case "[":
			ops = push(ops, operand{kind: tokKeyword, arr: readArray(l, 0)})
		case "<<": // a property list (BDC): parsed and dropped
			l.pos -= 2
			_, _ = l.parseObject(0)
			ops = push(ops, operand{kind: tokKeyword})
		case "BI":
			skipInlineImage(l)
			ops = ops[:0]
		case "]", ">>", ")", ">", "{", "}":
		case "true", "false", "null":
			ops = push(ops, operand{kind: tokKeyword})
		default:
			c.op(string(t.b), ops)
			ops = ops[:0]
		}
	}
}

func push(ops []operand, o operand) []operand {
	if len(ops) == maxOperands {
		ops = ops[:copy(ops, ops[maxOperands/2:])]
	}
	return append(ops, o)
}

// readArray reads the elements of an array after its "[".
func readArray(l *lexer, depth int) []operand {
	var arr []operand
	for {
		t := l.next()
		var o operand
		switch {
		case t.kind == tokEOF, t.is("]"):
			return arr
		case t.is("["):
			if depth >= maxArrayDepth {
				skipArray(l)
				continue
			}
			o = operand{kind: tokKeyword, arr: readArray(l, depth+1)}
		default:
			o = operand{kind: t.kind, num: t.num, b: t.b}
		}
		if len(arr) < maxArrayElems {
			arr = append(arr, o)
		}
	}
}

// skipArray skips the rest of an array nested too deeply to keep, without
// recursing: a stream of a million "[" must not grow the stack.
func skipArray(l *lexer) {
	for open := 1; open > 0; {
		t := l.next()
		switch {
		case t.kind == tokEOF:
			return
		case t.is("["):
			open++
		case t.is("]"):
			open--
		}
	}
}

// skipInlineImage skips "BI ... ID <binary data> EI".
func skipInlineImage(l *lexer) {
	for {
		t := l.next()
		if t.kind == tokEOF {
			return
		}
		if t.is("ID") {
			break
		}
	}
	l.pos++ // the single white-space byte after ID
	for l.pos < len(l.data) {
		i := bytes.Index(l.data[l.pos:], []byte("EI"))
		if i < 0 {
			break
		}
		at := l.pos + i
		l.pos = at + 2
		before := at == 0 || isPDFSpace(l.data[at-1])
		after := l.pos == len(l.data) || isPDFSpace(l.data[l.pos]) || isPDFDelim(l.data[l.pos])
		if before && after {
			return
		}
	}
	l.pos = len(l.data)
}

// num returns the i-th of the last n operands as a number.
func num(ops []operand, n, i int) float64 {
	if len(ops) < n {
		return 0
	}
	o := ops[len(ops)-n+i]
	if o.kind != tokInt && o.kind != tokReal || math.IsNaN(o.num) || math.IsInf(o.num, 0) {
		return 0
	}
	return o.num
}

// last returns the last operand, or the zero operand.
func last(ops []operand) operand {
	if len(ops) == 0 {
		return operand{}
	}
	return ops[len(ops)-1]
}

func (c *content) op(op string, ops []operand) {
	switch op {
	case "BT":
		c.tm, c.tlm = identity, identity
	case "q":
		if len(c.saved) < maxGStates {
			c.saved = append(c.saved, c.p)
		}
	case "Q":
		if n := len(c.saved); n > 0 {
			c.p = c.saved[n-1]
			c.saved = c.saved[:n-1]
		}
	case "Tf":
		if len(ops) >= 2 && ops[len(ops)-2].kind == tokName && c.e.inTime() {
			c.p.font = c.font(string(ops[len(ops)-2].b))
			c.p.size = num(ops, 1, 0)
		}
	case "Tc":
		c.p.tc = num(ops, 1, 0)
	case "Tw":
		c.p.tw = num(ops, 1, 0)
	case "Tz":
		c.p.th = num(ops, 1, 0) / 100
	case "TL":
		c.p.tl = num(ops, 1, 0)
	case "Td":
		c.moveLine(num(ops, 2, 0), num(ops, 2, 1))
	case "TD":
		c.p.tl = -num(ops, 2, 1)
		c.moveLine(num(ops, 2, 0), num(ops, 2, 1))
	case "Tm":
		if len(ops) >= 6 {
			for i := range 6 {
				c.tlm[i] = num(ops, 6, i)
			}
			c.tm = c.tlm
		}
	case "T*":
		c.moveLine(0, -c.p.tl)
	case "Tj":
		c.show(last(ops).b)
	case "'":
		c.moveLine(0, -c.p.tl)
		c.show(last(ops).b)
	case `"`:
		c.p.tw, c.p.tc = num(ops, 3, 0), num(ops, 3, 1)
		c.moveLine(0, -c.p.tl)
		c.show(last(ops).b)
	case "TJ":
		for _, o := range last(ops).arr {
			switch o.kind {
			case tokString:
				c.show(o.b)
			case tokInt, tokReal:
				c.advance(-o.num / 1000 * c.p.size)
			}
		}
	case "Do":
		if o := last(ops); o.kind == tokName && c.e.inTime() {
			c.form(string(o.b))
		}
	}
}

// moveLine starts a new line offset by (tx, ty) from the current one.
func (c *content) moveLine(tx, ty float64) {
	m := &c.tlm
	m[4], m[5] = tx*m[0]+ty*m[2]+m[4], tx*m[1]+ty*m[3]+m[5]
	c.tm = c.tlm
}

// advance moves the text position by tx text-space units along the line.
func (c *content) advance(tx float64) {
	tx *= c.p.th
	c.tm[4] += tx * c.tm[0]
	c.tm[5] += tx * c.tm[1]
}

// show decodes a string and writes it, preceded by a space or a line break
// when its position says the previous text ended elsewhere.
func (c *content) show(raw []byte) {
	if len(raw) == 0 {
		return
	}
	f := c.p.font
	if f == nil {
		f = defaultFont
	}
	text, width := f.decode(raw, c.p.size, c.p.tc, c.p.tw)
	if text != "" {
		c.separate()
	}
	c.e.emit(text)
	c.advance(width)
	c.e.have, c.e.lx, c.e.ly = true, c.tm[4], c.tm[5]
}

// separate compares where text starts with where the previous text ended,
// in the text's own direction and in units of the font size.
func (c *content) separate() {
	e := c.e
	if !e.have {
		return
	}
	m := c.tm
	ux, uy := m[0], m[1] // along the line
	if n := math.Hypot(ux, uy); n > 0 {
		ux, uy = ux/n, uy/n
	} else {
		ux, uy = 1, 0
	}
	fs := math.Abs(c.p.size) * math.Hypot(m[2], m[3])
	if fs < 1e-6 || math.IsNaN(fs) || math.IsInf(fs, 0) {
		fs = 1
	}
	dx, dy := m[4]-e.lx, m[5]-e.ly
	along := (dx*ux + dy*uy) / fs
	across := (dy*ux - dx*uy) / fs
	switch {
	case math.Abs(across) > 0.5:
		e.pend = max(e.pend, sepLine)
	case along > 0.15 || along < -1:
		e.pend = max(e.pend, sepSpace)
	}
}

// font returns the font a resource name stands for (nil if none).
func (c *content) font(name string) *pdfFont {
	if f, ok := c.fonts[name]; ok {
		return f
	}
	f := c.e.font(c.res.Key("Font").Key(name))
	c.fonts[name] = f
	return f
}

// form draws a form XObject: its content runs with its own resources and a
// copy of the text state.
func (c *content) form(name string) {
	if c.depth >= pdfMaxForms {
		return
	}
	xo := c.res.Key("XObject").Key(name)
	if xo.Key("Subtype").Name() != "Form" {
		return
	}
	data, err := c.e.stream(xo, pdfMaxContent)
	if err != nil {
		return
	}
	res := xo.Key("Resources")
	if res.Kind() != pdf.Dict {
		res = c.res
	}
	sub := newContent(c.e, res, c.depth+1)
	sub.p = c.p // the form inherits the font itself, not its name
	sub.run(data)
}
