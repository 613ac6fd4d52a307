package secrets

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestStraddles(t *testing.T) {
	t.Parallel()
	set := maskOnly("K", "abcdef-secret", "PEM", "line1\n\nline2")
	for _, tc := range []struct {
		a, sep, b string
		want      bool
	}{
		{"x abc", "", "def-secret y", true},
		{"x abcdef-", "", "secret", true},
		{"text line1", "\n\n", "line2 more", true},
		{"text line1\n", "\n", "line2", true},
		{"ends abcdef-secre", "\n\n", "t", false},
		{strings.Repeat("a", 1000) + " clean", "\n\n", "clean " + strings.Repeat("b", 1000), false},
		{"§§secret(K)", "\n\n", "§§secret(PEM)", false},
		{"", "abcdef-secret", "", true},
		{"", "", "", false},
	} {
		if got := set.Straddles(tc.a, tc.sep, tc.b); got != tc.want {
			t.Errorf("Straddles(%q, %q, %q) = %v, want %v", tc.a, tc.sep, tc.b, got, tc.want)
		}
	}
	var none *Set
	if none.Straddles("abcdef-", "", "secret") {
		t.Error("the nil Set straddles")
	}
}

// Joining masked texts on which Straddles reports false gives a text that
// Mask leaves alone: skipping the second mask loses nothing.
func TestStraddlesMeansMaskNeeded(t *testing.T) {
	t.Parallel()
	set := maskOnly("A", "abab", "B", "ba\nab", "C", "b\n\nb")
	r := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteByte("ab\n"[r.IntN(3)])
		}
		return b.String()
	}
	for range 20000 {
		a, sep, b := set.Mask(word()), []string{"", "\n", "\n\n"}[r.IntN(3)], set.Mask(word())
		if set.Mask(a) != a || set.Mask(b) != b {
			continue // masked text that masking would change again: not the case in question
		}
		joined := a + sep + b
		if !set.Straddles(a, sep, b) && set.Mask(joined) != joined {
			t.Fatalf("Straddles(%q, %q, %q) = false, but the joined text masks to %q", a, sep, b, set.Mask(joined))
		}
	}
}

func TestStraddlesAllocatesNothing(t *testing.T) {
	set := maskOnly("K", "abcdef-secret")
	a, b := strings.Repeat("x", 1<<16), strings.Repeat("y", 1<<16)
	if n := testing.AllocsPerRun(100, func() { _ = set.Straddles(a, "\n\n", b) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
