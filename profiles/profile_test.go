package profiles

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAgentZeroStyleProfile loads testdata/reviewer, a profile folder laid out like Agent Zero's
// agents/<name>/ (agent.yaml, prompts/*.md overriding defaults, includes of base files the
// profile does not have, a VariablesPlugin .py), and renders the system prompt through it.
func TestAgentZeroStyleProfile(t *testing.T) {
	t.Parallel()
	p := New(os.DirFS("testdata/reviewer/prompts"))
	vars := standardVars()
	sys := systemPrompt(t, p, vars)

	tips, err := New().Render("agent.system.response_tool_tips.md", nil)
	if err != nil {
		t.Fatal(err)
	}
	additions, err := New().Render("agent.system.main.communication_additions.md", nil)
	if err != nil {
		t.Fatal(err)
	}
	defaultSolving, err := New().Render("agent.system.main.solving.md", vars)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		want string
		in   bool
	}{
		{"role is overridden", "code reviewer agent named A0", true},
		{"default role is gone", "autonomous agent of the Zero framework", false},
		{"specifics come from the profile", "flags missing tests and unchecked errors", true},
		{"communication is overridden", "answer with one json object only", true},
		{"default communication is gone", "## Reply format", false},
		{"communication includes the default additions", additions, true},
		{"response tool is overridden", "list findings by severity", true},
		{"default response tool is gone", "Reporting the fix", false},
		{"response tool includes the default tips", tips, true},
		{"solving extends the default", defaultSolving + "\n7 before reporting", true},
		{"environment stays the default", "## Environment", true},
		{"other tools stay the default", "### code_execution_tool", true},
		{"the VariablesPlugin is ignored", "/never/used", false},
		{"the caller's workdir is used", "work inside /home/dev/project", true},
		{"no template left", "{{", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := strings.Contains(sys, tt.want); got != tt.in {
				t.Errorf("system prompt contains %q = %v, want %v\n%s", tt.want, got, tt.in, sys)
			}
		})
	}

	wantTools := []string{"agent.system.tool.behaviour.md", "agent.system.tool.call_sub.md", "agent.system.tool.code_exe.md", "agent.system.tool.document_query.md", "agent.system.tool.input.md", "agent.system.tool.mcp_resources.md", "agent.system.tool.memory.md", "agent.system.tool.response.md", "agent.system.tool.search_engine.md", "agent.system.tool.skills.md", "agent.system.tool.text_editor.md", "agent.system.tool.todo.md", "agent.system.tool.vision_load.md"}
	if diff := cmp.Diff(wantTools, p.Names("agent.system.tool.*.md")); diff != "" {
		t.Errorf("tool prompts (-want +got):\n%s", diff)
	}
}

// TestProfileOrder checks that the profile's files win over the defaults while files it does
// not have fall through, for the exact names the engine renders.
func TestProfileOrder(t *testing.T) {
	t.Parallel()
	p := New(os.DirFS("testdata/reviewer/prompts"))
	got, err := p.Render("agent.system.tool.response.md", standardVars())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "### response:\nfinal review to the superior\n") {
		t.Errorf("response tool prompt is not the profile's:\n%s", got)
	}
	if !strings.HasSuffix(got, "give its path instead of pasting it\n") {
		t.Errorf("response tool prompt does not end with the included default tips:\n%s", got)
	}
}
