package llm

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// splitRun feeds pieces through a splitter and returns the merged deltas.
func splitRun(pieces []string) []Delta {
	var out []Delta
	emit := func(k DeltaKind, text string) error {
		if n := len(out); n > 0 && out[n-1].Kind == k {
			out[n-1].Text += text
		} else {
			out = append(out, Delta{Kind: k, Text: text})
		}
		return nil
	}
	var s thinkSplitter
	for _, p := range pieces {
		_ = s.feed(p, emit)
	}
	_ = s.flush(emit)
	return out
}

func TestThinkSplitter(t *testing.T) {
	t.Parallel()
	r := func(s string) Delta { return Delta{Kind: Reasoning, Text: s} }
	c := func(s string) Delta { return Delta{Kind: Content, Text: s} }
	tests := []struct {
		name string
		in   string
		want []Delta
	}{
		{"plain", "hello", []Delta{c("hello")}},
		{"think", "<think>a</think>b", []Delta{r("a"), c("b")}},
		{"reasoning tag", "<reasoning>a</reasoning>b", []Delta{r("a"), c("b")}},
		{"whitespace around", "\n  <think>\nplan\n</think>\n\n answer", []Delta{r("\nplan\n"), c("answer")}},
		{"leading whitespace kept without tag", "  hi", []Delta{c("  hi")}},
		{"tag later is content", "x<think>y</think>", []Delta{c("x<think>y</think>")}},
		{"unclosed block stays reasoning", "<think>still going", []Delta{r("still going")}},
		{"close tag prefix inside reasoning", "<think>a </thin b</think>c", []Delta{r("a </thin b"), c("c")}},
		{"only a tag prefix", "<thi", []Delta{c("<thi")}},
		{"only whitespace", " \n", []Delta{c(" \n")}},
		{"empty block", "<think></think>ans", []Delta{c("ans")}},
		{"mismatched close", "<think>a</reasoning>b", []Delta{r("a</reasoning>b")}},
		{"second think block is content", "<think>a</think>b<think>c</think>", []Delta{r("a"), c("b<think>c</think>")}},
		{"multibyte", "<think>ünï</think>çødé", []Delta{r("ünï"), c("çødé")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Every way to cut the input in two, and byte by byte.
			var splits [][]string
			splits = append(splits, []string{tt.in})
			for i := 1; i < len(tt.in); i++ {
				splits = append(splits, []string{tt.in[:i], tt.in[i:]})
			}
			var bytewise []string
			for i := range len(tt.in) {
				bytewise = append(bytewise, tt.in[i:i+1])
			}
			splits = append(splits, bytewise)
			for _, pieces := range splits {
				if diff := cmp.Diff(tt.want, splitRun(pieces)); diff != "" {
					t.Fatalf("pieces %q (-want +got):\n%s", pieces, diff)
				}
			}
		})
	}
}

// TestThinkSplitterHoldsLittle checks that text is released as soon as its
// kind is known, not at the end of the block.
func TestThinkSplitterHoldsLittle(t *testing.T) {
	t.Parallel()
	var got []Delta
	emit := func(k DeltaKind, text string) error {
		got = append(got, Delta{Kind: k, Text: text})
		return nil
	}
	var s thinkSplitter
	_ = s.feed("<think>abc</", emit)
	if diff := cmp.Diff([]Delta{{Kind: Reasoning, Text: "abc"}}, got); diff != "" {
		t.Errorf("after a partial close tag (-want +got):\n%s", diff)
	}
	_ = s.feed("think>Hel", emit)
	_ = s.feed("lo", emit)
	want := []Delta{{Kind: Reasoning, Text: "abc"}, {Kind: Content, Text: "Hel"}, {Kind: Content, Text: "lo"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestThinkSplitterStopsOnEmitError(t *testing.T) {
	t.Parallel()
	stop := errors.New("stop")
	calls := 0
	var s thinkSplitter
	err := s.feed("<think>a</think>b", func(DeltaKind, string) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("err = %v after %d calls, want stop after 1", err, calls)
	}
}

func BenchmarkThinkSplitter(b *testing.B) {
	pieces := []string{"<thi", "nk>", "let me see", " what happens ", "</th", "ink>", "\n\n"}
	for range 100 {
		pieces = append(pieces, "answer text ")
	}
	emit := func(DeltaKind, string) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		var s thinkSplitter
		for _, p := range pieces {
			_ = s.feed(p, emit)
		}
		_ = s.flush(emit)
	}
}
