package dirtyjson

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// realisticRequest builds a tool request of about size bytes the way models write them: a sentence of
// prose, a fenced JSON object with thoughts, a headline and Python code full of escapes, newlines and
// non-ASCII text.
func realisticRequest(size int) string {
	var code strings.Builder
	for i := 0; code.Len() < size*4/5; i++ {
		fmt.Fprintf(&code, "def step_%d(path: str) -> dict:\n", i)
		fmt.Fprintf(&code, "\t\"\"\"Read %q and count the lines — naïve, 日本語 ok 🚀.\"\"\"\n", "data/file_"+fmt.Sprint(i)+".txt")
		code.WriteString("\twith open(path, encoding='utf-8') as f:\n\t\tlines = [l.rstrip('\\n') for l in f]\n")
		fmt.Fprintf(&code, "\treturn {\"path\": path, \"count\": len(lines), \"ratio\": %d / 7}\n\n", i)
	}
	req := map[string]any{
		"thoughts": []string{
			"The user wants a line count for every data file.",
			"I will write a small Python helper and run it — it handles UTF-8 (é, ß, 中文).",
			"After that I report the totals.",
		},
		"headline":  "Counting lines in the data files",
		"tool_name": "code_execution_tool",
		"tool_args": map[string]any{"runtime": "python", "session": 0, "code": code.String()},
	}
	b, err := json.MarshalIndent(req, "", "  ")
	if err != nil {
		panic(err)
	}
	return "I'll count the lines with a script.\n```json\n" + string(b) + "\n```\n"
}

func BenchmarkParseWhole20KB(b *testing.B) {
	in := realisticRequest(20 << 10)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, done, err := Parse(in); err != nil || !done {
			b.Fatalf("Parse: done=%v err=%v", done, err)
		}
	}
}

func BenchmarkFeed20KBIn5ByteChunks(b *testing.B) {
	in := realisticRequest(20 << 10)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		p := NewParser()
		for i := 0; i < len(in); i += 5 {
			p.Feed(in[i:min(i+5, len(in))])
		}
		if p.Value() == nil || !p.Done() {
			b.Fatal("not done")
		}
	}
}

// BenchmarkFeedAndValue20KBIn5ByteChunks is the engine's streaming pattern: Value after every chunk.
func BenchmarkFeedAndValue20KBIn5ByteChunks(b *testing.B) {
	in := realisticRequest(20 << 10)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		p := NewParser()
		for i := 0; i < len(in); i += 5 {
			p.Feed(in[i:min(i+5, len(in))])
			p.Value()
		}
		if !p.Done() {
			b.Fatal("not done")
		}
	}
}

// BenchmarkEncodingJSON20KB is a yardstick: encoding/json decoding the same object into any.
func BenchmarkEncodingJSON20KB(b *testing.B) {
	in := realisticRequest(20 << 10)
	obj := in[strings.IndexByte(in, '{') : strings.LastIndexByte(in, '}')+1]
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal([]byte(obj), &v); err != nil {
			b.Fatal(err)
		}
	}
}
