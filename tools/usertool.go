package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/sandbox"
)

// UserTool is a tool made of an executable that a user dropped into a
// tools folder (Agent Zero's profile tools; its prompt is the file
// agent.system.tool.NAME.md of the prompts). It gets one JSON object on
// stdin, {"tool", "method", "args", "agent", "session", "workspace"}, as
// extension scripts do, and answers on stdout with text, or with a JSON
// object {"result": "...", "error": true|false}. A non-zero exit status is
// an error for the model, with what the tool printed.
type UserTool struct {
	name   string
	exe    string // the executable's path on this machine
	runner UserToolRunner
}

// UserToolRunner runs a user tool's executable with input on stdin.
type UserToolRunner interface {
	Run(ctx context.Context, exe string, input []byte) (out string, exit int, err error)
}

// userToolName is what a tool file may be called: a tool name the model
// can write.
var userToolName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// BuiltinNames are the names of Zero's own tools, whether or not a session
// has them (memory without a store, search_engine without an endpoint): a
// user's tool never takes one, so that a name always means Zero's tool
// (the approval policy trusts Zero's memory tools by name).
var BuiltinNames = []string{"response", "call_subordinate", "text_editor", "code_execution_tool", "input",
	"memory_save", "memory_load", "memory_delete", "memory_forget", "behaviour_adjustment",
	"skills_tool", "document_query", "search_engine", "mcp_resources"}

// UserToolTimeout bounds one run of a user tool.
const UserToolTimeout = 120 * time.Second

// maxUserToolOutput bounds what a user tool's answer may be.
const maxUserToolOutput = 1 << 20

// FindUserTools lists the executables of dir as tools run by runner,
// skipping (with a reason in skipped) what cannot be a tool: hidden files,
// folders, names that are not tool names, files that are not executable.
func FindUserTools(dir string, runner UserToolRunner) (found []*UserTool, skipped []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil // no folder: no tools
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || e.IsDir() || strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".disabled") {
			continue
		}
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path) // a link to an executable is fine: it is the user's folder or a trusted copy
		if err != nil || !fi.Mode().IsRegular() || !hooks.IsExecutable(fi) {
			skipped = append(skipped, path+": not an executable file")
			continue
		}
		tool := strings.TrimSuffix(name, filepath.Ext(name))
		if !userToolName.MatchString(tool) {
			skipped = append(skipped, path+": a tool's name is lower-case letters, digits and _, starting with a letter")
			continue
		}
		if _, err := os.Stat(path + ".disabled"); err == nil {
			continue
		}
		found = append(found, &UserTool{name: tool, exe: path, runner: runner})
	}
	return found, skipped
}

// Name is the tool's name: its file's, without the extension.
func (t *UserTool) Name() string { return t.name }

// Kind is "execute": it runs a program.
func (*UserTool) Kind(string) string { return "execute" }

// Specs: any object. A user's tool is an executable and its prompt, which
// declare no schema; its arguments go to it as the model wrote them.
func (*UserTool) Specs() []loop.ToolSpec {
	return []loop.ToolSpec{{Parameters: json.RawMessage(`{"type":"object"}`)}}
}

// Path is the executable.
func (t *UserTool) Path() string { return t.exe }

func (t *UserTool) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	input, err := json.Marshal(map[string]any{
		"tool": t.name, "method": call.Method, "args": call.Args,
		"agent": call.Agent.Number, "session": call.Agent.Session().ID(), "workspace": call.Agent.Session().Workspace(),
	})
	if err != nil {
		return failed("%s: its arguments cannot be sent: %v", t.name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, UserToolTimeout)
	defer cancel()
	out, exit, err := t.runner.Run(ctx, t.exe, input)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return failed("%s did not answer within %v", t.name, UserToolTimeout)
		}
		if ctx.Err() != nil {
			return loop.ToolResult{}, ctx.Err()
		}
		return failed("%s could not run: %v", t.name, err)
	}
	out = strings.TrimSpace(strings.ReplaceAll(out, "\r\n", "\n"))
	if exit != 0 {
		return failed("%s failed (exit status %d): %s", t.name, exit, out)
	}
	var answer struct {
		Result *string `json:"result"`
		Error  bool    `json:"error"`
	}
	if strings.HasPrefix(out, "{") && json.Unmarshal([]byte(out), &answer) == nil && answer.Result != nil {
		return loop.ToolResult{Text: *answer.Result, IsError: answer.Error}, nil
	}
	return loop.ToolResult{Text: out}, nil
}

// HostRunner runs user tools on this machine (only those of the user's own
// config folder), in Dir, with Env (the agent's environment: no model
// keys).
type HostRunner struct {
	Dir string
	Env []string
}

func (r HostRunner) Run(ctx context.Context, exe string, input []byte) (string, int, error) {
	cmd := exec.CommandContext(ctx, exe)
	hooks.ConfineProcess(cmd) // its children go with it when it times out
	cmd.Dir, cmd.Env = r.Dir, r.Env
	cmd.Stdin = bytes.NewReader(input)
	var out capped
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil {
		return out.String(), ee.ExitCode(), nil
	}
	return out.String(), 0, err
}

// capped keeps the first maxUserToolOutput bytes written.
type capped struct{ b bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxUserToolOutput - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string { return c.b.String() }

// SandboxRunner runs user tools in the sandbox: the executable and its
// input are copied into a folder of the workspace the sandbox sees (Dir,
// the session's .zero/output, relative to the workspace Root), run from a
// fresh shell, and removed after. Every file is written through an os.Root
// of the workspace: the agent can make .zero/output a link to a folder of
// yours, and the copy must not land there.
type SandboxRunner struct {
	Backend sandbox.Backend
	Root    string // the workspace, absolute
	Dir     string // relative to Root
}

func (r SandboxRunner) Run(ctx context.Context, exe string, input []byte) (string, int, error) {
	if r.Backend == nil {
		return "", 0, errors.New("no sandbox is open to run it in")
	}
	root, err := os.OpenRoot(r.Root)
	if err != nil {
		return "", 0, err
	}
	defer root.Close()
	var b [8]byte
	rand.Read(b[:])
	rel := filepath.Join(r.Dir, "tool-"+hex.EncodeToString(b[:]))
	if err := root.MkdirAll(rel, 0o755); err != nil {
		return "", 0, err
	}
	defer root.RemoveAll(rel)
	name := filepath.Join(rel, filepath.Base(exe))
	if err := copyInto(root, exe, name); err != nil {
		return "", 0, err
	}
	in := filepath.Join(rel, "input.json")
	if err := root.WriteFile(in, input, 0o644); err != nil {
		return "", 0, err
	}
	sh, err := r.Backend.OpenShell(ctx)
	if err != nil {
		return "", 0, err
	}
	defer sh.Close()
	if err := sh.Start(shellQuote(filepath.Join(r.Root, name)) + " < " + shellQuote(filepath.Join(r.Root, in))); err != nil {
		return "", 0, err
	}
	res, err := sh.Wait(ctx, sandbox.Timeouts{}, nil)
	if err != nil {
		return res.Output, 0, err
	}
	if !res.Done {
		return res.Output, 0, fmt.Errorf("it stopped: %s", res.Reason)
	}
	return res.Output, res.ExitCode, nil
}

// copyInto copies the file from (a trusted copy or the user's folder) to
// the new file to inside root.
func copyInto(root *os.Root, from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := root.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, io.LimitReader(src, 64<<20)); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
