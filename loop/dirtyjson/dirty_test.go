package dirtyjson

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDirtyRenderings writes random values in randomly chosen dirty spellings (the ones models
// produce) and checks that parsing gives the value back, in one go and in random chunks.
func TestDirtyRenderings(t *testing.T) {
	t.Parallel()
	for seed := range uint64(1000) {
		rng := rand.New(rand.NewPCG(seed, 7))
		want := randomObject(rng, 0)
		g := &dirtyWriter{rng: rng}
		in := g.document(want)

		got, done, err := Parse(in)
		if err != nil || !done || !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: Parse(%q) done=%v err=%v (-want +got):\n%s", seed, in, done, err, cmp.Diff(want, got))
		}
		ref := oneShot(in)
		sameResult(t, fmt.Sprintf("seed %d chunked", seed), ref, feedSplit(in, func() int { return 1 + rng.IntN(9) }, true))
	}
}

func randomObject(rng *rand.Rand, depth int) M {
	m := M{}
	for range rng.IntN(5) {
		m[randomString(rng, 8)] = randomValue(rng, depth+1)
	}
	return m
}

func randomValue(rng *rand.Rand, depth int) any {
	n := 7
	if depth > 3 {
		n = 5 // no more containers
	}
	switch rng.IntN(n) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return float64(rng.IntN(2000) - 1000)
	case 3:
		return float64(rng.IntN(100000)) / 64 // exact in binary, so every spelling parses to it
	case 4:
		return randomString(rng, 20)
	case 5:
		a := A{}
		for range rng.IntN(5) {
			a = append(a, randomValue(rng, depth+1))
		}
		return a
	}
	return randomObject(rng, depth)
}

// randomString mixes identifier characters with the ones that need care: quotes, escapes, blanks,
// punctuation and non-ASCII text.
func randomString(rng *rand.Rand, maxLen int) string {
	const pool = "abcxyzABC_019"
	special := []string{" ", "\n", "\t", `"`, "'", "`", `\`, "/", "{", "}", "[", "]", ",", ":", "é", "日本", "😀", "\u2028", "*/", "//"}
	var b strings.Builder
	for range rng.IntN(maxLen + 1) {
		if rng.IntN(4) == 0 {
			b.WriteString(special[rng.IntN(len(special))])
		} else {
			b.WriteByte(pool[rng.IntN(len(pool))])
		}
	}
	return b.String()
}

type dirtyWriter struct {
	rng *rand.Rand
	b   strings.Builder
}

func (g *dirtyWriter) pick(n int) int { return g.rng.IntN(n) }

func (g *dirtyWriter) document(v M) string {
	prose := []string{"", "Sure, here it is:\n", "```json\n", "I'll use [a tool] now.\n```\n", "Thinking...\n\n"}
	g.b.WriteString(prose[g.pick(len(prose))])
	doubled := g.pick(5) == 0
	if doubled {
		g.b.WriteString("{")
		g.blank()
	}
	g.object(v)
	if doubled {
		g.blank()
		g.b.WriteString("}")
	}
	tails := []string{"", "\n```", "\n```\nDone. {\"other\": 1}", " trailing } ] garbage"}
	g.b.WriteString(tails[g.pick(len(tails))])
	return g.b.String()
}

// blank writes nothing, whitespace or a comment.
func (g *dirtyWriter) blank() {
	switch g.pick(8) {
	case 0:
		g.b.WriteString(" ")
	case 1:
		g.b.WriteString("\n  ")
	case 2:
		g.b.WriteString(" /* note, with } and ] */ ")
	case 3:
		g.b.WriteString(" // comment: {\n")
	case 4:
		g.b.WriteString("\t\u00a0")
	}
}

// kind is how a value was spelled, which decides whether a comma after it may be left out.
type kind int

const (
	kindQuoted  kind = iota // string in quotes, object or array
	kindLiteral             // number or literal: ends at a blank in arrays, before a quote in objects
	kindBare                // unquoted text: only a delimiter ends it
)

func (g *dirtyWriter) object(m M) {
	g.b.WriteString("{")
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	g.rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	prev := kindQuoted
	for i, k := range keys {
		g.blank()
		quotedKey := !isIdent(k) || g.pick(2) == 0
		if i > 0 {
			// A comma may be missing before a quoted key unless the previous value was bare text.
			if !quotedKey || prev == kindBare || g.pick(3) != 0 {
				g.b.WriteString(",")
				g.blank()
			} else {
				g.b.WriteString(" ")
			}
		}
		if quotedKey {
			g.str(k, false)
		} else {
			g.b.WriteString(k)
		}
		g.blank()
		if g.pick(6) != 0 {
			g.b.WriteString(":")
		} else {
			g.b.WriteString(" ") // missing colon
		}
		g.blank()
		prev = g.value(m[k])
	}
	if len(keys) > 0 && g.pick(3) == 0 {
		g.b.WriteString(",")
	}
	g.blank()
	g.b.WriteString("}")
}

func (g *dirtyWriter) array(a A) {
	g.b.WriteString("[")
	prev := kindQuoted
	for i, v := range a {
		g.blank()
		if i > 0 {
			if prev == kindBare || g.pick(3) != 0 {
				g.b.WriteString(",")
				g.blank()
			} else {
				g.b.WriteString(" ")
			}
		}
		prev = g.value(v)
	}
	if len(a) > 0 && g.pick(3) == 0 {
		g.b.WriteString(",")
	}
	g.blank()
	g.b.WriteString("]")
}

func (g *dirtyWriter) value(v any) kind {
	switch v := v.(type) {
	case nil:
		g.b.WriteString([]string{"null", "NULL", "None", "none", "undefined", "Null"}[g.pick(6)])
		return kindLiteral
	case bool:
		s := strconv.FormatBool(v)
		switch g.pick(3) {
		case 1:
			s = strings.ToUpper(s)
		case 2:
			s = strings.ToUpper(s[:1]) + s[1:]
		}
		g.b.WriteString(s)
		return kindLiteral
	case float64:
		s := strconv.FormatFloat(v, 'g', -1, 64)
		switch {
		case v > 0 && g.pick(3) == 0:
			s = "+" + s
		case v == float64(int64(v)) && g.pick(3) == 0:
			s += "."
		case strings.HasPrefix(s, "0.") && g.pick(2) == 0:
			s = s[1:]
		}
		g.b.WriteString(s)
		return kindLiteral
	case string:
		if isIdent(v) && !isKeyword(v) && g.pick(3) == 0 {
			g.b.WriteString(v)
			return kindBare
		}
		g.str(v, true)
		return kindQuoted
	case A:
		g.array(v)
	case M:
		g.object(v)
	}
	return kindQuoted
}

// str writes s quoted in one of the ways models quote strings.
func (g *dirtyWriter) str(s string, value bool) {
	enc, _ := json.Marshal(s)
	body := string(enc[1 : len(enc)-1])
	switch g.pick(5) {
	case 0: // single quotes: \" may stay escaped or not; ' must be escaped
		body = strings.ReplaceAll(body, `'`, `\'`)
		if g.pick(2) == 0 {
			body = strings.ReplaceAll(body, `\"`, `"`)
		}
		g.b.WriteString("'" + body + "'")
	case 1: // back-ticks
		g.b.WriteString("`" + strings.ReplaceAll(body, "`", "\\`") + "`")
	case 2: // raw control characters instead of escapes, as models often write them
		body = strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(body)
		if strings.Contains(body, `\\n`) || strings.Contains(body, `\\t`) { // an escaped backslash before n or t
			body = string(enc[1 : len(enc)-1])
		}
		g.b.WriteString(`"` + body + `"`)
	case 3: // triple quotes hold raw text, trimmed
		if value && s != "" && s == strings.TrimSpace(s) && !strings.Contains(s, `"`) && g.pick(2) == 0 {
			g.b.WriteString(`"""` + "\n" + s + "\n" + `"""`)
			return
		}
		fallthrough
	default:
		g.b.WriteString(`"` + body + `"`)
	}
}

func isIdent(s string) bool {
	if s == "" || !(s[0] == '_' || 'a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z') {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func isKeyword(s string) bool {
	_, ok := literal(s, false)
	return ok
}
