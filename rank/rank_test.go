package rank

import (
	"slices"
	"testing"
)

func TestTerms(t *testing.T) {
	t.Parallel()
	var got []string
	Terms("Tell me: the Policies of ports, 2 LOADING tabs; 日本語", func(s string) { got = append(got, s) })
	want := []string{"policy", "port", "2", "load", "tab", "日", "本", "日本", "語", "本語"}
	if !slices.Equal(got, want) {
		t.Errorf("Terms = %q, want %q", got, want)
	}
}

// A word and its plural are one term, whatever else is stripped.
func TestStemPluralsMeet(t *testing.T) {
	t.Parallel()
	for _, w := range []string{"string", "policy", "reply", "file", "load", "test", "tab", "family", "port"} {
		plural := w + "s"
		if w[len(w)-1] == 'y' {
			plural = w[:len(w)-1] + "ies"
		}
		if Stem(w) != Stem(plural) {
			t.Errorf("Stem(%q) = %q, Stem(%q) = %q", w, Stem(w), plural, Stem(plural))
		}
	}
	for a, b := range map[string]string{"loading": "loads", "tested": "tests", "quickly": "quick"} {
		if Stem(a) != Stem(b) {
			t.Errorf("Stem(%q) = %q, Stem(%q) = %q", a, Stem(a), b, Stem(b))
		}
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	got := Words("The user prefers TABS, tabs and 4 spaces; 日本語 x", 0)
	want := []string{"user", "prefers", "tabs", "4", "spaces", "日本語"}
	if !slices.Equal(got, want) {
		t.Errorf("Words = %q, want %q", got, want)
	}
	if got := Words("one two three four", 2); !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("Words with a bound = %q", got)
	}
}

func TestBM25(t *testing.T) {
	t.Parallel()
	s := BM25([]string{"ports and policies", "nothing here", "the port policy of the port"}, []string{"which port policy"})
	if s[0][1] != 0 || s[0][0] <= 0 || s[0][2] <= s[0][0] {
		t.Errorf("BM25 = %v", s)
	}
	if c := Cosine([]float32{1, 0}, []float32{1, 0}); c != 1 {
		t.Errorf("Cosine of equal vectors = %v", c)
	}
	if c := Cosine([]float32{1}, []float32{1, 0}); c != 0 {
		t.Errorf("Cosine of different lengths = %v", c)
	}
	if c := Coverage(Stems("port policy"), Stems("the policies of ports")); c != 1 {
		t.Errorf("Coverage = %v", c)
	}
}
