package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/zeroagent/zero/llm/llmtest"
)

// launch is what an editor's configuration starts.
type launch struct {
	Command string            `json:"command" toml:"command"`
	Args    []string          `json:"args" toml:"args"`
	Env     map[string]string `json:"env" toml:"env"`
}

// launchOf reads the zero entry of an editor configuration in editors/.
func launchOf(t *testing.T, path string) launch {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switch filepath.Ext(path) {
	case ".json":
		var doc struct {
			MCPServers   map[string]launch `json:"mcpServers"`    // Claude Desktop, Claude Code, Cursor, Gemini CLI
			Servers      map[string]launch `json:"servers"`       // VS Code
			AgentServers map[string]launch `json:"agent_servers"` // Zed
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, m := range []map[string]launch{doc.MCPServers, doc.Servers, doc.AgentServers} {
			for name, l := range m {
				if strings.EqualFold(name, "zero") {
					return l
				}
			}
		}
	case ".toml": // Codex
		var doc struct {
			MCPServers map[string]launch `toml:"mcp_servers"`
		}
		if _, err := toml.Decode(string(data), &doc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if l, ok := doc.MCPServers["zero"]; ok {
			return l
		}
	case ".lua", ".el": // CodeCompanion, agent-shell: the command is a list of strings
		m := regexp.MustCompile(`[{(']\s*"zero"\s*,?\s*"(acp|mcp)"`).FindSubmatch(data)
		if m != nil {
			return launch{Command: "zero", Args: []string{string(m[1])}}
		}
	}
	t.Fatalf("%s: no zero entry", path)
	return launch{}
}

// Every configuration in editors/ starts the command it names, and that
// command, with the configuration's arguments and environment, answers a
// task from the scripted model in its protocol.
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
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			l := launchOf(t, f)
			if l.Command != "zero" || len(l.Args) == 0 {
				t.Fatalf("%s starts %q %q, want zero acp|mcp", f, l.Command, l.Args)
			}
			srv := llmtest.NewServer(t, llmtest.Reply{Content: `{"thoughts": ["done"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "configured-and-working"}}`})
			home := t.TempDir()
			// The user's environment: configurations without env of their
			// own (CodeCompanion, agent-shell) rely on it for the model.
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
				"TMPDIR=" + os.TempDir(), "ZERO_SANDBOX=local", "ZERO_MODEL=" + llmtest.ModelName}
			for k, v := range l.Env {
				env = append(env, k+"="+v)
			}
			env = append(env, "OPENAI_BASE_URL="+srv.URL()) // the configurations leave the endpoint to the user
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			ws := t.TempDir()
			cmd := exec.CommandContext(ctx, bin, l.Args...)
			cmd.Env, cmd.Dir = env, ws
			var stderr strings.Builder
			cmd.Stderr = &stderr
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { in.Close(); _ = cmd.Wait() }()
			r := bufio.NewReader(out)
			var got string
			switch l.Args[0] {
			case "mcp":
				got = driveMCP(t, in, r, ws)
			case "acp":
				got = driveACP(t, in, r, ws)
			default:
				t.Fatalf("unknown face %q", l.Args[0])
			}
			if !strings.Contains(got, "configured-and-working") {
				t.Errorf("%s: the answer did not come back: %s\nstderr:\n%s", f, got, stderr.String())
			}
		})
	}
}

// rpc sends one request (or a notification, id 0) and returns the answer
// to it; notifications on the way are added to seen, and requests from the
// server get an error.
func rpc(t *testing.T, in io.Writer, r *bufio.Reader, seen *strings.Builder, id int, method string, params any) json.RawMessage {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id != 0 {
		msg["id"] = id
	}
	line, _ := json.Marshal(msg)
	if _, err := in.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	if id == 0 {
		return nil
	}
	for {
		text, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(text, &m) != nil {
			t.Fatalf("not JSON on stdout: %q", text)
		}
		switch {
		case m.Method != "" && m.ID != nil:
			refuse, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": *m.ID, "error": map[string]any{"code": -32601, "message": "not offered"}})
			_, _ = in.Write(append(refuse, '\n'))
		case m.Method != "":
			seen.Write(text) // ACP streams the answer before the prompt's result
		case m.ID != nil && *m.ID == id:
			if m.Error != nil {
				t.Fatalf("%s: %s", method, m.Error)
			}
			return m.Result
		}
	}
}

func driveMCP(t *testing.T, in io.Writer, r *bufio.Reader, ws string) string {
	var seen strings.Builder
	rpc(t, in, r, &seen, 1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "editors", "version": "1"}})
	rpc(t, in, r, &seen, 0, "notifications/initialized", map[string]any{})
	return string(rpc(t, in, r, &seen, 2, "tools/call", map[string]any{"name": "zero_run", "arguments": map[string]any{"message": "say it works", "workspace": ws}}))
}

// driveACP returns the text of the answer's chunks (the prompt's result
// holds only the stop reason).
func driveACP(t *testing.T, in io.Writer, r *bufio.Reader, ws string) string {
	var seen strings.Builder
	rpc(t, in, r, &seen, 1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	var s struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(rpc(t, in, r, &seen, 2, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}), &s)
	res := rpc(t, in, r, &seen, 3, "session/prompt", map[string]any{"sessionId": s.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "say it works"}}})
	if !strings.Contains(string(res), "end_turn") {
		t.Errorf("session/prompt: %s", res)
	}
	var chunks strings.Builder
	for line := range strings.Lines(seen.String()) {
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
