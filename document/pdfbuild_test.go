package document

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
)

// This file writes small PDFs by hand for the tests, with cross-reference
// tables and streams whose offsets are computed while writing.

// pdfFile is a PDF under construction: objects 1..n in order.
type pdfFile struct {
	objs []string
}

// add appends an object and returns its number.
func (p *pdfFile) add(obj string) int {
	p.objs = append(p.objs, obj)
	return len(p.objs)
}

// set replaces object n.
func (p *pdfFile) set(n int, obj string) { p.objs[n-1] = obj }

// stream formats a stream object with a correct /Length.
func stream(dict string, data []byte) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

// deflate compresses data for a /FlateDecode stream.
func deflate(data []byte) []byte {
	var b bytes.Buffer
	w, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// bytes writes the file with a classic cross-reference table. firstID
// shifts the table's first object number (normally 0); trailer is added to
// the trailer dictionary.
func (p *pdfFile) bytes(trailer string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offs := make([]int, len(p.objs))
	for i, o := range p.objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(p.objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	trailer = strings.ReplaceAll(trailer, "XREF", fmt.Sprint(xref))
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R %s >>\nstartxref\n%d\n%%%%EOF\n", len(p.objs)+1, trailer, xref)
	return b.Bytes()
}

// textPDF is a PDF with one page per content stream, all using Helvetica as
// /F1 (WinAnsiEncoding). Objects: 1 catalog, 2 pages, 3 font, then a page
// and its content for each page.
func textPDF(contents ...string) *pdfFile {
	p := &pdfFile{}
	p.add("<< /Type /Catalog /Pages 2 0 R >>")
	p.add("") // pages, below
	p.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	var kids []string
	for _, c := range contents {
		page := p.add("")
		content := p.add(stream("", []byte(c)))
		p.set(page, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", content))
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
	}
	p.set(2, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids)))
	return p
}

// xrefStreamPDF writes a file whose objects 1..3 (catalog, pages, page) sit
// in object stream 5, with content stream 4 and cross-reference stream 6.
// edit may change the object stream's dictionary and the entries before the
// file is written: entries[id] = {type, field2, field3}.
func xrefStreamPDF(text string, objStmDict string, edit func(entries [][3]int64) string) []byte {
	return xrefStreamPDFPadded(text, objStmDict, edit, nil)
}

// xrefStreamPDFPadded is xrefStreamPDF with pad appended to the (compressed)
// object stream.
func xrefStreamPDFPadded(text string, objStmDict string, edit func(entries [][3]int64) string, pad []byte) []byte {
	inner := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> /Contents 4 0 R >>",
	}
	var head, body bytes.Buffer
	for i, o := range inner {
		fmt.Fprintf(&head, "%d %d ", i+1, body.Len())
		body.WriteString(o + "\n")
	}
	objStm := deflate(append(append(head.Bytes(), body.Bytes()...), pad...))

	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n")
	off4 := b.Len()
	fmt.Fprintf(&b, "4 0 obj\n%s\nendobj\n", stream("", []byte("BT /F1 12 Tf 72 720 Td ("+text+") Tj ET")))
	off5 := b.Len()
	fmt.Fprintf(&b, "5 0 obj\n%s\nendobj\n", stream(fmt.Sprintf("/Type /ObjStm /N 3 /First %d /Filter /FlateDecode %s", head.Len(), objStmDict), objStm))
	off6 := b.Len()
	entries := [][3]int64{{0, 0, 65535}, {2, 5, 0}, {2, 5, 1}, {2, 5, 2}, {1, int64(off4), 0}, {1, int64(off5), 0}, {1, int64(off6), 0}}
	extra := ""
	if edit != nil {
		extra = edit(entries)
	}
	var data []byte
	for _, e := range entries {
		data = append(data, byte(e[0]), byte(e[1]>>24), byte(e[1]>>16), byte(e[1]>>8), byte(e[1]), byte(e[2]>>8), byte(e[2]))
	}
	fmt.Fprintf(&b, "6 0 obj\n%s\nendobj\n", stream(fmt.Sprintf("/Type /XRef /Size 7 /W [1 4 2] /Root 1 0 R %s", extra), data))
	fmt.Fprintf(&b, "startxref\n%d\n%%%%EOF\n", off6)
	return b.Bytes()
}
