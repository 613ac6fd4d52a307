package term

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/zeroagent/zero/termsafe"
)

// chatLines sits between the live view (renderer) and the terminal of
// zero chat: the renderer writes a stream, and the chat prints finished
// lines above its prompt (they stay in the scrollback) while the line in
// progress is part of the prompt area until it ends. A style still open at
// the end of a line is closed there and opened again on the next line, so
// every line printed stands on its own; what a command printed is cleaned of
// terminal controls that would move the cursor.
//
// Only a command's output (written while output is set) may rewrite its
// line with carriage returns (a progress bar shows its last state). In
// everything else (the model's text, the commands it chose, the questions)
// a carriage return or another control character is shown as what it is,
// so no text can hide what came before it on its line.
type chatLines struct {
	buf    bytes.Buffer // the renderer writes here
	part   string       // the unfinished line, raw
	carry  string       // SGR sequences in force where part starts
	output bool         // what is written now is a command's output
	wrote  bool         // the last write was a command's output
}

func (l *chatLines) Write(p []byte) (int, error) {
	l.wrote = l.output
	if l.output {
		return l.buf.Write(p)
	}
	l.buf.WriteString(termsafe.Styled(string(p)))
	return len(p), nil
}

// finish ends the line in progress where it is (the terminal was resized:
// it rewraps what the prompt area shows), cut into rows of width cells,
// and returns its rows; the styles in force go on in the next line. The
// word being written stays in progress, so that a word streamed on is not
// cut in two (what a command prints, which may rewrite its line, ends
// whole).
func (l *chatLines) finish(width int) []string {
	out := l.take(width)
	cut := unfinished(l.part)
	done, rest := l.part[:cut], l.part[cut:]
	if !l.wrote && !strings.Contains(done, "\r") {
		sp := lastSpace(done)
		if sp < 0 {
			return out
		}
		done, rest = done[:sp], done[sp+1:]+rest
	}
	line := clean(overstrike(done))
	if ansi.Strip(line) == "" {
		return out // nothing shows: nothing to end
	}
	l.part = rest
	if width > 0 {
		line = ansi.Wrap(line, width, "")
	}
	for _, r := range strings.Split(line, "\n") {
		out = append(out, l.seal(r))
	}
	return out
}

// lastSpace is where the last space of s outside its escape sequences is
// (-1: none).
func lastSpace(s string) int {
	seqs := escapes.FindAllStringIndex(s, -1)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ' ' && !slices.ContainsFunc(seqs, func(loc []int) bool { return i >= loc[0] && i < loc[1] }) {
			return i
		}
	}
	return -1
}

// take returns the lines finished since the last call, cut into rows of
// width cells (0: no limit) at spaces where they can be. The line in
// progress is cut as it grows, so a long paragraph streams into the
// scrollback instead of growing the prompt area.
func (l *chatLines) take(width int) []string {
	l.part += l.buf.String()
	l.buf.Reset()
	var out []string
	for {
		i := strings.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		line := clean(overstrike(strings.TrimSuffix(l.part[:i], "\r")))
		if width > 0 && ansi.StringWidth(line) > width {
			line = ansi.Wrap(line, width, "")
		}
		for _, r := range strings.Split(line, "\n") {
			out = append(out, l.seal(r))
		}
		l.part = l.part[i+1:]
	}
	if width > 0 {
		cut := unfinished(l.part)
		tail := l.part[cut:]
		part := clean(overstrike(l.part[:cut]))
		if ansi.StringWidth(part) > width {
			rows := strings.Split(ansi.Wrap(part, width, ""), "\n")
			for _, r := range rows[:len(rows)-1] {
				out = append(out, l.seal(r))
			}
			part = rows[len(rows)-1]
		}
		l.part = part + tail
	}
	return out
}

// unfinished returns where the unfinished end of s starts (len(s) when it
// has none): a "\r" that may be the first half of "\r\n", an escape
// sequence or a UTF-8 character cut between two writes.
func unfinished(s string) int {
	if strings.HasSuffix(s, "\r") {
		return len(s) - 1
	}
	if i := strings.LastIndexByte(s, '\x1b'); i >= 0 && len(s)-i < 64 {
		if loc := escapes.FindStringIndex(s[i:]); loc == nil || loc[0] != 0 {
			return i
		}
	}
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return i
			}
			break
		}
	}
	return len(s)
}

// view is the line in progress as the prompt area shows it.
func (l *chatLines) view() string {
	part := clean(overstrike(l.part[:unfinished(l.part)]))
	if part == "" {
		return ""
	}
	s := l.carry + part
	if sgrAfter(l.carry, part) != "" {
		s += reset
	}
	return s
}

// end finishes the line in progress (the chat leaves or switches session)
// and returns it, if any.
func (l *chatLines) end() []string {
	out := l.take(0)
	if part := strings.TrimSuffix(l.part, "\r"); part != "" {
		out = append(out, l.seal(overstrike(part)))
	}
	l.part, l.carry = "", ""
	return out
}

// seal makes a finished line printable: cleaned, with the styles in force
// opened at its start and closed at its end.
func (l *chatLines) seal(line string) string {
	line = clean(line)
	s := l.carry + line
	l.carry = sgrAfter(l.carry, line)
	if l.carry != "" {
		s += reset
	}
	return s
}

var (
	// escapes matches the terminal control sequences: CSI, OSC (ended by
	// BEL or ST), and two-byte escapes.
	escapes = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]`)
	sgr     = regexp.MustCompile(`^\x1b\[[0-9;:]*m$`)
	// controls are the C0 controls left once the sequences are handled
	// (tab and escape aside).
	controls = regexp.MustCompile(`[\x00-\x08\x0a-\x1a\x1c-\x1f\x7f]`)
)

// clean keeps the colors of a line (SGR) and drops every other control
// sequence and character; a tab becomes spaces.
func clean(s string) string {
	var b strings.Builder
	text := func(t string) { // between sequences: no escape stays alone
		t = strings.ReplaceAll(t, "\t", "    ")
		b.WriteString(controls.ReplaceAllString(strings.ReplaceAll(t, "\x1b", ""), ""))
	}
	at := 0
	if strings.IndexByte(s, '\x1b') >= 0 {
		for _, loc := range escapes.FindAllStringIndex(s, -1) {
			text(s[at:loc[0]])
			if seq := s[loc[0]:loc[1]]; sgr.MatchString(seq) {
				b.WriteString(seq)
			}
			at = loc[1]
		}
	}
	text(s[at:])
	return b.String()
}

// overstrike keeps what a terminal would show of a line rewritten with
// carriage returns (a progress bar): the text after the last one.
func overstrike(s string) string {
	if i := strings.LastIndexByte(s, '\r'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// sgrAfter returns the SGR sequences in force after s when state was in
// force before it.
func sgrAfter(state, s string) string {
	for _, seq := range escapes.FindAllString(s, -1) {
		switch {
		case !sgr.MatchString(seq):
		case seq == "\x1b[0m" || seq == "\x1b[m":
			state = ""
		default:
			state += seq
		}
	}
	return state
}
