package profiles

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzRender feeds arbitrary template text through parse and render: it must never panic or
// hang, and any failure must be one of the package's errors.
func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		"plain", "{{x}}", "{{{x}}}", "{{ if a }}b{{ else }}c{{ endif }}", "{{if a}}{{elif b}}{{endif}}",
		"{{if (a or not b) and c >= 1.5}}x{{endif}}", `{{if "q" in s}}y{{endif}}`, "{{if a}}",
		`{{ include "inc.md" }}`, "{{ include original }}", `{{ include "fuzz.md" }}`,
		"```json\n{\"a\": {{x}}, \"b\": \"{{s}}\"}\n```", "~~~json\n{{if a}}1{{else}}2{{endif}}\n~~~",
		"{{", "}}", "{{}}", "{{if -}}", "{{if 'unterminated}}", "{{if 1e999 > -.5}}x{{endif}}",
	} {
		f.Add(seed)
	}
	vars := map[string]any{"x": "v\"\n", "a": 1, "b": "", "c": 2.5, "s": "str", "l": []int{1}}
	f.Fuzz(func(t *testing.T, src string) {
		p := New(mapFS("fuzz.md", src, "inc.md", "included {{x}}"))
		out, err := p.Render("fuzz.md", vars)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrEval) && !errors.Is(err, ErrIncludeCycle) && !errors.Is(err, ErrNotFound) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if tmpl, _ := p.find("fuzz.md", 0); tmpl != nil && tmpl.json && !json.Valid([]byte(out)) {
			t.Fatalf("JSON template rendered invalid JSON: %q", out)
		}
	})
}

// FuzzExpr checks the condition parser and evaluator on arbitrary input.
func FuzzExpr(f *testing.F) {
	for _, seed := range []string{"a", "not a", "a == 'x'", "1 < a < 3", "(a or b) and not c", `"x" not in l`, "-(-1)", "((("} {
		f.Add(seed)
	}
	vars := map[string]any{"a": 2, "b": "s", "c": nil, "l": []string{"x"}}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := parseExpr(src)
		if err != nil {
			return
		}
		if _, err := e.eval(vars); err != nil && !errors.Is(err, ErrEval) {
			t.Fatalf("eval(%q): unexpected error %v", src, err)
		}
	})
}

// FuzzParseSpec feeds arbitrary agent.yaml content to the checker and decoder: no panic, and an
// error always wraps ErrInvalidSpec and names the file.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{
		"title: x\nmodels:\n  chat: {model: m}\ntools: {allow: [a], deny: []}\nsandbox: {user: 1}\n",
		"- a\n", "title: [x]\n", "models: {chta: {}}\n", "a: &x [1]\nb: *x\n", "title: !!binary aGk=\n", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		_, err := parseSpec("fuzz/agent.yaml", []byte(src))
		if err != nil && (!errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), "fuzz/agent.yaml")) {
			t.Errorf("error %v does not wrap ErrInvalidSpec with the file name", err)
		}
	})
}
