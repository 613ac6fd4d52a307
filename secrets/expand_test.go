package secrets

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func loadString(t *testing.T, file string) *Set {
	t.Helper()
	s, errs := Load(writeFile(t, "secrets.env", file))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return s
}

func TestExpand(t *testing.T) {
	t.Parallel()
	s := loadString(t, "API_KEY=sk-123\nPASS='p$\"w)§'\nNESTED='§§secret(API_KEY)'\nPIN=42\n").With("ZERO_KEY", "sk-zero")
	tests := []struct {
		name    string
		in      any
		want    any
		missing []string
	}{
		{"plain string", "curl -H 'Authorization: Bearer §§secret(API_KEY)'", "curl -H 'Authorization: Bearer sk-123'", nil},
		{"lower-case alias", "§§secret(api_key)", "sk-123", nil},
		{"several", "§§secret(API_KEY):§§secret(PASS)§§secret(API_KEY)", `sk-123:p$"w)§sk-123`, nil},
		{"short value still substituted", "pin §§secret(PIN)", "pin 42", nil},
		{"a value holding an alias is not expanded again", "§§secret(NESTED)", "§§secret(API_KEY)", nil},
		{"missing", "§§secret(NOPE) §§secret(API_KEY) §§secret(nope) §§secret(ALSO_NOT)",
			"§§secret(NOPE) sk-123 §§secret(nope) §§secret(ALSO_NOT)", []string{"ALSO_NOT", "NOPE"}},
		{"Zero's own keys are not the agent's", "§§secret(ZERO_KEY)", "§§secret(ZERO_KEY)", []string{"ZERO_KEY"}},
		{"not aliases", "§§secret() §§secret(1A) §§secret(A-B) §§secret(API_KEY §secret(API_KEY) §§secret (API_KEY)",
			"§§secret() §§secret(1A) §§secret(A-B) §§secret(API_KEY §secret(API_KEY) §§secret (API_KEY)", nil},
		{"alias after a false start", "§§§secret(API_KEY) §§secret(§§secret(API_KEY))", "§sk-123 §§secret(sk-123)", nil},
		{"nested values", map[string]any{
			"command": "echo §§secret(API_KEY)",
			"env":     map[string]any{"§§secret(API_KEY)": "§§secret(PASS)", "n": 3.5, "ok": true, "none": nil},
			"argv":    []any{"a", "§§secret(API_KEY)", []any{"§§secret(MISSING)"}, json.Number("7")},
			"strs":    []string{"§§secret(API_KEY)"},
			"smap":    map[string]string{"k": "§§secret(PIN)"},
			"raw":     json.RawMessage(`"§§secret(API_KEY)"`),
		}, map[string]any{
			"command": "echo sk-123",
			"env":     map[string]any{"§§secret(API_KEY)": `p$"w)§`, "n": 3.5, "ok": true, "none": nil},
			"argv":    []any{"a", "sk-123", []any{"§§secret(MISSING)"}, json.Number("7")},
			"strs":    []string{"sk-123"},
			"smap":    map[string]string{"k": "42"},
			"raw":     json.RawMessage(`"§§secret(API_KEY)"`),
		}, []string{"MISSING"}},
		{"scalar", 12.0, 12.0, nil},
		{"nil", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, missing := s.Expand(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Expand (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.missing, missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpandDoesNotMutate(t *testing.T) {
	t.Parallel()
	s := loadString(t, "A=alpha-value\n")
	in := map[string]any{
		"a":    "§§secret(A)",
		"list": []any{"§§secret(A)", map[string]any{"b": "§§secret(A)"}},
		"strs": []string{"§§secret(A)"},
	}
	before := map[string]any{
		"a":    "§§secret(A)",
		"list": []any{"§§secret(A)", map[string]any{"b": "§§secret(A)"}},
		"strs": []string{"§§secret(A)"},
	}
	out, _ := s.Expand(in)
	if diff := cmp.Diff(before, in); diff != "" {
		t.Fatalf("Expand changed its input (-before +after):\n%s", diff)
	}
	// The copy is deep: changing it leaves the input alone.
	m := out.(map[string]any)
	m["a"] = "x"
	m["list"].([]any)[0] = "x"
	m["list"].([]any)[1].(map[string]any)["b"] = "x"
	m["strs"].([]string)[0] = "x"
	if diff := cmp.Diff(before, in); diff != "" {
		t.Fatalf("the copy shares memory with the input (-before +after):\n%s", diff)
	}
	// Nothing to replace: still a copy.
	in2 := map[string]any{"k": []any{"v"}}
	out2, _ := s.Expand(in2)
	out2.(map[string]any)["k"].([]any)[0] = "changed"
	if in2["k"].([]any)[0] != "v" {
		t.Error("Expand without aliases returned shared memory")
	}
}

func TestExpandNilSet(t *testing.T) {
	t.Parallel()
	var s *Set
	got, missing := s.Expand("§§secret(A) and §§secret(b)")
	if got != "§§secret(A) and §§secret(b)" || !cmp.Equal(missing, []string{"A", "B"}) {
		t.Errorf("Expand on nil = %q, %v", got, missing)
	}
	if s.Names() != nil || s.Mask("x") != "x" || s.Prompt() != "" {
		t.Error("nil Set is not empty")
	}
}
