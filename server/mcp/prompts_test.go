package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/internal/servertest"
)

// TestPrompts: the workspace's saved commands are MCP prompts (clients
// show them as slash commands), listed with their description, source and
// argument, read again on every list (a file added shows at once), and
// prompts/get gives the expanded text, its !`…` not run.
func TestPrompts(t *testing.T) {
	ws := t.TempDir()
	put := func(name, text string) {
		p := filepath.Join(ws, ".claude/commands", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	marker := filepath.Join(ws, "ran")
	put("review.md", "---\ndescription: Review a file\nargument-hint: [file]\n---\nReview $1 after !`touch "+marker+"`.\n")
	env := servertest.New(t, servertest.Options{Workspace: ws})
	r := startStdioFace(t, env, clientOpts{}, func(f *face) { f.opts.DefaultWorkspace = ws })

	list, err := r.c.ListPrompts(t.Context(), mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Prompts) != 1 || list.Prompts[0].Name != "review" || list.Prompts[0].Description != "Review a file (.claude/commands/review.md)" ||
		len(list.Prompts[0].Arguments) != 1 || list.Prompts[0].Arguments[0].Description != "[file]" {
		t.Fatalf("prompts = %+v", list.Prompts)
	}
	put("git/commit.md", "Write the commit message.")
	list, err = r.c.ListPrompts(t.Context(), mcp.ListPromptsRequest{})
	if err != nil || len(list.Prompts) != 2 {
		t.Fatalf("after a file was added: %+v, %v", list, err)
	}

	got, err := r.c.GetPrompt(t.Context(), mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"arguments": "main.go"}}})
	if err != nil {
		t.Fatal(err)
	}
	text := got.Messages[0].Content.(mcp.TextContent).Text
	if got.Messages[0].Role != mcp.RoleUser || !strings.HasPrefix(text, "Review main.go after (the output of `touch "+marker+"`).") {
		t.Errorf("prompts/get = %+v", got.Messages)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("prompts/get ran the file's !`…`")
	}
	if _, err := r.c.GetPrompt(t.Context(), mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "nosuch"}}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("an unknown prompt: %v", err)
	}
}
