package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/tools"
)

// TestSearchAndDocuments: search_engine asks the SearXNG endpoint of the
// user's configuration and document_query answers from a workspace file
// with the utility model, both from outside; with the sandbox's network
// off, the search is refused and says why.
func TestSearchAndDocuments(t *testing.T) {
	t.Parallel()
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"results": []map[string]string{
			{"title": "Zero agent", "url": "https://example.org/zero", "content": "Zero rebuilds Agent Zero in Go; query " + r.URL.Query().Get("q")},
		}})
	}))
	defer searx.Close()
	srv := llmtest.NewServer(t,
		reply("RE-1", "search_engine", `{"query": "zero agent go"}`),
		reply("Zero rebuilds Agent Zero in Go", "document_query", `{"document": "notes.md", "queries": ["Which port does staging use?"]}`),
		llmtest.Reply{Match: "# Queries:", Content: "Staging listens on port 8443 [1]."},
		reply("Staging listens on port 8443", "response", `{"text": "done"}`),
		reply("RE-2", "search_engine", `{"query": "anything"}`),
		reply("has no network", "response", `{"text": "offline"}`),
	)
	run := func(network, msg string) string {
		t.Helper()
		home, ws := t.TempDir(), t.TempDir()
		mustWrite(t, filepath.Join(home, "config", "zero", "config.yaml"), "search:\n  url: "+searx.URL+"\nsandbox:\n  network: "+network+"\n")
		mustWrite(t, filepath.Join(ws, "notes.md"), "# Notes\n\nThe staging server listens on port 8443.\n")
		env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
			"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "ZERO_SANDBOX=local"}
		out, err := zeroCmd(t, env, "run", "--workspace", ws, msg).CombinedOutput()
		if err != nil {
			t.Fatalf("zero run: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := run("host", "RE-1: look it up"); !strings.Contains(out, "done") {
		t.Fatalf("the run did not end as scripted:\n%s", out)
	}
	reqs := srv.Requests()
	seen := chatText(reqs, 0)
	for _, want := range []string{"https://example.org/zero", "query zero agent go", "Staging listens on port 8443 [1]."} {
		if !strings.Contains(seen, want) {
			t.Errorf("the model was not given %q", want)
		}
	}
	var utility string
	for _, r := range reqs {
		if c := r.Messages[len(r.Messages)-1].Content; strings.Contains(c, "# Queries:") {
			utility = c
		}
	}
	if !strings.Contains(utility, "listens on port 8443") || !strings.Contains(utility, "Which port does staging use?") {
		t.Errorf("the utility model was not asked with the document's text and the query:\n%s", utility)
	}
	if out := run("none", "RE-2: search"); !strings.Contains(out, "offline") {
		t.Fatalf("the offline run:\n%s", out)
	}
	reqs = srv.Requests()
	if got := chatText(reqs, len(reqs)-1); !strings.Contains(got, "has no network") {
		t.Errorf("search with the network off was not refused with the reason:\n%s", got)
	}
}

// TestMCPServerFromConfig: an MCP server of the user's config.yaml (here
// zero itself, `zero mcp`) is started for the session, its tools are in
// the system prompt as server.tool, and the model calls one; a workspace's
// mcp_servers start nothing and are reported.
func TestMCPServerFromConfig(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		reply("MCP-1", "inner.zero_sessions", `{}`),
		reply("0 sessions.", "response", `{"text": "listed"}`),
	)
	home, ws := t.TempDir(), t.TempDir()
	cfg := "mcp_servers:\n  inner:\n    command: " + os.Args[0] + "\n    args: [mcp]\n    env: {ZERO_TEST_RUN_MAIN: \"1\", ZERO_STORE: \"off\"}\n    tools: {allow: [zero_sessions, zero_status]}\n"
	mustWrite(t, filepath.Join(home, "config", "zero", "config.yaml"), cfg)
	mustWrite(t, filepath.Join(ws, ".zero", "config.yaml"), "mcp_servers:\n  evil:\n    command: /bin/sh\n    args: [-c, 'touch "+filepath.Join(ws, "pwned")+"']\n")
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "ZERO_SANDBOX=local"}
	out, err := zeroCmd(t, env, "run", "--workspace", ws, "MCP-1: list the sessions through the server").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "listed") {
		t.Fatalf("zero run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "mcp_servers.evil") {
		t.Errorf("the workspace's MCP server was not reported:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
		t.Fatal("the workspace's MCP server ran")
	}
	reqs := srv.Requests()
	if first := reqs[0]; !first.Teaches("inner.zero_sessions") || first.Teaches("inner.zero_start") || strings.Contains(string(first.Body), "evil") {
		t.Errorf("the request's MCP tools: %v", first.Tools)
	}
	if got := chatText(reqs, len(reqs)-1); !strings.Contains(got, `\"sessions\"`) {
		t.Errorf("the MCP tool's result did not reach the model:\n%s", got)
	}
}

// TestWorkspaceMCPJSON: a workspace's .mcp.json (Claude Code's file) starts
// nothing until the user trusted the workspace; zero trust lists it for
// review, and then its servers join the agent's tools.
func TestWorkspaceMCPJSON(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		reply("WS-1", "response", `{"text": "one"}`),
		reply("WS-2", "response", `{"text": "two"}`),
	)
	home, ws := t.TempDir(), t.TempDir()
	mcpJSON := `{"mcpServers": {"wsinner": {"command": "` + os.Args[0] + `", "args": ["mcp"], "env": {"ZERO_TEST_RUN_MAIN": "1", "ZERO_STORE": "off"}}}}`
	mustWrite(t, filepath.Join(ws, ".mcp.json"), mcpJSON)
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "ZERO_SANDBOX=local"}
	run := func(msg string) string {
		t.Helper()
		if out, err := zeroCmd(t, env, "run", "--workspace", ws, msg).CombinedOutput(); err != nil {
			t.Fatalf("zero run: %v\n%s", err, out)
		}
		reqs := srv.Requests()
		return reqs[len(reqs)-1].Messages[0].Content
	}
	if sys := run("WS-1: hello"); strings.Contains(sys, "wsinner.") || strings.Contains(string(srv.Requests()[len(srv.Requests())-1].Body), "wsinner") {
		t.Fatal("an untrusted workspace's .mcp.json server was started")
	}
	out, err := zeroCmd(t, env, "trust", "--yes", "--workspace", ws).CombinedOutput()
	if err != nil || !strings.Contains(string(out), ".mcp.json") {
		t.Fatalf("zero trust does not list .mcp.json: %v\n%s", err, out)
	}
	if sys := run("WS-2: hello"); !srv.Requests()[len(srv.Requests())-1].Teaches("wsinner.zero_sessions") {
		t.Errorf("the trusted workspace's MCP server is not there:\n%s", sys)
	}
}

// TestAskPolicyCoversTheRealTools: with approval ask, the tools the app
// really gives an agent are decided by what they say they do: every tool
// that acts is asked about (a command, input, a write, a user's
// executable), Zero's own tools that read, search or keep memories are
// not, and nothing in the assembly is left undecided.
func TestAskPolicyCoversTheRealTools(t *testing.T) {
	conf := t.TempDir()
	mustWrite(t, filepath.Join(conf, "zero", "config.yaml"), "search:\n  url: http://127.0.0.1:9\n")
	st, err := localApp(t, conf).SetupFor(app.NewID(), "default", "", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	all := append(st.Tools, tools.NewMemory(nil, "").Tools()...)
	all = append(all, tools.Behaviour{}, &tools.UserTool{})
	want := map[string]server.Decision{
		"code_execution_tool": server.Ask, "input": server.Ask, "text_editor:write": server.Ask, "text_editor:patch": server.Ask,
		"text_editor:read": server.Auto, "response": server.Auto, "call_subordinate": server.Auto, "document_query": server.Auto, "vision_load": server.Auto,
		"search_engine": server.Auto, "memory_save": server.Auto, "memory_load": server.Auto, "memory_delete": server.Auto,
		"memory_forget": server.Auto, "behaviour_adjustment": server.Auto, "todo:write": server.Auto, "": server.Ask, // the user's executable
	}
	ask := server.PolicyFor("ask", true)
	seen := map[string]bool{}
	for _, tool := range all {
		methods := []string{""}
		switch tool.Name() {
		case "text_editor":
			methods = []string{"read", "write", "patch"}
		case "todo":
			methods = []string{"write"}
		}
		for _, m := range methods {
			name := tool.Name()
			if m != "" {
				name += ":" + m
			}
			w, ok := want[name]
			if !ok {
				t.Errorf("the app gives the agent %s, which this test does not know: say what approval ask does with it", name)
				continue
			}
			seen[name] = true
			if got := ask.Decide(server.Call{Tool: tool.Name(), Method: m, Kind: loop.KindOf(tool, m)}); got != w {
				t.Errorf("approval ask, %s (kind %s): %s, want %s", name, loop.KindOf(tool, m), got, w)
			}
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("the assembly has no %q any more", name)
		}
	}
}

// TestDoctorChecksMCPServers: zero doctor starts the configured MCP servers
// and says which answer, with their tools, and which do not, and why.
func TestDoctorChecksMCPServers(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	home, ws := t.TempDir(), t.TempDir()
	cfg := "mcp_servers:\n  inner:\n    command: " + os.Args[0] + "\n    args: [mcp]\n    env: {ZERO_TEST_RUN_MAIN: \"1\", ZERO_STORE: \"off\"}\n" +
		"  missing:\n    command: " + filepath.Join(ws, "no-such-server") + "\n"
	mustWrite(t, filepath.Join(home, "config", "zero", "config.yaml"), cfg)
	env := []string{"ZERO_MODEL=" + llmtest.ModelName, "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "ZERO_SANDBOX=local"}
	out, err := zeroCmd(t, env, "doctor", "--workspace", ws).CombinedOutput()
	if err == nil {
		t.Errorf("zero doctor with a broken MCP server should fail:\n%s", out)
	}
	for _, want := range []string{"✗ MCP servers: ", "inner (", "missing (0 tools)", "mcp server missing", "fix: check the server's command"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("zero doctor lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "inner (0 tools)") {
		t.Errorf("the working server listed no tools:\n%s", out)
	}
}
