package acp

import (
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/server"
)

// session/load replays each turn as it happened: a refused write is its
// tool call failed with the refusal (not the model's "Wrote notes.txt."
// alone), a failed call is failed with its error, and a cancelled turn
// says it was cancelled (live, session/prompt's stop reason said so).
func TestChat21LoadReplaysAsItHappened(t *testing.T) {
	t.Parallel()
	pol := &server.Policy{Default: server.Auto, Rules: []server.Rule{{Tool: "text_editor:write", Decision: server.Ask}}}
	env := servertest.New(t, servertest.Options{Policy: pol, Store: true, Replies: []llmtest.Reply{
		{Match: "write notes", Content: toolReply("write", "text_editor:write", map[string]any{"path": "notes.txt", "content": "hello\n"})},
		{Match: "The user refused this call", Content: answer("Wrote notes.txt.")},
		{Match: "read the missing", Content: toolReply("read", "text_editor:read", map[string]any{"path": "missing.txt"})},
		{Match: "no such file", Content: answer("it is not there")},
		{Match: "hold on", HoldAfter: 1, ChunkSize: 4, Content: answer("never seen")},
	}})
	c := newFakeClient()
	c.choose = func(p sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
		return sdk.NewRequestPermissionOutcomeSelected(optReject)
	}
	h := start(t, env, c)
	h.init(t, false)
	s := h.newSession(t)
	for _, msg := range []string{"write notes", "read the missing file"} {
		if _, err := h.prompt(t.Context(), s.SessionId, msg); err != nil {
			t.Fatal(err)
		}
	}
	held := env.Model.Held()
	done := make(chan sdk.PromptResponse, 1)
	go func() {
		resp, err := h.prompt(t.Context(), s.SessionId, "hold on")
		if err != nil {
			t.Errorf("prompt: %v", err)
		}
		done <- resp
	}()
	select {
	case <-held:
	case <-time.After(waitLong):
		t.Fatal("the model was never asked")
	}
	if err := h.conn.Cancel(t.Context(), sdk.CancelNotification{SessionId: s.SessionId}); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("stop = %q, want cancelled", r.StopReason)
	}

	h2 := start(t, env, newFakeClient())
	h2.init(t, false)
	if _, err := h2.conn.LoadSession(t.Context(), sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: env.Workspace, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	us := h2.client.of(s.SessionId)
	// Each turn: the user's message, then what happened in it, in order.
	var got []string
	for _, u := range us {
		switch {
		case u.UserMessageChunk != nil:
			got = append(got, "user: "+u.UserMessageChunk.Content.Text.Text)
		case u.ToolCall != nil:
			got = append(got, "call: "+string(u.ToolCall.Kind)+" "+u.ToolCall.Title)
		case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
			got = append(got, "status: "+string(*u.ToolCallUpdate.Status)+" "+toolText([]sdk.SessionUpdate{u}))
		case u.AgentMessageChunk != nil:
			got = append(got, "message: "+strings.TrimSpace(u.AgentMessageChunk.Content.Text.Text))
		}
	}
	want := []string{
		"user: write notes",
		"call: edit H: write",
		"status: failed The user refused this call: the user refused",
		"message: Wrote notes.txt.",
		"user: read the missing file",
		"call: read H: read",
		"status: in_progress ",
		"status: failed ```\ncannot read " + env.Workspace + "/missing.txt: no such file\n```",
		"message: it is not there",
		"user: hold on",
		"message: (cancelled)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the replay:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
