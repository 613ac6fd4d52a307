package yamlwalk

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// entries walks a document's top mapping and lists "key=value" for each
// entry, "key=<null>" for a null one.
func entries(w *Walker, src string) []string {
	root := w.Parse([]byte(src))
	if root == nil {
		return nil
	}
	var out []string
	w.Mapping(root, "", func(k, v *yaml.Node, key string) {
		if IsNull(v) {
			out = append(out, key+"=<null>")
			return
		}
		out = append(out, key+"="+Describe(v))
	})
	return out
}

// TestNull is the one meaning of null: every spelling YAML resolves to
// !!null, the tag's short and long forms included, and nothing quoted.
func TestNull(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]bool{
		"a:":                                true,
		"a: ~":                              true,
		"a: null":                           true,
		"a: Null":                           true,
		"a: NULL":                           true,
		"a: !!null":                         true,
		"a: !!null ~":                       true,
		"a: !!null ''":                      true,
		"a: !<tag:yaml.org,2002:null> null": true,
		"a: &n ~\nb: *n":                    true,
		"a: ''":                             false,
		`a: ""`:                             false,
		"a: 'null'":                         false,
		"a: !!str null":                     false,
		"a: !!str":                          false,
		"a: nul":                            false,
		"a: 0":                              false,
		"a: []":                             false,
		"a: {}":                             false,
	} {
		var w Walker
		root := w.Parse([]byte(src))
		if len(w.Errs) > 0 || root == nil {
			t.Errorf("%q: %v", src, w.Errs)
			continue
		}
		v := root.Content[len(root.Content)-1]
		if got := IsNull(v); got != want {
			t.Errorf("IsNull(%q) = %v, want %v", src, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      []string // entries
		errs      []string
	}{
		{"empty", "", nil, nil},
		{"comments", "# nothing\n", nil, nil},
		{"null document", "~\n", nil, nil},
		{"long null document", "--- !!null\n", nil, nil},
		{"explicit document", "---\n", nil, nil},
		{"entries", "a: 1\nb: x\nc:\n", []string{"a=1", `b="x"`, "c=<null>"}, nil},
		{"quoted", "a: 'x'\nb: \"\"\n", []string{`a="x"`, `b=""`}, nil},
		{"alias", "a: &x [1]\nb: *x\n", []string{"a=a list", "b=a list"}, nil},
		{"merge", "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n", []string{"base=a mapping", "m=a mapping"}, nil},
		{"duplicate", "a: 1\nb: 2\na: 3\n", []string{"a=1", "b=2"}, []string{"f.yaml:3: a: duplicate key (first set on line 1)"}},
		{"list key", "[a]: 1\n", nil, []string{"f.yaml:1: keys must be plain names, got a list"}},
		{"second document", "a: 1\n---\nb: 2\n", nil, []string{"f.yaml:2: holds a second YAML document (after ---); put everything in one"}},
		{"malformed", "a:\n  b: [1,\n", nil, []string{"f.yaml:2: a.b: malformed YAML: did not find expected node content"}},
		{"unknown anchor", "a: 1\nb: *nope\n", nil, []string{"f.yaml:2: b: malformed YAML: unknown anchor 'nope' referenced"}},
		{"tagged non-null", "a:\n  b: !!null x\n", nil, []string{`f.yaml:2: !!null tags a value that is not null ("x"); write ~ or nothing for null, or drop the tag`}},
		{"merge of a scalar", "a:\n  <<: 1\n", []string{"a=a mapping"}, []string{"f.yaml:2: a: << must merge a mapping or a list of mappings, got 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := &Walker{File: "f.yaml"}
			got := entries(w, tt.src)
			if tt.name == "merge of a scalar" { // the nested mapping is walked by the caller
				root := w.Parse([]byte(tt.src))
				w.Errs = nil
				w.Mapping(root.Content[1], "a", func(*yaml.Node, *yaml.Node, string) {})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			var errs []string
			for _, e := range w.Errs {
				errs = append(errs, e.Error())
			}
			if diff := cmp.Diff(tt.errs, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMergeOrder: explicit entries win over merged ones, earlier merged
// mappings over later ones.
func TestMergeOrder(t *testing.T) {
	t.Parallel()
	src := "a: &a {x: a, y: a}\nb: &b {x: b, y: b, z: b}\nm:\n  <<: [*a, *b]\n  y: m\n"
	var w Walker
	root := w.Parse([]byte(src))
	var got []string
	w.Mapping(Resolve(root.Content[5]), "m", func(k, v *yaml.Node, key string) {
		got = append(got, key+"="+v.Value)
	})
	if diff := cmp.Diff([]string{"m.y=m", "m.x=a", "m.z=b"}, got); diff != "" || len(w.Errs) > 0 {
		t.Errorf("merged (-want +got):\n%s%v", diff, w.Errs)
	}
}

// TestOffset: a document that starts below line 1 of its file (front
// matter) is reported at the file's lines.
func TestOffset(t *testing.T) {
	t.Parallel()
	w := &Walker{Offset: 1}
	entries(w, "a: 1\na: 2\n")
	if len(w.Errs) != 1 || w.Errs[0].Error() != "line 3: a: duplicate key (first set on line 2)" {
		t.Errorf("errors = %v", w.Errs)
	}
	w = &Walker{Offset: 1}
	entries(w, "a: [\n")
	if len(w.Errs) != 1 || !strings.HasPrefix(w.Errs[0].Error(), "line 2: a: malformed YAML") {
		t.Errorf("errors = %v", w.Errs)
	}
}

func TestErrorFormat(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		e    Error
		want string
	}{
		{Error{File: "f", Line: 2, Key: "a.b", Msg: "m"}, "f:2: a.b: m"},
		{Error{File: "f", Key: "a", Msg: "m"}, "f: a: m"},
		{Error{File: "f", Line: 2, Msg: "m"}, "f:2: m"},
		{Error{Line: 2, Key: "a", Msg: "m"}, "line 2: a: m"},
		{Error{Msg: "m"}, "m"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.e, got, tt.want)
		}
	}
}

func TestKeyPathAt(t *testing.T) {
	t.Parallel()
	src := "a:\n  b:\n    c: 1\n  d: 2\n# comment\ne:\n"
	for line, want := range map[int]string{0: "", 1: "a", 2: "a.b", 3: "a.b.c", 4: "a.d", 5: "a.d", 6: "e", 99: "e"} {
		if got := KeyPathAt([]byte(src), line); got != want {
			t.Errorf("KeyPathAt(line %d) = %q, want %q", line, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"a: 1\n", "a: &x {b: 1}\nm:\n  <<: *x\n", "a: !!null x\n", "---\n---\n", "a: *nope\n", "[a]: 1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w := &Walker{File: "f"}
		root := w.Parse([]byte(s))
		if root != nil && root.Kind == yaml.MappingNode {
			w.Mapping(root, "", func(*yaml.Node, *yaml.Node, string) {})
		}
		for _, e := range w.Errs {
			if !strings.HasPrefix(e.Error(), "f") {
				t.Fatalf("Parse(%q): %v does not name the file", s, e)
			}
		}
	})
}
