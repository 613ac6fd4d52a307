package secrets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refMask is the masking rule written naively, to check the automaton
// against: at each end position the longest pattern ending there removes
// the chosen occurrences it contains and is chosen.
func refMask(pats []pattern, text string) string {
	type sp struct {
		start, end int
		name       string
	}
	var chosen []sp
	for e := 1; e <= len(text); e++ {
		best := -1
		for i, p := range pats {
			if len(p.text) <= e && text[e-len(p.text):e] == p.text && (best < 0 || len(p.text) > len(pats[best].text)) {
				best = i
			}
		}
		if best < 0 {
			continue
		}
		s := e - len(pats[best].text)
		for len(chosen) > 0 && chosen[len(chosen)-1].start >= s {
			chosen = chosen[:len(chosen)-1]
		}
		chosen = append(chosen, sp{s, e, pats[best].name})
	}
	var b strings.Builder
	done := 0
	for _, c := range chosen {
		if c.start > done {
			b.WriteString(text[done:c.start])
		}
		b.WriteString(Alias(c.name))
		done = max(done, c.end)
	}
	b.WriteString(text[done:])
	return b.String()
}

// maskOnly returns a Set that masks the given NAME, value pairs.
func maskOnly(pairs ...string) *Set {
	var s *Set
	for i := 0; i+1 < len(pairs); i += 2 {
		s = s.With(pairs[i], pairs[i+1])
	}
	return s
}

// writeFile writes a file in a test's temporary directory.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// streamAll streams text cut at the given positions (ascending) and
// returns what each Write returned and what Flush returned.
func streamAll(t *testing.T, st *Stream, text string, cuts []int) (writes []string, flush string) {
	t.Helper()
	prev := 0
	for _, c := range append(cuts, len(text)) {
		writes = append(writes, st.Write(text[prev:c]))
		prev = c
	}
	return writes, st.Flush()
}
