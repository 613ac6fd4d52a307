package profiles

import (
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"regexp"
	"strings"
	"testing"
)

// standardVars are the vars the engine passes to every render.
func standardVars() map[string]any {
	return map[string]any{
		"agent_name":   "A0",
		"agent_number": 0,
		"profile":      "default",
		"workdir_path": "/home/dev/project",
		"sandbox":      "docker",
		"os":           "linux",
		"date_time":    "2026-05-04 10:30:00 +02:00",
	}
}

// fileVars are the extra vars each default file is rendered with by its caller.
var fileVars = map[string]map[string]any{
	"agent.system.tools.md":         {"tools": "### response\nanswer\n"},
	"fw.user_message.md":            {"message": "fix the \"build\"\nplease"},
	"fw.intervention.md":            {"message": "stop, use \"make\"\ninstead"},
	"fw.warning.md":                 {"message": "careful: \"x\"\n"},
	"fw.msg_critical_error.md":      {"error_message": "connection reset"},
	"fw.tool_not_found.md":          {"tool_name": "shell", "tools": []string{"response", "code_execution_tool", "input"}},
	"agent.context.extras.md":       {"extras": `{"agent_info": "A0"}`},
	"fw.code.info.md":               {"info": "process still running"},
	"fw.code.running.md":            {"session": 2},
	"fw.code.intervened.md":         {"session": 2},
	"fw.code.not_started.md":        {"reason": "interrupted by a user message"},
	"fw.code.pause_dialog.md":       {"timeout": 5},
	"fw.code.no_out_time.md":        {"timeout": 30},
	"fw.code.pause_time.md":         {"timeout": 15},
	"fw.code.max_time.md":           {"timeout": 180},
	"fw.code.runtime_wrong.md":      {"runtime": "ru\"by\n"},
	"fw.code.exit_code.md":          {"exit_code": 2},
	"agent.system.tool.call_sub.md": {"agent_profiles": "- developer: Use for programming work.\n- researcher: Use for research.\n"},
	"fw.topic_summary.msg.md":       {"content": "user: fix the build\nai: done"},
	"fw.msg_summary.md":             {"summary": "the user asked for \"x\"\nand got it"},
	"fw.msg_truncated.md":           {"length": 1200},
	"agent.system.memories.md":      {"memories": "The deploy port is 8443."},
	"agent.system.solutions.md":     {"solutions": "# Problem\nx\n# Solution\ny"},
	"fw.memories_deleted.md":        {"memory_count": 2},
	"fw.memories_not_found.md":      {"query": "deploy port"},
	"fw.memory_saved.md":            {"memory_id": "aB3dE5gH7j"},
	"memory.consolidation.msg.md": {"area": "fragments", "current_timestamp": "2026-12-01 10:00:00", "new_memory": "x",
		"new_memory_metadata": "{}", "similar_memories": "ID: a\nContent: y"},
	"memory.keyword_extraction.msg.md": {"memory_content": "x"},
	"memory.memories_filter.msg.md":    {"memories": "0: x", "history": "user: hi", "message": "hi"},
	"memory.memories_query.msg.md":     {"history": "user: hi", "message": "hi"},
	"memory.solutions_query.sys.md":    {"history": "user: hi"},
	"agent.system.skills.md":           {"skills": "- release: how to cut a release"},
	"agent.system.skills.loaded.md":    {"skills": "# release\nRun scripts/release."},
	"agent.system.behaviour.md":        {"rules": "- answer briefly"},
	"agent.system.mcp_tools.md":        {"tools": "### github.search_issues:\nSearch issues."},
	"agent.system.secrets.md":          {"secrets": "# the deploy token\nAPI_TOKEN", "vars": ""},
	"behaviour.merge.msg.md":           {"current_rules": "- answer briefly", "adjustments": "use tabs"},
	"agent.system.projects.active.md": {"project_path": "/work/app", "project_name": "app", "project_description": "",
		"project_instructions": "### AGENTS.md\nRun make test before you commit."},
}

func varsFor(name string) map[string]any {
	v := standardVars()
	maps.Copy(v, fileVars[name])
	return v
}

func defaultNames(t *testing.T) []string {
	t.Helper()
	names, err := fs.Glob(DefaultFS(), "*")
	if err != nil || len(names) == 0 {
		t.Fatalf("listing the default set: %v %v", names, err)
	}
	return names
}

func TestDefaultSetRenders(t *testing.T) {
	t.Parallel()
	p := New()
	for _, name := range defaultNames(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, sandbox := range []string{"docker", "local"} {
				for _, num := range []int{0, 1} {
					vars := varsFor(name)
					vars["sandbox"], vars["agent_number"] = sandbox, num
					got, err := p.Render(name, vars)
					if err != nil {
						t.Fatalf("Render: %v", err)
					}
					if strings.Contains(got, "{{") || strings.Contains(got, "}}") {
						t.Errorf("leftover template braces (sandbox %s, agent %d):\n%s", sandbox, num, got)
					}
				}
			}
		})
	}
}

// TestDefaultJSONTemplates decodes the framework messages the engine puts into history.
func TestDefaultJSONTemplates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		key  string // a key that must hold the message var unchanged
		msg  string
	}{
		{"fw.user_message.md", "user", "fix the \"build\"\nplease"},
		{"fw.intervention.md", "user_intervention", "stop, use \"make\"\ninstead"},
		{"fw.warning.md", "system_warning", "careful: \"x\"\n"},
		{"fw.code.runtime_wrong.md", "system_warning", ""},
	}
	p := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := p.Render(tt.name, varsFor(tt.name))
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]string
			if err := json.Unmarshal([]byte(got), &m); err != nil {
				t.Fatalf("not a JSON object of strings: %v\n%s", err, got)
			}
			if tt.msg != "" && m[tt.key] != tt.msg {
				t.Errorf("%s = %q, want %q", tt.key, m[tt.key], tt.msg)
			}
			if tt.msg == "" && !strings.Contains(m[tt.key], "ru\"by\n") {
				t.Errorf("%s = %q, want the runtime quoted inside", tt.key, m[tt.key])
			}
		})
	}
	if got, _ := p.Render("fw.intervention.md", varsFor("fw.intervention.md")); !strings.Contains(got, `"system_message"`) {
		t.Errorf("fw.intervention.md has no system_message:\n%s", got)
	}
}

// systemPrompt renders what the engine sends as the system prompt: the manual and the tools.
func systemPrompt(t testing.TB, p *Prompts, vars map[string]any) string {
	t.Helper()
	mainPart, err := p.Render("agent.system.main.md", vars)
	if err != nil {
		t.Fatal(err)
	}
	// The behaviour rules lead it (the defaults, until the agent adjusts them).
	rules, err := p.Render("agent.system.behaviour_default.md", vars)
	if err != nil {
		t.Fatal(err)
	}
	bv := maps.Clone(vars)
	bv["rules"] = rules
	behaviour, err := p.Render("agent.system.behaviour.md", bv)
	if err != nil {
		t.Fatal(err)
	}
	mainPart = behaviour + "\n\n" + mainPart
	var tools strings.Builder
	for _, name := range p.Names("agent.system.tool.*.md") {
		if name == "agent.system.tool.skills.md" || name == "agent.system.tool.search_engine.md" || name == "agent.system.tool.mcp_resources.md" {
			continue // offered only when there are skills, a search endpoint, MCP servers
		}
		s, err := p.Render(name, vars)
		if err != nil {
			t.Fatal(err)
		}
		tools.WriteString(s)
		tools.WriteString("\n")
	}
	tv := maps.Clone(vars)
	tv["tools"] = tools.String()
	toolsPart, err := p.Render("agent.system.tools.md", tv)
	if err != nil {
		t.Fatal(err)
	}
	return mainPart + "\n\n" + toolsPart
}

func TestDefaultSystemPromptBudget(t *testing.T) {
	t.Parallel()
	for _, sandbox := range []string{"docker", "local"} {
		vars := standardVars()
		vars["sandbox"] = sandbox
		sys := systemPrompt(t, New(), vars)
		// Four bytes a token is the usual rough estimate for English text and JSON.
		if tokens := len(sys) / 4; tokens > 3450 {
			t.Errorf("sandbox %s: default system prompt is about %d tokens, budget 3450", sandbox, tokens)
		}
		for _, want := range []string{
			"## Role", "## Environment", "## Reply format", "## Turns and messages", "## Solving tasks", "## Tips",
			"## Tools", "### response", "### code_execution_tool", "### input", "### call_subordinate", "### text_editor",
			`"tool_name"`, `"tool_args"`, `"thoughts"`, `"headline"`, "closing brace", "/home/dev/project",
		} {
			if !strings.Contains(sys, want) {
				t.Errorf("sandbox %s: system prompt lacks %q", sandbox, want)
			}
		}
	}
}

var fencedJSON = regexp.MustCompile("(?s)~~~json\n(.*?)\n~~~")

// TestDefaultExamplesAreStrictJSON keeps every reply example in the default prompts valid JSON in
// the reply format, since the model copies their shape.
func TestDefaultExamplesAreStrictJSON(t *testing.T) {
	t.Parallel()
	p := New()
	sys := systemPrompt(t, p, standardVars())
	examples := fencedJSON.FindAllStringSubmatch(sys, -1)
	if len(examples) < 7 {
		t.Fatalf("found %d examples, want one per runtime and tool", len(examples))
	}
	for _, ex := range examples {
		var reply struct {
			Thoughts []string       `json:"thoughts"`
			Headline string         `json:"headline"`
			ToolName string         `json:"tool_name"`
			ToolArgs map[string]any `json:"tool_args"`
		}
		dec := json.NewDecoder(strings.NewReader(ex[1]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&reply); err != nil {
			t.Errorf("example is not a strict reply object: %v\n%s", err, ex[1])
			continue
		}
		if len(reply.Thoughts) == 0 || reply.Headline == "" || reply.ToolName == "" || reply.ToolArgs == nil {
			t.Errorf("example lacks a field:\n%s", ex[1])
		}
	}
}

// TestDocListsEveryDefaultFile keeps the package documentation's file list complete.
func TestDocListsEveryDefaultFile(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range defaultNames(t) {
		if !strings.Contains(string(doc), name) {
			t.Errorf("doc.go does not list %s", name)
		}
	}
}
