package cut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, got, want string
	}{
		{"clip short", Clip("abc", 3), "abc"},
		{"clip", Clip("abcdef", 3), "abc…"},
		{"clip inside a character", Clip("aé", 2), "a…"},
		{"clip zero", Clip("abc", 0), "…"},
		{"head", Head("abcdef", 4), "abcd"},
		{"head inside a character", Head("a€b", 3), "a"},
		{"head negative", Head("abc", -1), ""},
		{"tail short", Tail("abc", 5), "abc"},
		{"tail", Tail("abcdef", 2), "ef"},
		{"tail inside a character", Tail("a€b", 3), "b"},
		{"tail negative", Tail("abc", -2), ""},
		{"line", Line("one\ntwo\t three", 20), "one two three"},
		{"line cut", Line("one two three", 7), "one tw…"},
		{"line runes", Line("ééééé", 3), "éé…"},
		{"line zero", Line("abc", 0), ""},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

// Whatever is cut, and wherever, the result is valid UTF-8 within bounds.
func FuzzCut(f *testing.F) {
	f.Add("héllo wörld €€€", 5)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if !utf8.ValidString(s) || n < 0 || n > 1<<16 {
			return
		}
		for name, got := range map[string]string{"Clip": strings.TrimSuffix(Clip(s, n), "…"), "Head": Head(s, n), "Tail": Tail(s, n)} {
			if !utf8.ValidString(got) || len(got) > n {
				t.Errorf("%s(%q, %d) = %q", name, s, n, got)
			}
		}
		if got := Line(s, n); !utf8.ValidString(got) || utf8.RuneCountInString(got) > n || strings.ContainsAny(got, "\n\r\t") {
			t.Errorf("Line(%q, %d) = %q", s, n, got)
		}
	})
}

// A huge text is looked at only as far as its start.
func BenchmarkLineOfHugeText(b *testing.B) {
	s := strings.Repeat("word ", 10<<20)
	for b.Loop() {
		Line(s, 80)
	}
}
