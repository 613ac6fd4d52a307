package main

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
)

// An editor that goes away during a run (its end of the pipe closes)
// cancels the run for that cause: the session's record says the client
// disconnected, not that the user cancelled, in ACP and in MCP over stdio.
func TestDisconnectIsNamedADisconnect(t *testing.T) {
	t.Parallel()
	for _, face := range []string{"acp", "mcp"} {
		t.Run(face, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, interveneReplies()[0])
			ws := t.TempDir()
			store := filepath.Join(t.TempDir(), "zero.db")
			env := append(faceEnvFor(srv), "ZERO_STORE="+store)
			c := startFace(t, lines, env, face, "--workspace", ws)
			var id string
			switch face {
			case "acp":
				c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
				var s struct {
					SessionID string `json:"sessionId"`
				}
				if err := json.Unmarshal(c.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}), &s); err != nil || s.SessionID == "" {
					t.Fatalf("session/new: %v", err)
				}
				id = s.SessionID
				c.send("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "count for me"}}})
			case "mcp":
				c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
				c.notify("notifications/initialized", map[string]any{})
				var start struct {
					Session string `json:"session"`
					Cursor  int64  `json:"cursor"`
				}
				mcpTool(t, c, "zero_start", map[string]any{"message": "count for me", "workspace": ws}, &start)
				id = start.Session
				for cursor, ticking := start.Cursor, false; !ticking; {
					var st mcpStatus
					// A short wait, under the client's guard (chatWait): the
					// loop asks again until the command ticks.
					mcpTool(t, c, "zero_status", map[string]any{"session": id, "since": cursor, "wait": 5}, &st)
					cursor = st.Cursor
					for _, e := range st.Events {
						ticking = ticking || strings.Contains(e.Text, "tick 1")
					}
				}
			}
			if face == "acp" {
				c.waitNote("tick 1") // the command runs: it ticks until a gate that never opens
			}
			c.in.(io.Closer).Close() // the editor goes away
			c.waitExit()

			show := stateOf(t, env, id)
			if !strings.Contains(show, "the client disconnected") {
				t.Errorf("the session's record does not name the disconnect:\n%s", show)
			}
			if strings.Contains(show, "cancelled by the user") {
				t.Errorf("a disconnect is recorded as the user's cancel:\n%s", show)
			}
		})
	}
}

// stateOf is `zero sessions show id` with the face's store.
func stateOf(t *testing.T, env []string, id string) string {
	t.Helper()
	out, _ := zeroCmd(t, env, "sessions", "show", id).CombinedOutput()
	return string(out)
}
