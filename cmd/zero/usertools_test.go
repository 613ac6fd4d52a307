package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/internal/dockertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/tools"
)

func writeExe(t *testing.T, path, content string) {
	t.Helper()
	mustWrite(t, path, content)
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestUserTools: an executable in the user's ~/.config/zero/tools is a tool
// (on this machine) that gets its JSON arguments on stdin and answers with
// JSON; a workspace's .zero/tools counts only once trusted, and then runs
// in the sandbox (here bubblewrap or the bare machine: it is told).
func TestUserTools(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		reply("UT-1", "greet", `{"name": "Ada"}`),
		reply("greeted", "response", `{"text": "done one"}`),
		reply("UT-2", "wstool", `{"n": 7}`),
		reply("wstool-ran", "response", `{"text": "done two"}`),
	)
	home, ws := t.TempDir(), t.TempDir()
	cfg := filepath.Join(home, "config", "zero")
	writeExe(t, filepath.Join(cfg, "tools", "greet"), "#!/bin/sh\nin=$(cat)\nprintf '{\"result\": \"greeted: %s in %s\"}' \"$(echo \"$in\" | sed 's/\"/ /g')\" \"$PWD\"\n")
	mustWrite(t, filepath.Join(cfg, "prompts", "agent.system.tool.greet.md"), "### greet\ngreets someone; args: name\n")
	writeExe(t, filepath.Join(ws, ".zero", "tools", "wstool"), "#!/bin/sh\ncat\necho\necho wstool-ran\n")
	mustWrite(t, filepath.Join(ws, ".zero", "prompts", "agent.system.tool.wstool.md"), "### wstool\nthe workspace's own tool\n")
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "ZERO_SANDBOX=local", "ZERO_APPROVAL=auto"}
	run := func(msg string) (string, []llmtest.Recorded) {
		t.Helper()
		out, err := zeroCmd(t, env, "run", "--workspace", ws, msg).CombinedOutput()
		if err != nil {
			t.Fatalf("zero run: %v\n%s", err, out)
		}
		return string(out), srv.Requests()
	}
	out, reqs := run("UT-1: greet Ada")
	if first := reqs[len(reqs)-2]; !first.Teaches("greet") || first.Teaches("wstool") {
		t.Errorf("the request's tools (greet, and not the untrusted wstool): %v\n%s", first.Tools, first.Messages[0].Content)
	}
	got := chatText(reqs, len(reqs)-1)
	if !strings.Contains(got, "greeted:") || !strings.Contains(got, "name : Ada") || !strings.Contains(got, "tool : greet") {
		t.Errorf("the tool did not get its JSON arguments:\n%s\n%s", got, out)
	}
	if !strings.Contains(got, " in "+cfg) {
		t.Errorf("the user's own tool did not start in %s, away from the workspace:\n%s", cfg, got)
	}
	if tout, err := zeroCmd(t, env, "trust", "--yes", "--workspace", ws).CombinedOutput(); err != nil || !strings.Contains(string(tout), ".zero/tools/wstool") {
		t.Fatalf("zero trust: %v\n%s", err, tout)
	}
	out, reqs = run("UT-2: use the workspace's tool")
	got = chatText(reqs, len(reqs)-1)
	if !strings.Contains(got, `\"n\":7`) || !strings.Contains(got, "wstool-ran") {
		t.Errorf("the trusted workspace's tool did not run with its arguments:\n%s\n%s", got, out)
	}
	// It ran from a copy in the session's output folder, which is gone.
	if entries, _ := filepath.Glob(filepath.Join(ws, ".zero", "output", "*", "tool-*")); len(entries) != 0 {
		t.Errorf("the tool's run folder stayed: %v", entries)
	}
}

// TestUserToolInDocker is issue 14's "a user tool in a profile folder runs
// in the Docker sandbox with its JSON arguments".
func TestUserToolInDocker(t *testing.T) {
	t.Parallel()
	image := dockertest.Image(t)
	srv := llmtest.NewServer(t,
		reply("UD-1", "whereami", `{"probe": "container"}`),
		reply("ID=", "response", `{"text": "found it"}`),
	)
	home, ws := t.TempDir(), t.TempDir()
	cfg := filepath.Join(home, "config", "zero")
	mustWrite(t, filepath.Join(cfg, "config.yaml"), "sandbox:\n  backend: docker\n  image: "+image+"\n  network: none\n")
	prof := filepath.Join(cfg, "agents", "agent0")
	writeExe(t, filepath.Join(prof, "tools", "whereami"), "#!/bin/sh\ngrep '^ID=' /etc/os-release\ntest -f /.dockerenv && echo in-docker\ncat\n")
	mustWrite(t, filepath.Join(prof, "prompts", "agent.system.tool.whereami.md"), "### whereami\nsays where it runs\n")
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "ZERO_APPROVAL=auto"}
	zero := func(args ...string) ([]byte, error) {
		cmd := zeroCmd(t, env, args...)
		cmd.Env = append(cmd.Env, "ZERO_SANDBOX=") // the user's config decides
		return cmd.CombinedOutput()
	}
	t.Cleanup(func() { _, _ = zero("sandbox", "rm", "--workspace", ws) })
	out, err := zero("run", "--workspace", ws, "UD-1: where does it run?")
	if err != nil {
		t.Fatalf("zero run: %v\n%s", err, out)
	}
	reqs := srv.Requests()
	got := chatText(reqs, len(reqs)-1)
	if !strings.Contains(got, "in-docker") || !strings.Contains(got, `\"probe\":\"container\"`) {
		t.Errorf("the profile's tool did not run in the container with its arguments:\n%s\n%s", got, out)
	}
}

// A user's executable named like one of Zero's tools is not a tool, even
// where Zero's is missing (memory without a store): approval ask trusts
// Zero's memory tools by name, and must never let an executable run
// unasked under one.
func TestUserToolCannotTakeABuiltinName(t *testing.T) {
	conf := t.TempDir()
	for _, name := range []string{"memory_save", "behaviour_adjustment", "search_engine", "mine"} {
		writeExe(t, filepath.Join(conf, "zero", "tools", name), "#!/bin/sh\necho ran\n")
		mustWrite(t, filepath.Join(conf, "zero", "prompts", "agent.system.tool."+name+".md"), "### "+name+"\nmine\n")
	}
	a := localApp(t, conf)
	if a.Memory != nil {
		t.Fatal("this app has a memory: the test wants Zero's memory tools missing")
	}
	st, err := a.SetupFor(app.NewID(), "default", "", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, tool := range st.Tools {
		if _, ok := tool.(*tools.UserTool); ok {
			users = append(users, tool.Name())
		}
	}
	if !slices.Equal(users, []string{"mine"}) {
		t.Errorf("the user's tools are %q, want only mine", users)
	}
}

// localApp is the app of a new workspace with the user's configuration in
// conf (XDG_CONFIG_HOME), a model named and the local sandbox, as the
// commands build it.
func localApp(t *testing.T, conf string) *app.App {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", conf)
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("ZERO_MODEL", "m")
	t.Setenv("ZERO_SANDBOX", "local")
	a, err := app.NewAppAt(t.TempDir(), nil, nil, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A workspace's .mcp.json reads into the shared MCP server type, which has
// cwd, disabled and tools fields: the workspace chooses none of them. Its
// stdio server runs in the trusted copy, whatever cwd it names.
func TestWorkspaceMCPChoosesNoDirectory(t *testing.T) {
	a := localApp(t, t.TempDir())
	code := t.TempDir()
	mustWrite(t, filepath.Join(code, ".mcp.json"), `{"mcpServers": {"s": {"command": "./srv", "cwd": "/", "tools": {"allow": ["x"]}, "env": {"K": "v"}}}}`)
	got := a.WorkspaceMCP(code)
	if len(got) != 1 || got[0].Dir != code || got[0].Command != "./srv" || len(got[0].Tools.Allow) != 0 || got[0].Env["K"] != "v" {
		t.Errorf("workspaceMCP = %+v, want ./srv run in %s with no filter of its own choosing", got, code)
	}
}

// A workspace's .mcp.json may name a URL server's public client and
// scopes, never a secret, a key (a file of the user's Zero would sign
// with) or the machine-to-machine grant.
func TestWorkspaceMCPOAuthIsPublicOnly(t *testing.T) {
	a := localApp(t, t.TempDir())
	code := t.TempDir()
	mustWrite(t, filepath.Join(code, ".mcp.json"), `{"mcpServers": {"s": {"type": "http", "url": "https://example.com/mcp",
		"oauth": {"client_id": "pub", "scopes": ["read"], "client_secret": "x", "private_key": "/home/u/.ssh/id_ecdsa", "grant": "client_credentials"}}}}`)
	got := a.WorkspaceMCP(code)
	if len(got) != 1 || got[0].OAuth == nil {
		t.Fatalf("workspaceMCP = %+v", got)
	}
	if o := *got[0].OAuth; o.ClientID != "pub" || len(o.Scopes) != 1 || o.ClientSecret != "" || o.PrivateKey != "" || o.Grant != "" {
		t.Errorf("the workspace's oauth = %+v; want only its client id and scopes", o)
	}
}
