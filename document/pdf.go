package document

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ledongthuc/pdf"
)

// Limits of PDF extraction, on top of Options.
const (
	pdfMaxContent = 64 << 20  // decoded bytes of one page's content (or one form)
	pdfMaxCMap    = 4 << 20   // decoded bytes of one ToUnicode CMap
	pdfMaxDecoded = 512 << 20 // decoded bytes of all streams read for text
	pdfMaxNodes   = 1 << 18   // page tree nodes (pages and their parents)
	pdfMaxDepth   = 64        // page tree depth
	pdfMaxForms   = 8         // form XObjects drawn inside one another
	pdfMaxFonts   = 4096      // fonts kept parsed
	pdfTimeLimit  = time.Minute
)

// pdfText returns the text layer of every page, pages separated by a blank
// line.
//
// github.com/ledongthuc/pdf is used as an object-graph reader only: it finds
// objects, follows references and decodes streams. The page tree is walked
// here (the library's Page and GetPlainText follow /Parent without a loop
// check), content streams and ToUnicode CMaps are interpreted here (with
// bounded memory, word spacing from glyph positions, text in form XObjects,
// and none of the library's operator panics), and checkPDF has vetted the
// file's structure before the library opens it.
func pdfText(content []byte, maxText int) (string, error) {
	return pdfTextBy(content, maxText, time.Now().Add(pdfTimeLimit))
}

// pdfTextBy is pdfText with the time limit given as a deadline.
func pdfTextBy(content []byte, maxText int, deadline time.Time) (text string, err error) {
	layout, err := checkPDF(content)
	if err != nil {
		return "", err
	}
	if layout.encrypted {
		return "", fmt.Errorf("%w: save a copy without encryption (for example: qpdf --decrypt in.pdf out.pdf) and import that", ErrEncrypted)
	}
	ra := &guardedReaderAt{r: bytes.NewReader(content), deadline: deadline}
	e := &pdfExtractor{ra: ra, max: maxText, fonts: map[string]*pdfFont{}}
	defer func() {
		// The library reports errors by panicking, and some of its panics
		// are runtime errors (an index out of range on a short file, for
		// one). None may take the caller down.
		if r := recover(); r != nil {
			text, err = "", e.fail(fmt.Errorf("%v", r))
		}
	}()
	r, err := pdf.NewReader(ra, int64(len(content)))
	if err != nil {
		return "", e.fail(err)
	}
	pages := r.Trailer().Key("Root").Key("Pages")
	if pages.Kind() != pdf.Dict {
		return "", malformed("no page tree")
	}
	if err := e.walk(pages, pdf.Value{}, 0); err != nil {
		return "", err
	}
	if e.err != nil {
		return "", e.err
	}
	text = ligatures.Replace(tidy(e.out.String()))
	switch {
	case text != "":
		return text, nil
	case e.pageErr != nil:
		return "", malformed("no page could be read (%v)", e.pageErr)
	case e.pages == 0:
		return "", fmt.Errorf("%w: the PDF has no pages", ErrNoText)
	}
	return "", fmt.Errorf("%w: none of its pages (%d) holds text, as in scanned documents; run OCR first (for example: ocrmypdf in.pdf out.pdf)", ErrNoText, e.pages)
}

// ligatures spells out the Latin ligature characters some fonts map their
// glyphs to, so that "ﬁle" is found when searching for "file".
var ligatures = strings.NewReplacer("\ufb00", "ff", "\ufb01", "fi", "\ufb02", "fl", "\ufb03", "ffi", "\ufb04", "ffl", "\ufb05", "st", "\ufb06", "st")

// guardedReaderAt stops the library once the time limit is spent: the
// library has no object cache, so a crafted file can make it decode the
// same object stream again and again. Every read checks the clock, and the
// library turns the read error into a panic that pdfText recovers.
type guardedReaderAt struct {
	r        io.ReaderAt
	deadline time.Time
	expired  bool
}

var errPDFDeadline = errors.New("pdf: time limit exceeded")

func (g *guardedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if g.expired || time.Now().After(g.deadline) {
		g.expired = true
		return 0, errPDFDeadline
	}
	return g.r.ReadAt(p, off)
}

// pdfExtractor walks the page tree and collects text.
type pdfExtractor struct {
	ra      *guardedReaderAt
	out     strings.Builder
	max     int
	pend    int   // separator owed before the next text: sepSpace, sepLine, sepPage
	err     error // sticky: a limit was hit, stop everything
	pageErr error // the first page that could not be read completely
	pages   int
	nodes   int
	decoded int64
	fonts   map[string]*pdfFont // parsed fonts, by the text of their dictionary

	// The end of the last text shown, to decide on a space or line break.
	have   bool
	lx, ly float64
}

const (
	sepNone = iota
	sepSpace
	sepLine
	sepPage
)

// fail turns an error from the library into ours.
func (e *pdfExtractor) fail(err error) error {
	switch {
	case e.err != nil:
		return e.err
	case e.ra.expired:
		return fmt.Errorf("%w: reading the PDF took longer than %v; it is too large or built to be slow to parse", ErrTooLarge, pdfTimeLimit)
	case errors.Is(err, pdf.ErrInvalidPassword):
		return fmt.Errorf("%w: it needs a password; save a copy without one and import that", ErrEncrypted)
	case err.Error() == "":
		return malformed("unreadable")
	}
	return malformed("%v", err)
}

// inTime reports whether extraction may go on: no limit hit and time left.
// It is checked before each call into the library that may be slow.
func (e *pdfExtractor) inTime() bool {
	if e.err == nil && (e.ra.expired || time.Now().After(e.ra.deadline)) {
		e.ra.expired = true
		e.stop(e.fail(errPDFDeadline))
	}
	return e.err == nil
}

// stop records a limit error; everything unwinds from there.
func (e *pdfExtractor) stop(err error) {
	if e.err == nil {
		e.err = err
	}
}

func (e *pdfExtractor) walk(node, res pdf.Value, depth int) error {
	if depth > pdfMaxDepth {
		return malformed("the page tree is deeper than %d levels (a loop?)", pdfMaxDepth)
	}
	if e.nodes++; e.nodes > pdfMaxNodes {
		return fmt.Errorf("%w: more than %d pages", ErrTooLarge, pdfMaxNodes)
	}
	if !e.inTime() {
		return e.err
	}
	if r := node.Key("Resources"); r.Kind() == pdf.Dict {
		res = r // inherited by the kids, so /Parent never needs following
	}
	typ := node.Key("Type").Name()
	kids := node.Key("Kids")
	if typ == "Pages" || typ != "Page" && kids.Kind() == pdf.Array {
		for i := range kids.Len() {
			if err := e.walk(kids.Index(i), res, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if node.Kind() == pdf.Dict {
		e.page(node, res)
	}
	return e.err
}

// page extracts one page. A page that fails keeps the text read before the
// failure; the first failure is remembered for the error message.
func (e *pdfExtractor) page(node, res pdf.Value) {
	e.pages++
	defer func() {
		if r := recover(); r != nil && e.pageErr == nil {
			e.pageErr = fmt.Errorf("page %d: %v", e.pages, r)
		}
		e.pend = max(e.pend, sepPage)
		e.have = false
	}()
	data, err := e.contents(node.Key("Contents"))
	if err != nil {
		if e.pageErr == nil {
			e.pageErr = fmt.Errorf("page %d: %w", e.pages, err)
		}
		return
	}
	newContent(e, res, 0).run(data)
}

// contents returns the decoded content of a page: a stream or an array of
// streams, which are concatenated.
func (e *pdfExtractor) contents(v pdf.Value) ([]byte, error) {
	switch v.Kind() {
	case pdf.Stream:
		return e.stream(v, pdfMaxContent)
	case pdf.Array:
		var all []byte
		for i := range min(v.Len(), 1<<16) {
			b, err := e.stream(v.Index(i), pdfMaxContent-len(all))
			if err != nil {
				return all, err
			}
			all = append(append(all, b...), '\n')
		}
		return all, nil
	}
	return nil, nil
}

// stream decodes a stream, refusing more than limit bytes and counting them
// against the document's budget. A stream whose compressed data is cut
// short gives what could be decoded.
func (e *pdfExtractor) stream(v pdf.Value, limit int) (data []byte, err error) {
	if v.Kind() != pdf.Stream || e.err != nil {
		return nil, e.err
	}
	defer func() {
		if r := recover(); r != nil && err == nil {
			data, err = nil, fmt.Errorf("stream: %v", r)
		}
	}()
	if !columnsOK(v.Key("DecodeParms")) {
		return nil, errors.New("stream: bad /DecodeParms /Columns")
	}
	data, _ = io.ReadAll(io.LimitReader(v.Reader(), int64(limit)+1))
	e.decoded += int64(len(data))
	switch {
	case len(data) > limit:
		e.stop(fmt.Errorf("%w: a stream expands past %s; the file may be a decompression bomb", ErrTooLarge, byteSize(int64(limit))))
	case e.decoded > pdfMaxDecoded:
		e.stop(fmt.Errorf("%w: the PDF's streams expand past %s; the file may be a decompression bomb", ErrTooLarge, byteSize(pdfMaxDecoded)))
	}
	if e.err != nil {
		return nil, e.err
	}
	return data, nil
}

// columnsOK guards the library's predictor, which allocates /Columns bytes.
func columnsOK(p pdf.Value) bool {
	ok := func(d pdf.Value) bool {
		c := d.Key("Columns")
		return c.Kind() != pdf.Integer || c.Int64() >= 0 && c.Int64() <= pdfMaxColumns
	}
	if p.Kind() == pdf.Array {
		if p.Len() > 64 {
			return false
		}
		for i := range p.Len() {
			if !ok(p.Index(i)) {
				return false
			}
		}
		return true
	}
	return ok(p)
}

// emit writes text after the separator it is owed.
func (e *pdfExtractor) emit(s string) {
	if s == "" || e.err != nil {
		return
	}
	if e.out.Len() > 0 {
		switch e.pend {
		case sepSpace:
			if !strings.HasSuffix(e.out.String(), " ") && s[0] != ' ' {
				e.out.WriteByte(' ')
			}
		case sepLine:
			e.out.WriteByte('\n')
		case sepPage:
			e.out.WriteString("\n\n")
		}
	}
	e.pend = sepNone
	if e.out.Len()+len(s) > e.max {
		e.stop(textLimitError(e.max))
		return
	}
	e.out.WriteString(s)
}
