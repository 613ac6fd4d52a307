package document

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// Elements whose content is never visible text.
var htmlSkip = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true,
	"iframe": true, "noembed": true, "noframes": true, "object": true, "canvas": true,
}

// Elements that start on a new line; the value is how many newlines surround
// them (2 makes a paragraph break, which Chunk prefers to cut at).
var htmlBlock = map[string]int{
	"p": 2, "h1": 2, "h2": 2, "h3": 2, "h4": 2, "h5": 2, "h6": 2, "title": 2,
	"pre": 2, "blockquote": 2, "table": 2, "ul": 2, "ol": 2, "dl": 2, "figure": 2,
	"section": 2, "article": 2, "header": 2, "footer": 2, "main": 2, "aside": 2, "nav": 2,
	"div": 1, "br": 1, "li": 1, "dt": 1, "dd": 1, "tr": 1, "hr": 1, "form": 1, "fieldset": 1,
	"figcaption": 1, "address": 1, "details": 1, "summary": 1, "caption": 1, "option": 1,
	"body": 1, "head": 1, "html": 1,
}

// htmlText returns the visible text of an HTML document: the title, then the
// body, with block elements on their own lines, list items as "- " lines and
// table cells separated by tabs. It streams tokens rather than building a
// tree, so deeply nested or huge documents cost linear time and no recursion.
func htmlText(content []byte, maxText int) (string, error) {
	// Honour a BOM or <meta charset>; without either, invalid UTF-8 means
	// windows-1252, as browsers assume.
	if enc, name, _ := charset.DetermineEncoding(content, "text/html"); name != "utf-8" {
		if decoded, err := enc.NewDecoder().Bytes(content); err == nil {
			content = decoded
		}
	}
	content = bytes.TrimPrefix(content, utf8BOM)
	if bytes.IndexByte(content, 0) >= 0 {
		return "", errBinary
	}

	w := &textWriter{max: maxText}
	z := html.NewTokenizer(bytes.NewReader(content))
	skip := 0 // depth inside elements whose text is hidden
	pre := 0  // depth inside <pre>, where whitespace is kept
	for !w.full {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			// io.EOF, or a malformed tail: keep what was read.
			return tidy(w.String()), w.err()
		case html.TextToken:
			if skip > 0 {
				continue
			}
			if pre > 0 {
				w.raw(string(z.Text()))
			} else {
				w.words(string(z.Text()))
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			nameBytes, _ := z.TagName()
			name := string(nameBytes)
			start := tt != html.EndTagToken
			if htmlSkip[name] {
				switch {
				case tt == html.StartTagToken:
					skip++
				case tt == html.EndTagToken && skip > 0:
					skip--
				}
				continue
			}
			if skip > 0 {
				continue
			}
			if name == "pre" || name == "textarea" {
				switch {
				case tt == html.StartTagToken:
					pre++
				case tt == html.EndTagToken && pre > 0:
					pre--
				}
			}
			if n, ok := htmlBlock[name]; ok {
				w.newlines(n)
			}
			switch {
			case start && name == "li":
				w.raw("- ")
			case start && (name == "td" || name == "th"):
				w.tab()
			}
		}
	}
	return "", w.err()
}

// textWriter accumulates extracted text, collapsing whitespace the way a
// browser renders it and stopping once max bytes are written.
type textWriter struct {
	b    strings.Builder
	max  int
	full bool
	nl   int  // line breaks owed before the next text
	sp   bool // a space is owed before the next text
}

func (w *textWriter) String() string { return w.b.String() }

func (w *textWriter) err() error {
	if w.full {
		return textLimitError(w.max)
	}
	return nil
}

// atSpace reports whether the text so far is empty or ends in whitespace.
func (w *textWriter) atSpace() bool {
	s := w.b.String()
	return s == "" || strings.IndexByte(" \t\n", s[len(s)-1]) >= 0
}

// newlines asks for n line breaks (1 or 2) before the next text; requests
// do not add up.
func (w *textWriter) newlines(n int) {
	if w.b.Len() > 0 {
		w.nl = max(w.nl, n)
	}
	w.sp = false
}

// tab separates table cells on one line.
func (w *textWriter) tab() {
	if w.nl == 0 && !w.atSpace() {
		w.sp = false
		w.raw("\t")
	}
}

// words writes text with runs of whitespace collapsed to one space.
func (w *textWriter) words(s string) {
	if s == "" {
		return
	}
	if isSpaceByte(s[0]) {
		w.sp = true
	}
	for i, f := range strings.Fields(s) {
		if i > 0 {
			w.sp = true
		}
		w.raw(f)
	}
	if isSpaceByte(s[len(s)-1]) {
		w.sp = true
	}
}

// raw writes s after any owed line breaks or space.
func (w *textWriter) raw(s string) {
	if w.full || s == "" {
		return
	}
	switch {
	case w.nl > 0:
		w.b.WriteString("\n\n"[:w.nl])
	case w.sp && !w.atSpace():
		w.b.WriteByte(' ')
	}
	w.nl, w.sp = 0, false
	if w.b.Len()+len(s) > w.max {
		w.full = true
		return
	}
	w.b.WriteString(s)
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
