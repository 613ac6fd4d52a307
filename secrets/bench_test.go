package secrets

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// benchInput is 1 MiB of log-like text (words, numbers, paths, some
// base62 noise) with 50 secrets of 20 to 60 base62 characters, half of
// them after a vendor's prefix (sk-, ghp_, ...), about 40 occurrences in all.
func benchInput() (*Set, []string, string) {
	r := rand.New(rand.NewPCG(10, 20))
	const b62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	var s *Set
	var vals []string
	for i := range 50 {
		b := make([]byte, 20+r.IntN(41))
		for j := range b {
			b[j] = b62[r.IntN(len(b62))]
		}
		// Half the keys have a vendor's prefix, half are bare.
		vals = append(vals, []string{"sk-", "ghp_", "xoxb-", "AKIA", "", "", "", ""}[i%8]+string(b))
		s = s.With(fmt.Sprintf("KEY_%d", i), vals[i])
	}
	words := strings.Fields("the build step failed with exit code 1 in /usr/lib/go/src module cache downloaded " +
		"running tests PASS FAIL ok github.com/zeroagent/zero 0.123s warning: deprecated error: not found token " +
		"request id 7f3a9c2e Authorization header sk-live key api_key=redacted 200 OK GET POST /v1/chat/completions")
	var text strings.Builder
	for text.Len() < 1<<20 {
		switch r.IntN(400) {
		case 0:
			text.WriteString(vals[r.IntN(len(vals))])
		case 1, 2, 3:
			for range 16 {
				text.WriteByte(b62[r.IntN(len(b62))])
			}
		default:
			text.WriteString(words[r.IntN(len(words))])
		}
		if r.IntN(12) == 0 {
			text.WriteByte('\n')
		} else {
			text.WriteByte(' ')
		}
	}
	return s, vals, text.String()
}

func BenchmarkMask1MiB50Secrets(b *testing.B) {
	s, vals, text := benchInput()
	b.Run("automaton", func(b *testing.B) {
		s.Mask("warm up") // builds the automaton
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			s.Mask(text)
		}
	})
	b.Run("automaton-sparse", func(b *testing.B) {
		m := newMatcher(s.patterns(), 0)
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			sc := scan{m: m}
			sc.feed(text)
			var out strings.Builder
			out.Grow(len(text))
			sc.write(&out, text, 0, len(text), true)
		}
	})
	b.Run("no-secret-in-text", func(b *testing.B) {
		clean := s.Mask(text)
		b.SetBytes(int64(len(clean)))
		for b.Loop() {
			s.Mask(clean)
		}
	})
	// Agent Zero's way, for comparison: one strings.ReplaceAll per value,
	// longest first.
	b.Run("replace-all", func(b *testing.B) {
		sorted := slices.SortedFunc(slices.Values(vals), func(a, b string) int { return cmp.Compare(len(b), len(a)) })
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			out := text
			for i, v := range sorted {
				out = strings.ReplaceAll(out, v, Alias(fmt.Sprint("KEY_", i)))
			}
		}
	})
	b.Run("replace-all-no-secret-in-text", func(b *testing.B) {
		clean := s.Mask(text)
		b.SetBytes(int64(len(clean)))
		for b.Loop() {
			out := clean
			for i, v := range vals {
				out = strings.ReplaceAll(out, v, Alias(fmt.Sprint("KEY_", i)))
			}
		}
	})
	b.Run("build", func(b *testing.B) {
		pats := s.patterns()
		for b.Loop() {
			newMatcher(pats, denseBudget)
		}
	})
}

func BenchmarkStream(b *testing.B) {
	s, _, text := benchInput()
	for _, size := range []int{16, 4096} {
		b.Run(fmt.Sprintf("chunk-%d", size), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				st := s.NewStream()
				for i := 0; i < len(text); i += size {
					st.Write(text[i:min(i+size, len(text))])
				}
				st.Flush()
			}
		})
	}
}
