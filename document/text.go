package document

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf16"
)

// Default limits; see [Options].
const (
	DefaultMaxBytes     = 32 << 20
	DefaultMaxTextBytes = 16 << 20
)

// Options bound the work done on one file. The zero value uses the defaults.
type Options struct {
	// MaxBytes is the largest file ReadFile reads; larger files are refused
	// with ErrTooLarge before a byte is read. 0 means DefaultMaxBytes.
	MaxBytes int64
	// MaxTextBytes caps the extracted text. Text that would be longer is an
	// error (ErrTooLarge), never silently truncated, so memory never holds a
	// document that only looks complete. 0 means DefaultMaxTextBytes.
	MaxTextBytes int
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxTextBytes <= 0 {
		o.MaxTextBytes = DefaultMaxTextBytes
	}
	return o
}

// Text extracts the text of a file's content with the default [Options]. The
// name's extension decides the kind (see [KindOf]); content is sniffed only
// when the name has no known extension.
//
// Text, Markdown, code, CSV and JSON come back as they are, decoded from
// UTF-8 (or UTF-16 with a byte order mark), invalid sequences replaced by
// U+FFFD and CRLF line ends turned into LF; a NUL byte means the file is
// binary and is refused with ErrUnsupported. HTML gives its visible text and
// PDF the text layer of its pages, pages separated by a blank line.
func Text(name string, content []byte) (string, error) {
	return Extract(name, content, Options{})
}

// Extract is [Text] with explicit limits. Only opts.MaxTextBytes applies:
// content is already in memory.
func Extract(name string, content []byte, opts Options) (string, error) {
	opts = opts.withDefaults()
	head := content[:min(len(content), SniffLen)]
	kind := KindOf(name, head)
	var (
		text string
		err  error
	)
	switch kind {
	case PlainText, Markdown, Code:
		text, err = plainText(content)
	case HTML:
		text, err = htmlText(content, opts.MaxTextBytes)
	case PDF:
		text, err = pdfText(content, opts.MaxTextBytes)
	case Unsupported:
		if looksBinary(head) {
			err = errBinary
		} else {
			err = fmt.Errorf("%w: %s files are not read; only text, Markdown, code, HTML and PDF files are", ErrUnsupported, filepath.Ext(name))
		}
	}
	if err == nil && len(text) > opts.MaxTextBytes {
		err = textLimitError(opts.MaxTextBytes)
	}
	if err != nil {
		return "", fmt.Errorf("extract text from %s (%s): %w", name, kind, err)
	}
	return text, nil
}

func textLimitError(limit int) error {
	return fmt.Errorf("%w: the text is longer than %s (Options.MaxTextBytes); split the file or raise the limit",
		ErrTooLarge, byteSize(int64(limit)))
}

// ReadFile is [Text] for a file on disk. It refuses anything but a regular
// file, and a file larger than opts.MaxBytes before reading it. ReadFile
// follows symbolic links; callers that must stay inside a workspace check
// the path first.
func ReadFile(path string, opts Options) (string, error) {
	opts = opts.withDefaults()
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read document: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("read document: %w", err)
	}
	if !fi.Mode().IsRegular() {
		what := "not a regular file"
		if fi.IsDir() {
			what = "a directory"
		}
		return "", fmt.Errorf("read document %s: %w: it is %s", path, ErrUnsupported, what)
	}
	if fi.Size() > opts.MaxBytes {
		return "", fmt.Errorf("read document %s: %w: the file is %s, over the %s limit (Options.MaxBytes)",
			path, ErrTooLarge, byteSize(fi.Size()), byteSize(opts.MaxBytes))
	}
	// The file may grow between Stat and Read: never read past the limit.
	content, err := io.ReadAll(io.LimitReader(f, opts.MaxBytes+1))
	if err != nil {
		return "", fmt.Errorf("read document: %w", err)
	}
	if int64(len(content)) > opts.MaxBytes {
		return "", fmt.Errorf("read document %s: %w: the file grew past the %s limit (Options.MaxBytes) while being read",
			path, ErrTooLarge, byteSize(opts.MaxBytes))
	}
	return Extract(path, content, opts)
}

// plainText decodes a text file: UTF-8, or UTF-16 with a byte order mark.
func plainText(b []byte) (string, error) {
	var s string
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		s = decodeUTF16(b[2:], false)
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		s = decodeUTF16(b[2:], true)
	default:
		if bytes.IndexByte(b, 0) >= 0 {
			return "", errBinary
		}
		s = validUTF8(string(bytes.TrimPrefix(b, utf8BOM)))
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "", errBinary
	}
	return strings.ReplaceAll(s, "\r\n", "\n"), nil
}

var errBinary = fmt.Errorf("%w: the file contains NUL or control bytes, so it is binary; only text, Markdown, code, HTML and PDF files are read", ErrUnsupported)

func decodeUTF16(b []byte, bigEndian bool) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		if bigEndian {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			u[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
		}
	}
	return string(utf16.Decode(u))
}

// byteSize formats n for an error message: "32 MiB", "1.5 KiB", "12 bytes".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<20))) + " MiB"
	case n >= 1<<10:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<10))) + " KiB"
	}
	return fmt.Sprintf("%d bytes", n)
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// tidy normalises extracted text: no trailing spaces on a line, at most one
// blank line in a row, no leading or trailing blank lines, valid UTF-8.
func tidy(s string) string {
	s = validUTF8(s)
	var b strings.Builder
	b.Grow(len(s))
	blank := 0
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, " \t\r\n\f\v\u00a0")
		if line == "" {
			blank++
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
			if blank > 0 {
				b.WriteString("\n")
			}
		}
		blank = 0
		b.WriteString(line)
	}
	return b.String()
}
