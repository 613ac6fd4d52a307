package profiles

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zeroagent/zero/yamlwalk"
)

// TestSpecNull: agent.yaml reads null as config.yaml does (the shared
// walker): every spelling of it leaves a key unset, the !!null tag's long
// form included, while a quoted "" sets it to "".
func TestSpecNull(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"", " ~", " null", " Null", " !!null", " !<tag:yaml.org,2002:null> ''"} {
		raw, err := parseSpec("agent.yaml", []byte("title:"+v+"\nmodels:\n  chat:\n    model:"+v+"\ntools:"+v+"\n"))
		if err != nil {
			t.Errorf("title:%s: %v", v, err)
			continue
		}
		if raw.Title != nil || raw.Models["chat"].Model != nil || raw.Tools != nil {
			t.Errorf("title:%s set %+v", v, raw)
		}
	}
	raw, err := parseSpec("agent.yaml", []byte("title: ''\n"))
	if err != nil || raw.Title == nil || *raw.Title != "" {
		t.Errorf(`title: '' = %v, %v; want set to ""`, raw.Title, err)
	}
}

// TestSpecWalkerProblems: what the walker finds is an ErrInvalidSpec with
// file, line and key, as config.yaml's problems are.
func TestSpecWalkerProblems(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		"title: a\ntitle: b\n":                   "agent.yaml:2: title: duplicate key (first set on line 1)",
		"title: !!null x\n":                      `agent.yaml:1: !!null tags a value that is not null ("x")`,
		"tools:\n  allow: [response, ~]\n":       "agent.yaml:2: tools.allow[1]: must be a single value, got null",
		"title: a\n---\ntitle: b\n":              "agent.yaml:2: holds a second YAML document",
		"models:\n  chat: {model: *nope}\n":      "agent.yaml:2: models.chat: malformed YAML: unknown anchor 'nope' referenced",
		"sandbox:\n  <<: {user: root, uid: 1}\n": "agent.yaml:2: sandbox.uid: unknown key (known keys: user, backend)",
	} {
		_, err := parseSpec("agent.yaml", []byte(src))
		var we *yamlwalk.Error
		if !errors.Is(err, ErrInvalidSpec) || !errors.As(err, &we) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want ErrInvalidSpec and a *yamlwalk.Error with %q", src, err, want)
		}
	}
}

// TestSpecMergeKeys: anchors and << merge keys work in agent.yaml as in
// config.yaml (they were "unknown key" here before the walker was shared).
func TestSpecMergeKeys(t *testing.T) {
	t.Parallel()
	src := "models:\n  chat: &local {base_url: 'http://localhost:11434/v1', model: qwen3}\n  utility:\n    <<: *local\n    model: qwen3:8b\n"
	raw, err := parseSpec("agent.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var s Spec
	s.merge(raw, false)
	want := map[string]ModelOverride{
		"chat":    {Model: "qwen3", BaseURL: "http://localhost:11434/v1"},
		"utility": {Model: "qwen3:8b", BaseURL: "http://localhost:11434/v1"},
	}
	if diff := cmp.Diff(want, s.Models); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}
