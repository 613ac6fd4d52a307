// Package termsafe shows text that someone else wrote (the model, a
// workspace, a tool's output) on a terminal without letting it act on the
// terminal or read other than it is: the one home of that job.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
)

// Visible shows the control characters of s instead of letting them act
// on a terminal: newlines and tabs stay, a carriage return is ␍, escape ␛,
// and every other C0 or C1 control and DEL is written as \xNN.
func Visible(s string) string { return show(s, false) }

// Styled is Visible for text whose escapes are the writer's own styles,
// the escapes of the text it shows having been made visible before: escape
// stays, every other control is shown.
func Styled(s string) string { return show(s, true) }

// Reviewable is Visible, and shows Unicode format characters too (such as
// bidirectional overrides, which can make code read other than it runs) as
// \uNNNN: for what a person reviews before trusting it.
func Reviewable(s string) string {
	s = Visible(s)
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.Is(unicode.Cf, r) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.Is(unicode.Cf, r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func show(s string, keepEscape bool) string {
	hidden := func(r rune) bool { return control(r) && !(keepEscape && r == 0x1b) }
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !hidden(r):
			b.WriteRune(r)
		case r == '\r':
			b.WriteString("␍")
		case r == 0x1b:
			b.WriteString("␛")
		default:
			fmt.Fprintf(&b, "\\x%02x", r)
		}
	}
	return b.String()
}

// control reports the runes that act on a terminal: the C0 and C1
// controls and DEL, but newline and tab.
func control(r rune) bool {
	return r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0)
}
