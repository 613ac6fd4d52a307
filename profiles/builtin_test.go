package profiles

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tiktoken-go/tokenizer"
)

// builtinMarkers are lines each built-in profile's system prompt must contain, and lines of the
// default set it must have replaced.
var builtinMarkers = map[string]struct{ has, hasNot []string }{
	"agent0": {
		has:    []string{"## Your part", "you are the top agent", "call_subordinate", "well-structured markdown", "never wrap the whole answer in a fence"},
		hasNot: []string{"the answer in markdown: results first"},
	},
	"default": {
		has: []string{"## Role", "the answer in markdown: results first"},
	},
	"developer": {
		has: []string{"## Specialisation: software developer", "read before you change", "a bug fix starts with a test"},
	},
	"researcher": {
		has: []string{"## Specialisation: researcher and analyst", "cite a source for every claim", "summary first"},
	},
	"hacker": {
		has:    []string{"## Specialisation: security tester", "authorised to test", "reconnaissance and enumeration", "Kali Linux"},
		hasNot: []string{"install missing tools with the package manager"},
	},
}

func TestBuiltinProfilesList(t *testing.T) {
	t.Parallel()
	infos, err := NewLoader("", "").List()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range infos {
		names = append(names, in.Name)
		if in.Title == "" || in.Description == "" || in.Context == "" {
			t.Errorf("%s: agent.yaml lacks title, description or context: %+v", in.Name, in)
		}
		// hacker counts on the Kali container; the others run anywhere.
		if want := map[bool]string{true: BackendDocker}[in.Name == "hacker"]; in.Backend != want {
			t.Errorf("%s: sandbox.backend = %q, want %q", in.Name, in.Backend, want)
		}
	}
	if diff := cmp.Diff([]string{"agent0", "default", "developer", "hacker", "researcher"}, names); diff != "" {
		t.Errorf("built-in profiles (-want +got):\n%s", diff)
	}
	entries, err := fs.ReadDir(BuiltinFS(), ".")
	if err != nil || len(entries) != len(builtinMarkers) {
		t.Errorf("BuiltinFS has %d folders (%v), want %d", len(entries), err, len(builtinMarkers))
	}
}

// TestBuiltinProfilesRender renders each built-in profile's system prompt the way the engine
// does, for both sandboxes and for the top agent and a subordinate.
func TestBuiltinProfilesRender(t *testing.T) {
	t.Parallel()
	l := NewLoader("", "")
	infos, err := l.List()
	if err != nil {
		t.Fatal(err)
	}
	profileList := FormatProfileList(infos)
	for name, m := range builtinMarkers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, err := l.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Diagnostics) != 0 {
				t.Errorf("diagnostics: %v", p.Diagnostics)
			}
			for _, sandbox := range []string{"docker", "local"} {
				for _, num := range []int{0, 1} {
					vars := standardVars()
					vars["profile"], vars["sandbox"], vars["agent_number"] = name, sandbox, num
					vars["agent_profiles"] = profileList
					sys := systemPrompt(t, p.Prompts, vars)
					if strings.Contains(sys, "{{") || strings.Contains(sys, "}}") {
						t.Errorf("sandbox %s, agent %d: leftover template braces:\n%s", sandbox, num, sys)
					}
					for _, want := range append([]string{"### call_subordinate", "### response", profileList, "closing brace"}, m.has...) {
						if want == "Kali Linux" && sandbox == "local" {
							want = "not in the Kali container"
						}
						if !strings.Contains(sys, want) {
							t.Errorf("sandbox %s, agent %d: system prompt lacks %q", sandbox, num, want)
						}
					}
					for _, unwanted := range m.hasNot {
						if strings.Contains(sys, unwanted) {
							t.Errorf("sandbox %s, agent %d: system prompt still has %q", sandbox, num, unwanted)
						}
					}
				}
			}
		})
	}
}

// TestBuiltinPromptBudget keeps every built-in system prompt, agent0's above all, under Zero's
// budget of 3,450 tokens (see the package doc): by the len/4 estimate and by the o200k_base tokenizer.
func TestBuiltinPromptBudget(t *testing.T) {
	t.Parallel()
	const budget = 3450
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLoader("", "")
	infos, err := l.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		p, err := l.Load(in.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, sandbox := range []string{"docker", "local"} {
			vars := standardVars()
			vars["profile"], vars["sandbox"] = in.Name, sandbox
			vars["agent_profiles"] = FormatProfileList(infos)
			sys := systemPrompt(t, p.Prompts, vars)
			tokens, err := codec.Count(sys)
			if err != nil {
				t.Fatal(err)
			}
			if len(sys)/4 >= budget || tokens >= budget {
				t.Errorf("%s (sandbox %s): system prompt is %d tokens (%d by len/4), budget %d", in.Name, sandbox, tokens, len(sys)/4, budget)
			}
			if in.Name == "agent0" && sandbox == "docker" {
				t.Logf("agent0 system prompt: %d bytes, %d tokens by len/4, %d o200k_base tokens", len(sys), len(sys)/4, tokens)
			}
		}
	}
}
