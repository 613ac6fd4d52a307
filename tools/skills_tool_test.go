package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/skills"
	"github.com/zeroagent/zero/tools"
)

// skIdleModel is never called: the unit tests drive the tool directly.
type skIdleModel struct{}

func (skIdleModel) Stream(context.Context, llm.Request, llm.StreamFunc) (llm.Result, error) {
	return llm.Result{}, errors.New("skIdleModel: not for calling")
}

// skCatalog writes two skills into a fresh folder and discovers them.
func skCatalog(t *testing.T) (skills.Catalog, string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"pdf/SKILL.md":          "---\nname: pdf\ndescription: Fill and merge PDF forms.\ntags: [docs, forms]\nversion: 1.0\n---\n# PDF\nRun `python scripts/fill.py form.pdf`.\n",
		"pdf/scripts/fill.py":   "print('fill')\n",
		"pdf/reference.md":      "# Fields\n",
		"deploy/SKILL.md":       "---\nname: deploy\ndescription: " + strings.Repeat("Deploy the service safely. ", 12) + "\n---\nSteps.\n",
		"deploy/checklist.yaml": "",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, warns := skills.Discover(skills.Dir{Path: dir, Layer: "user"})
	if len(warns) != 0 {
		t.Fatalf("warnings: %v", warns)
	}
	return c, dir
}

func skAgent(t *testing.T) *loop.Agent {
	t.Helper()
	return loop.NewSession("sk", loop.Config{Setup: loop.Setup{Model: skIdleModel{}, Prompts: profiles.New()}}, nil).Agent0()
}

func skRun(t *testing.T, tool *tools.SkillsTool, a *loop.Agent, method, args string) loop.ToolResult {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		t.Fatalf("bad test args %s: %v", args, err)
	}
	res, err := tool.Execute(t.Context(), &loop.ToolCall{ID: "1", Name: "skills_tool", Method: method, Args: m, Agent: a})
	if err != nil {
		t.Fatalf("skills_tool:%s %s: Go error %v", method, args, err)
	}
	return res
}

func TestSkillsToolIdentity(t *testing.T) {
	t.Parallel()
	tool := tools.NewSkillsTool(nil)
	if tool.Name() != "skills_tool" || tool.Kind("") != "read" || tool.PromptFile() != "agent.system.tool.skills.md" {
		t.Errorf("Name %q Kind %q PromptFile %q", tool.Name(), tool.Kind(""), tool.PromptFile())
	}
	if _, err := profiles.New().Render(tool.PromptFile(), nil); err != nil {
		t.Errorf("the prompt file does not render: %v", err)
	}
}

func TestSkillsToolList(t *testing.T) {
	t.Parallel()
	c, _ := skCatalog(t)
	tool := tools.NewSkillsTool(func(*loop.Agent) skills.Catalog { return c })
	res := skRun(t, tool, skAgent(t), "list", `{}`)
	if res.IsError || res.BreakLoop {
		t.Fatalf("list: %+v", res)
	}
	lines := strings.Split(res.Text, "\n")
	if lines[0] != "Available skills (2):" {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "- deploy: Deploy the service safely.") || !strings.HasSuffix(lines[1], "…") || len([]rune(lines[1])) > 220 {
		t.Errorf("deploy line %q: want its description cut to 200 characters", lines[1])
	}
	if lines[2] != "- pdf v1.0 tags=docs,forms: Fill and merge PDF forms." {
		t.Errorf("pdf line %q", lines[2])
	}
	if !strings.Contains(res.Text, "skills_tool:load") {
		t.Errorf("no hint to load:\n%s", res.Text)
	}

	// The method may also come as an argument, in any case.
	if res := skRun(t, tool, skAgent(t), "", `{"method": " LIST "}`); res.IsError || !strings.HasPrefix(res.Text, "Available skills (2)") {
		t.Errorf("method as argument: %+v", res)
	}
	for _, tl := range []*tools.SkillsTool{tools.NewSkillsTool(nil), tools.NewSkillsTool(func(*loop.Agent) skills.Catalog { return skills.Catalog{} })} {
		if res := skRun(t, tl, skAgent(t), "list", `{}`); res.IsError || res.Text != "No skills found." {
			t.Errorf("list without skills: %+v", res)
		}
	}
}

func TestSkillsToolLoad(t *testing.T) {
	t.Parallel()
	c, dir := skCatalog(t)
	tool := tools.NewSkillsTool(func(*loop.Agent) skills.Catalog { return c })
	a := skAgent(t)
	res := skRun(t, tool, a, "load", `{"skill_name": "PDF"}`)
	if res.IsError || res.BreakLoop {
		t.Fatalf("load: %+v", res)
	}
	for _, want := range []string{
		"Loaded skill 'pdf'",
		"Path: " + filepath.Join(dir, "pdf"),
		"Version: 1.0", "Tags: docs, forms",
		"# PDF\nRun `python scripts/fill.py form.pdf`.",
		"code_execution_tool", "- reference.md\n- scripts/fill.py",
	} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("load result lacks %q:\n%s", want, res.Text)
		}
	}
	if got := skills.LoadedNames(a); !slices.Equal(got, []string{"pdf"}) {
		t.Errorf("loaded = %v, want [pdf]", got)
	}

	// "name" works as well as skill_name, and so do Agent Zero's bold markers.
	if res := skRun(t, tool, a, "load", `{"name": "**deploy**"}`); res.IsError || !strings.Contains(res.Text, "Loaded skill 'deploy'") {
		t.Errorf("load by name: %+v", res)
	}
	if got := skills.LoadedNames(a); !slices.Equal(got, []string{"pdf", "deploy"}) {
		t.Errorf("loaded = %v, want [pdf deploy]", got)
	}
	// Each agent has its own loaded skills.
	if got := skills.LoadedNames(skAgent(t)); len(got) != 0 {
		t.Errorf("a fresh agent has loaded %v", got)
	}
}

func TestSkillsToolErrors(t *testing.T) {
	t.Parallel()
	c, _ := skCatalog(t)
	tool := tools.NewSkillsTool(func(*loop.Agent) skills.Catalog { return c })
	tests := []struct {
		name, method, args string
		want               []string
	}{
		{"unknown skill", "load", `{"skill_name": "nope"}`, []string{`skill not found: "nope"`, "skills_tool:list"}},
		{"huge unknown name", "load", `{"skill_name": "` + strings.Repeat("x", 5000) + `"}`, []string{"skill not found"}},
		{"no name", "load", `{}`, []string{"tool_args.skill_name"}},
		{"blank name", "load", `{"skill_name": "  "}`, []string{"tool_args.skill_name"}},
		{"skill_name a number", "load", `{"skill_name": 5}`, []string{"skill_name", "a string"}},
		{"name a list", "load", `{"name": ["pdf"]}`, []string{"name", "a string"}},
		{"method a number", "", `{"method": 1}`, []string{"method", "a string"}},
		{"unknown method", "search", `{"query": "pdf"}`, []string{"skills_tool:list", "skills_tool:load"}},
		{"no method", "", `{}`, []string{"method"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := skAgent(t)
			res := skRun(t, tool, a, tt.method, tt.args)
			if !res.IsError || res.BreakLoop {
				t.Fatalf("want an error result, got %+v", res)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("result lacks %q: %s", w, res.Text)
				}
			}
			if len(res.Text) > 400 {
				t.Errorf("error result is %d bytes", len(res.Text))
			}
			if got := skills.LoadedNames(a); len(got) != 0 {
				t.Errorf("a failed call loaded %v", got)
			}
		})
	}
}

// TestSkillsEndToEnd runs the loop with the skills' extensions and tool: the system prompt lists
// the skills, skills_tool:load returns the skill, and from the next turn its text is in the extras.
func TestSkillsEndToEnd(t *testing.T) {
	t.Parallel()
	c, dir := skCatalog(t)
	catalog := func(*loop.Agent) skills.Catalog { return c }
	r := loop.Builtins()
	skills.Register(r, catalog)
	set, err := hooks.Resolve(r, nil, hooks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reply := func(tool, args string) llmtest.Reply {
		return llmtest.Reply{Content: `{"thoughts": ["step"], "headline": "Working", "tool_name": "` + tool + `", "tool_args": ` + args + `}`}
	}
	srv := llmtest.NewServer(t,
		reply("skills_tool:list", `{}`),
		reply("skills_tool:load", `{"skill_name": "pdf"}`),
		reply("response", `{"text": "done"}`),
		reply("response", `{"text": "again"}`),
	)
	client, err := llm.New(llm.Options{Model: "test", BaseURL: srv.URL(), APIKey: "k", RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sess := loop.NewSession("sk", loop.Config{
		Setup: loop.Setup{
			Model:   client,
			Prompts: profiles.New(),
			Tools:   []loop.Tool{tools.Response{}, tools.NewSkillsTool(catalog)},
			Hooks:   set,
		},
		Workspace: t.TempDir(),
		Limits:    loop.Limits{CriticalRetryDelay: time.Millisecond},
	}, nil)
	c2, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if got, err := sess.Run(c2, "fill the form"); err != nil || got != "done" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	system := reqs[0].Messages[0].Content
	if !reqs[0].Teaches("skills_tool") {
		t.Error("the request does not teach skills_tool")
	}
	for _, want := range []string{"## skills", "**deploy** Deploy the service safely.", "**pdf** Fill and merge PDF forms."} {
		if !strings.Contains(system, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	last := func(i int) string { m := reqs[i].Messages; return m[len(m)-1].Content }
	if strings.Contains(last(1), "# loaded skills") {
		t.Errorf("skill text in the extras before it was loaded:\n%s", last(1))
	}
	if !strings.Contains(last(1), "Available skills (2)") {
		t.Errorf("the list result is not in request 2:\n%s", last(1))
	}
	// After the load: the result in history, and the skill's text in the extras.
	extras := last(2)
	if i := strings.Index(extras, "[EXTRAS]"); i >= 0 {
		extras = extras[i:]
	} else {
		t.Fatalf("no extras in request 3:\n%s", extras)
	}
	for _, want := range []string{"loaded_skills", "# loaded skills", "Skill: pdf", filepath.Join(dir, "pdf"), "scripts/fill.py form.pdf"} {
		if !strings.Contains(extras, want) {
			t.Errorf("extras lack %q:\n%s", want, extras)
		}
	}

	// The skill stays loaded in the agent's next monologue.
	if got, err := sess.Run(c2, "and once more"); err != nil || got != "again" {
		t.Fatalf("second Run = %q, %v", got, err)
	}
	if reqs = srv.Requests(); !strings.Contains(reqs[3].Messages[len(reqs[3].Messages)-1].Content, "Skill: pdf") {
		t.Error("the loaded skill is gone from the next monologue's extras")
	}
}
