package sandbox

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestCleanOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty", "", ""},
		{"plain lines", "hello\nworld\n", "hello\nworld\n"},
		{"no trailing newline", "abc", "abc"},
		{"crlf", "a\r\nb\r\n", "a\nb\n"},
		{"cr cr lf", "line\r\r\n", "line\n"},
		{"progress overwrite", "10%\r20%\r30%\ndone\n", "30%\ndone\n"},
		{"lone cr at end keeps line", "abc\r", "abc"},
		{"cr then shorter text", "abcdef\rxy\n", "xy\n"},
		{"sgr colours", "\x1b[1;31mred\x1b[0m plain\n", "red plain\n"},
		{"erase line and cr", "\x1b[2K\rprogress 50%\x1b[0K\n", "progress 50%\n"},
		{"private mode", "\x1b[?25lhidden cursor\x1b[?25h\n", "hidden cursor\n"},
		{"osc title with bel", "\x1b]0;my title\x07text\n", "text\n"},
		{"osc with st", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n", "link\n"},
		{"dcs", "\x1bP1$r0m\x1b\\ok", "ok"},
		{"charset select", "\x1b(Bok\x1b)0", "ok"},
		{"two byte escapes", "\x1b=\x1b>\x1b7a\x1b8\n", "a\n"},
		{"nul bel del dropped", "a\x00b\x07c\x7fd\n", "abcd\n"},
		{"other c0 dropped", "x\x01\x02\x0e\x0fy", "xy"},
		{"tab kept", "a\tb\n", "a\tb\n"},
		{"backspace", "ab\bc\n", "ac\n"},
		{"backspace over utf8", "aé\bb", "ab"},
		{"spinner", "|\b/\b-\b\\\bdone\n", "done\n"},
		{"utf8 kept", "✓ ok — fine\n", "✓ ok — fine\n"},
		{"invalid utf8 passes", "a\xffb\n", "a\xffb\n"},
		{"esc before newline", "a\x1b\nb", "a\nb"},
		{"csi broken by newline", "a\x1b[12\nb", "a\nb"},
		{"unterminated osc is capped", "\x1b]" + strings.Repeat("x", maxStringLen+1) + "visible\n", "visible\n"},
		{"sentinel-like osc removed", "out\x1b]6973;0123456789abcdef;0\x07", "out"},
		{"blank lines", "\n\n", "\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, CleanOutput(tt.in)); diff != "" {
				t.Errorf("CleanOutput(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// Feeding the cleaner in arbitrary chunks must give the same text as one
// CleanOutput call: escapes and \r\n are often split across reads.
func TestCleanerChunked(t *testing.T) {
	t.Parallel()
	inputs := []string{
		"\x1b[1;31mred\x1b[0m\r\nnext\r\n",
		"10%\r20%\r30%\ndone",
		"\x1b]0;title\x07a\x1b]8;;u\x1b\\b\n",
		"aé\bb\tc\x00\n",
	}
	for _, in := range inputs {
		want := CleanOutput(in)
		for size := 1; size <= 4; size++ {
			var c cleaner
			for i := 0; i < len(in); i += size {
				c.write([]byte(in[i:min(i+size, len(in))]))
			}
			c.flushPartial()
			if diff := cmp.Diff(want, string(c.out)); diff != "" {
				t.Errorf("chunks of %d of %q (-want +got):\n%s", size, in, diff)
			}
		}
	}
}

// Text emitted early (a partial line shown when a Wait returned) is never
// taken back: continuations are appended, rewrites start a new line.
func TestCleanerPartialLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps []string // "|" flushes the partial line
		want  []string // what each flush (and the end) emitted
	}{
		{"continuation", []string{"Continue? [y/N] ", "|", "got y\n", "|"}, []string{"Continue? [y/N] ", "got y\n"}},
		{"rewrite", []string{"20%", "|", "\r30%\n", "|"}, []string{"20%", "\n30%\n"}},
		{"rewrite then crlf", []string{"20%", "|", "\r\n", "|"}, []string{"20%", "\n"}},
		{"nothing new", []string{"abc", "|", "|"}, []string{"abc", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var c cleaner
			var got []string
			for _, s := range tt.steps {
				if s == "|" {
					c.flushPartial()
					got = append(got, c.take())
					continue
				}
				c.write([]byte(s))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A line of megabytes without a newline is emitted in full, in pieces, while
// the cleaner keeps only its ends: memory stays bounded, a prompt at its
// end is still seen, and a \r still starts it over.
func TestCleanerLongLineBounded(t *testing.T) {
	t.Parallel()
	var c cleaner
	chunk := []byte(strings.Repeat("a", 32<<10))
	emitted := 0
	for range 320 { // 10 MiB
		c.write(chunk)
		emitted += len(c.take())
		if cap(c.line) > 1<<20 {
			t.Fatalf("the unfinished line holds %d bytes", cap(c.line))
		}
	}
	c.write([]byte("Continue? [y/N] "))
	c.flushPartial()
	if got := c.take(); emitted+len(got) != 320*len(chunk)+len("Continue? [y/N] ") || !strings.HasSuffix(got, "Continue? [y/N] ") {
		t.Errorf("emitted %d bytes ending in %q", emitted+len(got), got[max(len(got)-20, 0):])
	}
	lines := c.lastLines()
	if !looksLikeDialog(lines) || len(lines[1]) != maxDialogLine || !strings.HasPrefix(lines[1], "aaa") {
		t.Errorf("last line as dialog detection sees it: %d bytes, %q...", len(lines[1]), lines[1][:min(len(lines[1]), 10)])
	}
	c.write([]byte("\rdone\n"))
	if got := c.take(); got != "\ndone\n" {
		t.Errorf("after \\r: %q, want the new text on a fresh line", got)
	}
}

func TestDialogDetection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		output string
		want   bool
	}{
		{"y/n", "Continue? [y/N] ", true},
		{"Y/N upper", "Proceed (Y/N)", true},
		{"yes/no", "Are you sure (yes/no) [no]", true},
		{"colon", "Password:", true},
		{"colon with spaces", "Enter name:   ", true},
		{"question", "Overwrite file?", true},
		{"prompt on previous line", "Do you want to continue?\n", true},
		{"second to last line", "Choose one:\n1) a\n", true},
		{"third to last line is too far", "Name:\nx\ny\n", false},
		{"plain progress", "downloading 50%\n", false},
		{"colon inside", "error: something failed badly\n", false},
		{"empty", "", false},
		{"blank lines only", "\n\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var c cleaner
			c.write([]byte(tt.output))
			if got := looksLikeDialog(c.lastLines()); got != tt.want {
				t.Errorf("looksLikeDialog(last lines of %q) = %v, want %v", tt.output, got, tt.want)
			}
		})
	}
}

func TestCapBuf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"under the cap", 10, []string{"abc", "def"}, "abcdef"},
		{"exactly the cap", 6, []string{"abc", "def"}, "abcdef"},
		{"head and tail", 6, []string{"abcdefghij"}, "abc\n[... 4 bytes omitted ...]\nhij"},
		{"many small writes", 4, strings.Split("0123456789", ""), "01\n[... 6 bytes omitted ...]\n89"},
		{"utf8 boundaries", 6, []string{"ééééé"}, "é\n[... 6 bytes omitted ...]\né"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newCapBuf(tt.max)
			for _, w := range tt.writes {
				b.write(w)
			}
			got := b.String()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if !utf8.ValidString(got) {
				t.Errorf("String() = %q is not valid UTF-8", got)
			}
		})
	}
}

// Compaction must keep memory bounded and the count exact for large outputs.
func TestCapBufLarge(t *testing.T) {
	t.Parallel()
	b := newCapBuf(1000)
	total := 0
	for i := range 100_000 {
		s := strings.Repeat(string(rune('a'+i%26)), 37)
		b.write(s)
		total += len(s)
	}
	if len(b.tail) > 2*1000+37 {
		t.Errorf("tail holds %d bytes, want it compacted", len(b.tail))
	}
	got := b.String()
	head, rest, ok := strings.Cut(got, "\n[... ")
	if !ok {
		t.Fatalf("no omission marker in %q", got[:100])
	}
	var omitted int
	_, tail, _ := strings.Cut(rest, " bytes omitted ...]\n")
	if _, err := fmt.Sscan(rest, &omitted); err != nil {
		t.Fatal(err)
	}
	if len(head)+len(tail)+omitted != total {
		t.Errorf("head %d + tail %d + omitted %d != total %d", len(head), len(tail), omitted, total)
	}
	if len(head)+len(tail) != 1000 {
		t.Errorf("kept %d bytes, want 1000", len(head)+len(tail))
	}
}
