package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/zeroagent/zero/internal/dockertest"
	"github.com/zeroagent/zero/llm/llmtest"
)

// launch is what an editor starts for its configuration, as the editor
// itself would: the command and arguments after the editor's own
// substitutions, the environment the editor gives the process, the folder
// it starts in, and what the editor tells the server about the project.
type launch struct {
	Command string
	Args    []string
	Env     []string // the whole environment of the process
	Dir     string   // where the editor starts the process
	Roots   bool     // MCP: the client offers roots (its project's folder)
}

// editor reads one configuration in editors/ with the shape the editor
// documents (unknown fields are errors, as a typo would be for the editor)
// and says how the editor starts it. user is the user's environment; ws
// the project the user has open.
type editor struct {
	face  string // "mcp" or "acp": the protocol the editor speaks
	parse func(t *testing.T, data []byte, user map[string]string, ws string) launch
}

// editors maps each file in editors/ to its editor. What each editor
// does, from its documentation and source:
//
//   - Zed: settings.json's agent_servers entry is an internally tagged enum
//     ("type": "custom" | "extension" | "registry"; a custom one needs
//     command); Zed passes its environment plus env, and sends the
//     project's folder as session/new's cwd.
//   - Claude Desktop: mcpServers entries are command, args, env; servers
//     start in / with a minimal environment, and it sends no roots.
//     The file's placeholders (the project's path, the key) are the
//     user's to fill in.
//   - Claude Code: .mcp.json, type stdio; servers start in the project,
//     with ${VAR} and ${VAR:-default} expanded.
//   - Cursor: mcp.json, with ${workspaceFolder} and ${env:NAME} expanded;
//     where it starts the process is not documented: / here.
//   - VS Code: mcp.json's servers entry needs type stdio; ${workspaceFolder}
//     is expanded, and VS Code answers roots/list with its folders.
//   - Codex: config.toml's [mcp_servers.NAME]; the server starts in the
//     folder Codex runs in, with only a few variables of the user's
//     environment (PATH, HOME, ...) plus env_vars and env; no roots.
//   - Gemini CLI: settings.json's mcpServers; the server starts where
//     gemini runs, variables whose names look secret (…KEY, …TOKEN) are
//     redacted from the environment it inherits, and env's $VAR and
//     ${VAR} are expanded from the user's; no roots.
//   - CodeCompanion, agent-shell: ACP clients that start the command with
//     the user's environment in the project and send it as cwd.
var editors = map[string]editor{
	"zed.settings.json":    {"acp", parseZed},
	"claude-desktop.json":  {"mcp", parseClaudeDesktop},
	"claude-code.mcp.json": {"mcp", parseClaudeCode},
	"cursor.mcp.json":      {"mcp", parseCursor},
	"vscode.mcp.json":      {"mcp", parseVSCode},
	"codex.config.toml":    {"mcp", parseCodex},
	"gemini.settings.json": {"mcp", parseGemini},
	"codecompanion.lua":    {"acp", parseCodeCompanion},
	"agent-shell.el":       {"acp", parseAgentShell},
}

// strictJSON decodes data into v, refusing fields v does not have.
func strictJSON(t *testing.T, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("not in the editor's documented shape: %v", err)
	}
}

// zeroEntry returns the entry named zero (any case) of m.
func zeroEntry[E any](t *testing.T, m map[string]E) E {
	t.Helper()
	for name, e := range m {
		if strings.EqualFold(name, "zero") {
			return e
		}
	}
	t.Fatalf("no zero entry")
	var e E
	return e
}

// environ is the process environment: base, then the entry's env.
func environ(base map[string]string, env map[string]string) []string {
	all := map[string]string{}
	for k, v := range base {
		all[k] = v
	}
	for k, v := range env {
		all[k] = v
	}
	out := make([]string, 0, len(all))
	for k, v := range all {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

type zedSettings struct {
	AgentServers map[string]struct {
		Type         string            `json:"type"`
		Command      string            `json:"command"`
		Args         []string          `json:"args"`
		Env          map[string]string `json:"env"`
		DefaultMode  string            `json:"default_mode"`
		DefaultModel string            `json:"default_model"`
	} `json:"agent_servers"`
}

func parseZed(t *testing.T, data []byte, user map[string]string, ws string) launch {
	var s zedSettings
	strictJSON(t, data, &s)
	e := zeroEntry(t, s.AgentServers)
	if e.Type != "custom" || e.Command == "" {
		t.Fatalf(`Zed's agent_servers entry needs "type": "custom" and a command, got type %q command %q`, e.Type, e.Command)
	}
	return launch{Command: e.Command, Args: e.Args, Env: environ(user, e.Env), Dir: ws}
}

// mcpEntry is the stdio server entry Claude Desktop, Claude Code, Cursor
// and Gemini CLI share (each accepts only some of the fields).
type mcpEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	EnvFile string            `json:"envFile"`
	Cwd     string            `json:"cwd"`
	Timeout int               `json:"timeout"`
	Trust   bool              `json:"trust"`
}

func mcpServers(t *testing.T, data []byte) mcpEntry {
	var s struct {
		MCPServers map[string]mcpEntry `json:"mcpServers"`
	}
	strictJSON(t, data, &s)
	return zeroEntry(t, s.MCPServers)
}

// only fails when e sets a field the editor does not have.
func (e mcpEntry) only(t *testing.T, editor string, fields ...string) {
	t.Helper()
	set := map[string]bool{"type": e.Type != "", "envFile": e.EnvFile != "", "cwd": e.Cwd != "", "timeout": e.Timeout != 0, "trust": e.Trust}
	for f, on := range set {
		if on && !slices.Contains(fields, f) {
			t.Fatalf("%s has no %q field for a stdio server", editor, f)
		}
	}
	if e.Command == "" {
		t.Fatalf("%s: the entry has no command", editor)
	}
}

// The placeholders of editors/claude-desktop.json, which the user replaces.
const (
	projectPlaceholder = "/absolute/path/to/your/project"
	keyPlaceholder     = "sk-..."
)

func parseClaudeDesktop(t *testing.T, data []byte, user map[string]string, ws string) launch {
	e := mcpServers(t, data)
	e.only(t, "Claude Desktop")
	args := slices.Clone(e.Args)
	for i, a := range args {
		if a == projectPlaceholder {
			args[i] = ws
		}
	}
	env := map[string]string{}
	for k, v := range e.Env {
		if v == keyPlaceholder {
			v = user["OPENAI_API_KEY"]
		}
		env[k] = v
	}
	// A desktop application's environment, not the user's shell's.
	base := map[string]string{"PATH": user["PATH"], "HOME": user["HOME"], "TMPDIR": user["TMPDIR"]}
	return launch{Command: e.Command, Args: args, Env: environ(base, env), Dir: "/"}
}

// shellExpand expands $VAR and ${VAR} (and ${VAR:-default} when
// defaults) from env.
var shellVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

func shellExpand(s string, env map[string]string, braced bool) string {
	return shellVar.ReplaceAllStringFunc(s, func(m string) string {
		sub := shellVar.FindStringSubmatch(m)
		if sub[4] != "" {
			if braced {
				return m
			}
			return env[sub[4]]
		}
		if v, ok := env[sub[1]]; ok && v != "" {
			return v
		}
		return sub[3]
	})
}

func parseClaudeCode(t *testing.T, data []byte, user map[string]string, ws string) launch {
	e := mcpServers(t, data)
	e.only(t, "Claude Code", "type")
	if e.Type != "" && e.Type != "stdio" {
		t.Fatalf("Claude Code: type %q, want stdio", e.Type)
	}
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = shellExpand(a, user, true)
	}
	env := map[string]string{}
	for k, v := range e.Env {
		env[k] = shellExpand(v, user, true)
	}
	return launch{Command: shellExpand(e.Command, user, true), Args: args, Env: environ(user, env), Dir: ws}
}

// vscodeExpand expands the variables VS Code and Cursor know.
func vscodeExpand(t *testing.T, s string, user map[string]string, ws string) string {
	s = strings.ReplaceAll(s, "${workspaceFolder}", ws)
	s = strings.ReplaceAll(s, "${userHome}", user["HOME"])
	s = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`).ReplaceAllStringFunc(s, func(m string) string {
		return user[m[len("${env:"):len(m)-1]]
	})
	if strings.Contains(s, "${") {
		t.Fatalf("%q: a variable the editor does not know", s)
	}
	return s
}

func parseCursor(t *testing.T, data []byte, user map[string]string, ws string) launch {
	e := mcpServers(t, data)
	e.only(t, "Cursor", "type", "envFile")
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = vscodeExpand(t, a, user, ws)
	}
	env := map[string]string{}
	for k, v := range e.Env {
		env[k] = vscodeExpand(t, v, user, ws)
	}
	return launch{Command: e.Command, Args: args, Env: environ(user, env), Dir: "/"}
}

func parseVSCode(t *testing.T, data []byte, user map[string]string, ws string) launch {
	var s struct {
		Inputs  []json.RawMessage   `json:"inputs"`
		Servers map[string]mcpEntry `json:"servers"`
	}
	strictJSON(t, data, &s)
	e := zeroEntry(t, s.Servers)
	e.only(t, "VS Code", "type", "envFile", "cwd")
	if e.Type != "stdio" {
		t.Fatalf(`VS Code's servers entry needs "type": "stdio", got %q`, e.Type)
	}
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = vscodeExpand(t, a, user, ws)
	}
	env := map[string]string{}
	for k, v := range e.Env {
		env[k] = vscodeExpand(t, v, user, ws)
	}
	dir := "/"
	if e.Cwd != "" {
		dir = vscodeExpand(t, e.Cwd, user, ws)
	}
	return launch{Command: e.Command, Args: args, Env: environ(user, env), Dir: dir, Roots: true}
}

// codexServer is Codex's [mcp_servers.NAME] for a stdio server.
type codexServer struct {
	Command           string            `toml:"command"`
	Args              []string          `toml:"args"`
	Env               map[string]string `toml:"env"`
	EnvVars           []string          `toml:"env_vars"`
	Cwd               string            `toml:"cwd"`
	StartupTimeoutSec float64           `toml:"startup_timeout_sec"`
	ToolTimeoutSec    float64           `toml:"tool_timeout_sec"`
	Enabled           *bool             `toml:"enabled"`
	EnabledTools      []string          `toml:"enabled_tools"`
	DisabledTools     []string          `toml:"disabled_tools"`
}

// codexEnv is what Codex passes of the user's environment to every
// stdio server (codex-rs/rmcp-client, DEFAULT_ENV_VARS on Unix).
var codexEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "USER", "__CF_USER_TEXT_ENCODING", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ"}

func parseCodex(t *testing.T, data []byte, user map[string]string, ws string) launch {
	var doc struct {
		MCPServers map[string]codexServer `toml:"mcp_servers"`
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		t.Fatalf("Codex cannot read it: %v", err)
	}
	if keys := md.Undecoded(); len(keys) > 0 {
		t.Fatalf("keys Codex does not have: %v", keys)
	}
	e, ok := doc.MCPServers["zero"]
	if !ok || e.Command == "" {
		t.Fatalf("no [mcp_servers.zero] with a command")
	}
	base := map[string]string{}
	for _, k := range slices.Concat(codexEnv, e.EnvVars) {
		if v, ok := user[k]; ok {
			base[k] = v
		}
	}
	dir := ws
	if e.Cwd != "" {
		dir = e.Cwd
	}
	return launch{Command: e.Command, Args: e.Args, Env: environ(base, e.Env), Dir: dir}
}

// geminiRedacted are the names Gemini CLI keeps from the environment a
// server inherits.
var geminiRedacted = regexp.MustCompile(`(?i)TOKEN|SECRET|PASSWORD|PASSWD|KEY|AUTH|CREDENTIAL|PRIVATE`)

func parseGemini(t *testing.T, data []byte, user map[string]string, ws string) launch {
	e := mcpServers(t, data)
	e.only(t, "Gemini CLI", "cwd", "timeout", "trust")
	base := map[string]string{}
	for k, v := range user {
		if !geminiRedacted.MatchString(k) {
			base[k] = v
		}
	}
	env := map[string]string{}
	for k, v := range e.Env {
		env[k] = shellExpand(v, user, false)
	}
	dir := ws
	if e.Cwd != "" {
		dir = filepath.Join(ws, e.Cwd)
	}
	return launch{Command: e.Command, Args: e.Args, Env: environ(base, env), Dir: dir}
}

// luaStrings are the strings of a Lua table constructor { "a", "b" }.
func luaStrings(t *testing.T, data []byte, pattern string) []string {
	m := regexp.MustCompile(pattern).FindSubmatch(data)
	if m == nil {
		t.Fatalf("no %s", pattern)
	}
	var out []string
	for _, s := range regexp.MustCompile(`"([^"]*)"`).FindAllSubmatch(m[1], -1) {
		out = append(out, string(s[1]))
	}
	return out
}

// parseCodeCompanion checks the adapter as CodeCompanion's ACP adapters
// are written: an acp adapter extending a built-in one, with the command
// in commands.default, chosen for the chat interaction.
func parseCodeCompanion(t *testing.T, data []byte, user map[string]string, ws string) launch {
	for _, want := range []string{`adapters = {`, `acp = {`, `require("codecompanion.adapters").extend(`, `interactions = { chat = { adapter = "zero" } }`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Fatalf("the CodeCompanion setup lacks %s", want)
		}
	}
	argv := luaStrings(t, data, `commands\s*=\s*\{\s*default\s*=\s*\{([^}]*)\}`)
	if len(argv) < 2 {
		t.Fatalf("commands.default = %q", argv)
	}
	return launch{Command: argv[0], Args: argv[1:], Env: environ(user, nil), Dir: ws}
}

// parseAgentShell checks the Emacs configuration: a command list
// agent-shell's ACP client is given as :command and :command-params.
func parseAgentShell(t *testing.T, data []byte, user map[string]string, ws string) launch {
	for _, want := range []string{`(agent-shell-make-agent-config`, `:command (car zero-agent-shell-command)`, `:command-params (cdr zero-agent-shell-command)`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Fatalf("the agent-shell configuration lacks %s", want)
		}
	}
	argv := luaStrings(t, data, `\(defvar zero-agent-shell-command '\(([^)]*)\)`)
	if len(argv) < 2 {
		t.Fatalf("zero-agent-shell-command = %q", argv)
	}
	return launch{Command: argv[0], Args: argv[1:], Env: environ(user, nil), Dir: ws}
}

// The command the scripted model runs: it writes into the folder its
// shell starts in, which must be the project.
const (
	markerFile    = "editor-marker.txt"
	markerCommand = `echo configured-$((6*7)) > ` + markerFile + ` && cat ` + markerFile
	editorKey     = "sk-editors-test"
)

// Every configuration in editors/ is read as its editor reads it (its
// documented shape, its substitutions) and started as the editor starts
// it (folder, environment, roots); the agent then runs one command from
// the scripted model through the default sandbox, in the project, with
// the user's key, and answers.
func TestEditorConfigs(t *testing.T) {
	all, err := filepath.Glob("../editors/*")
	var files []string
	for _, f := range all {
		if fi, err := os.Stat(f); err == nil && !fi.IsDir() { // editors/vscode is the extension, tested by scripts/test
			files = append(files, f)
		}
	}
	if err != nil || len(files) < 9 {
		t.Fatalf("editors/ holds %d configurations: %v", len(files), err)
	}
	bin := filepath.Join(t.TempDir(), "zero")
	if os.Getenv("ZERO_TEST_BIN") == "" {
		if out, err := exec.Command("go", "build", "-o", bin, "../cmd/zero").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	bin = zeroBinary(t, bin)
	binDir := t.TempDir() // the editors find "zero" on PATH
	if err := os.Symlink(bin, filepath.Join(binDir, "zero")); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			ed, ok := editors[filepath.Base(f)]
			if !ok {
				t.Fatalf("%s: which editor reads it? Add it to editors in this test", f)
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			srv := llmtest.NewServer(t,
				llmtest.Reply{Content: `{"thoughts": ["run it"], "headline": "Running", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "` + markerCommand + `"}}`},
				llmtest.Reply{Content: `{"thoughts": ["done"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "configured-and-working"}}`})
			home, ws := t.TempDir(), t.TempDir()
			// The user's own configuration holds the endpoint (the files
			// leave it to the user) and the image the Docker engine has;
			// the backend stays the default.
			cfg := fmt.Sprintf("models:\n  chat:\n    base_url: %s\nsandbox:\n  image: %s\n", srv.URL(), dockertest.ImageName())
			if err := os.MkdirAll(filepath.Join(home, ".config", "zero"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, ".config", "zero", "config.yaml"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			user := map[string]string{"PATH": binDir + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME": home, "TMPDIR": os.TempDir(),
				"LANG": "C.UTF-8", "OPENAI_API_KEY": editorKey, "ZERO_MODEL": llmtest.ModelName}
			if v := os.Getenv("DOCKER_HOST"); v != "" {
				user["DOCKER_HOST"] = v
			}
			l := ed.parse(t, data, user, ws)
			if l.Command != "zero" || len(l.Args) == 0 || l.Args[0] != ed.face {
				t.Fatalf("%s starts %q %q, want zero %s", f, l.Command, l.Args, ed.face)
			}
			path, err := exec.LookPath(filepath.Join(binDir, l.Command))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { // a container stays for the workspace's next session
				rm := exec.Command(bin, "sandbox", "rm", "--workspace", ws)
				rm.Env = l.Env
				_ = rm.Run()
			})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a safety net, never the verdict
			defer cancel()
			cmd := exec.CommandContext(ctx, path, l.Args...)
			cmd.Env, cmd.Dir = l.Env, l.Dir
			var stderr strings.Builder
			cmd.Stderr = &stderr
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { in.Close(); _ = cmd.Wait() }()
			c := &client{t: t, in: in, r: bufio.NewReader(out), stderr: &stderr}
			if l.Roots {
				c.roots = []string{ws}
			}
			var got string
			switch ed.face {
			case "mcp":
				got = c.driveMCP()
			case "acp":
				got = c.driveACP(ws)
			}
			if !strings.Contains(got, "configured-and-working") {
				t.Errorf("the answer did not come back: %s\nstderr:\n%s", got, stderr.String())
			}
			if b, err := os.ReadFile(filepath.Join(ws, markerFile)); err != nil || string(b) != "configured-42\n" {
				t.Errorf("the command did not run in the project %s: %q, %v\nstderr:\n%s", ws, b, err, stderr.String())
			}
			for i, r := range srv.Requests() {
				if r.Authorization != "Bearer "+editorKey {
					t.Errorf("model request %d carried %q, not the user's key: the editor's environment lost it", i, r.Authorization)
				}
			}
		})
	}
}

// client speaks JSON-RPC on the server's stdio as an editor: notifications
// are kept, roots/list is answered with roots when the editor has them,
// other requests get an error.
type client struct {
	t      *testing.T
	in     io.Writer
	r      *bufio.Reader
	stderr *strings.Builder
	roots  []string
	seen   strings.Builder
}

// rpc sends one request (or a notification, id 0) and returns the answer
// to it.
func (c *client) rpc(id int, method string, params any) json.RawMessage {
	c.t.Helper()
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}, id == 0)
	if id == 0 {
		return nil
	}
	for {
		text, err := c.r.ReadBytes('\n')
		if err != nil {
			c.t.Fatalf("%s: %v\nstderr:\n%s", method, err, c.stderr)
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(text, &m) != nil {
			c.t.Fatalf("not JSON on stdout: %q", text)
		}
		switch {
		case m.Method == "roots/list" && m.ID != nil && c.roots != nil:
			var roots []any
			for _, r := range c.roots {
				roots = append(roots, map[string]any{"uri": (&url.URL{Scheme: "file", Path: r}).String(), "name": filepath.Base(r)})
			}
			c.send(map[string]any{"jsonrpc": "2.0", "id": *m.ID, "result": map[string]any{"roots": roots}}, false)
		case m.Method != "" && m.ID != nil:
			c.send(map[string]any{"jsonrpc": "2.0", "id": *m.ID, "error": map[string]any{"code": -32601, "message": "not offered"}}, false)
		case m.Method != "":
			c.seen.Write(text) // ACP streams the answer before the prompt's result
		case m.ID != nil && *m.ID == id:
			if m.Error != nil {
				c.t.Fatalf("%s: %s\nstderr:\n%s", method, m.Error, c.stderr)
			}
			return m.Result
		}
	}
}

func (c *client) send(msg map[string]any, notification bool) {
	if notification {
		delete(msg, "id")
	}
	line, _ := json.Marshal(msg)
	if _, err := c.in.Write(append(line, '\n')); err != nil {
		c.t.Fatalf("write: %v\nstderr:\n%s", err, c.stderr)
	}
}

// driveMCP calls zero_run as a model would that was told nothing about
// folders: without a workspace argument.
func (c *client) driveMCP() string {
	caps := map[string]any{}
	if c.roots != nil {
		caps["roots"] = map[string]any{"listChanged": false}
	}
	c.rpc(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": caps, "clientInfo": map[string]any{"name": "editors", "version": "1"}})
	c.rpc(0, "notifications/initialized", map[string]any{})
	return string(c.rpc(2, "tools/call", map[string]any{"name": "zero_run", "arguments": map[string]any{"message": "say it works"}}))
}

// driveACP returns the text of the answer's chunks (the prompt's result
// holds only the stop reason).
func (c *client) driveACP(ws string) string {
	c.rpc(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	var s struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(c.rpc(2, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}), &s)
	res := c.rpc(3, "session/prompt", map[string]any{"sessionId": s.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "say it works"}}})
	if !strings.Contains(string(res), "end_turn") {
		c.t.Errorf("session/prompt: %s", res)
	}
	var chunks strings.Builder
	for line := range strings.Lines(c.seen.String()) {
		var n struct {
			Params struct {
				Update struct {
					Kind    string `json:"sessionUpdate"`
					Content struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(line), &n) == nil && n.Params.Update.Kind == "agent_message_chunk" {
			chunks.WriteString(n.Params.Update.Content.Text)
		}
	}
	return chunks.String()
}
