package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/server"
)

const waitLong = time.Minute // a guard against a hang, never reached when things work

// The model's replies, shared by the face tests.
var (
	toolReply = servertest.ToolReply
	answer    = servertest.Answer
)

func command(code string) map[string]any { return map[string]any{"runtime": "terminal", "code": code} }

// fakeClient is the editor: it records updates and answers fs and
// permission requests.
type fakeClient struct {
	mu      sync.Mutex
	updates []sdk.SessionNotification
	changed chan struct{}
	perms   []sdk.RequestPermissionRequest
	choose  func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome
	permErr error             // when set, permission requests fail with it
	buffers map[string]string // path → unsaved text
	writes  map[string]string
}

func newFakeClient() *fakeClient {
	return &fakeClient{changed: make(chan struct{}), buffers: map[string]string{}, writes: map[string]string{}}
}

func (c *fakeClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return nil
}

func (c *fakeClient) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.perms = append(c.perms, p)
	choose, permErr := c.choose, c.permErr
	c.mu.Unlock()
	if permErr != nil {
		return sdk.RequestPermissionResponse{}, permErr
	}
	if choose == nil {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: choose(p)}, nil
}

func (c *fakeClient) ReadTextFile(_ context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.writes[p.Path]; ok {
		return sdk.ReadTextFileResponse{Content: s}, nil
	}
	if s, ok := c.buffers[p.Path]; ok {
		return sdk.ReadTextFileResponse{Content: s}, nil
	}
	return sdk.ReadTextFileResponse{}, &sdk.RequestError{Code: -32002, Message: "Resource not found"}
}

func (c *fakeClient) WriteTextFile(_ context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes[p.Path] = p.Content
	return sdk.WriteTextFileResponse{}, nil
}

func (c *fakeClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}
func (c *fakeClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}
func (c *fakeClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}
func (c *fakeClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}
func (c *fakeClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

// of returns the updates of session id so far.
func (c *fakeClient) of(id sdk.SessionId) []sdk.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []sdk.SessionUpdate
	for _, n := range c.updates {
		if n.SessionId == id {
			out = append(out, n.Update)
		}
	}
	return out
}

// waitFor waits until pred holds for the updates of id.
func (c *fakeClient) waitFor(t *testing.T, id sdk.SessionId, what string, pred func([]sdk.SessionUpdate) bool) {
	t.Helper()
	deadline := time.After(waitLong)
	for {
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		if pred(c.of(id)) {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; updates: %s", what, describe(c.of(id)))
		}
	}
}

// describe renders updates compactly: one token per update.
func describe(us []sdk.SessionUpdate) string {
	var parts []string
	for _, u := range us {
		parts = append(parts, token(u))
	}
	return strings.Join(parts, " ")
}

func token(u sdk.SessionUpdate) string {
	switch {
	case u.UserMessageChunk != nil:
		return "user"
	case u.AgentMessageChunk != nil:
		return "message"
	case u.AgentThoughtChunk != nil:
		return "thought"
	case u.ToolCall != nil:
		return "tool_call:" + string(u.ToolCall.Kind) + ":" + string(u.ToolCall.Status)
	case u.ToolCallUpdate != nil:
		s := "update"
		if u.ToolCallUpdate.Status != nil {
			s += ":" + string(*u.ToolCallUpdate.Status)
		}
		if len(u.ToolCallUpdate.Content) > 0 {
			s += ":content"
		}
		return s
	case u.AvailableCommandsUpdate != nil:
		return "commands"
	case u.ConfigOptionUpdate != nil:
		return "config"
	}
	return "other"
}

func messageText(us []sdk.SessionUpdate) string {
	var b strings.Builder
	for _, u := range us {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

func toolText(us []sdk.SessionUpdate) string {
	var b strings.Builder
	for _, u := range us {
		var content []sdk.ToolCallContent
		if u.ToolCallUpdate != nil {
			content = u.ToolCallUpdate.Content
		}
		for _, c := range content {
			if c.Content != nil && c.Content.Content.Text != nil {
				b.WriteString(c.Content.Content.Text.Text)
			}
		}
	}
	return b.String()
}

// harness is one Serve on pipes with the SDK's client side.
type harness struct {
	env    *servertest.Env
	client *fakeClient
	conn   *sdk.ClientSideConnection
	in     *io.PipeWriter // the client's end of Serve's input
	served chan error
}

func start(t *testing.T, env *servertest.Env, client *fakeClient) *harness {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &harness{env: env, client: client, in: inW, served: make(chan error, 1)}
	go func() {
		h.served <- Serve(t.Context(), inR, outW, Options{Manager: env.Manager, Catalog: env.Catalog, Version: "test"})
		outW.Close()
	}()
	h.conn = sdk.NewClientSideConnection(client, inW, outR)
	h.conn.SetLogger(discard())
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-h.served:
		case <-time.After(waitLong):
			t.Errorf("Serve did not return")
		}
	})
	return h
}

func (h *harness) init(t *testing.T, fs bool) {
	t.Helper()
	caps := sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: fs, WriteTextFile: fs}}
	resp, err := h.conn.Initialize(t.Context(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if resp.ProtocolVersion != 1 || !resp.AgentCapabilities.LoadSession || resp.AgentInfo == nil || resp.AgentInfo.Name != "zero" {
		t.Fatalf("initialize answered %+v", resp)
	}
}

func (h *harness) newSession(t *testing.T) sdk.NewSessionResponse {
	t.Helper()
	resp, err := h.conn.NewSession(t.Context(), sdk.NewSessionRequest{Cwd: h.env.Workspace, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	h.client.waitFor(t, resp.SessionId, "available_commands_update", func(us []sdk.SessionUpdate) bool {
		return strings.Contains(describe(us), "commands")
	})
	return resp
}

func (h *harness) prompt(ctx context.Context, id sdk.SessionId, text string) (sdk.PromptResponse, error) {
	return h.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
}

func discard() *slogLogger { return slogDiscard }

func TestRunWithCommand(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Replies: []llmtest.Reply{
		{Reasoning: "let me look", Content: toolReply("run it", "code_execution_tool", command("echo hello-acp"))},
		{Content: answer("all done: hello-acp")},
	}})
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	resp, err := h.prompt(t.Context(), s.SessionId, "say hello")
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	if resp.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop reason = %q, want end_turn", resp.StopReason)
	}
	us := h.client.of(s.SessionId)
	// Collapse repeats so the order is what is checked.
	var order []string
	for _, u := range us {
		tok := token(u)
		if len(order) == 0 || order[len(order)-1] != tok {
			order = append(order, tok)
		}
	}
	want := []string{"commands", "thought", "tool_call:execute:pending", "update:in_progress", "update:content", "update:completed:content", "thought", "message"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("update order (-want +got):\n%s\nall: %s", diff, describe(us))
	}
	if got := messageText(us); got != "all done: hello-acp" {
		t.Errorf("message = %q", got)
	}
	if got := toolText(us); !strings.Contains(got, "hello-acp") {
		t.Errorf("tool output %q lacks the command's output", got)
	}
	for _, u := range us {
		if u.ToolCall != nil {
			var in map[string]any
			raw, _ := json.Marshal(u.ToolCall.RawInput)
			_ = json.Unmarshal(raw, &in)
			if in["code"] != "echo hello-acp" {
				t.Errorf("rawInput = %s", raw)
			}
		}
	}
}

func TestIntervention(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Replies: []llmtest.Reply{
		{Reasoning: "thinking slowly about it all", ChunkSize: 4, HoldAfter: 1, Content: answer("first answer")}, // held mid-stream until the intervention cuts it
		{Match: "CHANGE-OF-PLAN", Content: answer("switched plans")},
	}})
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	first := make(chan sdk.PromptResponse, 1)
	go func() {
		resp, err := h.prompt(t.Context(), s.SessionId, "start something")
		if err != nil {
			t.Errorf("first prompt: %v", err)
		}
		first <- resp
	}()
	// The run's own reasoning, not any thought chunk (a warning is one too):
	// only then has the first prompt surely started the run.
	h.client.waitFor(t, s.SessionId, "the run's reasoning", func(us []sdk.SessionUpdate) bool {
		for _, u := range us {
			if c := u.AgentThoughtChunk; c != nil && c.Content.Text != nil && strings.Contains(c.Content.Text.Text, "thin") {
				return true
			}
		}
		return false
	})
	resp, err := h.prompt(t.Context(), s.SessionId, "CHANGE-OF-PLAN please")
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("intervention prompt = %+v, %v; want end_turn at once", resp, err)
	}
	select {
	case r := <-first:
		if r.StopReason != sdk.StopReasonEndTurn {
			t.Errorf("first prompt stop = %q, want end_turn", r.StopReason)
		}
	case <-time.After(waitLong):
		t.Fatal("first prompt did not end")
	}
	if got := messageText(h.client.of(s.SessionId)); !strings.Contains(got, "switched plans") {
		t.Errorf("message %q lacks the answer to the intervention", got)
	}
	// Loaded back, the conversation shows both of the user's messages.
	h2 := start(t, env, newFakeClient())
	h2.init(t, false)
	if _, err := h2.conn.LoadSession(t.Context(), sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: env.Workspace, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	var users []string
	for _, u := range h2.client.of(s.SessionId) {
		if u.UserMessageChunk != nil {
			users = append(users, u.UserMessageChunk.Content.Text.Text)
		}
	}
	if diff := cmp.Diff([]string{"start something", "CHANGE-OF-PLAN please"}, users); diff != "" {
		t.Errorf("replayed user messages (-want +got):\n%s", diff)
	}
}

func TestCancelMidCommand(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Replies: []llmtest.Reply{
		{Content: toolReply("wait", "code_execution_tool", command("exec sleep 3000.0417"))},
	}})
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	done := make(chan sdk.PromptResponse, 1)
	go func() {
		resp, err := h.prompt(t.Context(), s.SessionId, "wait a while")
		if err != nil {
			t.Errorf("prompt: %v", err)
		}
		done <- resp
	}()
	h.client.waitFor(t, s.SessionId, "in_progress", func(us []sdk.SessionUpdate) bool {
		return strings.Contains(describe(us), "update:in_progress")
	})
	// The sandbox may run the command in namespaces of its own: it is
	// found by its argument, not by its pid.
	const marker = "3000.0417"
	deadline := time.Now().Add(waitLong)
	for !servertest.Running(marker) {
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := h.conn.Cancel(t.Context(), sdk.CancelNotification{SessionId: s.SessionId}); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	select {
	case r := <-done:
		if r.StopReason != sdk.StopReasonCancelled {
			t.Errorf("stop = %q, want cancelled", r.StopReason)
		}
	case <-time.After(waitLong):
		t.Fatal("prompt did not end after session/cancel")
	}
	if !strings.Contains(describe(h.client.of(s.SessionId)), "update:failed") {
		t.Errorf("the command's tool call did not end failed: %s", describe(h.client.of(s.SessionId)))
	}
	for servertest.Running(marker) {
		if time.Now().After(deadline) {
			t.Fatalf("sleep %s still runs after cancel", marker)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func askPolicy() *server.Policy {
	return &server.Policy{Default: server.Auto, Rules: []server.Rule{{Tool: "code_execution_tool", Decision: server.Ask}}}
}

func TestApprovalAllowAlways(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Policy: askPolicy(), Replies: []llmtest.Reply{
		{Content: toolReply("one", "code_execution_tool", command("echo first-run"))},
		{Content: toolReply("two", "code_execution_tool", command("echo second-run"))},
		{Content: answer("both ran")},
	}})
	c := newFakeClient()
	c.choose = func(p sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
		return sdk.NewRequestPermissionOutcomeSelected(optAllowAlways)
	}
	h := start(t, env, c)
	h.init(t, false)
	s := h.newSession(t)
	resp, err := h.prompt(t.Context(), s.SessionId, "run two commands")
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", resp, err)
	}
	c.mu.Lock()
	perms := c.perms
	c.mu.Unlock()
	if len(perms) != 1 {
		t.Fatalf("%d permission requests, want 1 (allow always is remembered)", len(perms))
	}
	var kinds []string
	for _, o := range perms[0].Options {
		kinds = append(kinds, string(o.Kind))
	}
	if diff := cmp.Diff([]string{"allow_once", "allow_always", "reject_once"}, kinds); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	us := h.client.of(s.SessionId)
	if out := toolText(us); !strings.Contains(out, "first-run") || !strings.Contains(out, "second-run") {
		t.Errorf("outputs %q lack a command", out)
	}
	if got := strings.Count(describe(us), "update:completed"); got != 2 {
		t.Errorf("%d completed tool calls, want 2: %s", got, describe(us))
	}
}

func TestApprovalRefused(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Policy: askPolicy(), Replies: []llmtest.Reply{
		{Content: toolReply("try", "code_execution_tool", command("touch refused.txt"))},
		{Match: "The user refused this call", Content: answer("ok, not running it")},
	}})
	c := newFakeClient()
	c.choose = func(p sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
		return sdk.NewRequestPermissionOutcomeSelected(optReject)
	}
	h := start(t, env, c)
	h.init(t, false)
	s := h.newSession(t)
	resp, err := h.prompt(t.Context(), s.SessionId, "make a file")
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", resp, err)
	}
	us := h.client.of(s.SessionId)
	if !strings.Contains(describe(us), "update:failed") {
		t.Errorf("the refused call did not fail: %s", describe(us))
	}
	if _, err := os.Stat(filepath.Join(env.Workspace, "refused.txt")); err == nil {
		t.Error("the refused command ran")
	}
	if got := messageText(us); got != "ok, not running it" {
		t.Errorf("message = %q", got)
	}
}

func TestLoadReplays(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Replies: []llmtest.Reply{
		{Content: toolReply("run", "code_execution_tool", command("echo replayed-output"))},
		{Content: answer("the answer")},
	}})
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	if _, err := h.prompt(t.Context(), s.SessionId, "first message"); err != nil {
		t.Fatal(err)
	}
	// A second connection (the editor restarted) loads it back.
	h2 := start(t, env, newFakeClient())
	h2.init(t, false)
	if _, err := h2.conn.LoadSession(t.Context(), sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: env.Workspace, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	// The SDK delivers the notifications sent before an answer first.
	us := h2.client.of(s.SessionId)
	if len(us) == 0 || us[0].UserMessageChunk == nil || us[0].UserMessageChunk.Content.Text.Text != "first message" {
		t.Fatalf("replay does not start with the user's message: %s", describe(us))
	}
	if !strings.Contains(toolText(us), "replayed-output") || messageText(us) != "the answer" {
		t.Errorf("replay lacks output or answer: %s", describe(us))
	}
	_, err := h2.conn.LoadSession(t.Context(), sdk.LoadSessionRequest{SessionId: "nope", Cwd: env.Workspace, McpServers: []sdk.McpServer{}})
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != codeResourceNotFound {
		t.Errorf("load of an unknown id = %v, want resource not found", err)
	}
	list, err := h2.conn.ListSessions(t.Context(), sdk.ListSessionsRequest{})
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].Cwd != env.Workspace || list.Sessions[0].Title == nil {
		t.Errorf("session/list = %+v, %v", list, err)
	}
}

func TestTwoSessions(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Replies: []llmtest.Reply{
		{Match: "alpha task", Reasoning: "alpha thinking", ChunkSize: 3, Delay: llmtest.Duration(5 * time.Millisecond), Content: answer("alpha done")},
		{Match: "beta task", Reasoning: "beta thinking", ChunkSize: 3, Delay: llmtest.Duration(5 * time.Millisecond), Content: answer("beta done")},
	}})
	h := start(t, env, newFakeClient())
	h.init(t, false)
	a, b := h.newSession(t), h.newSession(t)
	var wg sync.WaitGroup
	for _, p := range []struct {
		id   sdk.SessionId
		text string
	}{{a.SessionId, "alpha task"}, {b.SessionId, "beta task"}} {
		wg.Go(func() {
			resp, err := h.prompt(t.Context(), p.id, p.text)
			if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
				t.Errorf("prompt %s = %+v, %v", p.text, resp, err)
			}
		})
	}
	wg.Wait()
	if got := messageText(h.client.of(a.SessionId)); got != "alpha done" {
		t.Errorf("session a message = %q", got)
	}
	if got := messageText(h.client.of(b.SessionId)); got != "beta done" {
		t.Errorf("session b message = %q", got)
	}
}

func TestEditorFiles(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Replies: []llmtest.Reply{
		{Content: toolReply("read", "text_editor:read", map[string]any{"path": "notes.txt"})},
		{Content: toolReply("write", "text_editor:write", map[string]any{"path": "out.txt", "content": "fresh text\n"})},
		{Content: answer("edited")},
	}})
	c := newFakeClient()
	notes := filepath.Join(env.Workspace, "notes.txt")
	c.buffers[notes] = "unsaved buffer line\n"
	if err := os.WriteFile(notes, []byte("saved disk line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := start(t, env, c)
	h.init(t, true)
	s := h.newSession(t)
	if resp, err := h.prompt(t.Context(), s.SessionId, "edit"); err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", resp, err)
	}
	us := h.client.of(s.SessionId)
	if out := toolText(us); !strings.Contains(out, "unsaved buffer line") || strings.Contains(out, "saved disk line") {
		t.Errorf("text_editor:read did not go through the editor: %q", out)
	}
	out := filepath.Join(env.Workspace, "out.txt")
	c.mu.Lock()
	written := c.writes[out]
	c.mu.Unlock()
	if written != "fresh text\n" {
		t.Errorf("editor got %q for %s", written, out)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the write went to the disk instead of the editor")
	}
	var kinds []string
	var diff *sdk.ToolCallContentDiff
	for _, u := range us {
		if u.ToolCall != nil {
			kinds = append(kinds, string(u.ToolCall.Kind))
			if len(u.ToolCall.Locations) == 0 || !filepath.IsAbs(u.ToolCall.Locations[0].Path) {
				t.Errorf("tool call %s has no absolute location", u.ToolCall.ToolCallId)
			}
		}
		if u.ToolCallUpdate != nil {
			for _, c := range u.ToolCallUpdate.Content {
				if c.Diff != nil {
					diff = c.Diff
				}
			}
		}
	}
	if d := cmp.Diff([]string{"read", "edit"}, kinds); d != "" {
		t.Errorf("kinds (-want +got):\n%s", d)
	}
	if diff == nil || diff.Path != out || diff.NewText != "fresh text\n" || diff.OldText != nil {
		t.Errorf("diff = %+v, want new file %s", diff, out)
	}
}

func TestSlashCommandsAndConfig(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{})
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	var ids []string
	for _, o := range s.ConfigOptions {
		ids = append(ids, string(o.Select.Id))
	}
	if d := cmp.Diff([]string{"mode", "profile", "model"}, ids); d != "" {
		t.Errorf("config options (-want +got):\n%s", d)
	}
	sess, err := env.Manager.Get(string(s.SessionId))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		prompt, reply string
		check         func() bool
	}{
		{"/pause", "Paused", sess.Paused},
		{"/resume", "Resumed", func() bool { return !sess.Paused() }},
		{"/profile developer", "now developer", func() bool { return sess.Spec().Profile == "developer" }},
		{"/profile nosuch", "no profile", func() bool { return sess.Spec().Profile == "developer" }},
		{"/reset", "starts over", func() bool { return true }},
	}
	for _, tt := range tests { // in order: one session
		before := len(h.client.of(s.SessionId))
		resp, err := h.prompt(t.Context(), s.SessionId, tt.prompt)
		if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("%s = %+v, %v", tt.prompt, resp, err)
		}
		if got := messageText(h.client.of(s.SessionId)[before:]); !strings.Contains(got, tt.reply) {
			t.Errorf("%s answered %q, want %q in it", tt.prompt, got, tt.reply)
		}
		if !tt.check() {
			t.Errorf("%s did not take effect", tt.prompt)
		}
	}
	if !strings.Contains(describe(h.client.of(s.SessionId)), "config") {
		t.Error("/profile sent no config_option_update")
	}

	resp, err := h.conn.SetSessionConfigOption(t.Context(), sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
		SessionId: s.SessionId, ConfigId: "profile", Value: "researcher"}})
	if err != nil || string(resp.ConfigOptions[1].Select.CurrentValue) != "researcher" || sess.Spec().Profile != "researcher" {
		t.Errorf("set_config_option = %+v, %v (profile %q)", resp, err, sess.Spec().Profile)
	}
	_, err = h.conn.SetSessionConfigOption(t.Context(), sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
		SessionId: s.SessionId, ConfigId: "profile", Value: "nosuch"}})
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Error(), "value") {
		t.Errorf("bad value = %v, want invalid params naming value", err)
	}
}

// rawLines drives Serve with raw JSON lines.
func rawLines(t *testing.T, env *servertest.Env) (send func(string), recv func() map[string]any, closeIn func(), served <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		done <- Serve(t.Context(), inR, outW, Options{Manager: env.Manager, Catalog: env.Catalog})
		outW.Close()
	}()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	t.Cleanup(func() { inW.Close(); <-finished })
	send = func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	recv = func() map[string]any {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("output ended")
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("bad output line %q: %v", l, err)
			}
			return m
		case <-time.After(waitLong):
			t.Fatal("no output")
		}
		return nil
	}
	return send, recv, func() { inW.Close() }, done
}

func TestRobustness(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{})
	send, recv, _, _ := rawLines(t, env)
	code := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	tests := []struct {
		name, line string
		code       float64
		mention    string
	}{
		{"not json", `{"jsonrpc":"2.0","id":1,"method":`, -32700, ""},
		{"not an object", `[1,2]`, -32600, ""},
		{"unknown method", `{"jsonrpc":"2.0","id":2,"method":"zero/nothing","params":{}}`, -32601, "zero/nothing"},
		{"bad param type", `{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":5,"mcpServers":[]}}`, -32602, "cwd"},
		{"missing param", `{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"mcpServers":[]}}`, -32602, "cwd"},
		{"relative cwd", `{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"rel","mcpServers":[]}}`, -32602, "cwd"},
		{"prompt without text", `{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":"x","prompt":"hi"}}`, -32602, "prompt"},
	}
	for _, tt := range tests { // in order: one stream
		send(tt.line)
		m := recv()
		if code(m) != tt.code {
			t.Errorf("%s: answer %v, want code %v", tt.name, m, tt.code)
		}
		if raw, _ := json.Marshal(m["error"]); !strings.Contains(string(raw), tt.mention) {
			t.Errorf("%s: error %s does not mention %q", tt.name, raw, tt.mention)
		}
	}
	send(`{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":1}}`)
	if m := recv(); m["result"] == nil {
		t.Errorf("initialize after bad input = %v", m)
	}
}

func TestEOFEndsServe(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Replies: []llmtest.Reply{
		{Content: toolReply("wait", "code_execution_tool", command("sleep 30"))},
	}})
	send, recv, closeIn, served := rawLines(t, env)
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	recv()
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, env.Workspace))
	m := recv()
	id := m["result"].(map[string]any)["sessionId"].(string)
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"wait"}]}}`, id))
	for { // until the command runs
		m := recv()
		if raw, _ := json.Marshal(m); strings.Contains(string(raw), `"in_progress"`) {
			break
		}
	}
	closeIn()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve = %v, want nil at EOF", err)
		}
	case <-time.After(waitLong):
		t.Fatal("Serve did not return after EOF")
	}
	sess, err := env.Manager.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitLong)
	for sess.Running() {
		if time.Now().After(deadline) {
			t.Fatal("the run goes on after the client left")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
