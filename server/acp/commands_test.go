package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
)

// TestSavedCommands: a workspace's .claude/commands are offered in
// available_commands_update (description, source, argument hint), Zero's
// own commands win over a file of their name, and using one sends its
// expanded text. A cloned repository's command that names one tool cannot
// get the agent to run another (the broker refuses it), and its !`…`
// runs nothing on the host.
func TestSavedCommands(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	put := func(name, text string) {
		p := filepath.Join(ws, ".claude/commands", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	marker := filepath.Join(ws, "ran")
	put("review.md", "---\ndescription: Review a file\nargument-hint: [file]\nallowed-tools: Read\n---\nREVIEW-CMD $1 !`touch "+marker+"`\n")
	put("reset.md", "RESET-FILE: this must never reach the model\n")
	env := servertest.New(t, servertest.Options{Workspace: ws, Replies: []llmtest.Reply{
		{Match: "REVIEW-CMD", Content: toolReply("let me run it", "code_execution_tool", command("touch "+marker))},
		{Match: "allows only these tools", Content: answer("refused as told")},
	}})
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)

	var offered *sdk.AvailableCommand
	resets := 0
	for _, u := range h.client.of(s.SessionId) {
		if u.AvailableCommandsUpdate == nil {
			continue
		}
		for _, c := range u.AvailableCommandsUpdate.AvailableCommands {
			switch c.Name {
			case "review":
				offered = &c
			case "reset":
				resets++
			}
		}
	}
	if offered == nil || offered.Description != "Review a file (.claude/commands/review.md)" ||
		offered.Input == nil || offered.Input.Unstructured == nil || offered.Input.Unstructured.Hint != "[file]" {
		t.Fatalf("review offered as %+v", offered)
	}
	if resets != 1 {
		t.Errorf("reset offered %d times, want Zero's once", resets)
	}

	if resp, err := h.prompt(t.Context(), s.SessionId, "/review main.go"); err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", resp, err)
	}
	reqs := env.Model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	first := promptOf(reqs[0])
	if !strings.Contains(first, "REVIEW-CMD main.go (the output of `touch "+marker+"`)") || !strings.Contains(first, "Zero does not run them") {
		t.Errorf("the model got:\n%s", first)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command's tools were widened, or its !`…` ran: the marker exists")
	}
	if !strings.Contains(promptOf(reqs[1]), "Refused: the command the user ran allows only these tools for this message: response, text_editor.") {
		t.Errorf("the refusal did not reach the model:\n%s", promptOf(reqs[1]))
	}

	// /reset is Zero's: the file of that name never reaches the model.
	if _, err := h.prompt(t.Context(), s.SessionId, "/reset"); err != nil {
		t.Fatal(err)
	}
	for _, r := range env.Model.Requests() {
		if strings.Contains(promptOf(r), "RESET-FILE") {
			t.Error("a workspace file took /reset")
		}
	}
}

// promptOf is the text of a model request's messages.
func promptOf(r llmtest.Recorded) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Content + "\n")
	}
	return b.String()
}
