package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/mcpclient"
)

// TestWorkspaceMCPServerRunsFromSnapshot: what a trusted workspace's stdio
// MCP server runs (here the script mcp/srv.sh its .mcp.json names) is part
// of the trust: the server runs from the copy the user trusted, never in
// the workspace, and once the agent rewrites the script, nothing of the
// workspace runs on this machine until the user trusts again, told which
// file changed.
func TestWorkspaceMCPServerRunsFromSnapshot(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		reply("MS-1", "response", `{"text": "one"}`),
		reply("MS-2", "response", `{"text": "two"}`),
	)
	home, ws, marks := t.TempDir(), t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"wssrv": {"command": "sh", "args": ["mcp/srv.sh"], "env": {"ZERO_TEST_RUN_MAIN": "1", "ZERO_STORE": "off"}}}}`)
	mustWrite(t, filepath.Join(ws, "mcp", "srv.sh"), "pwd > "+filepath.Join(marks, "pwd")+"\nexec "+os.Args[0]+" mcp\n")
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "ZERO_SANDBOX=local"}
	run := func(msg string) (sys, out string) {
		t.Helper()
		cmd := zeroCmd(t, env, "run", "--workspace", ws, msg)
		cmd.Dir = ws
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("zero run: %v\n%s", err, b)
		}
		reqs := srv.Requests()
		return reqs[len(reqs)-1].Messages[0].Content, string(b)
	}
	if out, err := zeroCmd(t, env, "trust", "--yes", "--workspace", ws).CombinedOutput(); err != nil || !strings.Contains(string(out), "mcp/srv.sh") {
		t.Fatalf("zero trust does not list the server's script: %v\n%s", err, out)
	}
	if sys, out := run("MS-1: hello"); !srv.Requests()[len(srv.Requests())-1].Teaches("wssrv.zero_sessions") {
		t.Fatalf("the trusted server is not there:\n%s\n%s", sys, out)
	}
	pwd, err := os.ReadFile(filepath.Join(marks, "pwd"))
	if err != nil {
		t.Fatal(err)
	}
	if dir := strings.TrimSpace(string(pwd)); dir == ws || strings.HasPrefix(dir, ws+"/") {
		t.Errorf("the server ran in the workspace (%s), not from the trusted copy", dir)
	}

	// The agent rewrites the script from its sandbox.
	pwned := filepath.Join(marks, "pwned")
	mustWrite(t, filepath.Join(ws, "mcp", "srv.sh"), "touch "+pwned+"\nexec "+os.Args[0]+" mcp\n")
	sys, out := run("MS-2: hello")
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the rewritten server script ran on this machine")
	}
	if last := srv.Requests()[len(srv.Requests())-1]; strings.Contains(sys, "wssrv.") || strings.Contains(string(last.Body), "wssrv") {
		t.Error("the changed server is still offered")
	}
	if !strings.Contains(out, "mcp/srv.sh") {
		t.Errorf("the warning does not name the changed file:\n%s", out)
	}
}

// TestUserMCPServerNotStartedInWorkspace: the user's own server, written
// without a cwd, does not start in the workspace, where a repository (or
// the agent) could have put the file it names; zero doctor says where it
// starts.
func TestUserMCPServerNotStartedInWorkspace(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, reply("US-1", "response", `{"text": "one"}`))
	home, ws, marks := t.TempDir(), t.TempDir(), t.TempDir()
	cfgDir := filepath.Join(home, "config")
	mustWrite(t, filepath.Join(cfgDir, "zero", "config.yaml"), "mcp_servers:\n  mine:\n    command: sh\n    args: [some_server.sh]\n")
	pwned := filepath.Join(marks, "pwned")
	mustWrite(t, filepath.Join(ws, "some_server.sh"), "touch "+pwned+"\n")
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_CONFIG_HOME=" + cfgDir, "ZERO_SANDBOX=local"}
	cmd := zeroCmd(t, env, "run", "US-1: hello")
	cmd.Dir = ws // as a user runs it: in the project
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("zero run: %v\n%s", err, out)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the user's server ran the workspace's some_server.sh")
	}
	cmd = zeroCmd(t, env, "doctor")
	cmd.Dir = ws
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "starts in "+filepath.Join(cfgDir, "zero")) {
		t.Errorf("zero doctor does not say where the server starts:\n%s", out)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("zero doctor ran the workspace's some_server.sh")
	}
}

// TestMCPCredentialsAreSecrets: every value Zero hands an MCP server as an
// env value or a header is masked, whatever its name and wherever the
// server came from: the user's config.yaml, a trusted workspace's
// .mcp.json, the editor's mcpServers. None is offered to the agent.
func TestMCPCredentialsAreSecrets(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	mustWrite(t, filepath.Join(home, "config", "zero", "config.yaml"),
		"mcp_servers:\n  gh:\n    command: gh-mcp\n    env: {GITHUB_TOKEN: ghp-0123456789abcdef, LOG_LEVEL: debugging}\n  docs:\n    url: http://127.0.0.1:1/mcp\n    headers: {Authorization: Bearer tok-fedcba9876543210}\n")
	ws := t.TempDir()
	mustWrite(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"wsremote": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ws-bearer-4455667788", "X-Api": "ws-plain-header-99"}}, "wslocal": {"command": "true", "env": {"DB_URL": "postgres://u:ws-db-pass@h/db"}}}}`)
	a, err := app.NewAppAt(ws, nil, nil, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, err := a.TrustState()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Trust.Grant(st.Manifest); err != nil {
		t.Fatal(err)
	}
	a.AddMCPCredentials([]mcpclient.Server{{Name: "editor", Command: "x", Env: map[string]string{"PLAIN": "editor-env-value-1"}},
		{Name: "edhttp", URL: "http://127.0.0.1:1", Headers: map[string]string{"Authorization": "token editor-tok-2233", "Cookie": "sid=editor-cookie-77"}}})
	for _, v := range []string{"ghp-0123456789abcdef", "debugging", "tok-fedcba9876543210", "ws-bearer-4455667788", "ws-plain-header-99",
		"postgres://u:ws-db-pass@h/db", "editor-env-value-1", "editor-tok-2233", "sid=editor-cookie-77"} {
		if got := a.Secrets().Mask("it said " + v); strings.Contains(got, v) {
			t.Errorf("not masked: %s", got)
		}
	}
	if names := a.Secrets().Names(); len(names) != 0 {
		t.Errorf("MCP credentials must not be offered to the agent: %v", names)
	}
}
