package secrets

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		set  *Set
		in   string
		want string
	}{
		{"whole", maskOnly("K", "sk-abcdef"), "key=sk-abcdef.", "key=§§secret(K)."},
		{"every occurrence", maskOnly("K", "abcd"), "abcdabcd xabcdx", "§§secret(K)§§secret(K) x§§secret(K)x"},
		{"nothing", maskOnly("K", "abcd"), "abc bcd abdc", "abc bcd abdc"},
		{"longest first", maskOnly("SHORT", "word", "LONG", "password123"), "mypassword123 password",
			"my§§secret(LONG) pass§§secret(SHORT)"},
		{"contained at the start", maskOnly("A", "abcd", "B", "abcdefgh"), "abcdefgh abcdefg", "§§secret(B) §§secret(A)efg"},
		{"contained at the end", maskOnly("A", "efgh", "B", "abcdefgh"), "abcdefgh bcdefgh", "§§secret(B) bcd§§secret(A)"},
		{"overlap: both replaced", maskOnly("A", "abcdef", "B", "defghi"), "abcdefghi", "§§secret(A)§§secret(B)"},
		{"overlap, shorter first", maskOnly("A", "xabcd", "B", "bcdyyyyy"), "xabcdyyyyy!", "§§secret(A)§§secret(B)!"},
		{"chain of three", maskOnly("A", "aaab", "B", "abbb", "C", "bbbc"), "aaabbbc", "§§secret(A)§§secret(B)§§secret(C)"},
		{"self overlap", maskOnly("A", "aaaa"), "aaaaaa", "§§secret(A)§§secret(A)§§secret(A)"},
		{"adjacent", maskOnly("A", "abcd", "B", "efgh"), "abcdefgh", "§§secret(A)§§secret(B)"},
		{"short values are not masked", maskOnly("PIN", "123", "PAD", "  ab  "), "123  ab  ", "123  ab  "},
		{"unicode", maskOnly("U", "pässwörd✓"), "das pässwörd✓ ist pässwörd", "das §§secret(U) ist pässwörd"},
		{"unicode prefix shared", maskOnly("A", "ééé1", "B", "ééé2"), "éééé1ééé2ééé", "é§§secret(A)§§secret(B)ééé"},
		{"same value, several names", maskOnly("ZED", "samevalue", "ALPHA", "samevalue"), "samevalue", "§§secret(ALPHA)"},
		{"names made aliases", maskOnly("my-key", "abcdef"), "abcdef", "§§secret(MY_KEY)"},
		{"json escaped", maskOnly("Q", `pa"ss\wo<rd>`), `{"v":"pa\"ss\\wo\u003crd\u003e","w":"pa\"ss\\wo<rd>"}`,
			`{"v":"§§secret(Q)","w":"§§secret(Q)"}`},
		{"crlf line ends", maskOnly("PEM", "line1\nline2"), "x line1\r\nline2 line1\nline2", "x §§secret(PEM) §§secret(PEM)"},
		{"empty text", maskOnly("A", "abcd"), "", ""},
		{"nil set", nil, "abcd", "abcd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.set.Mask(tt.in); got != tt.want {
				t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestMaskPrefersTheAgentsName(t *testing.T) {
	t.Parallel()
	// The same key in secrets.env (for the agent) and as Zero's own key.
	s := loadString(t, "Z_OPENAI=sk-shared-key\n").With("A_ZERO_KEY", "sk-shared-key")
	if got := s.Mask("sk-shared-key"); got != "§§secret(Z_OPENAI)" {
		t.Errorf("Mask = %q, want the name the agent can use", got)
	}
}

func TestMaskValue(t *testing.T) {
	t.Parallel()
	s := maskOnly("K", "hunter22")
	in := map[string]any{
		"hunter22": []any{"pw hunter22", 3, map[string]string{"x": "hunter22"}},
		"raw":      json.RawMessage(`{"a":"hunter22"}`),
	}
	want := map[string]any{
		"§§secret(K)": []any{"pw §§secret(K)", 3, map[string]string{"x": "§§secret(K)"}},
		"raw":         json.RawMessage(`{"a":"§§secret(K)"}`),
	}
	if diff := cmp.Diff(want, s.MaskValue(in)); diff != "" {
		t.Errorf("MaskValue (-want +got):\n%s", diff)
	}
	if _, ok := in["hunter22"]; !ok {
		t.Error("MaskValue changed its input")
	}
}

// randomSet returns n values of lengths 4..maxLen over alphabet.
func randomSet(r *rand.Rand, n, maxLen int, alphabet string) (*Set, []string) {
	var s *Set
	var vals []string
	for i := range n {
		b := make([]byte, 4+r.IntN(maxLen-3))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		vals = append(vals, string(b))
		s = s.With(fmt.Sprintf("K%d", i), string(b))
	}
	return s, vals
}

// randomText mixes filler from alphabet with whole values.
func randomText(r *rand.Rand, n int, alphabet string, vals []string) string {
	var b strings.Builder
	for b.Len() < n {
		if r.IntN(4) == 0 {
			b.WriteString(vals[r.IntN(len(vals))])
		} else {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
	}
	return b.String()
}

// TestMaskAgainstReference checks the automaton, dense and sparse, against
// the rule written naively, on texts dense with overlapping values.
func TestMaskAgainstReference(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		s, vals := randomSet(r, 1+r.IntN(8), 10, "abc")
		text := randomText(r, r.IntN(200), "abcd", vals)
		pats := s.patterns()
		want := refMask(pats, text)
		for _, budget := range []int{denseBudget, 0} {
			m := newMatcher(pats, budget)
			if (m.delta == nil) != (budget == 0) {
				t.Fatalf("budget %d: dense = %v", budget, m.delta != nil)
			}
			sc := scan{m: m}
			sc.feed(text)
			var b strings.Builder
			sc.write(&b, text, 0, len(text), true)
			if got := b.String(); got != want {
				t.Fatalf("values %q, text %q, budget %d:\n got %q\nwant %q", vals, text, budget, got, want)
			}
		}
		for _, v := range vals {
			if strings.Contains(s.Mask(text), v) {
				t.Fatalf("values %q, text %q: %q left in %q", vals, text, v, s.Mask(text))
			}
		}
	}
}

func TestMaskManySecrets(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	s, vals := randomSet(r, 500, 64, alphabet)
	text := randomText(r, 1<<16, alphabet+" \n", vals)
	got := s.Mask(text)
	for _, v := range vals {
		if strings.Contains(got, v) {
			t.Fatalf("%q left in the output", v)
		}
	}
	if want := refMask(s.patterns(), text[:4096]); s.Mask(text[:4096]) != want {
		t.Errorf("Mask differs from the reference")
	}
}

// TestSparseMatcher builds a Set too large for the dense table.
func TestSparseMatcher(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	s, vals := randomSet(r, 100, 20000, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+/")
	if s.matcher().delta != nil {
		t.Fatal("a Set of 1 MB of values got a dense table")
	}
	text := "before " + vals[7] + " middle " + vals[99][:100] + " after " + vals[0]
	want := "before §§secret(K7) middle " + vals[99][:100] + " after §§secret(K0)"
	if got := s.Mask(text); got != want {
		t.Errorf("Mask = %.200q...", got)
	}
}

func TestMaskConcurrent(t *testing.T) {
	t.Parallel()
	s := loadString(t, "A=alpha-secret\nB=beta-secret\n")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if got := s.Mask("x alpha-secret beta-secret"); got != "x §§secret(A) §§secret(B)" {
					t.Errorf("Mask = %q", got)
					return
				}
				st := s.NewStream()
				if got := st.Write("alpha-sec") + st.Write("ret") + st.Flush(); got != "§§secret(A)" {
					t.Errorf("Stream = %q", got)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestMaskReturnsItsInput(t *testing.T) { // not parallel: AllocsPerRun
	s := maskOnly("A", "alpha-secret")
	text := strings.Repeat("nothing to see here ", 1000)
	if n := testing.AllocsPerRun(10, func() { s.Mask(text) }); n != 0 {
		t.Errorf("Mask of text without secrets allocates %v times", n)
	}
}
