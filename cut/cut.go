// Package cut shortens text for people and for the model: always on a
// character boundary, and, where the reader must know, saying that it cut.
// It is the one home of Zero's text cutting; nothing of ours is below it.
package cut

import (
	"strings"
	"unicode/utf8"
)

// Clip shortens s to at most n bytes on a character boundary and marks the
// cut with "…" (which comes on top of the n bytes): for messages and titles
// that show the start of a long text.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Head(s, n) + "…"
}

// Head is the first n bytes of s at most, ending on a character boundary,
// unmarked: for a bound the reader does not see (a name, a log field).
func Head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Tail is the last n bytes of s at most, starting on a character
// boundary: the end of a command's output.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - max(n, 0)
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// Line is s on one line of at most n characters: runs of white space
// (line breaks included) become one space, and a cut ends with "…", within
// the n. Only the start of s is looked at, so a title made of a 50 MB
// message costs no more than a short one.
func Line(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if limit := 8*n + 1024; len(s) > limit {
		s = Head(s, limit) + " …"
	}
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
