package loop_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/sandbox"
	"github.com/zeroagent/zero/tools"
	"github.com/zeroagent/zero/tools/texteditor"
)

// testdata/agent-zero holds prompt files exactly as Agent Zero ships them
// (github.com/agent0ai/agent-zero at 2d95cd9f, MIT licence, copyright
// Agent Zero s.r.o.), in Agent Zero's own layout: the base prompts/, the
// prompts of the plugins whose tools Zero has (_code_execution,
// _text_editor). Only the files Zero's engine renders are there. Agent
// Zero's profile folders are not committed (they are its text, not ours):
// a test that needs one writes its own (see agentZeroStyleHacker).
const agentZeroDir = "testdata/agent-zero"

// agentZeroPrompts is Agent Zero's prompt search path for an agent with the
// default profile: the base folder and the plugins' prompt folders, over
// Zero's defaults (which only fill in files Agent Zero does not have).
func agentZeroPrompts() *profiles.Prompts {
	return profiles.New(
		os.DirFS(filepath.Join(agentZeroDir, "prompts")),
		os.DirFS(filepath.Join(agentZeroDir, "plugins/_text_editor/prompts")),
		os.DirFS(filepath.Join(agentZeroDir, "plugins/_code_execution/prompts")),
	)
}

// zeroTools are the tools cmd/zero gives an agent, on backend b.
func zeroTools(t *testing.T, ws string, b sandbox.Backend) []loop.Tool {
	t.Helper()
	ce := tools.NewCodeExecution(b, tools.Timeouts{})
	t.Cleanup(func() { ce.Close() })
	return []loop.Tool{tools.Response{}, tools.CallSubordinate{}, texteditor.New(ws), ce, ce.InputTool()}
}

// profileList is the agent_profiles var cmd/zero passes.
func profileList(t *testing.T) string {
	t.Helper()
	infos, err := profiles.NewLoader("", "").List()
	if err != nil {
		t.Fatal(err)
	}
	return profiles.FormatProfileList(infos)
}

// TestAgentZeroBasePrompts runs a turn over Agent Zero's own base prompts
// and plugin prompts, loaded unchanged: every var they use must be filled,
// the text_editor prompt gets its default_line_count, and a call of an
// unknown tool gets fw.tool_not_found.md with the tools prompt in it.
func TestAgentZeroBasePrompts(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	model := &fakeModel{replies: []reply{
		{content: toolReq("list the files", "shell", map[string]any{"command": "ls"})},
		{content: respond("done")},
	}}
	sess := loop.NewSession("az", loop.Config{
		Setup:     loop.Setup{Model: model, Prompts: agentZeroPrompts(), Tools: zeroTools(t, ws, nil), ToolProtocol: loop.ProtocolJSON},
		Vars:      map[string]any{"agent_profiles": profileList(t)},
		Workspace: ws,
		Sandbox:   "local",
	}, nil)
	if got, err := sess.Run(runCtx(t), "what is in the workspace?"); err != nil || got != "done" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	reqs := model.requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	for i, req := range reqs {
		for _, m := range req {
			if strings.Contains(m.Content, "{{") || strings.Contains(m.Content, "}}") {
				t.Errorf("request %d: a %s message has an unfilled placeholder:\n%s", i, m.Role, placeholders(m.Content))
			}
		}
	}

	sys := reqs[0][0]
	if sys.Role != llm.System {
		t.Fatalf("the first message is %s, want the system prompt", sys.Role)
	}
	for _, want := range []string{
		"# Agent Zero System Manual", // Agent Zero's main prompt, not Zero's
		"save files in " + ws,        // workdir_path (agent.system.main.tips.py)
		"no range → first 200 lines", // default_line_count (_09_text_editor_config.py)
		"### code_execution_tool", "### input", "### response", "### call_subordinate", "### text_editor",
		"- developer: ", // agent_profiles (agent.system.tool.call_sub.py)
	} {
		if !strings.Contains(sys.Content, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}

	var notFound string
	for _, m := range reqs[1] {
		if strings.Contains(m.Content, "Tool shell not found") {
			notFound = m.Content
		}
	}
	if notFound == "" {
		t.Fatalf("the second request has no fw.tool_not_found.md message:\n%s", model.requestText(1))
	}
	// tools_prompt is the tools part of the system prompt, as Agent Zero's
	// Unknown tool builds it.
	for _, want := range []string{"Available tools:", "## available tools", "### code_execution_tool", "### text_editor", "first 200 lines"} {
		if !strings.Contains(notFound, want) {
			t.Errorf("the tool-not-found message lacks %q:\n%.600s", want, notFound)
		}
	}

	// fw.user_message.md is a JSON template with system_message and
	// attachments beside the message.
	var user map[string]any
	for _, m := range reqs[0][1:] {
		if m.Role == llm.User && strings.Contains(m.Content, "user_message") {
			// The extras follow in the same message.
			if err := json.NewDecoder(strings.NewReader(m.Content)).Decode(&user); err != nil {
				t.Fatalf("user message is not JSON: %v\n%s", err, m.Content)
			}
		}
	}
	if user["user_message"] != "what is in the workspace?" {
		t.Errorf("user message = %v", user)
	}
	for _, k := range []string{"system_message", "attachments"} {
		if v, ok := user[k].([]any); !ok || len(v) != 0 {
			t.Errorf("user message %s = %#v, want an empty list", k, user[k])
		}
	}

	// `zero prompt` renders the same system prompt.
	got, err := sess.Agent0().SystemPrompt(runCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "{{") {
		t.Errorf("SystemPrompt has an unfilled placeholder:\n%s", placeholders(got))
	}
}

// TestAgentZeroToolPromptVars renders each Agent Zero tool prompt through
// Agent.Render, as the tools prompt does, with the engine's vars only.
func TestAgentZeroToolPromptVars(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	sess := loop.NewSession("az", loop.Config{
		Setup:     loop.Setup{Model: &fakeModel{}, Prompts: agentZeroPrompts(), Tools: zeroTools(t, ws, nil)},
		Vars:      map[string]any{"agent_profiles": profileList(t)},
		Workspace: ws,
	}, nil)
	a := sess.Agent0()
	for _, name := range []string{
		"agent.system.tool.text_editor.md", "agent.system.tool.code_exe.md", "agent.system.tool.input.md",
		"agent.system.tool.call_sub.md", "agent.system.tool.response.md", "agent.system.main.md",
	} {
		got, err := a.Render(name, nil)
		if err != nil {
			t.Errorf("Render(%s): %v", name, err)
			continue
		}
		if strings.Contains(got, "{{") {
			t.Errorf("%s has an unfilled placeholder:\n%s", name, placeholders(got))
		}
	}
	if got, _ := a.Render("agent.system.tool.text_editor.md", nil); !strings.Contains(got, "first 200 lines") {
		t.Errorf("text_editor prompt lacks the tool's default line count:\n%s", got)
	}
}

// TestBuiltinTextEditorLineCount: Zero's own text_editor prompt states the
// tool's default line count, which Agent Zero's prompt takes from
// default_line_count.
func TestBuiltinTextEditorLineCount(t *testing.T) {
	t.Parallel()
	te := texteditor.New(t.TempDir())
	sess := loop.NewSession("te", loop.Config{
		Setup: loop.Setup{Model: &fakeModel{}, Prompts: profiles.New(), Tools: []loop.Tool{tools.Response{}, te}},
	}, nil)
	got, err := sess.Agent0().Render("agent.system.tool.text_editor.md", nil)
	if err != nil {
		t.Fatal(err)
	}
	n := te.PromptVars()["default_line_count"]
	if want := fmt.Sprintf("the first %d lines", n); !strings.Contains(got, want) {
		t.Errorf("text_editor prompt lacks %q (default_line_count %v):\n%s", want, n, got)
	}
}

var placeholderRE = regexp.MustCompile(`.*\{\{.*`)

// placeholders returns the lines holding "{{", for error messages.
func placeholders(s string) string {
	return strings.Join(placeholderRE.FindAllString(s, -1), "\n")
}

// environment returns the "## Environment" section of a system prompt.
func environment(sys string) string {
	_, env, ok := strings.Cut(sys, "## Environment")
	if !ok {
		return ""
	}
	if i := strings.Index(env, "\n## "); i >= 0 {
		env = env[:i]
	}
	return env
}

// TestEnvironmentFollowsBackend renders the built-in profiles' system
// prompts for each backend: the environment they describe is the one in
// force, never Agent Zero's Kali container with the framework in /a0 on the
// user's machine.
func TestEnvironmentFollowsBackend(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	none, err := sandbox.NewLocal(sandbox.LocalOptions{Dir: ws, Isolation: sandbox.IsolationNone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { none.Close() })
	l := profiles.NewLoader("", "")
	list := profileList(t)
	tests := []struct {
		name    string
		sandbox string
		backend sandbox.Backend // nil: none (docker: the engine's is not needed to render)
		vars    map[string]any
		has     []string
		hasNot  []string
	}{
		{
			name: "local unconfined", sandbox: "local", backend: none,
			has:    []string{"on the user's", "no isolation", ws},
			hasNot: []string{"Docker", "docker", "container of", "/a0", "bubblewrap"},
		},
		{
			name: "docker default image", sandbox: "docker", vars: map[string]any{"sandbox_image": "kalilinux/kali-rolling"},
			has:    []string{"Docker container", "of the image kalilinux/kali-rolling", "mounted at the same path", ws},
			hasNot: []string{"/a0", "on the user's", "as root"},
		},
		{
			name: "docker other image", sandbox: "docker", vars: map[string]any{"sandbox_image": "debian:bookworm"},
			has:    []string{"Docker container", "of the image debian:bookworm", "mounted at the same path"},
			hasNot: []string{"/a0", "Kali", "kali"},
		},
		{
			name: "docker image not passed", sandbox: "docker",
			has:    []string{"Docker container (linux)", "mounted at the same path"},
			hasNot: []string{"/a0", "on the user's"},
		},
	}
	for _, tt := range tests {
		for _, name := range []string{"default", "agent0", "developer", "researcher", "hacker"} {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				p, err := l.Load(name)
				if err != nil {
					t.Fatal(err)
				}
				vars := map[string]any{"agent_profiles": list}
				for k, v := range tt.vars {
					vars[k] = v
				}
				sess := loop.NewSession("env", loop.Config{
					Setup:     loop.Setup{Profile: name, Model: &fakeModel{}, Prompts: p.Prompts, Tools: zeroTools(t, ws, tt.backend)},
					Vars:      vars,
					Workspace: ws,
					Sandbox:   tt.sandbox,
				}, nil)
				sys, err := sess.Agent0().SystemPrompt(runCtx(t))
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(sys, "{{") {
					t.Errorf("unfilled placeholder:\n%s", placeholders(sys))
				}
				env := environment(sys)
				if env == "" {
					t.Fatalf("no environment section:\n%s", sys)
				}
				for _, want := range tt.has {
					if !strings.Contains(env, want) {
						t.Errorf("environment lacks %q:\n%s", want, env)
					}
				}
				for _, unwanted := range tt.hasNot {
					if strings.Contains(env, unwanted) {
						t.Errorf("environment has %q:\n%s", unwanted, env)
					}
				}
				if name == "hacker" && tt.sandbox == "local" && regexp.MustCompile(`(?i)kali[^\n]*container`).MatchString(strings.ReplaceAll(env, "not in the Kali container", "")) {
					t.Errorf("the hacker profile claims a Kali container on the local backend:\n%s", env)
				}
			})
		}
	}
}

// TestEnvironmentBubblewrap: on the local backend under bubblewrap the
// environment says what confines the commands.
func TestEnvironmentBubblewrap(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	b, err := sandbox.NewLocal(sandbox.LocalOptions{Dir: ws, Isolation: sandbox.IsolationAuto, Hide: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if mode, why := b.Isolation(); mode != sandbox.IsolationBubblewrap {
		if os.Getenv("ZERO_REQUIRE_DOCKER") == "1" { // CI: bubblewrap is there and must work
			t.Fatalf("bubblewrap is required (ZERO_REQUIRE_DOCKER=1) and does not work: %s", why)
		}
		t.Skipf("bubblewrap does not work here: %s", why)
	}
	for _, name := range []string{"default", "hacker"} {
		p, err := profiles.NewLoader("", "").Load(name)
		if err != nil {
			t.Fatal(err)
		}
		sess := loop.NewSession("bwrap", loop.Config{
			Setup:     loop.Setup{Profile: name, Model: &fakeModel{}, Prompts: p.Prompts, Tools: zeroTools(t, ws, b)},
			Workspace: ws,
			Sandbox:   "local",
		}, nil)
		sys, err := sess.Agent0().SystemPrompt(runCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		env := environment(sys)
		for _, want := range []string{"bubblewrap", "on the user's", ws} {
			if !strings.Contains(env, want) {
				t.Errorf("%s: environment lacks %q:\n%s", name, want, env)
			}
		}
		for _, unwanted := range []string{"no isolation", "Docker", "/a0"} {
			if strings.Contains(env, unwanted) {
				t.Errorf("%s: environment has %q:\n%s", name, unwanted, env)
			}
		}
	}
}

// TestAgentZeroEnvironmentReported: Agent Zero's environment files, loaded
// unchanged from a user's folders, describe Agent Zero's runtime (a Kali
// container with the framework in /a0); the profile says so in a
// diagnostic naming each file.
func TestAgentZeroEnvironmentReported(t *testing.T) {
	t.Parallel()
	p, err := profiles.NewLoader("", agentZeroStyleHacker(t)).Load("hacker")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range p.Diagnostics {
		if strings.HasSuffix(d.Path, "agent.system.main.environment.md") {
			got = append(got, d.String())
			if !strings.Contains(d.Message, "/a0") || !strings.Contains(d.Message, "sandbox") {
				t.Errorf("diagnostic does not say what is wrong and what to do: %s", d)
			}
		}
	}
	if len(got) != 2 { // the hacker profile's and the base prompts'
		t.Errorf("environment diagnostics = %q, want one for each of Agent Zero's two files", got)
	}
}

// agentZeroStyleHacker is a user config folder holding Agent Zero's base
// prompts and a hacker profile written the way Agent Zero's is: its
// environment file says the agent lives in a Kali container with the
// framework in /a0 (our wording of what Agent Zero's file says).
func agentZeroStyleHacker(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "prompts"), os.DirFS(filepath.Join(agentZeroDir, "prompts"))); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(dir, "agents", "hacker", "prompts", "agent.system.main.environment.md")
	if err := os.MkdirAll(filepath.Dir(env), 0o755); err != nil {
		t.Fatal(err)
	}
	text := "## Environment\nyou run inside a kali linux docker container\nthe agent zero framework lives in /a0\nthe terminal has root access\n"
	if err := os.WriteFile(env, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
