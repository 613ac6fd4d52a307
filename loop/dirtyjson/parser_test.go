package dirtyjson

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type (
	M = map[string]any
	A = []any
)

// parseCase is one input with what Parse must return. consumed is checked when set.
type parseCase struct {
	name     string
	in       string
	want     M
	done     bool
	consumed string
}

var toleratedCases = []parseCase{
	{name: "plain JSON", in: `{"tool_name":"x","tool_args":{"a":1}}`,
		want: M{"tool_name": "x", "tool_args": M{"a": 1.0}}, done: true},
	{name: "leading prose", in: "Sure! Here is my answer:\n{\"a\": 1}",
		want: M{"a": 1.0}, done: true, consumed: `{"a": 1}`},
	{name: "json code fence", in: "```json\n{\"a\": 1}\n```\nDone.",
		want: M{"a": 1.0}, done: true, consumed: `{"a": 1}`},
	{name: "array before the object", in: `[{"a": 1}]`,
		want: M{"a": 1.0}, done: true, consumed: `{"a": 1}`},
	{name: "line comments", in: "{\"a\": 1, // note\n \"b\": 2 // end\n}",
		want: M{"a": 1.0, "b": 2.0}, done: true},
	{name: "block comments", in: `{/* c */"a": /* x */ 1 /* y */, "b" /**/ : 2}`,
		want: M{"a": 1.0, "b": 2.0}, done: true},
	{name: "single quotes", in: `{'a': 'it\'s', 'b': 'say "hi"'}`,
		want: M{"a": "it's", "b": `say "hi"`}, done: true},
	{name: "backtick strings", in: "{`a`: `x\\`y`}",
		want: M{"a": "x`y"}, done: true},
	{name: "triple double quotes", in: "{\"code\": \"\"\"\n  print(\"hi\")\n  \"\"\"}",
		want: M{"code": `print("hi")`}, done: true},
	{name: "triple single quotes", in: `{"code": '''x = 'a' '''}`,
		want: M{"code": "x = 'a'"}, done: true},
	{name: "triple backticks", in: "{\"code\": ```\nls -la\n```}",
		want: M{"code": "ls -la"}, done: true},
	{name: "triple quotes with quotes inside", in: `{"a": """say "hi" and ""ok"" """}`,
		want: M{"a": `say "hi" and ""ok""`}, done: true},
	{name: "triple quotes keep escapes raw", in: `{"a": """C:\new\u00e9"""}`,
		want: M{"a": `C:\new\u00e9`}, done: true},
	{name: "empty triple string", in: `{"a": """"""}`,
		want: M{"a": ""}, done: true},
	{name: "unquoted keys", in: `{tool_name: "x", tool_args: {a_b: 1, c-d: 2}}`,
		want: M{"tool_name": "x", "tool_args": M{"a_b": 1.0, "c-d": 2.0}}, done: true},
	{name: "unquoted values", in: `{"a": hello world, "b": http://x.y/z?q=1, "c": Note: fine}`,
		want: M{"a": "hello world", "b": "http://x.y/z?q=1", "c": "Note: fine"}, done: true},
	{name: "unquoted value ends at newline", in: "{\"a\": hello  \n\"b\": 2}",
		want: M{"a": "hello", "b": 2.0}, done: true},
	{name: "unquoted values in an array", in: `{"a": [x, y z ,w]}`,
		want: M{"a": A{"x", "y z", "w"}}, done: true},
	{name: "array without commas", in: `{"a": [1 2 -3.5 true null "x" 'y' [4 5] {"b": 6} z w 7]}`,
		want: M{"a": A{1.0, 2.0, -3.5, true, nil, "x", "y", A{4.0, 5.0}, M{"b": 6.0}, "z w 7"}}, done: true},
	{name: "unquoted value with a comment", in: "{\"a\": hello // c\n, \"b\": x /* d */}",
		want: M{"a": "hello", "b": "x"}, done: true},
	{name: "unquoted value with an apostrophe", in: `{a: it's fine}`,
		want: M{"a": "it's fine"}, done: true},
	{name: "CRLF line ends", in: "{\r\n\"a\": hello\r\n}",
		want: M{"a": "hello"}, done: true},
	{name: "trailing commas", in: `{"a": [1, 2,], "b": {"c": 3,},}`,
		want: M{"a": A{1.0, 2.0}, "b": M{"c": 3.0}}, done: true},
	{name: "repeated commas", in: `{,,"a": [,1,,2], ,"b": 3,,}`,
		want: M{"a": A{1.0, 2.0}, "b": 3.0}, done: true},
	{name: "missing colon", in: `{"a" 1, "b" "c", d [true]}`,
		want: M{"a": 1.0, "b": "c", "d": A{true}}, done: true},
	{name: "missing colon before an object", in: `{tool_args{"a":1}}`,
		want: M{"tool_args": M{"a": 1.0}}, done: true},
	{name: "missing commas", in: `{"a": "x" "b": 2 "c": true "d": null 'e': [1 "two" {"f": 3}]}`,
		want: M{"a": "x", "b": 2.0, "c": true, "d": nil, "e": A{1.0, "two", M{"f": 3.0}}}, done: true},
	{name: "missing comma at a line end", in: "{\"a\": 1\n\"b\": two\nc: 3}",
		want: M{"a": 1.0, "b": "two", "c": 3.0}, done: true},
	{name: "number or literal followed by words", in: `{"a": 10 apples, "b": true story, "c": null pointer}`,
		want: M{"a": "10 apples", "b": "true story", "c": "null pointer"}, done: true},
	{name: "literals in any case", in: `{"a": True, "b": FALSE, "c": Null, "d": None, "e": undefined, "f": NONE}`,
		want: M{"a": true, "b": false, "c": nil, "d": nil, "e": nil, "f": nil}, done: true},
	{name: "literal-like words", in: `{"a": truth, "b": nullable, "c": NaN, "d": Infinity}`,
		want: M{"a": "truth", "b": "nullable", "c": "NaN", "d": "Infinity"}, done: true},
	{name: "numbers", in: `{"a": +5, "b": 1., "c": .5, "d": -0, "e": -.5, "f": 1e3, "g": 2E-2, "h": 007, "i": 1.e2, "j": +.25}`,
		want: M{"a": 5.0, "b": 1.0, "c": 0.5, "d": math.Copysign(0, -1), "e": -0.5, "f": 1000.0, "g": 0.02, "h": 7.0, "i": 100.0, "j": 0.25}, done: true},
	{name: "number-like strings", in: `{"v": 1.2.3, "d": 2024-01-01, "h": 0x1F, "m": -, "e": 1e, "s": 1_000}`,
		want: M{"v": "1.2.3", "d": "2024-01-01", "h": "0x1F", "m": "-", "e": "1e", "s": "1_000"}, done: true},
	{name: "enormous numbers", in: `{"a": 1e999, "b": -1e400, "c": 1e-400}`,
		want: M{"a": "1e999", "b": "-1e400", "c": 0.0}, done: true},
	{name: "long in-range number", in: `{"a": 123456789012345678901234567890}`,
		want: M{"a": 1.2345678901234568e29}, done: true},
	{name: "raw newlines and tabs in strings", in: "{\"a\": \"line1\nline2\tend\"}",
		want: M{"a": "line1\nline2\tend"}, done: true},
	{name: "JSON escapes", in: `{"a": "q\"b\\s\/n\nt\tr\rb\bf\f", "k\"ey": 1}`,
		want: M{"a": "q\"b\\s/n\nt\tr\rb\bf\f", "k\"ey": 1.0}, done: true},
	{name: "unicode escapes", in: `{"a": "\u00e9\u65E5\u0041"}`,
		want: M{"a": "é日A"}, done: true},
	{name: "surrogate pair", in: `{"a": "x\ud83d\ude00y"}`,
		want: M{"a": "x😀y"}, done: true},
	{name: "lone surrogates", in: `{"a": "\ud83d", "b": "\ude00x", "c": "\ud83dx", "d": "\ud83d\u0041", "e": "\ud83d\ud83d\ude00", "f": "\ud83d\n"}`,
		want: M{"a": "\uFFFD", "b": "\uFFFDx", "c": "\uFFFDx", "d": "\uFFFDA", "e": "\uFFFD😀", "f": "\uFFFD\n"}, done: true},
	{name: "invalid unicode escapes kept", in: `{"a": "x\u12G4y", "b": "\uzz", "c": "\u12", "d": "\u"}`,
		want: M{"a": `x\u12G4y`, "b": `\uzz`, "c": `\u12`, "d": `\u`}, done: true},
	{name: "high surrogate then invalid escape", in: `{"a": "\ud83d\u12"}`,
		want: M{"a": "\uFFFD\\u12"}, done: true},
	{name: "unknown escapes kept", in: `{"a": "\d+ C:\Users\x", "b": "a\
b"}`,
		want: M{"a": `\d+ C:\Users\x`, "b": "a\\\nb"}, done: true},
	{name: "escapes mixed with text", in: `{"a": "one\ttwo\"three\\", "b": "plain"}`,
		want: M{"a": "one\ttwo\"three\\", "b": "plain"}, done: true},
	{name: "empty strings", in: `{"a": "", "b": '', "c": ` + "``" + `, "": "empty key"}`,
		want: M{"a": "", "b": "", "c": "", "": "empty key"}, done: true},
	{name: "empty containers", in: `{"a": [], "b": {}, "c": [[]]}`,
		want: M{"a": A{}, "b": M{}, "c": A{A{}}}, done: true},
	{name: "nested arrays", in: `{"a": [[1, [2]], [], "x"]}`,
		want: M{"a": A{A{1.0, A{2.0}}, A{}, "x"}}, done: true},
	{name: "duplicate keys: last wins", in: `{"a": 1, "b": 2, "a": [3]}`,
		want: M{"a": A{3.0}, "b": 2.0}, done: true},
	{name: "brace inside a string", in: `prefix {"tool_name":"response","tool_args":{"text":"brace } inside"}} trailing noise`,
		want: M{"tool_name": "response", "tool_args": M{"text": "brace } inside"}}, done: true,
		consumed: `{"tool_name":"response","tool_args":{"text":"brace } inside"}}`},
	{name: "trailing garbage", in: `{"a": 1} and then some {"b": 2}`,
		want: M{"a": 1.0}, done: true, consumed: `{"a": 1}`},
	{name: "two concatenated objects", in: `{"a":1}{"b":2}`,
		want: M{"a": 1.0}, done: true, consumed: `{"a":1}`},
	{name: "extra closing brace", in: `{"a":1}}`,
		want: M{"a": 1.0}, done: true, consumed: `{"a":1}`},
	{name: "doubled braces", in: `{{"tool_name": "x", "tool_args": {"a": 1}}}`,
		want: M{"tool_name": "x", "tool_args": M{"a": 1.0}}, done: true,
		consumed: `{{"tool_name": "x", "tool_args": {"a": 1}}}`},
	{name: "doubled braces then text", in: "{{\"a\": 1}}\n```\n}",
		want: M{"a": 1.0}, done: true, consumed: `{{"a": 1}}`},
	{name: "doubled opening brace only", in: "{{\"a\": 1} and that is all }",
		want: M{"a": 1.0}, done: true, consumed: `{{"a": 1}`},
	{name: "doubled braces in a value", in: `{"a": {{"b": 1}}, "c": 2}`,
		want: M{"a": M{"b": 1.0}, "c": 2.0}, done: true},
	{name: "doubled opening brace in a value", in: `{"a": {{"b": 1}, "c": 2}`,
		want: M{"a": M{"b": 1.0}, "c": 2.0}, done: true},
	{name: "every brace doubled", in: `{{"tool_name": "x", "tool_args": {{"a": {{}}}}}}`,
		want: M{"tool_name": "x", "tool_args": M{"a": M{}}}, done: true},
	{name: "tripled braces", in: `{{{"a":1}}}}`,
		want: M{"a": 1.0}, done: true, consumed: `{{{"a":1}}}`},
	{name: "doubled braces with blanks and comments", in: "{ /* x */ {\"a\":1} // y\n }",
		want: M{"a": 1.0}, done: true},
	{name: "doubled empty object", in: `{{}}`,
		want: M{}, done: true},
	{name: "keyless object after a key", in: `{"a": 1, {"b": 2}}`,
		want: M{"a": 1.0, "": M{"b": 2.0}}, done: true},
	{name: "empty key", in: `{: 1}`,
		want: M{"": 1.0}, done: true},
	{name: "stray colons", in: `{"a":: 1, "b": ["x": 2]}`,
		want: M{"a": 1.0, "b": A{"x", 2.0}}, done: true},
	{name: "missing value", in: `{"a": , "b": 1, "c": }`,
		want: M{"a": nil, "b": 1.0, "c": nil}, done: true},
	{name: "brace closes an open array", in: `{"a": [1, 2}`,
		want: M{"a": A{1.0, 2.0}}, done: true},
	{name: "bracket closes an open object", in: `{"a": [{"b": 1]}`,
		want: M{"a": A{M{"b": 1.0}}}, done: true},
	{name: "stray bracket", in: `{"a": 1]}`,
		want: M{"a": 1.0}, done: true},
	{name: "unicode blanks", in: "\uFEFF{\u00a0\"a\":\u2003 1\u3000}",
		want: M{"a": 1.0}, done: true},
	{name: "unicode blanks around unquoted values", in: "{\"a\": x\u00a0y\u00a0, \"b\": true\u00a0\"c\": 2}",
		want: M{"a": "x\u00a0y", "b": true, "c": 2.0}, done: true},
	{name: "non-ASCII unquoted key and value", in: `{clé: café, 日本: 語}`,
		want: M{"clé": "café", "日本": "語"}, done: true},
	{name: "NUL bytes", in: "{\"a\x00\": \"b\x00c\", \x00: 1}",
		want: M{"a\x00": "b\x00c", "\x00": 1.0}, done: true},
	{name: "invalid UTF-8 kept", in: "{\"a\": \"\xff\xfe\", \xc3: \xe6\x97}",
		want: M{"a": "\xff\xfe", "\xc3": "\xe6\x97"}, done: true},
	{name: "slash starts an unquoted value", in: `{"path": /usr/bin/env, "re": /a\/b/}`,
		want: M{"path": "/usr/bin/env", "re": `/a\/b/`}, done: true},
	{name: "realistic tool request", in: "Let me check.\n```json\n{\n  \"thoughts\": [\"first\", \"second\"],\n  \"headline\": \"Listing files\",\n  \"tool_name\": \"code_execution_tool\",\n  \"tool_args\": {\n    \"runtime\": \"terminal\",\n    \"code\": \"ls -la\\necho \\\"done\\\"\"\n  }\n}\n```",
		want: M{"thoughts": A{"first", "second"}, "headline": "Listing files", "tool_name": "code_execution_tool",
			"tool_args": M{"runtime": "terminal", "code": "ls -la\necho \"done\""}}, done: true},

	// Truncated input: the partial object, not done.
	{name: "truncated in a string", in: `{"thoughts": ["abc`,
		want: M{"thoughts": A{"abc"}}},
	{name: "truncated after a key", in: `{"a": 1, "b"`,
		want: M{"a": 1.0, "b": nil}},
	{name: "truncated in a key", in: `{"a": 1, "bc`,
		want: M{"a": 1.0}},
	{name: "truncated in an unquoted key", in: `{"a": 1, bc`,
		want: M{"a": 1.0}},
	{name: "truncated after a colon", in: `{"a":`,
		want: M{"a": nil}},
	{name: "truncated at an opening quote", in: `{"a": "`,
		want: M{"a": ""}},
	{name: "truncated at two quotes", in: `{"a": ""`,
		want: M{"a": ""}},
	{name: "truncated in a triple string", in: "{\"a\": \"\"\"\n  line one\n  li",
		want: M{"a": "line one\n  li"}},
	{name: "truncated in a triple string's closing quotes", in: `{"a": """x""`,
		want: M{"a": "x"}},
	{name: "truncated in a number", in: `{"a": 12`,
		want: M{"a": 12.0}},
	{name: "truncated in a literal", in: `{"a": tr`,
		want: M{"a": "tr"}},
	{name: "truncated after a literal", in: `{"a": true  `,
		want: M{"a": true}},
	{name: "truncated in an escape", in: `{"a": "abc\`,
		want: M{"a": "abc"}},
	{name: "truncated in a unicode escape", in: `{"a": "abc\u00`,
		want: M{"a": "abc"}},
	{name: "truncated between surrogates", in: `{"a": "abc\ud83d\`,
		want: M{"a": "abc"}},
	{name: "truncated in a character", in: "{\"a\": \"caf\xc3",
		want: M{"a": "caf"}},
	{name: "truncated in a character of an unquoted value", in: "{\"a\": caf\xc3",
		want: M{"a": "caf"}},
	{name: "truncated nested", in: `{"a": {"b": [1, {"c": "d`,
		want: M{"a": M{"b": A{1.0, M{"c": "d"}}}}},
	{name: "truncated in a comment", in: `{"a": 1 /* never`,
		want: M{"a": 1.0}},
	{name: "truncated at a slash", in: `{"a": 1, /`,
		want: M{"a": 1.0}},
	{name: "truncated after the inner object of doubled braces", in: `{{"a": 1}`,
		want: M{"a": 1.0}},
}

var nonsenseCases = []parseCase{
	{name: "empty", in: ""},
	{name: "only prose", in: "I could not decide what to do."},
	{name: "lone double quote", in: `"`},
	{name: "lone single quote", in: `'`},
	{name: "closers only", in: "}]]}"},
	{name: "array only", in: "[1, 2, 3]"},
	{name: "empty fence", in: "```json\n```"},
	{name: "NUL bytes only", in: "\x00\x00\x00"},
	{name: "invalid UTF-8 only", in: "\xff\xfe\xfd"},

	{name: "lone brace", in: "{", want: M{}},
	{name: "many opening braces", in: "{{{{", want: M{}},
	{name: "brace and quote", in: `{"`, want: M{}},
	{name: "brace and bracket", in: "{]", want: M{}},
	{name: "brace and slash", in: "{/", want: M{}},
	{name: "unterminated comment", in: "{/*", want: M{}},
	{name: "NUL key", in: "{\x00}", want: M{"\x00": nil}, done: true},
	{name: "closed then closers", in: "{}}}}", want: M{}, done: true, consumed: "{}"},
	{name: "brace then array", in: "{[1, 2]}", want: M{"": A{1.0, 2.0}}, done: true},
	{name: "only punctuation", in: "{:,:,}", want: M{"": nil}, done: true},
	{name: "quotes everywhere", in: `{"'"'"'"}`, want: M{"'": `"`}},
}

func TestParseTolerated(t *testing.T) {
	t.Parallel()
	for _, tt := range toleratedCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkParse(t, tt)
		})
	}
}

func TestParseNonsense(t *testing.T) {
	t.Parallel()
	for _, tt := range nonsenseCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkParse(t, tt)
		})
	}
}

func checkParse(t *testing.T, tt parseCase) {
	t.Helper()
	got, done, err := Parse(tt.in)
	if tt.want == nil {
		if !errors.Is(err, ErrNoObject) || got != nil || done {
			t.Errorf("Parse(%q) = %v, %v, %v; want nil, false, ErrNoObject", tt.in, got, done, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Parse(%q) error: %v", tt.in, err)
	}
	if diff := cmp.Diff(tt.want, got); diff != "" || done != tt.done {
		t.Errorf("Parse(%q) done=%v (want %v), (-want +got):\n%s", tt.in, done, tt.done, diff)
	}
	if tt.consumed != "" {
		p := NewParser()
		p.Feed(tt.in)
		if c := p.Consumed(); c != tt.consumed {
			t.Errorf("Consumed() = %q, want %q", c, tt.consumed)
		}
	}
}

func TestNegativeZero(t *testing.T) {
	t.Parallel()
	got, _, _ := Parse(`{"a": -0}`)
	if f, _ := got["a"].(float64); f != 0 || !math.Signbit(f) {
		t.Errorf("a = %v, want -0", got["a"])
	}
}

func TestDepthLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want M
	}{
		{name: "arrays", in: "{" + strings.Repeat("[", 3*MaxDepth) + strings.Repeat("]", 3*MaxDepth) + "}",
			want: M{"": nest(MaxDepth-1, func(v any) any {
				if v == nil {
					return A{nil} // the value that would have opened one level too many
				}
				return A{v}
			})}},
		{name: "objects", in: strings.Repeat(`{"a":`, 3*MaxDepth) + "1" + strings.Repeat("}", 3*MaxDepth),
			want: nest(MaxDepth, func(v any) any {
				if v == nil {
					return M{"a": nil}
				}
				return M{"a": v}
			}).(M)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := NewParser()
			p.Feed(tt.in)
			if p.Done() {
				t.Errorf("Done() = true after going past MaxDepth")
			}
			// cmp.Diff is very slow on nesting this deep; Canonical is exact for these values.
			if got, want := Canonical(p.Value()), Canonical(tt.want); got != want {
				t.Errorf("Value() = %.80s..., want %.80s...", got, want)
			}
			before := p.Consumed()
			p.Feed(`{"more": 1}`)
			if p.Consumed() != before || !strings.HasPrefix(tt.in, before) {
				t.Errorf("Consumed() changed or is not a prefix after halting")
			}
		})
	}
}

// nest applies wrap n times, innermost first, starting from nil.
func nest(n int, wrap func(any) any) any {
	var v any
	for range n {
		v = wrap(v)
	}
	return v
}

func TestManyWrapperBraces(t *testing.T) {
	t.Parallel()
	n := 10 * MaxDepth // wrappers cost no depth
	in := strings.Repeat("{", n) + `"a": 1` + strings.Repeat("}", n) + " tail"
	got, done, err := Parse(in)
	if err != nil || !done {
		t.Fatalf("Parse: done=%v err=%v", done, err)
	}
	if diff := cmp.Diff(M{"a": 1.0}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStreamingStrings(t *testing.T) {
	t.Parallel()
	p := NewParser()
	steps := []struct {
		chunk string
		want  M
	}{
		{`Thinking... {"thoughts": ["ab`, M{"thoughts": A{"ab"}}},
		{`c`, M{"thoughts": A{"abc"}}},
		{`\n\u00`, M{"thoughts": A{"abc\n"}}},
		{`e9 d`, M{"thoughts": A{"abc\né d"}}},
		{`", "x`, M{"thoughts": A{"abc\né d", "x"}}},
		{"\xe6\x97", M{"thoughts": A{"abc\né d", "x"}}},
		{"\xa5\"], \"headline\": \"Wor", M{"thoughts": A{"abc\né d", "x日"}, "headline": "Wor"}},
		{`king"`, M{"thoughts": A{"abc\né d", "x日"}, "headline": "Working"}},
	}
	var seen []string // every string handed out, which later feeding must not change
	for i, s := range steps {
		p.Feed(s.chunk)
		got := p.Value()
		if diff := cmp.Diff(any(s.want), got); diff != "" {
			t.Fatalf("after chunk %d %q (-want +got):\n%s", i, s.chunk, diff)
		}
		if p.Done() {
			t.Fatalf("Done() after chunk %d", i)
		}
		for _, th := range got.(M)["thoughts"].(A) {
			seen = append(seen, th.(string))
		}
	}
	var want []string
	for _, s := range steps {
		for _, th := range s.want["thoughts"].(A) {
			want = append(want, th.(string))
		}
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("strings handed out earlier changed (-want +got):\n%s", diff)
	}
}

func TestDoneAndConsumed(t *testing.T) {
	t.Parallel()
	p := NewParser()
	if p.Value() != nil || p.Consumed() != "" || p.Done() {
		t.Fatalf("fresh parser: Value=%v Consumed=%q Done=%v", p.Value(), p.Consumed(), p.Done())
	}
	p.Feed("Plan: use ")
	p.Feed("[the tool] ")
	if p.Value() != nil || p.Consumed() != "" {
		t.Fatalf("after prose: Value=%v Consumed=%q", p.Value(), p.Consumed())
	}
	p.Feed(`now {"tool_name": "response", "tool_args": {"text": "hi"`)
	if p.Done() {
		t.Fatal("Done before the root closed")
	}
	if got, want := p.Consumed(), `{"tool_name": "response", "tool_args": {"text": "hi"`; got != want {
		t.Errorf("Consumed() = %q, want %q", got, want)
	}
	p.Feed(`}} and more {"x": 1}`)
	if !p.Done() {
		t.Fatal("not Done after the root closed")
	}
	want := `{"tool_name": "response", "tool_args": {"text": "hi"}}`
	if got := p.Consumed(); got != want {
		t.Errorf("Consumed() = %q, want %q", got, want)
	}
	p.Feed(`{"ignored": true}`)
	if got := p.Consumed(); got != want {
		t.Errorf("Consumed() after more input = %q, want %q", got, want)
	}
	if diff := cmp.Diff(any(M{"tool_name": "response", "tool_args": M{"text": "hi"}}), p.Value()); diff != "" {
		t.Errorf("Value() (-want +got):\n%s", diff)
	}
}

func TestZeroParser(t *testing.T) {
	t.Parallel()
	var p Parser
	p.Feed(`{"a": 1}`)
	if !p.Done() || Canonical(p.Value()) != `{"a":1}` {
		t.Errorf("zero Parser: Done=%v Value=%v", p.Done(), p.Value())
	}
}

func TestCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
		want string
	}{
		{name: "sorted keys", in: M{"b": 1.0, "a": A{"x", true, nil}}, want: `{"a":["x",true,null],"b":1}`},
		{name: "no HTML escaping", in: M{"code": "a < b && c > d"}, want: `{"code":"a < b && c > d"}`},
		{name: "same request, different text", in: mustParse(t, "{tool_args: {b: 2, a: 1}, 'tool_name': x,}"),
			want: `{"tool_args":{"a":1,"b":2},"tool_name":"x"}`},
		{name: "nil", in: nil, want: "null"},
		{name: "unencodable falls back", in: M{"n": math.NaN()}, want: "map[n:NaN]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Canonical(tt.in); got != tt.want {
				t.Errorf("Canonical(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func mustParse(t *testing.T, s string) M {
	t.Helper()
	v, _, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return v
}

func TestReading(t *testing.T) {
	t.Parallel()
	p := NewParser()
	steps := []struct {
		feed string
		want bool
	}{
		{`{"thoughts": ["a"], "head`, false},
		{`line": "Run`, true},
		{`ning`, true},
		{`"`, false},
		{`, "tool_name": "x", "tool_args": {"headline": "nested`, false},
		{`"}}`, false},
	}
	for _, s := range steps {
		p.Feed(s.feed)
		if got := p.Reading("headline"); got != s.want {
			t.Errorf("after %q: Reading(headline) = %v, want %v", s.feed, got, s.want)
		}
	}
	bare := NewParser()
	bare.Feed(`{headline: Running tests`)
	if !bare.Reading("headline") {
		t.Error("an unquoted value at the end of the input may still grow")
	}
	bare.Feed("\n, tool_name: x}")
	if bare.Reading("headline") {
		t.Error("an unquoted value ends at the comma")
	}
}
