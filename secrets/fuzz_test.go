package secrets

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// FuzzStream streams random text with random values inserted, cut into
// random chunks. The output must never hold a value, no byte of output may
// change once written, and without a partial value at the end it must be
// Mask of the whole, which must follow the reference rule.
//
// Values are drawn from "abxyz", letters no alias contains, so a value in
// the output can only be a leak, never a placeholder's letters.
func FuzzStream(f *testing.F) {
	f.Add(uint64(0), "hello world", []byte{3, 1, 4})
	f.Add(uint64(1), "", []byte{1})
	f.Add(uint64(42), "aaaa bbbb xyzab", []byte{1, 1, 1, 1, 1, 1, 1, 1})
	f.Add(uint64(7), "§§secret(K0) ***", []byte{200, 2})
	f.Add(uint64(99), "ab\nxy\r\nzz", []byte{})
	f.Fuzz(func(t *testing.T, seed uint64, filler string, cuts []byte) {
		r := rand.New(rand.NewPCG(seed, seed>>32))
		const alphabet = "abxyz"
		var s *Set
		var vals []string
		for i := range 1 + r.IntN(6) {
			b := make([]byte, 4+r.IntN(9))
			for j := range b {
				b[j] = alphabet[r.IntN(len(alphabet))]
			}
			vals = append(vals, string(b))
			s = s.With(fmt.Sprintf("K%d", i), string(b))
		}
		// The filler, with values (and bits of values) put in at random.
		var text strings.Builder
		for _, c := range []byte(filler) {
			text.WriteByte(c)
			if r.IntN(3) == 0 {
				v := vals[r.IntN(len(vals))]
				if r.IntN(4) == 0 {
					v = v[:r.IntN(len(v))]
				}
				text.WriteString(v)
			}
		}
		if r.IntN(2) == 0 {
			text.WriteString(vals[r.IntN(len(vals))])
		}
		if r.IntN(3) == 0 {
			v := vals[r.IntN(len(vals))]
			text.WriteString(v[:r.IntN(len(v))]) // a partial value at the end
		}
		in := text.String()

		want := s.Mask(in)
		if ref := refMask(s.patterns(), in); want != ref {
			t.Fatalf("Mask(%q) = %q, reference %q", in, want, ref)
		}
		st := s.NewStream()
		if seed%2 == 1 { // the sparse automaton, against Mask's dense one
			st = &Stream{sc: scan{m: newMatcher(s.patterns(), 0)}}
		}
		var out strings.Builder
		prev := 0
		for i := 0; prev < len(in); i++ {
			n := len(in) - prev
			if i < len(cuts) {
				n = min(n, int(cuts[i])%17+1)
			}
			out.WriteString(st.Write(in[prev : prev+n]))
			prev += n
			if !strings.HasPrefix(want, out.String()) {
				t.Fatalf("after %q: output %q is not a prefix of %q", in[:prev], out.String(), want)
			}
			if st.held() >= st.sc.m.maxLen {
				t.Fatalf("%d bytes held", st.held())
			}
		}
		partial := st.sc.partial()
		got := out.String() + st.Flush()
		for _, v := range vals {
			if strings.Contains(got, v) {
				t.Fatalf("value %q in the output %q of %q", v, got, in)
			}
		}
		if got != want && (partial < MinMasked || !strings.HasSuffix(got, PartialMask)) {
			t.Fatalf("streamed %q, Mask %q (partial %d) of %q", got, want, partial, in)
		}
	})
}
