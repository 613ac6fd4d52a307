package dirtyjson

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// result is what a caller can observe of a parser.
type result struct {
	Value    any
	Done     bool
	Consumed string
}

func observe(p *Parser) result {
	return result{Value: p.Value(), Done: p.Done(), Consumed: p.Consumed()}
}

// oneShot is the reference: everything fed at once.
func oneShot(s string) result {
	p := NewParser()
	p.Feed(s)
	return observe(p)
}

// feedSplit feeds s cut into chunks of the sizes next returns. With peek it also reads Value after
// every chunk, as the engine does, which must not change the final result.
func feedSplit(s string, next func() int, peek bool) result {
	p := NewParser()
	for len(s) > 0 {
		n := min(max(next(), 1), len(s))
		p.Feed(s[:n])
		s = s[n:]
		if peek {
			p.Value()
		}
	}
	return observe(p)
}

// sameResult compares with reflect.DeepEqual first: cmp.Diff is far too slow on deeply nested values
// and is only needed to explain a difference.
func sameResult(t *testing.T, label string, want, got result) {
	t.Helper()
	if reflect.DeepEqual(want, got) {
		return
	}
	t.Errorf("%s differs from one-shot parsing (-one-shot +chunked):\n%s", label, cmp.Diff(want, got))
}

// TestIncrementalEquivalence: for every table case, feeding in chunks of any size gives exactly what
// one-shot parsing gives.
func TestIncrementalEquivalence(t *testing.T) {
	t.Parallel()
	cases := append(append([]parseCase{}, toleratedCases...), nonsenseCases...)
	cases = append(cases, parseCase{name: "realistic 20 KB request", in: realisticRequest(20 << 10)})
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := oneShot(tt.in)
			if v, done, err := Parse(tt.in); err == nil && !reflect.DeepEqual(want, result{Value: v, Done: done, Consumed: want.Consumed}) {
				t.Errorf("Parse differs from Feed+Value: %v %v", v, done)
			}
			for _, size := range []int{1, 2, 3, 5, 7} {
				for _, peek := range []bool{false, true} {
					got := feedSplit(tt.in, func() int { return size }, peek)
					sameResult(t, fmt.Sprintf("chunks of %d (peek %v)", size, peek), want, got)
				}
			}
			rng := rand.New(rand.NewPCG(uint64(len(tt.in)), 42))
			for range 20 {
				got := feedSplit(tt.in, func() int { return 1 + rng.IntN(12) }, rng.IntN(2) == 0)
				sameResult(t, "random chunks", want, got)
			}
		})
	}
}

// checkInvariants asserts what must hold for any input s.
func checkInvariants(t *testing.T, s string, cuts []byte) {
	t.Helper()
	want := oneShot(s)

	// Chunked feeding, with split points derived from cuts, equals one-shot parsing.
	k := 0
	next := func() int {
		if len(cuts) == 0 {
			return 1
		}
		k++
		return int(cuts[(k-1)%len(cuts)]%17) + 1
	}
	sameResult(t, "chunked feeding", want, feedSplit(s, next, len(cuts)%2 == 0))

	v, done, err := Parse(s)
	i := strings.IndexByte(s, '{')
	if i < 0 {
		if err == nil || v != nil || done || want.Value != nil || want.Consumed != "" {
			t.Fatalf("no '{' in input but Parse = %v, %v, %v", v, done, err)
		}
		return
	}
	if err != nil || v == nil {
		t.Fatalf("Parse = %v, %v, %v; want an object", v, done, err)
	}
	// Consumed is a prefix of the text from the first '{'.
	if !strings.HasPrefix(s[i:], want.Consumed) || want.Consumed == "" {
		t.Fatalf("Consumed %q is not a non-empty prefix of the input from its first '{'", want.Consumed)
	}
	// Once done, the consumed text alone says the same; the " x" ends a wrapper left open.
	if want.Done {
		again := oneShot(want.Consumed + " x")
		sameResult(t, "re-parsing Consumed", want, again)
	}
	// Valid JSON objects parse exactly as encoding/json parses them.
	if json.Valid([]byte(s)) && utf8.ValidString(s) && strings.TrimSpace(s)[0] == '{' {
		var std any
		if err := json.Unmarshal([]byte(s), &std); err == nil && maxDepth(s) < MaxDepth {
			if !want.Done || !reflect.DeepEqual(std, want.Value) {
				t.Fatalf("valid JSON %q: done=%v, (-encoding/json +ours):\n%s", s, want.Done, cmp.Diff(std, want.Value))
			}
		}
	}
	_ = Canonical(want.Value)
}

// maxDepth is the deepest bracket nesting in a valid JSON text.
func maxDepth(s string) int {
	d, m, inStr, esc := 0, 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && (c == '{' || c == '['):
			d++
			m = max(m, d)
		case !inStr && (c == '}' || c == ']'):
			d--
		}
	}
	return m
}

func TestInvariantsOnTable(t *testing.T) {
	t.Parallel()
	cases := append(append([]parseCase{}, toleratedCases...), nonsenseCases...)
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkInvariants(t, tt.in, []byte{3, 1, 4, 1, 5, 9, 2, 6})
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, tt := range toleratedCases {
		f.Add(tt.in, []byte{1})
	}
	for _, tt := range nonsenseCases {
		f.Add(tt.in, []byte{2, 7})
	}
	f.Add(realisticRequest(2<<10), []byte{4, 0, 11})
	f.Fuzz(func(t *testing.T, s string, cuts []byte) {
		checkInvariants(t, s, cuts)
	})
}
