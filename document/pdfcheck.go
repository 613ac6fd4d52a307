package document

import (
	"bytes"
	"compress/zlib"
	"encoding/ascii85"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// The PDF library trusts the numbers in a file. A 200-byte file that lists
// object 4,000,000,000 in its cross-reference table makes it allocate 128 GB
// and the Go runtime dies with a fatal (unrecoverable) out-of-memory error; a
// /Prev entry that points back at its own section makes NewReader loop
// forever; an object stream that claims to live inside itself recurses until
// the stack overflows, which is fatal too. checkPDF reads the
// cross-reference sections and object streams the way the library will and
// refuses such files before the library sees them.

const (
	pdfMaxObjects  = 1 << 21  // highest object number accepted
	pdfMaxSections = 1024     // cross-reference sections in a /Prev chain
	pdfMaxEntries  = 4 << 20  // cross-reference entries over all sections
	pdfMaxColumns  = 1 << 16  // /DecodeParms /Columns: the library allocates a row of this size
	pdfMaxObjStm   = 8 << 20  // decoded bytes of one object stream
	pdfMaxXrefData = 64 << 20 // decoded bytes of one cross-reference stream
	pdfMaxChecked  = 256 << 20
	pdfMaxChainLen = 256 // object streams extending one another
)

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format+"; repair it (for example: qpdf in.pdf out.pdf) and try again",
		append([]any{ErrMalformed}, args...)...)
}

type xrefEntry struct {
	id  uint32
	off int64
}

// pdfLayout is what checkPDF learned about a file.
type pdfLayout struct {
	data       []byte
	direct     []xrefEntry // objects at a file offset, from every section, newest first
	inStream   []uint64    // bit set: objects listed as inside an object stream
	containers map[uint32]bool
	encrypted  bool
	checked    int64 // bytes decoded while checking
}

// checkPDF validates the structure of a PDF file; see the comment above.
func checkPDF(data []byte) (*pdfLayout, error) {
	x := &pdfLayout{data: data, containers: map[uint32]bool{}}
	start, err := findStartXref(data)
	if err != nil {
		return nil, err
	}
	seen := map[int64]bool{}
	for prev := any(start); prev != nil; {
		off, ok := prev.(int64)
		if !ok {
			return nil, malformed("/Prev of a cross-reference section is not an offset")
		}
		if seen[off] {
			return nil, malformed("cross-reference sections form a loop through /Prev")
		}
		if len(seen) >= pdfMaxSections {
			return nil, malformed("more than %d cross-reference sections", pdfMaxSections)
		}
		seen[off] = true
		if prev, err = x.section(off); err != nil {
			return nil, err
		}
	}
	if x.encrypted {
		return x, nil // the caller refuses it; streams cannot be checked
	}
	// Stable sort keeps newest-first order among entries of one object.
	slices.SortStableFunc(x.direct, func(a, b xrefEntry) int { return int(a.id) - int(b.id) })
	return x, x.checkObjectStreams()
}

// findStartXref finds the offset after "startxref" as the library does: in
// the last 100 bytes, before %%EOF.
func findStartXref(data []byte) (int64, error) {
	const endChunk = 100
	if len(data) < endChunk {
		return 0, malformed("the file is only %d bytes", len(data))
	}
	buf := bytes.TrimRight(data[len(data)-endChunk:], "\r\n\t ")
	if !bytes.HasSuffix(buf, []byte("%%EOF")) {
		return 0, malformed("no %%%%EOF at the end (is the file truncated?)")
	}
	i := findLastLine(buf, "startxref")
	if i < 0 {
		return 0, malformed("no startxref at the end (is the file truncated?)")
	}
	l := &lexer{data: data, pos: len(data) - endChunk + i}
	if t := l.next(); !t.is("startxref") {
		return 0, malformed("no startxref at the end")
	}
	t := l.next()
	if t.kind != tokInt {
		return 0, malformed("startxref is not followed by an offset")
	}
	return t.i, nil
}

// findLastLine is the library's: the last s that has a line to itself.
func findLastLine(buf []byte, s string) int {
	bs := []byte(s)
	end := len(buf)
	for {
		i := bytes.LastIndex(buf[:end], bs)
		if i <= 0 || i+len(bs) >= len(buf) {
			return -1
		}
		if (buf[i-1] == '\n' || buf[i-1] == '\r') && (buf[i+len(bs)] == '\n' || buf[i+len(bs)] == '\r') {
			return i
		}
		end = i
	}
}

// section reads the cross-reference section at off and returns its /Prev.
func (x *pdfLayout) section(off int64) (any, error) {
	if off < 0 || off >= int64(len(x.data)) {
		return nil, malformed("cross-reference offset %d is outside the file", off)
	}
	l := &lexer{data: x.data, pos: int(off)}
	t := l.next()
	switch {
	case t.is("xref"):
		return x.table(l)
	case t.kind == tokInt:
		l.pos = int(off)
		return x.xrefStream(l)
	}
	return nil, malformed("no cross-reference section at offset %d", off)
}

func (x *pdfLayout) table(l *lexer) (any, error) {
	for {
		t := l.next()
		if t.is("trailer") {
			break
		}
		n := l.next()
		if t.kind != tokInt || n.kind != tokInt {
			return nil, malformed("bad cross-reference table")
		}
		if err := x.checkRange(t.i, n.i); err != nil {
			return nil, err
		}
		for i := range n.i {
			off, gen, use := l.next(), l.next(), l.next()
			if off.kind != tokInt || gen.kind != tokInt || !use.is("n") && !use.is("f") {
				return nil, malformed("bad cross-reference table entry")
			}
			if use.is("n") {
				if err := x.addDirect(t.i+i, off.i); err != nil {
					return nil, err
				}
			}
		}
	}
	obj, err := l.parseObject(0)
	trailer, ok := obj.(pdfDict)
	if err != nil || !ok {
		return nil, malformed("cross-reference table without a trailer dictionary")
	}
	return x.trailer(trailer), nil
}

func (x *pdfLayout) trailer(d pdfDict) any {
	if _, ok := d["Encrypt"]; ok {
		x.encrypted = true
	}
	return d["Prev"]
}

// checkRange refuses object numbers the library would allocate a table for.
func (x *pdfLayout) checkRange(start, n int64) error {
	if start < 0 || n < 0 || start > pdfMaxObjects || n > pdfMaxObjects-start {
		return fmt.Errorf("%w: the cross-reference section lists objects %d to %d; at most %d objects are supported",
			ErrTooLarge, start, start+n, pdfMaxObjects)
	}
	return nil
}

func (x *pdfLayout) addDirect(id, off int64) error {
	if len(x.direct) >= pdfMaxEntries {
		return fmt.Errorf("%w: more than %d cross-reference entries", ErrTooLarge, pdfMaxEntries)
	}
	x.direct = append(x.direct, xrefEntry{uint32(id), off})
	return nil
}

func (x *pdfLayout) addInStream(id int64, container uint32) {
	if x.inStream == nil {
		x.inStream = make([]uint64, pdfMaxObjects/64+1)
	}
	x.inStream[id/64] |= 1 << (id % 64)
	x.containers[container] = true
}

func (x *pdfLayout) isInStream(id uint32) bool {
	return x.inStream != nil && id <= pdfMaxObjects && x.inStream[id/64]&(1<<(id%64)) != 0
}

// offsets returns the file offsets listed for object id, newest first.
func (x *pdfLayout) offsets(id uint32) []xrefEntry {
	i, _ := slices.BinarySearchFunc(x.direct, id, func(e xrefEntry, id uint32) int { return int(e.id) - int(id) })
	j := i
	for j < len(x.direct) && x.direct[j].id == id {
		j++
	}
	return x.direct[i:j]
}

// xrefStream reads a cross-reference stream: "id gen obj <<...>> stream".
func (x *pdfLayout) xrefStream(l *lexer) (any, error) {
	d, data, ok := x.streamObject(l)
	if !ok {
		return nil, malformed("no cross-reference stream at offset %d", l.pos)
	}
	if d["Type"] != pdfName("XRef") {
		return nil, malformed("cross-reference stream without /Type /XRef")
	}
	size, ok := d["Size"].(int64)
	if !ok {
		return nil, malformed("cross-reference stream without /Size")
	}
	if err := x.checkRange(0, size); err != nil {
		return nil, err
	}
	index := pdfArray{int64(0), size}
	if v, ok := d["Index"].(pdfArray); ok {
		index = v
	}
	if len(index)%2 != 0 {
		return nil, malformed("odd /Index in a cross-reference stream")
	}
	wa, ok := d["W"].(pdfArray)
	if !ok || len(wa) < 3 || len(wa) > 16 {
		return nil, malformed("bad /W in a cross-reference stream")
	}
	var w []int
	total := 0
	for _, v := range wa {
		n, ok := v.(int64)
		if !ok || n < 0 || n > 8 {
			return nil, malformed("bad /W in a cross-reference stream")
		}
		w = append(w, int(n))
		total += int(n)
	}
	need := int64(0)
	for i := 0; i < len(index); i += 2 {
		start, ok1 := index[i].(int64)
		n, ok2 := index[i+1].(int64)
		if !ok1 || !ok2 {
			return nil, malformed("bad /Index in a cross-reference stream")
		}
		if err := x.checkRange(start, n); err != nil {
			return nil, err
		}
		need += n * int64(total)
	}
	if need > pdfMaxXrefData {
		return nil, fmt.Errorf("%w: the cross-reference stream holds %d bytes of entries", ErrTooLarge, need)
	}
	length, ok := d["Length"].(int64)
	if !ok || length < 0 {
		return nil, malformed("cross-reference stream without a direct /Length")
	}
	raw := data[:min(int64(len(data)), length)]
	// While the cross-reference is read the library resolves no references:
	// an indirect /Filter is no filter at all.
	entries, err := x.decode(raw, d, int(need), noRefs)
	if err != nil || len(entries) < int(need) {
		return nil, malformed("cannot decode the cross-reference stream")
	}
	for i := 0; i < len(index); i += 2 {
		start, n := index[i].(int64), index[i+1].(int64)
		for j := range n {
			e := entries[:total]
			entries = entries[total:]
			typ := int64(1)
			if w[0] > 0 {
				typ = be(e[:w[0]])
			}
			v2 := be(e[w[0] : w[0]+w[1]])
			switch typ {
			case 1:
				if err := x.addDirect(start+j, v2); err != nil {
					return nil, err
				}
			case 2:
				x.addInStream(start+j, uint32(v2))
			}
		}
	}
	return x.trailer(d), nil
}

// be decodes a big-endian number of up to 8 bytes, as the library does.
func be(b []byte) int64 {
	var v int64
	for _, c := range b {
		v = v<<8 | int64(c)
	}
	return v
}

// streamObject parses "id gen obj <<dict>> stream" + end of line and returns
// the dictionary and the bytes after it (to the end of the file).
func (x *pdfLayout) streamObject(l *lexer) (pdfDict, []byte, bool) {
	id, gen, obj := l.next(), l.next(), l.next()
	if id.kind != tokInt || gen.kind != tokInt || !obj.is("obj") {
		return nil, nil, false
	}
	v, err := l.parseObject(0)
	d, ok := v.(pdfDict)
	if err != nil || !ok || !l.next().is("stream") {
		return nil, nil, false
	}
	switch {
	case l.pos < len(l.data) && l.data[l.pos] == '\n':
		l.pos++
	case l.pos+1 < len(l.data) && l.data[l.pos] == '\r' && l.data[l.pos+1] == '\n':
		l.pos += 2
	case l.pos < len(l.data) && l.data[l.pos] == '\r':
		l.pos++
	default:
		return nil, nil, false
	}
	return d, l.data[l.pos:], true
}

// object parses the object at the first offset listed for ref, if any.
func (x *pdfLayout) object(ref pdfRef) (any, bool) {
	if ref.id < 0 || ref.id > math.MaxUint32 {
		return nil, false
	}
	for _, e := range x.offsets(uint32(ref.id)) {
		if e.off < 0 || e.off >= int64(len(x.data)) {
			continue
		}
		l := &lexer{data: x.data, pos: int(e.off)}
		id, gen, obj := l.next(), l.next(), l.next()
		if id.kind != tokInt || gen.kind != tokInt || !obj.is("obj") {
			continue
		}
		if v, err := l.parseObject(0); err == nil {
			return v, true
		}
	}
	return nil, false
}

// resolve follows a reference (one level, as dictionary values need).
func (x *pdfLayout) resolve(v any) any {
	if r, ok := v.(pdfRef); ok {
		v, _ = x.object(r)
	}
	return v
}

func noRefs(v any) any {
	if _, ok := v.(pdfRef); ok {
		return nil
	}
	return v
}

// checkObjectStreams refuses object streams that would make the library
// recurse or loop, or that decode to more than pdfMaxObjStm bytes.
func (x *pdfLayout) checkObjectStreams() error {
	for c := range x.containers {
		if x.isInStream(c) {
			return malformed("object stream %d is listed as inside an object stream", c)
		}
		for _, e := range x.offsets(c) {
			if e.off < 0 || e.off >= int64(len(x.data)) {
				continue
			}
			d, data, ok := x.streamObject(&lexer{data: x.data, pos: int(e.off)})
			if !ok {
				continue // the library fails to load it, harmlessly
			}
			if n, ok := x.resolve(d["N"]).(int64); ok && n > pdfMaxObjects {
				return fmt.Errorf("%w: object stream %d claims %d objects", ErrTooLarge, c, n)
			}
			steps := 0
			if err := x.checkExtends(d["Extends"], map[uint32]bool{c: true}, &steps); err != nil {
				return err
			}
			raw := data
			if n, ok := x.resolve(d["Length"]).(int64); ok && n >= 0 && n < int64(len(raw)) {
				raw = raw[:n]
			}
			out, _ := x.decode(raw, d, pdfMaxObjStm+1, x.resolve)
			if len(out) > pdfMaxObjStm {
				return fmt.Errorf("%w: object stream %d expands past %s; the file may be a decompression bomb",
					ErrTooLarge, c, byteSize(pdfMaxObjStm))
			}
		}
	}
	return nil
}

// checkExtends follows /Extends from object stream to object stream.
func (x *pdfLayout) checkExtends(ext any, path map[uint32]bool, steps *int) error {
	ref, ok := ext.(pdfRef)
	if !ok || ref.id < 0 || ref.id > math.MaxUint32 {
		return nil // not a stream: the library stops there
	}
	id := uint32(ref.id)
	switch {
	case x.isInStream(id):
		return malformed("object stream extends object %d, which is inside an object stream", id)
	case path[id]:
		return malformed("object streams extend one another in a loop")
	case len(path) > pdfMaxChainLen:
		return malformed("more than %d object streams extend one another", pdfMaxChainLen)
	}
	if *steps++; *steps > 16*pdfMaxChainLen {
		return malformed("too many object streams extend one another")
	}
	path[id] = true
	defer delete(path, id)
	for _, e := range x.offsets(id) {
		if e.off < 0 || e.off >= int64(len(x.data)) {
			continue
		}
		if d, _, ok := x.streamObject(&lexer{data: x.data, pos: int(e.off)}); ok {
			if err := x.checkExtends(d["Extends"], path, steps); err != nil {
				return err
			}
		}
	}
	return nil
}

// decode applies a stream's filters, as the library does, reading at most
// limit bytes. Decoding errors after some output keep the output.
func (x *pdfLayout) decode(raw []byte, d pdfDict, limit int, resolve func(any) any) ([]byte, error) {
	var names []pdfName
	var parms []any
	switch f := resolve(d["Filter"]).(type) {
	case nil:
	case pdfName:
		names, parms = []pdfName{f}, []any{resolve(d["DecodeParms"])}
	case pdfArray:
		pa, _ := resolve(d["DecodeParms"]).(pdfArray)
		for i, v := range f {
			n, ok := resolve(v).(pdfName)
			if !ok {
				return nil, errors.New("bad filter")
			}
			names = append(names, n)
			if i < len(pa) {
				parms = append(parms, resolve(pa[i]))
			} else {
				parms = append(parms, nil)
			}
		}
	default:
		return nil, errors.New("bad filter")
	}
	r, err := decodeFilters(bytes.NewReader(raw), names, parms, resolve)
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(r, int64(limit)))
	x.checked += int64(len(out))
	if x.checked > pdfMaxChecked {
		return nil, fmt.Errorf("%w: the file's streams expand past %s", ErrTooLarge, byteSize(pdfMaxChecked))
	}
	return out, err
}

// decodeFilters chains the filters the library supports: FlateDecode (with
// no predictor or PNG-Up, predictor 12) and ASCII85Decode.
func decodeFilters(r io.Reader, names []pdfName, parms []any, resolve func(any) any) (io.Reader, error) {
	for i, name := range names {
		switch name {
		case "FlateDecode":
			zr, err := zlib.NewReader(r)
			if err != nil {
				return nil, err
			}
			r = zr
			p, _ := parms[i].(pdfDict)
			switch pred := resolve(p["Predictor"]); pred {
			case nil:
			case int64(12):
				cols, _ := resolve(p["Columns"]).(int64)
				if cols < 0 || cols > pdfMaxColumns {
					return nil, errors.New("bad /Columns")
				}
				r = &pngUpReader{r: r, hist: make([]byte, 1+cols), tmp: make([]byte, 1+cols)}
			default:
				return nil, errors.New("unsupported predictor")
			}
		case "ASCII85Decode":
			r = ascii85.NewDecoder(&a85Reader{r: r})
		default:
			return nil, fmt.Errorf("unsupported filter %s", name)
		}
	}
	return r, nil
}

// pngUpReader undoes the PNG "Up" predictor, row by row.
type pngUpReader struct {
	r         io.Reader
	hist, tmp []byte
	pend      []byte
}

func (p *pngUpReader) Read(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		if len(p.pend) > 0 {
			m := copy(b, p.pend)
			n += m
			b = b[m:]
			p.pend = p.pend[m:]
			continue
		}
		if _, err := io.ReadFull(p.r, p.tmp); err != nil {
			return n, err
		}
		if p.tmp[0] != 2 {
			return n, errors.New("malformed PNG-Up row")
		}
		for i, c := range p.tmp {
			p.hist[i] += c
		}
		p.pend = p.hist[1:]
	}
	return n, nil
}

// a85Reader drops white space and stops at the ~> end marker.
type a85Reader struct {
	r    io.Reader
	done bool
}

func (a *a85Reader) Read(b []byte) (int, error) {
	for empty := 0; !a.done; empty++ {
		if empty > 100 {
			return 0, io.ErrNoProgress
		}
		n, err := a.r.Read(b)
		k := 0
		for _, c := range b[:n] {
			if c == '~' {
				a.done = true
				break
			}
			if '!' <= c && c <= 'u' || c == 'z' {
				b[k] = c
				k++
			}
		}
		if k > 0 || err != nil {
			return k, err
		}
	}
	return 0, io.EOF
}
