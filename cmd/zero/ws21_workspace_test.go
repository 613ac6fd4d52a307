package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/zeroagent/zero/internal/dockertest"
	"github.com/zeroagent/zero/llm/llmtest"
)

// lineFace is one editor face (zero mcp|acp) driven over stdio the way an
// editor does, for the workspace tests.
type lineFace struct {
	t      *testing.T
	in     io.WriteCloser
	out    *bufio.Reader
	cmd    *exec.Cmd
	stderr *strings.Builder
	seen   strings.Builder // notifications
}

// startFace starts zero with args in dir, with env added to zeroCmd's.
func startLineFace(t *testing.T, dir string, env []string, args ...string) *lineFace {
	t.Helper()
	cmd := zeroCmd(t, append([]string{"ZERO_STORE=off"}, env...), args...)
	cmd.Dir = dir
	f := &lineFace{t: t, cmd: cmd, stderr: &strings.Builder{}}
	cmd.Stderr = f.stderr
	var err error
	if f.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	f.out = bufio.NewReader(out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.in.Close(); _ = cmd.Wait() })
	return f
}

// call sends a request (id 0: a notification) and returns its result or
// error; requests from zero are refused.
func (f *lineFace) call(id int, method string, params any) (result, rpcErr json.RawMessage) {
	f.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id != 0 {
		msg["id"] = id
	}
	line, _ := json.Marshal(msg)
	if _, err := f.in.Write(append(line, '\n')); err != nil {
		f.t.Fatalf("%s: %v\nstderr:\n%s", method, err, f.stderr)
	}
	if id == 0 {
		return nil, nil
	}
	for {
		text, err := f.out.ReadBytes('\n')
		if err != nil {
			f.t.Fatalf("%s: %v\nstderr:\n%s", method, err, f.stderr)
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(text, &m) != nil {
			f.t.Fatalf("not JSON on stdout: %q", text)
		}
		switch {
		case m.Method != "" && m.ID != nil:
			refuse, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": *m.ID, "error": map[string]any{"code": -32601, "message": "not offered"}})
			_, _ = f.in.Write(append(refuse, '\n'))
		case m.Method != "":
			f.seen.Write(text)
		case m.ID != nil && *m.ID == id:
			return m.Result, m.Error
		}
	}
}

// zeroRun initializes an MCP client without roots and calls zero_run.
func (f *lineFace) zeroRun(args map[string]any) (text string, isError bool) {
	f.t.Helper()
	f.call(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "ws21", "version": "1"}})
	f.call(0, "notifications/initialized", map[string]any{})
	res, rerr := f.call(2, "tools/call", map[string]any{"name": "zero_run", "arguments": args})
	if rerr != nil {
		f.t.Fatalf("zero_run: JSON-RPC error %s", rerr)
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		f.t.Fatalf("zero_run result %s: %v", res, err)
	}
	for _, c := range r.Content {
		text += c.Text
	}
	return text, r.IsError
}

// An editor face that got no workspace from the call, the client's roots
// or --workspace, and was started in / (Claude Desktop does) or in the
// home directory, refuses that folder as the workspace and says, in the
// tool error the client shows, how to name one; a folder as broad that the
// model names is refused the same way. Nothing reaches the model.
func TestMCPRefusesBroadWorkspace(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: `{"thoughts": ["ok"], "tool_name": "response", "tool_args": {"text": "answered"}}`})
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "HOME=" + home}
	for _, tc := range []struct {
		name, dir string
		args      map[string]any
		want      []string
	}{
		{"started in /", "/", map[string]any{"message": "hi"}, []string{"workspace", "--workspace DIR", "absolute path of the project"}},
		{"started in home", home, map[string]any{"message": "hi"}, []string{"workspace", "--workspace DIR"}},
		{"the call names /", home, map[string]any{"message": "hi", "workspace": "/"}, []string{"the whole file system (/)", "--workspace /", "if you mean it"}},
		{"the call names home", t.TempDir(), map[string]any{"message": "hi", "workspace": home}, []string{"your whole home directory", "--workspace " + home}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startLineFace(t, tc.dir, env, "mcp")
			text, isError := f.zeroRun(tc.args)
			if !isError {
				t.Fatalf("zero_run was accepted: %s", text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("the tool error lacks %q:\n%s", w, text)
				}
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model got %d requests for a refused workspace", n)
	}
}

// ACP's session/new with the home directory (or /) as cwd is an "Invalid
// params" error on cwd that says how to choose; with --workspace naming
// that folder, the user chose it and the session opens.
func TestACPRefusesBroadCwd(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=http://127.0.0.1:9/v1", "HOME=" + home}
	newSession := func(f *lineFace, cwd string) (json.RawMessage, json.RawMessage) {
		f.call(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
		return f.call(2, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	}
	for _, cwd := range []string{home, "/"} {
		_, rerr := newSession(startLineFace(t, home, env, "acp"), cwd)
		var e struct {
			Code int `json:"code"`
			Data struct {
				Field string `json:"field"`
				Error string `json:"error"`
			} `json:"data"`
		}
		if rerr == nil || json.Unmarshal(rerr, &e) != nil || e.Code != -32602 || e.Data.Field != "cwd" {
			t.Fatalf("session/new cwd %s: error %s, want Invalid params on cwd", cwd, rerr)
		}
		for _, w := range []string{"--workspace DIR", "--workspace " + cwd, "Open a project's folder"} {
			if !strings.Contains(e.Data.Error, w) {
				t.Errorf("session/new cwd %s: the error lacks %q: %s", cwd, w, e.Data.Error)
			}
		}
	}
	res, rerr := newSession(startLineFace(t, home, env, "acp", "--workspace", home), home)
	if rerr != nil || !strings.Contains(string(res), "sessionId") {
		t.Errorf("session/new in the home directory named with --workspace: %s %s", res, rerr)
	}
}

// The user named / (zero mcp --workspace /): the local sandbox's shell
// starts under bubblewrap at once and the command runs there.
func TestMCPWorkspaceRootNamed(t *testing.T) {
	t.Parallel()
	dockertest.Bwrap(t)
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: chatCommandReply(`echo quiet > /dev/null && echo ran-in-$(pwd)`)},
		llmtest.Reply{Content: `{"thoughts": ["done"], "tool_name": "response", "tool_args": {"text": "root-done"}}`},
	)
	f := startLineFace(t, "/", []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL()}, "mcp", "--workspace", "/", "--sandbox", "local")
	text, isError := f.zeroRun(map[string]any{"message": "where are you"})
	if isError || !strings.Contains(text, "root-done") {
		t.Fatalf("zero_run with --workspace /: %s\nstderr:\n%s", text, f.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) < 2 || !strings.Contains(string(reqs[1].Body), "ran-in-/") || strings.Contains(string(reqs[1].Body), "Permission denied") {
		t.Errorf("the command's output did not reach the model as run in /:\n%s", lastBody(reqs))
	}
}

func lastBody(reqs []llmtest.Recorded) string {
	if len(reqs) == 0 {
		return "(no request)"
	}
	return string(reqs[len(reqs)-1].Body)
}

// lspCall writes one LSP message (Content-Length framing) and returns the
// answer to id.
func lspCall(t *testing.T, f *lineFace, id int, method string, params any) (result, rpcErr json.RawMessage) {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id != 0 {
		msg["id"] = id
	}
	body, _ := json.Marshal(msg)
	if _, err := fmt.Fprintf(f.in, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s", method, err, f.stderr)
	}
	for id != 0 {
		n := 0
		for {
			line, err := f.out.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: %v\nstderr:\n%s", method, err, f.stderr)
			}
			if line = strings.TrimSpace(line); line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(f.out, buf); err != nil {
			t.Fatal(err)
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(buf, &m) == nil && m.Method == "" && m.ID != nil && *m.ID == id {
			return m.Result, m.Error
		}
	}
	return nil, nil
}

// The LSP face: an editor whose workspace folder is the home directory
// gets the refusal as zero/newSession's error, with how to choose.
func TestLSPRefusesBroadRoot(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	f := startLineFace(t, t.TempDir(), []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=http://127.0.0.1:9/v1", "HOME=" + home}, "lsp")
	if _, rerr := lspCall(t, f, 1, "initialize", map[string]any{"processId": nil, "rootUri": "file://" + home, "capabilities": map[string]any{}}); rerr != nil {
		t.Fatalf("initialize: %s", rerr)
	}
	lspCall(t, f, 0, "initialized", map[string]any{})
	_, rerr := lspCall(t, f, 2, "zero/newSession", map[string]any{})
	for _, w := range []string{"your whole home directory", "--workspace " + home} {
		if !strings.Contains(string(rerr), w) {
			t.Errorf("zero/newSession in the home directory: error %s lacks %q", rerr, w)
		}
	}
}

// An editor that does not know the variable its configuration names
// (${workspaceFolder} outside VS Code and Cursor) passes the text as it
// is: zero says so at start instead of a folder that does not exist.
func TestWorkspaceEditorVariableUnexpanded(t *testing.T) {
	t.Parallel()
	cmd := zeroCmd(t, []string{"ZERO_MODEL=m"}, "mcp", "--workspace", "${workspaceFolder}")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("zero mcp --workspace ${workspaceFolder}: %v, want exit 2", err)
	}
	for _, w := range []string{"did not replace ${workspaceFolder}", "absolute path"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("the error lacks %q:\n%s", w, out)
		}
	}
}
