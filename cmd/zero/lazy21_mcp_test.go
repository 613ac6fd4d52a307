package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
)

// The user's MCP servers start with the first run of a session, whose
// system prompt lists their tools, not at ACP initialize or session/new.
func TestACPStartsMCPServersAtTheFirstPrompt(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: `{"thoughts": ["done"], "tool_name": "response", "tool_args": {"text": "hello"}}`},
	)
	cfg := t.TempDir()
	marker := filepath.Join(t.TempDir(), "started")
	script := filepath.Join(cfg, "mcp.sh")
	mustWrite(t, script, "touch "+marker+"\n"+strings.Replace(slowMCPServer, "sleep 3\n", "", 1))
	mustWrite(t, filepath.Join(cfg, "zero", "config.yaml"), "mcp_servers:\n  lazy:\n    command: /bin/sh\n    args: ["+script+"]\n")
	ws := t.TempDir()
	cmd := zeroCmd(t, []string{"ZERO_MODEL=" + llmtest.ModelName, "OPENAI_BASE_URL=" + srv.URL(), "XDG_CONFIG_HOME=" + cfg},
		"acp", "--workspace", ws)
	c := startACPPeer(t, cmd)
	<-c.send("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(<-c.send("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}), &s); err != nil || s.SessionID == "" {
		t.Fatalf("session/new: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the MCP server started before the first prompt")
	}
	res := <-c.send("session/prompt", map[string]any{"sessionId": s.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	if !strings.Contains(string(res), "end_turn") {
		t.Fatalf("session/prompt = %s", res)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the MCP server did not start for the prompt: %v", err)
	}
	if reqs := srv.Requests(); len(reqs) == 0 || !reqs[0].Teaches("lazy.ping") {
		t.Error("the first prompt's request does not offer the MCP server's tools")
	}
}
