package document

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

const helloContent = "BT /F1 12 Tf 72 720 Td (Hello) Tj 0 -14 Td (World) Tj ET"

func TestPDFPages(t *testing.T) {
	t.Parallel()
	one := textPDF(helloContent).bytes("")
	got, err := Text("one.pdf", one)
	if err != nil || got != "Hello\nWorld" {
		t.Errorf("one page: Text = %q, %v; want %q", got, err, "Hello\nWorld")
	}

	two := textPDF(helloContent, "BT /F1 12 Tf 72 720 Td (Second page) Tj ET").bytes("")
	got, err = Text("two.pdf", two)
	if want := "Hello\nWorld\n\nSecond page"; err != nil || got != want {
		t.Errorf("two pages: Text = %q, %v; want %q", got, err, want)
	}
}

// TestPDFOperators checks text operators one by one; each case is the
// content stream of a one-page PDF.
func TestPDFOperators(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, want string
	}{
		{"TJ kerning and word gap", "BT /F1 12 Tf [(Hel) -10 (lo) -300 (World)] TJ ET", "Hello World"},
		{"Td on the same line", "BT /F1 12 Tf 72 700 Td (Hello) Tj 40 0 Td (World) Tj ET", "Hello World"},
		{"glyph by glyph", "BT /F1 10 Tf 0 0 Td (a) Tj 5 0 Td (b) Tj 5 0 Td (c) Tj ET", "abc"},
		{"T* with TL", "BT /F1 12 Tf 14 TL (one) Tj T* (two) Tj ET", "one\ntwo"},
		{"quote", "BT /F1 12 Tf 14 TL (one) Tj (two) ' ET", "one\ntwo"},
		{"double quote", `BT /F1 12 Tf 14 TL (one) Tj 1 0 (two) " ET`, "one\ntwo"},
		{"Tm lines", "BT /F1 12 Tf 1 0 0 1 72 700 Tm (x) Tj 1 0 0 1 72 680 Tm (y) Tj ET", "x\ny"},
		{"one BT per word", "BT /F1 12 Tf 72 700 Td (left) Tj ET BT /F1 12 Tf 110 700 Td (right) Tj ET", "left right"},
		{"rotated line", "BT /F1 12 Tf 0 1 -1 0 100 100 Tm (up) Tj 20 0 Td (wards) Tj ET", "up wards"},
		{"escapes", `BT /F1 12 Tf (a\(b\) \\ c\101) Tj ET`, `a(b) \ cA`},
		{"hex string", "BT /F1 12 Tf <48656C6C6F> Tj ET", "Hello"},
		{"WinAnsi", `BT /F1 12 Tf (caf\351 \200) Tj ET`, "café €"},
		{"unknown font", "BT /F9 12 Tf (still read) Tj ET", "still read"},
		{"inline image", "BT /F1 12 Tf (before) Tj ET BI /W 2 /H 1 /BPC 8 /CS /G ID \xff)(>]EI\x00 EI BT /F1 12 Tf 0 -20 Td (after) Tj ET", "before\nafter"},
		{"marked content", "/P << /MCID 0 >> BDC BT /F1 12 Tf (tagged) Tj ET EMC", "tagged"},
		{"q Q restore font", "BT /F1 12 Tf q /F9 8 Tf Q (x) Tj ET", "x"},
		{"garbage operators", "BT /F1 12 Tf 1 2 3 4 5 6 7 8 9 foo ] >> ) (ok) Tj ET", "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Text("op.pdf", textPDF(tt.content).bytes(""))
			if err != nil || got != tt.want {
				t.Errorf("content %q:\nText = %q, %v\nwant %q", tt.content, got, err, tt.want)
			}
		})
	}
}

func TestPDFFlateContent(t *testing.T) {
	t.Parallel()
	p := textPDF()
	content := p.add(stream("/Filter /FlateDecode", deflate([]byte("BT /F1 12 Tf (compressed text) Tj ET"))))
	page := p.add(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 3 0 R >> >> /Contents [%d 0 R] >>", content))
	p.set(2, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
	got, err := Text("flate.pdf", p.bytes(""))
	if err != nil || got != "compressed text" {
		t.Errorf("Text = %q, %v; want %q", got, err, "compressed text")
	}
}

// TestPDFToUnicode reads a CID font (Identity-H, two-byte codes) through its
// ToUnicode CMap, with widths from /W for spacing.
func TestPDFToUnicode(t *testing.T) {
	t.Parallel()
	cmap := `/CIDInit /ProcSet findresource begin 12 dict begin begincmap
/CMapName /Test def
1 begincodespacerange <0000> <FFFF> endcodespacerange
2 beginbfchar <0001> <0048> <0002> <00E9> endbfchar
1 beginbfrange <0010> <0012> <0061> endbfrange
1 beginbfrange <0020> <0021> [<D83DDE00> <0021>] endbfrange
endcmap CMapName currentdict /CMap defineresource pop end end`
	p := textPDF()
	cm := p.add(stream("", []byte(cmap)))
	desc := p.add("<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Test /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 1000 /W [1 [500 600] 16 18 400] >>")
	font := p.add(fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /Test /Encoding /Identity-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>", desc, cm))
	content := p.add(stream("", []byte("BT /F2 10 Tf 72 700 Td <000100020010001100120020> Tj 33 0 Td <0021> Tj ET")))
	page := p.add(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /Resources << /Font << /F2 %d 0 R >> >> /Contents %d 0 R >>", font, content))
	p.set(2, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
	got, err := Text("cid.pdf", p.bytes(""))
	if want := "Hé" + "abc" + "😀!"; err != nil || got != want {
		t.Errorf("Text = %q, %v; want %q", got, err, want)
	}
}

func TestPDFFormXObject(t *testing.T) {
	t.Parallel()
	p := textPDF()
	form := p.add(stream("/Type /XObject /Subtype /Form /BBox [0 0 100 100] /Resources << /Font << /F1 3 0 R >> >>",
		[]byte("BT /F1 12 Tf 0 0 Td (inside the form) Tj ET")))
	content := p.add(stream("", []byte("BT /F1 12 Tf 72 700 Td (page text) Tj ET /Fm1 Do")))
	page := p.add(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 3 0 R >> /XObject << /Fm1 %d 0 R >> >> /Contents %d 0 R >>", form, content))
	p.set(2, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
	got, err := Text("form.pdf", p.bytes(""))
	if want := "page text\ninside the form"; err != nil || got != want {
		t.Errorf("Text = %q, %v; want %q", got, err, want)
	}
}

func TestPDFObjectStream(t *testing.T) {
	t.Parallel()
	got, err := Text("objstm.pdf", xrefStreamPDF("from an object stream", "", nil))
	if err != nil || got != "from an object stream" {
		t.Errorf("Text = %q, %v", got, err)
	}
}

// TestPDFParentLoop: the library's own page walk follows /Parent and never
// returns on this file; ours never follows /Parent.
func TestPDFParentLoop(t *testing.T) {
	t.Parallel()
	p := textPDF(helloContent)
	p.set(2, "<< /Type /Pages /Kids [4 0 R] /Count 1 /Parent 2 0 R >>")
	p.set(4, "<< /Type /Page /Parent 2 0 R /Contents 5 0 R >>") // no /Resources: inherited
	got, err := Text("loop.pdf", p.bytes(""))
	if err != nil || got != "Hello\nWorld" {
		t.Errorf("Text = %q, %v", got, err)
	}
}

func TestPDFErrors(t *testing.T) {
	t.Parallel()
	valid := textPDF(helloContent).bytes("")
	withPages := func(pages string) []byte {
		p := textPDF(helloContent)
		p.set(2, pages)
		return p.bytes("")
	}
	withContent := func(dict string, data []byte) []byte {
		p := textPDF(helloContent)
		p.set(5, stream(dict, data))
		return p.bytes("")
	}
	xrefShift := bytes.Replace(valid, []byte("xref\n0 6\n"), []byte("xref\n4000000000 6\n"), 1)
	tests := []struct {
		name    string
		content []byte
		want    error
	}{
		{"not a PDF", []byte(strings.Repeat("hello ", 50)), ErrMalformed},
		{"empty", nil, ErrMalformed},
		{"truncated", valid[:len(valid)*2/3], ErrMalformed},
		{"bad startxref", bytes.Replace(valid, []byte("startxref\n"), []byte("startxref\n9"), 1), ErrMalformed},
		{"header only", []byte("%PDF-1.4\n" + strings.Repeat(" ", 100) + "\n%%EOF\n"), ErrMalformed},
		{"encrypted", textPDF(helloContent).bytes("/Encrypt << /Filter /Standard /V 1 /R 2 /O (x) /U (y) /P -4 >>"), ErrEncrypted},
		{"no text layer", textPDF("0 0 m 100 100 l S").bytes(""), ErrNoText},
		{"no pages", withPages("<< /Type /Pages /Kids [] /Count 0 >>"), ErrNoText},
		{"huge object number", xrefShift, ErrTooLarge},
		{"xref Prev loop", textPDF(helloContent).bytes("/Prev XREF"), ErrMalformed},
		{"Kids loop", withPages("<< /Type /Pages /Kids [2 0 R] /Count 1 >>"), ErrMalformed},
		{"Kids fan-out loop", withPages("<< /Type /Pages /Kids [2 0 R 2 0 R 4 0 R] /Count 1 >>"), ErrMalformed},
		{"Columns bomb", withContent("/Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 1000000000000 >>", deflate([]byte("BT (x) Tj ET"))), ErrMalformed},
		{"unknown filter", withContent("/Filter /LZWDecode", []byte("xx")), ErrMalformed},
		{"corrupt flate", withContent("/Filter /FlateDecode", []byte("not zlib at all")), ErrMalformed},
		{"objstm inside itself", xrefStreamPDF("x", "", func(e [][3]int64) string { e[5] = [3]int64{2, 5, 3}; return "" }), ErrMalformed},
		{"objstm Extends loop", xrefStreamPDF("x", "/Extends 5 0 R", nil), ErrMalformed},
		{"objstm N huge", xrefStreamPDF("x", "/N 999999999999", nil), ErrTooLarge},
		{"xref Size huge", xrefStreamPDF("x", "", func([][3]int64) string { return "/Size 4000000000" }), ErrTooLarge},
		{"xref Index huge", xrefStreamPDF("x", "", func([][3]int64) string { return "/Index [4000000000 7]" }), ErrTooLarge},
		{"xref W huge", xrefStreamPDF("x", "", func([][3]int64) string { return "/W [1 100000000000 2]" }), ErrMalformed},
		{"xref stream Prev loop", xrefStreamPDF("x", "", func(e [][3]int64) string { return fmt.Sprintf("/Prev %d", e[6][1]) }), ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Text("bad.pdf", tt.content)
			if !errors.Is(err, tt.want) {
				t.Errorf("Text = %q, %v; want error %v", got, err, tt.want)
			}
		})
	}
}

// TestPDFTruncated cuts a valid file at every length: errors, never a panic.
func TestPDFTruncated(t *testing.T) {
	t.Parallel()
	valid := xrefStreamPDF("text", "", nil)
	for n := range bytes.LastIndex(valid, []byte("%%EOF")) + 4 {
		if _, err := Text("cut.pdf", valid[:n]); err == nil {
			t.Fatalf("Text(first %d of %d bytes) succeeded, want an error", n, len(valid))
		}
	}
}

// TestPDFDamaged overwrites single bytes of a valid file: whatever comes
// out, nothing panics.
func TestPDFDamaged(t *testing.T) {
	t.Parallel()
	for _, valid := range [][]byte{textPDF(helloContent).bytes(""), xrefStreamPDF("text", "", nil)} {
		for i := range valid {
			for _, c := range []byte{0, '(', ']', '9', 'R'} {
				damaged := bytes.Clone(valid)
				damaged[i] = c
				_, _ = Text("damaged.pdf", damaged)
			}
		}
	}
}

func TestPDFBombs(t *testing.T) {
	t.Parallel()
	p := textPDF(helloContent)
	p.set(5, stream("/Filter /FlateDecode", deflate(make([]byte, pdfMaxContent+1))))
	if _, err := Text("bomb.pdf", p.bytes("")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("content stream bomb: error = %v, want ErrTooLarge", err)
	}
	objStm := xrefStreamPDFPadded("x", "", nil, make([]byte, pdfMaxObjStm))
	if _, err := Text("objstm-bomb.pdf", objStm); !errors.Is(err, ErrTooLarge) {
		t.Errorf("object stream bomb: error = %v, want ErrTooLarge", err)
	}
}

func TestPDFTextLimit(t *testing.T) {
	t.Parallel()
	content := "BT /F1 12 Tf " + strings.Repeat("(0123456789) Tj ", 100) + "ET"
	_, err := Extract("long.pdf", textPDF(content).bytes(""), Options{MaxTextBytes: 500})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "MaxTextBytes") {
		t.Errorf("error = %v, want ErrTooLarge naming MaxTextBytes", err)
	}
}

// TestPDFHostileContent: content streams built to exhaust the stack, the
// operand stack or time. Each finishes quickly with the text before it.
func TestPDFHostileContent(t *testing.T) {
	t.Parallel()
	const n = 1 << 20
	for name, hostile := range map[string]string{
		"nested arrays":   strings.Repeat("[", n),
		"nested dicts":    strings.Repeat("<<", n),
		"operands":        strings.Repeat("1 ", n),
		"open string":     "(" + strings.Repeat("(", n),
		"open hex string": "<" + strings.Repeat("0", n),
		"q without Q":     strings.Repeat("q ", n),
		"huge TJ":         "BT /F1 12 Tf [" + strings.Repeat("0 ", n) + "(x)] TJ ET",
		"many Tf":         "BT " + strings.Repeat("/F1 12 Tf /F2 12 Tf ", n/8) + "ET",
		"inline image":    "BI ID " + strings.Repeat("EIx", n),
	} {
		content := "BT /F1 12 Tf (start) Tj ET " + hostile
		got, err := Text("hostile.pdf", textPDF(content).bytes(""))
		if err != nil || !strings.HasPrefix(got, "start") {
			t.Errorf("%s: Text = %.40q, %v", name, got, err)
		}
	}
}

func TestPDFDeadline(t *testing.T) {
	t.Parallel()
	_, err := pdfTextBy(textPDF(helloContent).bytes(""), DefaultMaxTextBytes, time.Now().Add(-time.Second))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "took longer") {
		t.Errorf("past deadline: error = %v, want ErrTooLarge saying it took too long", err)
	}
}

func TestPDFLigatures(t *testing.T) {
	t.Parallel()
	cmap := "1 begincodespacerange <00> <FF> endcodespacerange 2 beginbfchar <01> <FB01> <02> <006C> endbfchar"
	p := textPDF()
	cm := p.add(stream("", []byte(cmap)))
	font := p.add(fmt.Sprintf("<< /Type /Font /Subtype /Type1 /BaseFont /X /ToUnicode %d 0 R >>", cm))
	content := p.add(stream("", []byte("BT /F2 12 Tf <0102> Tj ET")))
	page := p.add(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /Resources << /Font << /F2 %d 0 R >> >> /Contents %d 0 R >>", font, content))
	p.set(2, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
	if got, err := Text("lig.pdf", p.bytes("")); err != nil || got != "fil" {
		t.Errorf("Text = %q, %v; want %q", got, err, "fil")
	}
}
