package security

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/internal/proctest"
	"github.com/zeroagent/zero/llm/llmtest"
)

// secretKey is the API key every test's zero holds; no attack may read it.
const secretKey = "sk-security-suite-secret-0123456789"

var zeroBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zero-security-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	zeroBin = filepath.Join(dir, "zero")
	if out, err := exec.Command("go", "build", "-o", zeroBin, "../cmd/zero").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build zero: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// box is one user's machine as zero sees it: a home with a config folder,
// a workspace, and the scripted model.
type box struct {
	t     *testing.T
	home  string
	ws    string
	tmp   string // zero's TMPDIR
	model *llmtest.Server
	env   []string
}

func newBox(t *testing.T, replies ...llmtest.Reply) *box {
	t.Helper()
	home := t.TempDir()
	b := &box{t: t, home: home, ws: t.TempDir(), tmp: t.TempDir(), model: llmtest.NewServer(t, replies...)}
	b.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"TMPDIR=" + b.tmp,
		"ZERO_MODEL=" + llmtest.ModelName,
		"OPENAI_BASE_URL=" + b.model.URL(),
		"OPENAI_API_KEY=" + secretKey,
		"ZERO_SANDBOX=local",
	}
	return b
}

// boxIn is a box whose commands run in backend: "docker" (the test image)
// or "local" (under bubblewrap, which the test requires).
func boxIn(t *testing.T, backend string, replies ...llmtest.Reply) *box {
	t.Helper()
	if backend == "docker" {
		return dockerBox(t, replies...)
	}
	requireBwrap(t)
	return newBox(t, replies...)
}

// userConfig writes the user's own config.yaml.
func (b *box) userConfig(yaml string) {
	b.t.Helper()
	write(b.t, filepath.Join(b.home, ".config", "zero", "config.yaml"), yaml, 0o644)
}

// cmd is zero with args in the box's environment (extra entries win).
func (b *box) cmd(ctx context.Context, extra []string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, zeroBin, args...)
	c.Env = append(append([]string{}, b.env...), extra...)
	c.Dir = b.ws
	c.WaitDelay = 5 * time.Second
	return c
}

// run runs zero to the end and returns what it printed.
func (b *box) run(extra []string, args ...string) (stdout, stderr string, err error) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), proctest.HangGuard)
	defer cancel()
	c := b.cmd(ctx, extra, args...)
	var o, e bytes.Buffer
	c.Stdout, c.Stderr = &o, &e
	err = c.Run()
	return o.String(), e.String(), err
}

// outputs joins what the agent's tools printed, from zero run --json's
// events: not the commands the model asked for, whose text may name what
// they probe for.
func outputs(jsonEvents string) string {
	var b strings.Builder
	for _, line := range strings.Split(jsonEvents, "\n") {
		var e struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && (e.Type == "tool_output_delta" || e.Type == "tool_result") {
			b.WriteString(e.Text + "\n")
		}
	}
	return b.String()
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// tool is a model reply asking for a tool.
func tool(name string, args string) llmtest.Reply {
	return llmtest.Reply{Content: `{"thoughts": ["step"], "headline": "Working", "tool_name": "` + name + `", "tool_args": ` + args + `}`}
}

// shell is a model reply running a terminal command (code is JSON-quoted).
func shell(code string) llmtest.Reply {
	return tool("code_execution_tool", `{"runtime": "terminal", "code": `+quote(code)+`}`)
}

func answer(text string) llmtest.Reply {
	return tool("response", `{"text": `+quote(text)+`}`)
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteRune('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// acpClient is an editor on `zero acp`: it records updates and answers
// permission requests with allow.
type acpClient struct {
	mu      sync.Mutex
	updates []sdk.SessionNotification
	perms   []sdk.RequestPermissionRequest
	allow   bool
}

func (c *acpClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n)
	c.mu.Unlock()
	return nil
}

func (c *acpClient) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.perms = append(c.perms, p)
	allow := c.allow
	c.mu.Unlock()
	if !allow {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("reject_once")}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(p.Options[0].OptionId)}, nil
}

func (c *acpClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound("fs/read_text_file")
}
func (c *acpClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound("fs/write_text_file")
}
func (c *acpClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}
func (c *acpClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}
func (c *acpClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}
func (c *acpClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}
func (c *acpClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

// text joins every text the editor was shown.
func (c *acpClient) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, n := range c.updates {
		u := n.Update
		switch {
		case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		case u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil:
			b.WriteString(u.AgentThoughtChunk.Content.Text.Text)
		case u.ToolCallUpdate != nil:
			for _, tc := range u.ToolCallUpdate.Content {
				if tc.Content != nil && tc.Content.Content.Text != nil {
					b.WriteString(tc.Content.Content.Text.Text)
				}
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func (c *acpClient) permissions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.perms)
}

// acp starts `zero acp` in the box and connects an editor to it.
type acpSession struct {
	conn   *sdk.ClientSideConnection
	client *acpClient
	proc   *exec.Cmd
	stdin  io.WriteCloser
	stderr *proctest.Buffer
}

func (b *box) acp(extra []string, args ...string) *acpSession {
	b.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b.t.Cleanup(cancel)
	c := b.cmd(ctx, extra, append([]string{"acp"}, args...)...)
	stdin, err := c.StdinPipe()
	if err != nil {
		b.t.Fatal(err)
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		b.t.Fatal(err)
	}
	s := &acpSession{client: &acpClient{}, proc: c, stdin: stdin, stderr: &proctest.Buffer{}}
	c.Stderr = s.stderr
	if err := c.Start(); err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.Process.Kill()
			<-done
		}
	})
	s.conn = sdk.NewClientSideConnection(s.client, stdin, stdout)
	if _, err := s.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		b.t.Fatalf("initialize: %v\n%s", err, s.stderr)
	}
	return s
}

// newSession opens a session on ws.
func (s *acpSession) newSession(t *testing.T, ws string) sdk.SessionId {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), proctest.HangGuard)
	defer cancel()
	res, err := s.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v\n%s", err, s.stderr)
	}
	return res.SessionId
}

// prompt sends a message and waits for the turn to end.
func (s *acpSession) prompt(t *testing.T, id sdk.SessionId, text string) sdk.StopReason {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), proctest.HangGuard)
	defer cancel()
	res, err := s.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	if err != nil {
		t.Fatalf("session/prompt: %v\n%s", err, s.stderr)
	}
	return res.StopReason
}
