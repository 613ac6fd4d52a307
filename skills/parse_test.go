package skills

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       string
		want     Skill
		wantBody string
		wantErr  error
	}{
		{"plain", "---\nname: pdf\ndescription: Work with PDF files.\n---\n# PDF\n\nSteps.\n",
			Skill{Name: "pdf", Description: "Work with PDF files."}, "# PDF\n\nSteps.", nil},
		{"crlf", "---\r\nname: pdf\r\ndescription: d\r\n---\r\nline one\r\nline two\r\n",
			Skill{Name: "pdf", Description: "d"}, "line one\nline two", nil},
		{"bom", "\ufeff---\nname: pdf\ndescription: d\n---\nbody",
			Skill{Name: "pdf", Description: "d"}, "body", nil},
		{"bom and crlf", "\ufeff---\r\nname: pdf\r\ndescription: d\r\n---\r\nbody",
			Skill{Name: "pdf", Description: "d"}, "body", nil},
		{"blank lines before the fence", "\n\n  \n---\nname: pdf\ndescription: d\n---\n",
			Skill{Name: "pdf", Description: "d"}, "", nil},
		{"fence with trailing space", "--- \nname: pdf\ndescription: d\n---  \nbody",
			Skill{Name: "pdf", Description: "d"}, "body", nil},
		{"tags list, version kept as written", "---\nname: a.b_c-1\ndescription: d\ntags: [x, ' y ', '']\nversion: 1.0\n---\n",
			Skill{Name: "a.b_c-1", Description: "d", Tags: []string{"x", "y"}, Version: "1.0"}, "", nil},
		{"tags comma string", "---\nname: a\ndescription: d\ntags: 'x, y z'\n---\n",
			Skill{Name: "a", Description: "d", Tags: []string{"x", "y z"}}, "", nil},
		{"tags space string", "---\nname: a\ndescription: d\ntags: x y\n---\n",
			Skill{Name: "a", Description: "d", Tags: []string{"x", "y"}}, "", nil},
		{"unknown keys ignored", "---\nname: a\ndescription: >\n  folded\n  text\nlicense: MIT\nallowed-tools: [Bash]\nmetadata: {author: me, nested: {k: [1, 2]}}\n---\n",
			Skill{Name: "a", Description: "folded text"}, "", nil},
		{"number as name", "---\nname: 42\ndescription: d\n---\n", Skill{Name: "42", Description: "d"}, "", nil},
		{"invalid UTF-8 replaced", "---\nname: a\ndescription: d\n---\nbad \xff byte", Skill{Name: "a", Description: "d"}, "bad \uFFFD byte", nil},
		{"a later --- stays in the body", "---\nname: a\ndescription: d\n---\none\n---\ntwo", Skill{Name: "a", Description: "d"}, "one\n---\ntwo", nil},

		{"no front matter", "# Just markdown\nname: a\n", Skill{}, "", ErrNoFrontMatter},
		{"empty file", "", Skill{}, "", ErrNoFrontMatter},
		{"text before the fence", "hello\n---\nname: a\ndescription: d\n---\n", Skill{}, "", ErrNoFrontMatter},
		{"unterminated", "---\nname: a\ndescription: d\n", Skill{}, "", ErrFrontMatter},
		{"empty front matter", "---\n---\nbody", Skill{}, "", ErrNoName},
		{"only comments", "---\n# nothing\n---\n", Skill{}, "", ErrNoName},
		{"not a mapping", "---\n- name: a\n---\n", Skill{}, "", ErrFrontMatter},
		{"scalar front matter", "---\njust text\n---\n", Skill{}, "", ErrFrontMatter},
		{"bad yaml", "---\nname: [a\ndescription: d\n---\n", Skill{}, "", ErrFrontMatter},
		{"tab indentation", "---\nname: a\n\tdescription: d\n---\n", Skill{}, "", ErrFrontMatter},
		{"duplicate key", "---\nname: a\nname: b\ndescription: d\n---\n", Skill{}, "", ErrFrontMatter},
		{"name is a list", "---\nname: [a, b]\ndescription: d\n---\n", Skill{}, "", ErrFrontMatter},
		{"tags of maps", "---\nname: a\ndescription: d\ntags: [{x: 1}]\n---\n", Skill{}, "", ErrFrontMatter},
		{"missing name", "---\ndescription: d\n---\n", Skill{}, "", ErrNoName},
		{"blank name", "---\nname: '  '\ndescription: d\n---\n", Skill{}, "", ErrNoName},
		{"missing description", "---\nname: a\n---\n", Skill{}, "", ErrNoDescription},
		{"upper-case name", "---\nname: PDF\ndescription: d\n---\n", Skill{}, "", ErrName},
		{"name with a space", "---\nname: pdf tools\ndescription: d\n---\n", Skill{}, "", ErrName},
		{"name with a slash", "---\nname: ../etc\ndescription: d\n---\n", Skill{}, "", ErrName},
		{"name starting with a hyphen", "---\nname: -a\ndescription: d\n---\n", Skill{}, "", ErrName},
		{"name starting with a dot", "---\nname: .a\ndescription: d\n---\n", Skill{}, "", ErrName},
		{"name of 65", "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n", Skill{}, "", ErrName},
		{"description too long", "---\nname: a\ndescription: " + strings.Repeat("é", 1025) + "\n---\n", Skill{}, "", ErrDescription},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, body, err := parse([]byte(tt.in))
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("parse err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("skill (-want +got):\n%s", diff)
			}
			if body != tt.wantBody {
				t.Errorf("body = %q, want %q", body, tt.wantBody)
			}
		})
	}
	// The longest valid name and description pass.
	long := "---\nname: " + strings.Repeat("a", 64) + "\ndescription: " + strings.Repeat("é", 1024) + "\n---\n"
	if _, _, err := parse([]byte(long)); err != nil {
		t.Errorf("64-byte name, 1024-character description: %v", err)
	}
}

// billionLaughs defines nine levels of aliases, each nine times the last: expanded, 9^9 strings.
const billionLaughs = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`

// TestParseAliasBomb checks that hostile YAML is refused or never expanded: each case must finish
// at once, without the memory an expansion would take.
func TestParseAliasBomb(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		extra   string
		wantErr error
	}{
		{"into tags", "name: a\ndescription: d\ntags: *i\n", ErrFrontMatter},
		{"into the description", "name: a\ndescription: *i\n", ErrFrontMatter},
		{"into the name", "name: *i\ndescription: d\n", ErrFrontMatter},
		{"into an ignored key", "name: a\ndescription: d\nmetadata: {k: *i}\n", nil},
		{"anchors alone", "name: a\ndescription: d\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			_, _, err := parse([]byte("---\n" + billionLaughs + tt.extra + "---\nbody"))
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Errorf("parse err = %v, want %v", err, tt.wantErr)
			}
			if d := time.Since(start); d > time.Minute { // milliseconds when refused; an expansion never ends
				t.Errorf("parse took %v", d)
			}
		})
	}
}

func TestLoadedText(t *testing.T) {
	t.Parallel()
	l := Loaded{
		Skill: Skill{Name: "pdf", Description: "Work with PDFs.", Tags: []string{"docs", "pdf"}, Version: "1.2", Dir: "/skills/pdf"},
		Body:  "# PDF\nRun scripts/fill.py.",
		Files: []string{"reference.md", "scripts/fill.py"},
		More:  true,
	}
	want := "Skill: pdf\nPath: /skills/pdf\nVersion: 1.2\nTags: docs, pdf\n\nDescription:\nWork with PDFs.\n\n" +
		"Content (SKILL.md body):\n# PDF\nRun scripts/fill.py.\n\n" +
		"Files (relative to Path; read or run them with code_execution_tool):\n- reference.md\n- scripts/fill.py\n- ... (more files not listed)"
	if diff := cmp.Diff(want, l.Text()); diff != "" {
		t.Errorf("Text (-want +got):\n%s", diff)
	}

	empty := Loaded{Skill: Skill{Name: "x", Dir: "/s/x"}}
	if got := empty.Text(); !strings.Contains(got, "Content (SKILL.md body):\n(empty)") || !strings.HasSuffix(got, "No additional files found.") {
		t.Errorf("empty skill text:\n%s", got)
	}

	big := Loaded{Skill: Skill{Name: "big", Dir: "/s/big"}, Body: strings.Repeat("line of text\n", 2*MaxText/13)}
	got := big.Text()
	if len(got) > MaxText+1024 {
		t.Errorf("text of a big body is %d bytes, want about %d", len(got), MaxText)
	}
	if !strings.Contains(got, "more bytes of SKILL.md not shown: read the rest from /s/big/SKILL.md") {
		t.Errorf("no note on the cut body:\n%s", got[len(got)-300:])
	}
}

// TestParseNull: the front matter reads null as config.yaml and agent.yaml
// do (the shared walker): every spelling of it is as if the key were
// absent, the !!null tag's long form included; a !!null tag on a value is
// malformed.
func TestParseNull(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"", " ~", " null", " NULL", " !!null", " !<tag:yaml.org,2002:null> ''"} {
		if _, _, err := parse([]byte("---\nname:" + v + "\ndescription: d\n---\n")); !errors.Is(err, ErrNoName) {
			t.Errorf("name:%s: %v, want ErrNoName", v, err)
		}
		if _, _, err := parse([]byte("---\nname: a\ndescription:" + v + "\n---\n")); !errors.Is(err, ErrNoDescription) {
			t.Errorf("description:%s: %v, want ErrNoDescription", v, err)
		}
		s, _, err := parse([]byte("---\nname: a\ndescription: d\nversion:" + v + "\ntags:\n  - x\n  -" + v + "\n---\n"))
		if err != nil || s.Version != "" || !slices.Equal(s.Tags, []string{"x"}) {
			t.Errorf("version and a tag:%s: %+v, %v", v, s, err)
		}
	}
	if _, _, err := parse([]byte("---\nname: !!null a\ndescription: d\n---\n")); !errors.Is(err, ErrFrontMatter) {
		t.Errorf("!!null a: %v, want ErrFrontMatter", err)
	}
}

// TestParseErrorLines: a problem of the front matter names the line of
// SKILL.md and the key, as config.yaml's problems do.
func TestParseErrorLines(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		"\n---\nname: a\nname: b\ndescription: d\n---\n":       "malformed front matter: line 4: name: duplicate key (first set on line 3)",
		"---\nname: a\ndescription: [d]\n---\n":                "malformed front matter: line 3: description: must be a single value, got a list",
		"---\nname: a\ndescription: d\ntags: [{x: 1}]\n---\n":  "malformed front matter: line 4: tags[0]: must be a single value, got a mapping",
		"---\nname: a\ndescription: d\nmeta:\n  k: [1,\n---\n": "malformed front matter: line 5: meta.k: malformed YAML",
		"---\n- a\n---\n": "malformed front matter: line 2: must be a mapping of keys to values, got a list",
		"---\nbase: &b {name: a}\n<<: *b\ndescription: d\n---\nx": "",
	} {
		_, _, err := parse([]byte(src))
		if want == "" {
			if err != nil {
				t.Errorf("%q: %v", src, err)
			}
			continue
		}
		if !errors.Is(err, ErrFrontMatter) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}
