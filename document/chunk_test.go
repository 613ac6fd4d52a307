package document

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// wordCount counts runs of non-space characters, without allocating.
func wordCount(s string) int {
	n, in := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		var space bool
		if c < utf8.RuneSelf {
			space = asciiSpace[c]
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
			i += size - 1
		}
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}

// runeCount counts non-space characters: a long word is many tokens.
func runeCount(s string) int {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

func words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("w%d", i+1)
	}
	return strings.Join(w, " ")
}

func TestChunk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		text         string
		max, overlap int
		want         []string
	}{
		{"empty", "", 10, 0, nil},
		{"blank", " \n\n\t ", 10, 0, nil},
		{"fits", "  one two three  \n", 10, 0, []string{"one two three"}},
		{
			name: "prefers the line break",
			text: "one two three. four five six.\nseven eight nine ten.\n\neleven twelve.",
			max:  6,
			want: []string{"one two three. four five six.", "seven eight nine ten.\n\neleven twelve."},
		},
		{
			name: "prefers the paragraph break",
			text: "a b c\n\nd e\nf g h",
			max:  6,
			want: []string{"a b c", "d e\nf g h"},
		},
		{
			name: "prefers the sentence end",
			text: "a b c. d e f g h i j",
			max:  5,
			want: []string{"a b c.", "d e f g h", "i j"},
		},
		{
			name: "sentence end before a closing quote",
			text: `he said "stop." then left the room`,
			max:  4,
			want: []string{`he said "stop."`, "then left the room"},
		},
		{
			name:    "overlap",
			text:    words(20),
			max:     5,
			overlap: 2,
			want: []string{"w1 w2 w3 w4 w5", "w4 w5 w6 w7 w8", "w7 w8 w9 w10 w11",
				"w10 w11 w12 w13 w14", "w13 w14 w15 w16 w17", "w16 w17 w18 w19 w20"},
		},
		{
			name:    "overlap clamped to half",
			text:    words(8),
			max:     4,
			overlap: 100,
			want:    []string{"w1 w2 w3 w4", "w3 w4 w5 w6", "w5 w6 w7 w8"},
		},
		{"negative overlap", words(4), 2, -3, []string{"w1 w2", "w3 w4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Chunk(tt.text, tt.max, tt.overlap, wordCount)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Chunk(%q, %d, %d) (-want +got):\n%s", tt.text, tt.max, tt.overlap, diff)
			}
		})
	}
}

func TestChunkLongWord(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("abcdefghij", 5) + "é" // 51 characters, no space
	text := "short words " + long + " tail"
	got := Chunk(text, 10, 0, runeCount)
	var joined strings.Builder
	for _, c := range got {
		if n := runeCount(c); n > 10 {
			t.Errorf("chunk %q has %d tokens, over 10", c, n)
		}
		if !utf8.ValidString(c) {
			t.Errorf("chunk %q cuts a character in two", c)
		}
		joined.WriteString(c)
	}
	if want := strings.ReplaceAll(text, " ", ""); strings.ReplaceAll(joined.String(), " ", "") != want {
		t.Errorf("chunks %q do not add up to the text", got)
	}
	// With a word counter the long word is one token and stays whole.
	if got := Chunk(text, 2, 0, wordCount); !strings.Contains(strings.Join(got, "|"), long) {
		t.Errorf("Chunk with wordCount split the word: %q", got)
	}
}

// A counter that is not additive (the whole counts more than its parts)
// still gets chunks within the limit.
func TestChunkNonAdditiveCounter(t *testing.T) {
	t.Parallel()
	count := func(s string) int { n := wordCount(s); return n + n*n/10 }
	for _, c := range Chunk(words(200), 12, 3, count) {
		if n := count(c); n > 12 {
			t.Errorf("chunk %q counts %d, over 12", c, n)
		}
	}
}

// Every byte is counted a bounded number of times, however the text is
// shaped: the time is linear.
func TestChunkLinear(t *testing.T) {
	t.Parallel()
	for name, text := range map[string]string{
		"one huge word":      strings.Repeat("x", 4<<20),
		"one huge line":      strings.Repeat("word ", 1<<20),
		"one huge paragraph": strings.Repeat("A short sentence here. ", 1<<17),
		"many paragraphs":    strings.Repeat("Some words in a paragraph.\n\n", 1<<16),
	} {
		counted := 0
		count := func(s string) int { counted += len(s); return (runeCount(s) + 3) / 4 }
		chunks := Chunk(text, 512, 64, count)
		if len(chunks) == 0 {
			t.Fatalf("%s: no chunks", name)
		}
		if counted > 8*len(text) {
			t.Errorf("%s: counted %d bytes for a %d-byte text", name, counted, len(text))
		}
	}
}

func TestChunkPanics(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func(){
		"max 0":     func() { Chunk("a", 0, 0, wordCount) },
		"nil count": func() { Chunk("a", 5, 0, nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Chunk did not panic", name)
				}
			}()
			f()
		}()
	}
}

// checkChunks verifies what FuzzChunk promises: chunks fit, are the text's
// own bytes in order, overlap or touch (only white space between), cover
// all of it, and (for the word counter) cut only between words.
func checkChunks(t *testing.T, text string, max, overlap int, count func(string) int, wholeWords bool) {
	t.Helper()
	spans := chunkSpans(text, max, overlap, count)
	chunks := Chunk(text, max, overlap, count)
	if len(chunks) != len(spans) {
		t.Fatalf("Chunk gave %d chunks, chunkSpans %d", len(chunks), len(spans))
	}
	trimmed := strings.TrimFunc(text, unicode.IsSpace)
	if trimmed == "" {
		if len(spans) != 0 {
			t.Fatalf("blank text gave chunks %q", chunks)
		}
		return
	}
	lead := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
	end := lead // covered so far
	for i, s := range spans {
		c := text[s[0]:s[1]]
		if c != chunks[i] || c == "" || strings.TrimSpace(c) != c && strings.TrimFunc(c, unicode.IsSpace) != c {
			t.Fatalf("chunk %d %q is empty, untrimmed or not the span's text", i, chunks[i])
		}
		if n := count(c); n > max && utf8.RuneCountInString(c) > 1 {
			t.Fatalf("chunk %d %q counts %d, over %d", i, c, n, max)
		}
		if s[0] > end && strings.TrimFunc(text[end:s[0]], unicode.IsSpace) != "" {
			t.Fatalf("text %q between chunks %d and %d is lost", text[end:s[0]], i-1, i)
		}
		if i > 0 && s[0] <= spans[i-1][0] {
			t.Fatalf("chunk %d does not move forward", i)
		}
		if s[1] <= end {
			t.Fatalf("chunk %d adds nothing", i)
		}
		if wholeWords {
			before := s[0] == 0 || unicode.IsSpace(rune(text[s[0]-1])) || !utf8.RuneStart(text[s[0]-1]) && boundaryBefore(text, s[0])
			after := s[1] == len(text) || boundaryAfter(text, s[1])
			if !before || !after {
				t.Fatalf("chunk %d %q cuts a word", i, c)
			}
		}
		end = s[1]
	}
	if end != lead+len(trimmed) {
		t.Fatalf("chunks end at %d, the text at %d", end, lead+len(trimmed))
	}
}

func boundaryBefore(text string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	return unicode.IsSpace(r)
}

func boundaryAfter(text string, i int) bool {
	r, _ := utf8.DecodeRuneInString(text[i:])
	return unicode.IsSpace(r)
}

func FuzzChunk(f *testing.F) {
	f.Add("one two three. four five six.\nseven\n\neight nine", uint8(3), uint8(1))
	f.Add(words(50), uint8(7), uint8(3))
	f.Add("a\u00a0b\u3000c\r\n\r\nd", uint8(1), uint8(0))
	f.Add(strings.Repeat("x", 100)+" y", uint8(4), uint8(2))
	f.Add("caf\xe9 \xff\xfe words", uint8(2), uint8(1))
	f.Fuzz(func(t *testing.T, text string, max, overlap uint8) {
		m := 1 + int(max)%64
		o := int(overlap) % (m + 1)
		checkChunks(t, text, m, o, wordCount, true)
		checkChunks(t, text, m, o, runeCount, false)
	})
}

// chunkBenchText is about n bytes of prose: paragraphs of varied length,
// some longer than a chunk, so every level of cutting is exercised.
func chunkBenchText(n int) string {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := strings.Fields("the of and to in is was for on that with as by at from it an be this are which or has had not but were their one all its also been more new after first two other would some when who into")
	var b strings.Builder
	b.Grow(n + 1000)
	for b.Len() < n {
		sentences := 1 + rng.IntN(12)
		if rng.IntN(20) == 0 {
			sentences = 80 // a paragraph longer than a chunk
		}
		for range sentences {
			for i := range 5 + rng.IntN(20) {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(vocab[rng.IntN(len(vocab))])
			}
			b.WriteString(". ")
			if rng.IntN(10) == 0 {
				b.WriteString("\n")
			}
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

func TestChunkBenchText(t *testing.T) {
	t.Parallel()
	text := chunkBenchText(1 << 20)
	checkChunks(t, text, 512, 64, wordCount, true)
}

func BenchmarkChunk10MB(b *testing.B) {
	text := chunkBenchText(10 << 20)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Chunk(text, 512, 64, wordCount)
	}
}
