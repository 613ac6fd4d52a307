package termsafe

import "testing"

func TestShown(t *testing.T) {
	for _, tc := range []struct {
		in, visible, styled, reviewable string
	}{
		{"plain\ttext\n", "plain\ttext\n", "plain\ttext\n", "plain\ttext\n"},
		{"a\rb", "a␍b", "a␍b", "a␍b"},
		{"\x1b[2Kx", "␛[2Kx", "\x1b[2Kx", "␛[2Kx"},
		{"bell\x07 del\x7f c1\u0085", `bell\x07 del\x7f c1\x85`, `bell\x07 del\x7f c1\x85`, `bell\x07 del\x7f c1\x85`},
		{"rm -rf ~ #\u202e hidden", "rm -rf ~ #\u202e hidden", "rm -rf ~ #\u202e hidden", `rm -rf ~ #\u202e hidden`},
	} {
		if got := Visible(tc.in); got != tc.visible {
			t.Errorf("Visible(%q) = %q, want %q", tc.in, got, tc.visible)
		}
		if got := Styled(tc.in); got != tc.styled {
			t.Errorf("Styled(%q) = %q, want %q", tc.in, got, tc.styled)
		}
		if got := Reviewable(tc.in); got != tc.reviewable {
			t.Errorf("Reviewable(%q) = %q, want %q", tc.in, got, tc.reviewable)
		}
	}
}
