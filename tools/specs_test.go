package tools_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/zeroagent/zero/app"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/store"
)

// prompts is the default profile's prompt folder, where each tool's
// prompt file and its examples are.
var prompts = filepath.Join("..", "profiles", "prompts", "default")

// assembled is every tool an agent of the default profile is given, as app
// assembles them: the built-in tools (memory with a store, skills_tool with
// a skill, search_engine with an endpoint), a user's tool, and what the
// MCP servers' source adds (mcp_resources; the one configured server does
// not start).
func assembled(t *testing.T) map[string]loop.Tool {
	t.Helper()
	home := t.TempDir()
	conf := filepath.Join(home, "config", "zero")
	write := func(path, text string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(conf, "skills", "demo", "SKILL.md"), "---\nname: demo\ndescription: A demo skill.\n---\nsteps\n", 0o644)
	write(filepath.Join(conf, "tools", "mine"), "#!/bin/sh\ncat\n", 0o755)
	write(filepath.Join(conf, "prompts", "agent.system.tool.mine.md"), "### mine\na user's tool\n", 0o644)
	write(filepath.Join(conf, "config.yaml"), "mcp_servers:\n  gone:\n    command: "+filepath.Join(home, "no-such-server")+"\n", 0o644)
	env := app.Env{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_DATA_HOME=" + filepath.Join(home, "data"), "XDG_STATE_HOME=" + filepath.Join(home, "state")}
	a, err := app.NewAppAt(t.TempDir(), nil, map[string]string{
		"models.chat.model": "m", "models.chat.base_url": "http://127.0.0.1:9",
		"models.utility.model": "m", "models.utility.base_url": "http://127.0.0.1:9",
		"sandbox.backend": "local", "search.url": "http://127.0.0.1:9",
	}, slog.New(slog.DiscardHandler), env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	st, err := store.Open(filepath.Join(home, "zero.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a.InitMemory(st)
	setup, err := a.SetupFor(app.NewID(), "default", "", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	all := setup.Tools
	if setup.ToolSource != nil {
		all = append(all, setup.ToolSource.Tools(t.Context())...)
	}
	byName := map[string]loop.Tool{}
	for _, tool := range all {
		byName[tool.Name()] = tool
	}
	return byName
}

// compile compiles a schema as an endpoint's validator would, loading
// nothing.
func compile(t *testing.T, name string, schema json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("%s's schema is not JSON: %v\n%s", name, err, schema)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(nil)
	if err := c.AddResource("args.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("args.json")
	if err != nil {
		t.Fatalf("%s's schema does not compile: %v\n%s", name, err, schema)
	}
	return s
}

// promptOf is the text of tool's prompt file in the default profile, ""
// when it has none there (a user's tool).
func promptOf(t *testing.T, tool loop.Tool) string {
	t.Helper()
	file := "agent.system.tool." + tool.Name() + ".md"
	if f, ok := tool.(loop.PromptFiler); ok {
		file = f.PromptFile()
	}
	b, err := os.ReadFile(filepath.Join(prompts, file))
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// schemas are the compiled schemas of every tool's specs, by the name the
// model calls: "response", "text_editor:read".
func schemas(t *testing.T, tools map[string]loop.Tool) map[string]*jsonschema.Schema {
	t.Helper()
	out := map[string]*jsonschema.Schema{}
	for name, tool := range tools {
		sp, ok := tool.(loop.Specified)
		if !ok {
			t.Errorf("%s (%T) declares no schema (loop.Specified)", name, tool)
			continue
		}
		for _, spec := range sp.Specs() {
			call := name
			if spec.Method != "" {
				call += ":" + spec.Method
			}
			if _, dup := out[call]; dup {
				t.Errorf("%s has two specs", call)
			}
			if !json.Valid(spec.Parameters) {
				t.Errorf("%s's schema is not valid JSON: %s", call, spec.Parameters)
				continue
			}
			var obj struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(spec.Parameters, &obj); obj.Type != "object" {
				t.Errorf(`%s's schema is not of "type":"object": %s`, call, spec.Parameters)
			}
			out[call] = compile(t, call, spec.Parameters)
		}
	}
	return out
}

// Every tool an agent is given declares its arguments' schema, a JSON
// Schema of an object, with a spec for each method its prompt documents.
func TestEveryToolHasASchema(t *testing.T) {
	tools := assembled(t)
	for _, name := range []string{"response", "call_subordinate", "text_editor", "code_execution_tool", "input",
		"memory_save", "memory_load", "memory_delete", "memory_forget", "behaviour_adjustment",
		"skills_tool", "document_query", "search_engine", "mcp_resources", "mine"} {
		if tools[name] == nil {
			t.Errorf("the assembly has no %s: the test misses a tool", name)
		}
	}
	compiled := schemas(t, tools)
	for name, tool := range tools {
		methods := regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`:([a-z_]+)`).FindAllStringSubmatch(promptOf(t, tool), -1)
		if len(methods) == 0 && compiled[name] == nil {
			t.Errorf("%s has no spec without a method, and its prompt documents no method", name)
		}
		for _, m := range methods {
			if compiled[name+":"+m[1]] == nil {
				t.Errorf("%s's prompt documents %s:%s, which has no spec", name, name, m[1])
			}
		}
	}
}

// example is a tool request of a prompt file's examples.
type example struct {
	ToolName string         `json:"tool_name"`
	ToolArgs map[string]any `json:"tool_args"`
}

// Each tool's schema accepts the arguments its prompt's examples show, and
// the other names and shapes its Execute takes; it refuses a wrong type.
func TestSchemasAgreeWithPrompts(t *testing.T) {
	compiled := schemas(t, assembled(t))
	validate := func(call string, args map[string]any) error {
		t.Helper()
		s := compiled[call]
		if s == nil {
			t.Fatalf("no spec for %s", call)
		}
		// Through JSON, as the endpoint sends them: numbers are json.Number.
		b, _ := json.Marshal(args)
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return s.Validate(v)
	}

	files, err := filepath.Glob(filepath.Join(prompts, "agent.system.tool.*.md"))
	if err != nil || len(files) < 10 {
		t.Fatalf("prompt files: %v, %v", files, err)
	}
	block := regexp.MustCompile("(?s)~~~json\n(.*?)~~~")
	examples := 0
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllSubmatch(text, -1) {
			var ex example
			if err := json.Unmarshal(m[1], &ex); err != nil {
				t.Errorf("%s: an example is not JSON: %v", filepath.Base(f), err)
				continue
			}
			if err := validate(ex.ToolName, ex.ToolArgs); err != nil {
				t.Errorf("%s: the example of %s does not match its schema: %v", filepath.Base(f), ex.ToolName, err)
			}
			examples++
		}
	}
	if examples < 12 {
		t.Errorf("read %d examples from the prompts", examples)
	}

	for _, tt := range []struct {
		call      string
		good, bad map[string]any
	}{
		{"response", map[string]any{"message": "Agent Zero's other name"}, map[string]any{"text": 42}},
		{"call_subordinate", map[string]any{"message": "m", "agent_profile": "researcher", "reset": "true"}, map[string]any{"message": "m", "reset": 1}},
		{"call_subordinate", map[string]any{"message": "m", "reset": false}, map[string]any{"profile": "developer"}},
		{"code_execution_tool", map[string]any{"runtime": "terminal", "code": "ls", "allow_running": true}, map[string]any{"code": "ls", "session": "zero"}},
		{"input", map[string]any{"keyboard": "y"}, map[string]any{"keyboard": "y", "session": 0.5}},
		{"memory_save", map[string]any{"text": "t", "area": "solutions", "topic": "metadata"}, map[string]any{"text": []any{"t"}}},
		{"memory_load", map[string]any{"query": "q", "threshold": "0.7", "limit": 3, "filter": "area=='main'"}, map[string]any{"query": "q", "limit": true}},
		{"memory_delete", map[string]any{"ids": "a1, b2"}, map[string]any{"ids": 12}},
		{"memory_delete", map[string]any{"ids": []any{"a1", "b2"}}, map[string]any{"ids": []any{1}}},
		{"memory_forget", map[string]any{"query": "q", "threshold": 0.9}, map[string]any{"query": "q", "filter": 1}},
		{"behaviour_adjustment", map[string]any{"adjustments": "answer in French"}, map[string]any{}},
		{"skills_tool:list", map[string]any{}, nil},
		{"skills_tool:load", map[string]any{"name": "demo"}, map[string]any{"skill_name": 3}},
		{"document_query", map[string]any{"documents": []any{"a.pdf"}, "query": "why?"}, map[string]any{"document": map[string]any{"path": "a.pdf"}}},
		{"document_query", map[string]any{"document": "a.pdf", "queries": "one question"}, map[string]any{"document": "a.pdf", "queries": []any{1}}},
		{"search_engine", map[string]any{"query": "go 1.26"}, map[string]any{"query": []any{"go"}}},
		{"text_editor:read", map[string]any{"path": "a.go"}, map[string]any{"path": "a.go", "line_from": "1"}},
		{"text_editor:write", map[string]any{"path": "a.go", "content": ""}, map[string]any{"path": "a.go"}},
		{"text_editor:patch", map[string]any{"path": "a.go", "edits": []any{map[string]any{"from": 3, "to": 5}}}, map[string]any{"path": "a.go", "edits": []any{map[string]any{"to": 5}}}},
		{"mcp_resources:read", map[string]any{"server": "docs", "uri": "docs://api"}, map[string]any{"server": "docs"}},
		{"mcp_resources:prompt", map[string]any{"server": "docs", "name": "greet", "arguments": map[string]any{"who": "Ada"}}, map[string]any{"server": "docs", "name": "greet", "arguments": "who=Ada"}},
		{"mine", map[string]any{"anything": []any{1, "two"}}, nil},
	} {
		if err := validate(tt.call, tt.good); err != nil {
			t.Errorf("%s refuses %v, which the tool takes: %v", tt.call, tt.good, err)
		}
		if tt.bad != nil && validate(tt.call, tt.bad) == nil {
			t.Errorf("%s accepts %v", tt.call, tt.bad)
		}
	}
}

// The schemas are as lenient as the tools: none forbids arguments it does
// not name (the tools ignore them), none offers null (a tool takes it as
// missing), and each names its properties, if none (some endpoints want
// the key).
func TestSchemasAreLenient(t *testing.T) {
	for name, tool := range assembled(t) {
		sp, ok := tool.(loop.Specified)
		if !ok {
			continue
		}
		for _, spec := range sp.Specs() {
			text := string(spec.Parameters)
			if strings.Contains(text, `"additionalProperties":false`) {
				t.Errorf("%s:%s forbids arguments it does not name: %s", name, spec.Method, text)
			}
			if strings.Contains(text, `"null"`) {
				t.Errorf("%s:%s offers null: %s", name, spec.Method, text)
			}
			if name != "mine" && !strings.Contains(text, `"properties":`) {
				t.Errorf("%s:%s names no properties: %s", name, spec.Method, text)
			}
		}
	}
}
