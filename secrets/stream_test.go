package secrets

import (
	"strings"
	"testing"
)

// checkSplits streams text cut in every possible way and checks that
// every prefix of the output is final (a prefix of Mask of the whole), that
// at most maxLen-1 bytes are held, and that the whole output is Mask of
// the whole, unless a partial value of MinMasked bytes or more ends the
// text, which Flush masks.
func checkSplits(t *testing.T, s *Set, text string) {
	t.Helper()
	want := s.Mask(text)
	maxLen := s.matcher().maxLen
	n := len(text)
	if n > 16 {
		t.Fatalf("text too long for every split: %d", n)
	}
	st := s.NewStream()
	for mask := 0; mask < 1<<max(n-1, 0); mask++ {
		var out strings.Builder
		prev := 0
		for i := 1; i <= n; i++ {
			if i < n && mask&(1<<(i-1)) == 0 {
				continue
			}
			out.WriteString(st.Write(text[prev:i]))
			prev = i
			if !strings.HasPrefix(want, out.String()) {
				t.Fatalf("text %q, cuts %b: after %q the output %q is not a prefix of %q", text, mask, text[:i], out.String(), want)
			}
			if st.held() >= maxLen {
				t.Fatalf("text %q, cuts %b: %d bytes held, longest value %d", text, mask, st.held(), maxLen)
			}
		}
		partial := st.sc.partial()
		flush := st.Flush()
		got := out.String() + flush
		// A partial value of MinMasked bytes or more that is not inside
		// a masked value ends in "***" instead.
		if got != want && (partial < MinMasked || !strings.HasSuffix(got, PartialMask)) {
			t.Fatalf("text %q, cuts %b: streamed %q, Mask %q (partial %d)", text, mask, got, want, partial)
		}
	}
}

func TestStreamEverySplit(t *testing.T) {
	t.Parallel()
	// Values that overlap, contain each other, overlap themselves and
	// share prefixes, over a three-letter alphabet.
	s := maskOnly("A", "abca", "B", "bcab", "C", "abcabc", "D", "aaaa", "E", "cccb", "F", "cccbbb")
	var texts []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		texts = append(texts, prefix)
		if n == 0 {
			return
		}
		for _, c := range "abc" {
			gen(prefix+string(c), n-1)
		}
	}
	gen("", 7) // every text of up to 7 letters, each cut in every way
	texts = append(texts,
		"xxabcabcabcaxx", "aaaaaaaaaaaaaa", "cccbbbcccbbbcc", "abcabcbcabca", "zabcazbcabz", "abcab", "cccbb")
	for _, text := range texts {
		checkSplits(t, s, text)
	}
}

func TestStreamEverySplitUnicode(t *testing.T) {
	t.Parallel()
	s := maskOnly("U", "pä✓x", "V", "✓xy€")
	for _, text := range []string{"pä✓xy€!", "ä✓pä✓", "€pä✓x", "pä✓"} {
		checkSplits(t, s, text)
	}
}

func TestStreamOneByteChunks(t *testing.T) {
	t.Parallel()
	s := loadString(t, "TOKEN=ghp_0123456789abcdefghij\nOTHER=ghp_0123456789abcdXYZ\n")
	text := "start ghp_0123456789abcdefghij mid ghp_0123456789abcdXYZ ghp_0123 end ghp_0123456789abcdefghij"
	st := s.NewStream()
	var out strings.Builder
	for i := range len(text) {
		w := st.Write(text[i : i+1])
		if strings.Contains(w, "ghp_0123456789") {
			t.Fatalf("chunk %q emitted the start of a held value", w)
		}
		out.WriteString(w)
	}
	out.WriteString(st.Flush())
	if want := s.Mask(text); out.String() != want {
		t.Errorf("streamed %q, want %q", out.String(), want)
	}
	if strings.Contains(out.String(), "0123456789") {
		t.Errorf("a value leaked: %q", out.String())
	}
}

func TestStreamFlushPartial(t *testing.T) {
	t.Parallel()
	s := maskOnly("K", "sk-abcdefgh", "L", "xyz-1234")
	tests := []struct {
		name   string
		chunks []string
		want   string
	}{
		{"no partial", []string{"hello ", "world"}, "hello world"},
		{"whole value at the end", []string{"key sk-abc", "defgh"}, "key §§secret(K)"},
		{"partial of 3 bytes is shown", []string{"ends with sk", "-"}, "ends with sk-"},
		{"partial of 4 bytes is masked", []string{"ends with sk", "-a"}, "ends with ***"},
		{"long partial is masked", []string{"cut: sk-abcdefg"}, "cut: ***"},
		{"value then partial", []string{"sk-abcdefgh sk-abcd"}, "§§secret(K) ***"},
		{"partial that is not the last prefix", []string{"sk-abcdefgxyz-12"}, "sk-abcdefg***"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := s.NewStream()
			var out strings.Builder
			for _, c := range tt.chunks {
				out.WriteString(st.Write(c))
			}
			out.WriteString(st.Flush())
			if out.String() != tt.want {
				t.Errorf("streamed %q, want %q", out.String(), tt.want)
			}
			// Flush reset the stream.
			if got := st.Write("sk-abcdefgh!") + st.Flush(); got != "§§secret(K)!" {
				t.Errorf("after Flush: %q", got)
			}
		})
	}
}

func TestStreamHoldsOnlyWhatCouldGrow(t *testing.T) {
	t.Parallel()
	s := maskOnly("K", "secret-value")
	st := s.NewStream()
	if got := st.Write("plain text, "); got != "plain text, " {
		t.Errorf("Write = %q, want all of it", got)
	}
	if got := st.Write("then secret-va"); got != "then " {
		t.Errorf("Write = %q, want the text before the partial value", got)
	}
	if got := st.Write("riant"); got != "secret-variant" {
		t.Errorf("Write = %q, want the held text once it cannot be a value", got)
	}
	if got := st.Flush(); got != "" {
		t.Errorf("Flush = %q", got)
	}
}

func TestStreamPassThrough(t *testing.T) {
	t.Parallel()
	for _, s := range []*Set{nil, {}, maskOnly("PIN", "123")} {
		st := s.NewStream()
		if got := st.Write("a 123 b") + st.Flush(); got != "a 123 b" {
			t.Errorf("Stream of %v = %q", s, got)
		}
	}
}
