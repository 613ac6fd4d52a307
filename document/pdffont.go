package document

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// pdfFont turns the codes of a string into text and into the distance the
// glyphs advance, which decides where spaces go.
type pdfFont struct {
	uni   *toUnicode   // the font's ToUnicode CMap, preferred when present
	table *[256]string // single-byte fonts without ToUnicode
	ucs2  bool         // CID fonts with a UCS-2 encoding
	wide  bool         // codes are two bytes (CID fonts)
	scale float64      // glyph space to text space: 1/1000, or a Type3 FontMatrix

	first  int       // simple fonts: code of widths[0]
	widths []float64 // simple fonts: by code; CID fonts: unused
	cidW   []cidWidth
	dw     float64 // width of a glyph not listed
}

type cidWidth struct {
	lo, hi uint32
	w      float64
}

// defaultFont reads strings shown without a usable font as Windows-1252.
var defaultFont = &pdfFont{table: &winAnsi, scale: 0.001, dw: 500}

// font parses a font dictionary, once per distinct dictionary.
func (e *pdfExtractor) font(v pdf.Value) *pdfFont {
	if v.Kind() != pdf.Dict {
		return nil
	}
	key := v.String() // references print as "12 0 R": the text identifies the font
	if f, ok := e.fonts[key]; ok {
		return f
	}
	f := e.parseFont(v)
	if len(e.fonts) < pdfMaxFonts && len(key) < 1<<16 {
		e.fonts[key] = f
	}
	return f
}

func (e *pdfExtractor) parseFont(v pdf.Value) *pdfFont {
	f := &pdfFont{scale: 0.001, dw: 500}
	subtype := v.Key("Subtype").Name()
	if subtype == "Type0" {
		f.wide, f.dw = true, 1000
		d := v.Key("DescendantFonts").Index(0)
		if dw := d.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
			f.dw = dw.Float64()
		}
		f.cidW = cidWidths(d.Key("W"))
	} else {
		f.first = int(v.Key("FirstChar").Int64())
		w := v.Key("Widths")
		for i := range min(w.Len(), 256) {
			f.widths = append(f.widths, w.Index(i).Float64())
		}
		if mw := v.Key("FontDescriptor").Key("MissingWidth").Float64(); mw > 0 {
			f.dw = mw
		}
	}
	if subtype == "Type3" {
		if s := v.Key("FontMatrix").Index(0).Float64(); s != 0 && abs(s) < 1 {
			f.scale = abs(s)
		}
	}

	if tu := v.Key("ToUnicode"); tu.Kind() == pdf.Stream {
		if data, err := e.stream(tu, pdfMaxCMap); err == nil {
			if m := parseCMap(data); m.size() > 0 {
				f.uni = m
				return f
			}
		}
	}
	enc := v.Key("Encoding")
	switch {
	case subtype == "Type0":
		// Without ToUnicode the codes are glyph ids, which have no meaning
		// as text, unless the encoding is a Unicode one.
		name := enc.Name()
		f.ucs2 = strings.Contains(name, "UCS2") || strings.Contains(name, "UTF16")
	case enc.Kind() == pdf.Name && !strings.HasPrefix(enc.Name(), "Identity"),
		enc.Kind() == pdf.Dict && enc.Key("Differences").Len() <= 4096:
		// The library's single-byte encoders (WinAnsi, MacRoman,
		// /Differences with glyph names) are read into a table once. Its
		// ToUnicode reader is never reached from here.
		lf := pdf.Font{V: v}
		f.table = tabulate(lf.Encoder())
	default:
		f.table = &winAnsi
	}
	return f
}

func abs(x float64) float64 { return max(x, -x) }

// tabulate reads a single-byte encoder into a table.
func tabulate(enc pdf.TextEncoding) *[256]string {
	var t [256]string
	for b := range 256 {
		s := enc.Decode(string([]byte{byte(b)}))
		switch {
		case !utf8.ValidString(s) || s == string([]byte{byte(b)}) && b >= 0x80:
			s = winAnsi[b]
		case len(s) == 1 && s[0] < 0x20:
			s = winAnsi[b]
		}
		t[b] = s
	}
	return &t
}

// winAnsi is Windows-1252 with control characters dropped (tab and line
// breaks become spaces).
var winAnsi = func() [256]string {
	var t [256]string
	high := []rune("€\x00‚ƒ„…†‡ˆ‰Š‹Œ\x00Ž\x00\x00‘’“”•–—˜™š›œ\x00žŸ")
	for b := range 256 {
		r := rune(b)
		switch {
		case b == '\t' || b == '\n' || b == '\r':
			r = ' '
		case b < 0x20 || b == 0x7F:
			continue
		case b >= 0x80 && b < 0xA0:
			if r = high[b-0x80]; r == 0 {
				continue
			}
		}
		t[b] = string(r)
	}
	return t
}()

// cidWidths reads a CID font's /W array: "c [w1 w2 ...]" or "c1 c2 w".
func cidWidths(w pdf.Value) []cidWidth {
	var out []cidWidth
	n := min(w.Len(), 1<<16)
	for i := 0; i+1 < n && len(out) < 1<<16; {
		c := w.Index(i)
		next := w.Index(i + 1)
		if next.Kind() == pdf.Array {
			lo := uint32(c.Int64())
			for j := range min(next.Len(), 1<<16) {
				out = append(out, cidWidth{lo + uint32(j), lo + uint32(j), next.Index(j).Float64()})
			}
			i += 2
			continue
		}
		if i+2 < n {
			out = append(out, cidWidth{uint32(c.Int64()), uint32(next.Int64()), w.Index(i + 2).Float64()})
		}
		i += 3
	}
	slices.SortFunc(out, func(a, b cidWidth) int { return cmp.Compare(a.lo, b.lo) })
	return out
}

// decode returns the text of raw and its advance in text space (before
// horizontal scaling): glyph widths plus character and word spacing.
func (f *pdfFont) decode(raw []byte, size, tc, tw float64) (string, float64) {
	var b strings.Builder
	adv := 0.0
	if f.ucs2 {
		u := make([]uint16, 0, len(raw)/2)
		for i := 0; i+1 < len(raw); i += 2 {
			u = append(u, uint16(raw[i])<<8|uint16(raw[i+1]))
		}
		b.WriteString(string(utf16.Decode(u)))
	}
	for i := 0; i < len(raw); {
		n := f.codeLen(raw[i:])
		code := uint32(0)
		for _, c := range raw[i : i+n] {
			code = code<<8 | uint32(c)
		}
		switch {
		case f.uni != nil:
			b.WriteString(f.uni.lookup(n, code))
		case f.table != nil && n == 1:
			b.WriteString(f.table[code])
		}
		adv += f.width(code)*f.scale*size + tc
		if n == 1 && code == ' ' {
			adv += tw
		}
		i += n
	}
	return b.String(), adv
}

func (f *pdfFont) codeLen(b []byte) int {
	n := 1
	switch {
	case f.uni != nil:
		n = f.uni.codeLen(b, f.wide)
	case f.wide || f.ucs2:
		n = 2
	}
	return max(1, min(n, len(b)))
}

func (f *pdfFont) width(code uint32) float64 {
	if f.wide {
		i, found := slices.BinarySearchFunc(f.cidW, code, func(w cidWidth, c uint32) int { return cmp.Compare(w.lo, c) })
		if found {
			return f.cidW[i].w
		}
		if i > 0 && code <= f.cidW[i-1].hi {
			return f.cidW[i-1].w
		}
		return f.dw
	}
	if i := int(code) - f.first; i >= 0 && i < len(f.widths) && f.widths[i] > 0 {
		return f.widths[i]
	}
	return f.dw
}

// toUnicode is a parsed ToUnicode CMap.
type toUnicode struct {
	spaces  [4][][2]uint32 // codespace ranges by code length - 1
	single  map[uint64]string
	ranges  []uniRange // sorted by (n, lo)
	lengths [5]int     // how many mappings have codes of each length
}

type uniRange struct {
	n      int
	lo, hi uint32
	dst    []uint16 // UTF-16 of the first code's text; the last unit counts up
	arr    []string // or one text per code
}

func (m *toUnicode) size() int { return len(m.single) + len(m.ranges) }

// codeLen is the length of the code at the start of b: the codespace range
// that matches, else the most common code length among the mappings.
func (m *toUnicode) codeLen(b []byte, wide bool) int {
	code := uint32(0)
	for n := 1; n <= 4 && n <= len(b); n++ {
		code = code<<8 | uint32(b[n-1])
		for _, r := range m.spaces[n-1] {
			if r[0] <= code && code <= r[1] {
				return n
			}
		}
	}
	best := 1
	if wide {
		best = 2
	}
	for n := 1; n <= 4; n++ {
		if m.lengths[n] > m.lengths[best] {
			best = n
		}
	}
	return best
}

func (m *toUnicode) lookup(n int, code uint32) string {
	if s, ok := m.single[uint64(n)<<32|uint64(code)]; ok {
		return s
	}
	i, _ := slices.BinarySearchFunc(m.ranges, uniRange{n: n, lo: code}, func(r, t uniRange) int {
		return cmp.Or(cmp.Compare(r.n, t.n), cmp.Compare(r.lo, t.lo))
	})
	// The candidate is the range at i (lo == code) or the one before it.
	for _, j := range []int{i, i - 1} {
		if j < 0 || j >= len(m.ranges) {
			continue
		}
		r := m.ranges[j]
		if r.n != n || code < r.lo || code > r.hi {
			continue
		}
		off := code - r.lo
		if r.arr != nil {
			if int(off) < len(r.arr) {
				return r.arr[off]
			}
			return ""
		}
		if len(r.dst) == 0 {
			return ""
		}
		u := slices.Clone(r.dst)
		u[len(u)-1] += uint16(off)
		return string(utf16.Decode(u))
	}
	return ""
}

const maxCMapEntries = 1 << 20

// parseCMap reads the bfchar, bfrange and codespacerange sections of a
// ToUnicode CMap. It is linear in the size of data.
func parseCMap(data []byte) *toUnicode {
	m := &toUnicode{single: map[uint64]string{}}
	l := &lexer{data: data}
	var ops []operand
	for {
		t := l.next()
		switch {
		case t.kind == tokEOF:
			slices.SortFunc(m.ranges, func(a, b uniRange) int {
				return cmp.Or(cmp.Compare(a.n, b.n), cmp.Compare(a.lo, b.lo))
			})
			return m
		case t.kind != tokKeyword:
			ops = append(ops, operand{kind: t.kind, num: t.num, b: t.b})
		case t.is("["):
			ops = append(ops, operand{kind: tokKeyword, arr: readArray(l, 0)})
		default:
			m.apply(string(t.b), ops)
			ops = ops[:0]
		}
		if len(ops) > 3*maxCMapEntries {
			ops = ops[:0]
		}
	}
}

func (m *toUnicode) apply(op string, ops []operand) {
	full := func() bool { return m.size() >= maxCMapEntries }
	switch op {
	case "endcodespacerange":
		for i := 0; i+1 < len(ops); i += 2 {
			lo, hi := ops[i].b, ops[i+1].b
			if n := len(lo); n >= 1 && n <= 4 && len(hi) == n {
				m.spaces[n-1] = append(m.spaces[n-1], [2]uint32{be32(lo), be32(hi)})
			}
		}
	case "endbfchar":
		for i := 0; i+1 < len(ops) && !full(); i += 2 {
			src, dst := ops[i].b, ops[i+1]
			if n := len(src); n >= 1 && n <= 4 {
				m.single[uint64(n)<<32|uint64(be32(src))] = utf16Text(dst)
				m.lengths[n]++
			}
		}
	case "endbfrange":
		for i := 0; i+2 < len(ops) && !full(); i += 3 {
			lo, hi, dst := ops[i].b, ops[i+1].b, ops[i+2]
			n := len(lo)
			if n < 1 || n > 4 || len(hi) != n || be32(hi) < be32(lo) {
				continue
			}
			r := uniRange{n: n, lo: be32(lo), hi: be32(hi)}
			if dst.arr != nil {
				for _, o := range dst.arr {
					r.arr = append(r.arr, utf16Text(o))
				}
			} else {
				r.dst = utf16Units(dst.b)
			}
			m.ranges = append(m.ranges, r)
			m.lengths[n]++
		}
	}
}

func be32(b []byte) uint32 {
	v := uint32(0)
	for _, c := range b {
		v = v<<8 | uint32(c)
	}
	return v
}

// utf16Units reads UTF-16BE; an odd single byte is taken as a code unit.
func utf16Units(b []byte) []uint16 {
	if len(b)%2 == 1 {
		b = append([]byte{0}, b...)
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	return u
}

func utf16Text(o operand) string {
	if o.kind != tokString {
		return ""
	}
	return string(utf16.Decode(utf16Units(o.b)))
}
