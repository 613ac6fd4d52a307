package profiles

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// mapFS builds a prompt directory from name/content pairs.
func mapFS(kv ...string) fstest.MapFS {
	m := fstest.MapFS{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = &fstest.MapFile{Data: []byte(kv[i+1])}
	}
	return m
}

type sandboxKind string

type point struct {
	X int    `json:"x"`
	Y string `json:"y"`
}

func TestRenderPlaceholders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		tmpl string
		vars map[string]any
		want string
	}{
		{"string", "hi {{name}}!", map[string]any{"name": "Ann"}, "hi Ann!"},
		{"spaces inside braces", "hi {{ name }}!", map[string]any{"name": "Ann"}, "hi Ann!"},
		{"repeated", "{{a}}-{{a}}", map[string]any{"a": "x"}, "x-x"},
		{"unknown var stays as written", "a {{missing}} b {{ other }}", nil, "a {{missing}} b {{ other }}"},
		{"int", "{{n}}", map[string]any{"n": 42}, "42"},
		{"negative int64", "{{n}}", map[string]any{"n": int64(-7)}, "-7"},
		{"uint8", "{{n}}", map[string]any{"n": uint8(200)}, "200"},
		{"float", "{{f}}", map[string]any{"f": 1.5}, "1.5"},
		{"whole float", "{{f}}", map[string]any{"f": 3.0}, "3"},
		{"tiny float", "{{f}}", map[string]any{"f": 1e-9}, "1e-09"},
		{"float32", "{{f}}", map[string]any{"f": float32(0.1)}, "0.1"},
		{"bool", "{{t}} {{f}}", map[string]any{"t": true, "f": false}, "true false"},
		{"nil", "[{{x}}]", map[string]any{"x": nil}, "[]"},
		{"nil pointer", "[{{x}}]", map[string]any{"x": (*point)(nil)}, "[]"},
		{"map as JSON", "{{m}}", map[string]any{"m": map[string]any{"b": 1, "a": []int{1, 2}}}, `{"a":[1,2],"b":1}`},
		{"slice as JSON", "{{s}}", map[string]any{"s": []string{"x", "<y>&"}}, `["x","<y>&"]`},
		{"struct as JSON", "{{p}}", map[string]any{"p": point{1, "q"}}, `{"x":1,"y":"q"}`},
		{"named string type", "{{s}}", map[string]any{"s": sandboxKind("docker")}, "docker"},
		{"stringer", "{{d}}", map[string]any{"d": 1500 * time.Millisecond}, "1.5s"},
		{"error", "{{e}}", map[string]any{"e": errors.New("boom")}, "boom"},
		{"bytes as text", "{{b}}", map[string]any{"b": []byte("raw")}, "raw"},
		{"json.Number", "{{n}}", map[string]any{"n": json.Number("12.50")}, "12.50"},
		{"value is never scanned for tags", "{{m}}", map[string]any{"m": `{{ include "x.md" }} {{m}}`}, `{{ include "x.md" }} {{m}}`},
		{"triple braces", "{{{x}}}", map[string]any{"x": "v"}, "{v}"},
		{"not a tag", "{{#each}} {{ a b }} {{}} {{ lone", map[string]any{"a": 1}, "{{#each}} {{ a b }} {{}} {{ lone"},
		{"JSON braces in text", `{"a": {"b": {{n}}}}`, map[string]any{"n": 1}, `{"a": {"b": 1}}`},
		{"dashed name", "{{my-var}}", map[string]any{"my-var": "ok"}, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := New(mapFS("t.md", tt.tmpl)).Render("t.md", tt.vars)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Render(%q) (-want +got):\n%s", tt.tmpl, diff)
			}
		})
	}
}

func TestRenderConditions(t *testing.T) {
	t.Parallel()
	vars := map[string]any{
		"s": "docker", "n": 3, "f": 2.5, "yes": true, "no": false, "empty": "", "zero": 0,
		"list": []string{"a", "b"}, "none": []string{}, "m": map[string]any{"k": 1}, "nilv": nil,
		"big": uint64(1 << 63), "kind": sandboxKind("local"),
	}
	tests := []struct {
		cond string
		want bool
	}{
		{`s == "docker"`, true},
		{`s == 'docker'`, true},
		{`s != "docker"`, false},
		{`n == 3`, true},
		{`n == 3.0`, true},
		{`n != 4`, true},
		{`n < 4`, true},
		{`n < 3`, false},
		{`n > 2`, true},
		{`n > 3`, false},
		{`n <= 3`, true},
		{`n <= 2`, false},
		{`n >= 3`, true},
		{`n >= 4`, false},
		{`f < n`, true},
		{`-1 < zero`, true},
		{`-n < 0`, true},
		{`big > n`, true},
		{`s < "e"`, true},
		{`1 < n < 5`, true},
		{`1 < n < 2`, false},
		{`yes`, true},
		{`no`, false},
		{`not no`, true},
		{`not yes`, false},
		{`not not yes`, true},
		{`yes and n == 3`, true},
		{`yes and no`, false},
		{`no or yes`, true},
		{`no or empty`, false},
		{`no or yes and no`, false}, // and binds tighter: no or (yes and no)
		{`(no or yes) and yes`, true},
		{`not (no or yes)`, false},
		{`not no and yes`, true},
		{`empty`, false},
		{`zero`, false},
		{`list`, true},
		{`none`, false},
		{`m`, true},
		{`nilv`, false},
		{`nilv == None`, true},
		{`missing`, false},
		{`missing == None`, true},
		{`not missing`, true},
		{`"a" in list`, true},
		{`"z" in list`, false},
		{`"z" not in list`, true},
		{`"ock" in s`, true},
		{`"k" in m`, true},
		{`s == 3`, false},
		{`yes == True`, true},
		{`no == false`, true},
		{`kind == "local"`, true},
		{`list == list`, true},
		{`1.5e1 > 10`, true},
	}
	for _, tt := range tests {
		t.Run(tt.cond, func(t *testing.T) {
			t.Parallel()
			tmpl := "{{if " + tt.cond + "}}T{{else}}F{{endif}}"
			got, err := New(mapFS("t.md", tmpl)).Render("t.md", vars)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			want := map[bool]string{true: "T", false: "F"}[tt.want]
			if got != want {
				t.Errorf("{{if %s}} = %s, want %s", tt.cond, got, want)
			}
		})
	}
}

func TestRenderBlocks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		tmpl string
		vars map[string]any
		want string
	}{
		{"if true", "a{{if x}}b{{endif}}c", map[string]any{"x": true}, "abc"},
		{"if false", "a{{if x}}b{{endif}}c", map[string]any{"x": false}, "ac"},
		{"else", "{{if x}}b{{else}}c{{endif}}", map[string]any{"x": false}, "c"},
		{"spaced tags", "{{ if x }}b{{ else }}c{{ endif }}", map[string]any{"x": true}, "b"},
		{"elif", "{{if n == 1}}one{{elif n == 2}}two{{else}}many{{endif}}", map[string]any{"n": 2}, "two"},
		{"else if", "{{if n == 1}}one{{else if n == 2}}two{{else}}many{{endif}}", map[string]any{"n": 5}, "many"},
		{"elif without else, none true", "[{{if n == 1}}one{{elif n == 2}}two{{endif}}]", map[string]any{"n": 5}, "[]"},
		{
			"nested",
			"{{if a}}A{{if b}}B{{else}}b{{endif}}{{else}}x{{if b}}Y{{endif}}{{endif}}",
			map[string]any{"a": true, "b": false}, "Ab",
		},
		{
			"nested in else",
			"{{if a}}A{{if b}}B{{else}}b{{endif}}{{else}}x{{if b}}Y{{endif}}{{endif}}",
			map[string]any{"a": false, "b": true}, "xY",
		},
		{"placeholder inside branch", "{{if name}}hi {{name}}{{endif}}", map[string]any{"name": "Bo"}, "hi Bo"},
		{
			"standalone block lines vanish",
			"one\n{{if x}}\ntwo\n{{else}}\nthree\n{{endif}}\nfour\n",
			map[string]any{"x": true}, "one\ntwo\nfour\n",
		},
		{
			"standalone with indentation and false branch",
			"one\n  {{if x}}  \ntwo\n  {{endif}}\nfour",
			map[string]any{"x": false}, "one\nfour",
		},
		{
			"standalone at start and end of file",
			"{{if x}}\nbody\n{{endif}}",
			map[string]any{"x": true}, "body\n",
		},
		{
			"stacked standalone tags",
			"a\n{{if x}}\n{{if y}}\nxy\n{{endif}}\n{{endif}}\nb\n",
			map[string]any{"x": true, "y": true}, "a\nxy\nb\n",
		},
		{
			"inline tags keep their line",
			"a\nx{{if x}} yes{{endif}}\nb",
			map[string]any{"x": true}, "a\nx yes\nb",
		},
		{"condition over several lines", "{{if a and\n b}}ok{{endif}}", map[string]any{"a": 1, "b": 1}, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := New(mapFS("t.md", tt.tmpl)).Render("t.md", tt.vars)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Render(%q) (-want +got):\n%s", tt.tmpl, diff)
			}
		})
	}
}

func TestRenderErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   fstest.MapFS
		vars    map[string]any
		wantErr error
		wantMsg []string // substrings of the error text
	}{
		{
			name: "missing file", files: mapFS(),
			wantErr: ErrNotFound, wantMsg: []string{`render "t.md"`},
		},
		{
			name: "missing include names both files", files: mapFS("t.md", "a\n{{ include \"nope.md\" }}"),
			wantErr: ErrNotFound, wantMsg: []string{`include "nope.md" in t.md line 2`},
		},
		{
			name:    "missing include deep down",
			files:   mapFS("t.md", `{{ include "a.md" }}`, "a.md", "x\n\n{{include 'gone.md'}}"),
			wantErr: ErrNotFound, wantMsg: []string{`include "a.md" in t.md line 1`, `include "gone.md" in a.md line 3`},
		},
		{
			name:    "include cycle",
			files:   mapFS("t.md", `{{ include "a.md" }}`, "a.md", `{{ include "b.md" }}`, "b.md", `{{ include "a.md" }}`),
			wantErr: ErrIncludeCycle, wantMsg: []string{"a.md -> b.md -> a.md"},
		},
		{
			name:    "self include",
			files:   mapFS("t.md", `x {{ include "t.md" }}`),
			wantErr: ErrIncludeCycle, wantMsg: []string{"t.md -> t.md"},
		},
		{
			name:    "include escaping the directory",
			files:   mapFS("t.md", `{{ include "../etc/passwd" }}`),
			wantErr: ErrNotFound, wantMsg: []string{"invalid prompt name"},
		},
		{
			name:    "unterminated if",
			files:   mapFS("t.md", "a\n{{if x}}\nb"),
			wantErr: ErrSyntax, wantMsg: []string{"t.md line 2", "never closed"},
		},
		{
			name:    "stray endif",
			files:   mapFS("t.md", "a{{endif}}"),
			wantErr: ErrSyntax, wantMsg: []string{"{{endif}} without {{if}}"},
		},
		{
			name:    "else without if",
			files:   mapFS("t.md", "a{{else}}"),
			wantErr: ErrSyntax, wantMsg: []string{"without {{if}}"},
		},
		{
			name:    "elif after else",
			files:   mapFS("t.md", "{{if a}}{{else}}{{elif b}}{{endif}}"),
			wantErr: ErrSyntax, wantMsg: []string{"after {{else}}"},
		},
		{
			name:    "if without condition",
			files:   mapFS("t.md", "{{if}}x{{endif}}"),
			wantErr: ErrSyntax, wantMsg: []string{"needs a condition"},
		},
		{
			name:    "bad condition",
			files:   mapFS("t.md", "\n{{if a === b}}x{{endif}}"),
			wantErr: ErrSyntax, wantMsg: []string{"t.md line 2", `condition "a === b"`},
		},
		{
			name:    "binary minus is not arithmetic",
			files:   mapFS("t.md", "{{if n - 1}}x{{endif}}"),
			wantErr: ErrSyntax,
		},
		{
			name:    "function calls are not allowed",
			files:   mapFS("t.md", "{{if len(x)}}x{{endif}}"),
			wantErr: ErrSyntax,
		},
		{
			name:    "unterminated string",
			files:   mapFS("t.md", `{{if a == "x}}y{{endif}}`),
			wantErr: ErrSyntax,
		},
		{
			name:    "ordering a string against a number",
			files:   mapFS("t.md", "x\n{{if s < 1}}y{{endif}}"),
			vars:    map[string]any{"s": "a"},
			wantErr: ErrEval, wantMsg: []string{"t.md line 2"},
		},
		{
			name:    "in over a number",
			files:   mapFS("t.md", "{{if 1 in n}}y{{endif}}"),
			vars:    map[string]any{"n": 5},
			wantErr: ErrEval,
		},
		{
			name:    "syntax error in an included file",
			files:   mapFS("t.md", `{{ include "a.md" }}`, "a.md", "{{if x}}"),
			wantErr: ErrSyntax, wantMsg: []string{`include "a.md" in t.md line 1`, "a.md line 1"},
		},
		{
			name:    "broken JSON template",
			files:   mapFS("t.md", "```json\n{\"a\": {{x}},}\n```"),
			vars:    map[string]any{"x": 1},
			wantErr: ErrSyntax, wantMsg: []string{"not valid JSON"},
		},
		{
			name:    "line numbers count the fence line",
			files:   mapFS("t.md", "\n~~~json\n{\n{{if x}}\n}\n~~~"),
			wantErr: ErrSyntax, wantMsg: []string{"t.md line 4"},
		},
		{
			name:    "JSON template branch leaves a string open",
			files:   mapFS("t.md", "~~~json\n{\"a\": {{if x}}\"{{else}}1{{endif}}}\n~~~"),
			wantErr: ErrSyntax, wantMsg: []string{"JSON string"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(tt.files).Render("t.md", tt.vars)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Render err = %v, want %v", err, tt.wantErr)
			}
			for _, s := range tt.wantMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestRenderJSONTemplates(t *testing.T) {
	t.Parallel()
	nasty := "say \"hi\"\n\tthen \\ leave </script> \u2028 \x01"
	tests := []struct {
		name string
		tmpl string
		vars map[string]any
		want any // the decoded output
	}{
		{
			"value with quotes and newlines", "```json\n{\"user\": {{message}}}\n```",
			map[string]any{"message": nasty}, map[string]any{"user": nasty},
		},
		{
			"tilde fence and surrounding whitespace", "\n\n~~~json\n{\"w\": {{message}}}\n~~~\n\n",
			map[string]any{"message": nasty}, map[string]any{"w": nasty},
		},
		{
			"placeholder inside a string", "~~~json\n{\"w\": \"runtime '{{runtime}}' and \\\"{{runtime}}\\\" is wrong\"}\n~~~",
			map[string]any{"runtime": nasty},
			map[string]any{"w": "runtime '" + nasty + "' and \"" + nasty + "\" is wrong"},
		},
		{
			"non-string values", "```json\n{\"n\": {{n}}, \"b\": {{b}}, \"l\": {{l}}, \"m\": {{m}}, \"in\": \"{{m}}\"}\n```",
			map[string]any{"n": 2, "b": true, "l": []string{"a\"b"}, "m": map[string]any{"k": "v"}},
			map[string]any{"n": 2.0, "b": true, "l": []any{"a\"b"}, "m": map[string]any{"k": "v"}, "in": `{"k":"v"}`},
		},
		{
			"unknown vars stay valid", "```json\n{\"a\": {{nope}}, \"b\": \"x{{nope}}y\"}\n```",
			nil, map[string]any{"a": nil, "b": "xy"},
		},
		{
			"conditions", "```json\n{\n{{if extra}}\n\"extra\": {{extra}},\n{{endif}}\n\"m\": {{m}}\n}\n```",
			map[string]any{"m": "x", "extra": "e\"e"}, map[string]any{"m": "x", "extra": "e\"e"},
		},
		{
			"include inside a string is escaped", "```json\n{\"tips\": \"{{ include \"tips.md\" }}\"}\n```",
			nil, map[string]any{"tips": "line \"one\"\nline two\n"},
		},
		{
			"json.RawMessage is inserted as is", "```json\n{\"r\": {{r}}}\n```",
			map[string]any{"r": json.RawMessage(`{"x":[1,2]}`)}, map[string]any{"r": map[string]any{"x": []any{1.0, 2.0}}},
		},
		{
			"NaN falls back to a string", "```json\n{\"f\": {{f}}}\n```",
			map[string]any{"f": func() float64 { z := 0.0; return z / z }()}, map[string]any{"f": "NaN"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := New(mapFS("t.md", tt.tmpl, "tips.md", "line \"one\"\nline two\n"))
			got, err := p.Render("t.md", tt.vars)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			var dec any
			if err := json.Unmarshal([]byte(got), &dec); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, got)
			}
			if diff := cmp.Diff(tt.want, dec); diff != "" {
				t.Errorf("decoded output (-want +got):\n%s\nraw: %s", diff, got)
			}
		})
	}
}

func TestJSONTemplateDetection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		json bool
	}{
		{"backticks", "```json\n{}\n```", true},
		{"tildes with spaces", "  ~~~ json \n{}\n~~~  \n", true},
		{"other language", "```python\n{}\n```", false},
		{"text after the block", "```json\n{}\n```\nmore", false},
		{"text before the block", "note\n```json\n{}\n```", false},
		{"mixed fences", "```json\n{}\n~~~", false},
		{"empty block", "```json\n```", false},
		{"plain text", "hello", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, _, got := jsonTemplateBody(tt.src); got != tt.json {
				t.Errorf("jsonTemplateBody(%q) = %v, want %v", tt.src, got, tt.json)
			}
		})
	}
}

func ExamplePrompts_Render() {
	defaults := mapFS(
		"greeting.md", "Hello {{name}}.\n{{if admin}}\nYou are an admin.\n{{endif}}\n",
	)
	profile := mapFS(
		"greeting.md", "{{ include original }}Welcome to the {{team}} team.\n",
	)
	p := New(profile, defaults)
	out, err := p.Render("greeting.md", map[string]any{"name": "Ada", "admin": true, "team": "core"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(out)
	// Output:
	// Hello Ada.
	// You are an admin.
	// Welcome to the core team.
}
