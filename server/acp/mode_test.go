package acp

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/server"
)

// TestPlanMode: a session offers the modes default and plan (as ACP modes
// and as the config option of category "mode"); in plan mode the model is
// told so and offered only what changes nothing, a command and a file
// write it asks for anyway are refused saying plan mode is on, a read
// runs; every client following the session learns the switch; the mode is
// kept with the session; back in the default mode, commands run again.
func TestPlanMode(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Store: true, Replies: []llmtest.Reply{
		{Match: "PLAN-1", Content: toolReply("run it", "code_execution_tool", command("touch ran.txt"))},
		{Match: "plan mode is on", Content: toolReply("write it", "text_editor:write", map[string]any{"path": "new.txt", "content": "x"})},
		{Match: "plan mode is on", Content: toolReply("read it", "text_editor:read", map[string]any{"path": "notes.txt"})},
		{Match: "NOTES-CONTENT", Content: answer("1. Add the flag to main.go. 2. Run go test.")},
		{Match: "ACT-1", Content: toolReply("run it", "code_execution_tool", command("touch ran.txt"))},
		{Content: answer("done")},
		{Match: "carry out the plan", Content: answer("carried out")},
	}})
	if err := os.WriteFile(filepath.Join(env.Workspace, "notes.txt"), []byte("NOTES-CONTENT\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	if s.Modes == nil || s.Modes.CurrentModeId != "default" || len(s.Modes.AvailableModes) != 2 || s.Modes.AvailableModes[1].Id != "plan" {
		t.Fatalf("modes = %+v", s.Modes)
	}
	if o := s.ConfigOptions[0].Select; o.Id != "mode" || o.Category == nil || *o.Category != sdk.SessionConfigOptionCategoryMode || o.CurrentValue != "default" {
		t.Fatalf("the first config option is %+v, want the mode", o)
	}

	// A second client follows the same session: it learns the switch too.
	other := start(t, env, newFakeClient())
	other.init(t, false)
	if _, err := other.conn.ResumeSession(t.Context(), sdk.ResumeSessionRequest{SessionId: s.SessionId, Cwd: env.Workspace}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.conn.SetSessionMode(t.Context(), sdk.SetSessionModeRequest{SessionId: s.SessionId, ModeId: "plan"}); err != nil {
		t.Fatalf("set_mode plan: %v", err)
	}
	resp, err := h.prompt(t.Context(), s.SessionId, "PLAN-1: add a --verbose flag")
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", resp, err)
	}
	for _, c := range []*harness{h, other} {
		var modes, options []string
		for _, u := range c.client.of(s.SessionId) {
			if u.CurrentModeUpdate != nil {
				modes = append(modes, string(u.CurrentModeUpdate.CurrentModeId))
			}
			if u.ConfigOptionUpdate != nil {
				options = append(options, string(u.ConfigOptionUpdate.ConfigOptions[0].Select.CurrentValue))
			}
		}
		if !slices.Equal(modes, []string{"plan"}) || !slices.Equal(options, []string{"plan"}) {
			t.Errorf("a client saw current_mode_update %v and config_option_update %v, want [plan] each", modes, options)
		}
	}
	for _, f := range []string{"ran.txt", "new.txt"} {
		if _, err := os.Stat(filepath.Join(env.Workspace, f)); err == nil {
			t.Errorf("%s was made in plan mode", f)
		}
	}
	if got := messageText(h.client.of(s.SessionId)); got != "1. Add the flag to main.go. 2. Run go test." {
		t.Errorf("the answer is %q", got)
	}
	reqs := env.Model.Requests()
	first := reqs[0]
	if sys := first.Messages[0].Content; !strings.Contains(sys, "## plan mode") {
		t.Errorf("the system prompt does not say plan mode is on:\n%s", sys)
	}
	if len(first.Tools) > 0 && (slices.Contains(first.Tools, "code_execution_tool") || slices.Contains(first.Tools, "text_editor_write") ||
		!slices.Contains(first.Tools, "text_editor_read")) {
		t.Errorf("plan mode offered %v", first.Tools)
	}
	refusals := 0
	for _, r := range reqs {
		if strings.Contains(r.Messages[len(r.Messages)-1].Content, server.PlanModeRefusal) {
			refusals++
		}
	}
	if refusals != 2 {
		t.Errorf("%d requests carry the plan mode refusal, want 2 (the command, the write)", refusals)
	}
	sess, err := env.Manager.Get(string(s.SessionId))
	if err != nil {
		t.Fatal(err)
	}
	if sess.Mode() != server.ModePlan {
		t.Errorf("the session's mode is %q", sess.Mode())
	}

	// Back to the default mode through the config option: commands run.
	opts, err := h.conn.SetSessionConfigOption(t.Context(), sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
		SessionId: s.SessionId, ConfigId: "mode", Value: "default"}})
	if err != nil || opts.ConfigOptions[0].Select.CurrentValue != "default" {
		t.Fatalf("set_config_option mode default = %+v, %v", opts, err)
	}
	if resp, err := h.prompt(t.Context(), s.SessionId, "ACT-1: go ahead"); err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", resp, err)
	}
	if _, err := os.Stat(filepath.Join(env.Workspace, "ran.txt")); err != nil {
		t.Errorf("the command did not run in the default mode: %v", err)
	}
	last := env.Model.Requests()
	if sys := last[len(last)-1].Messages[0].Content; strings.Contains(sys, "## plan mode") {
		t.Error("the system prompt still says plan mode is on")
	}

	// /plan and /act, for clients without a mode selector: /act leaves
	// plan mode and sends the plan on as the next message.
	if _, err := h.prompt(t.Context(), s.SessionId, "/plan"); err != nil || sess.Mode() != server.ModePlan {
		t.Fatalf("/plan: %v, mode %s", err, sess.Mode())
	}
	if resp, err := h.prompt(t.Context(), s.SessionId, "/act"); err != nil || resp.StopReason != sdk.StopReasonEndTurn || sess.Mode() != server.ModeDefault {
		t.Fatalf("/act = %+v, %v, mode %s", resp, err, sess.Mode())
	}
	reqs = env.Model.Requests()
	if got := reqs[len(reqs)-1].Messages; !strings.Contains(got[len(got)-1].Content, "carry out the plan") && !strings.Contains(fmt.Sprint(got), server.ActMessage) {
		t.Errorf("/act did not send the plan on: %v", got[len(got)-1].Content)
	}

	// A mode that does not exist is refused with invalid params.
	_, err = h.conn.SetSessionMode(t.Context(), sdk.SetSessionModeRequest{SessionId: s.SessionId, ModeId: "yolo"})
	if err == nil || !strings.Contains(err.Error(), "unknown mode") {
		t.Errorf("set_mode yolo = %v", err)
	}
}

// TestPlanModeKept: plan mode outlives the process: a session loaded by
// the next Zero is still in it.
func TestPlanModeKept(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Store: true})
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	if _, err := h.conn.SetSessionMode(t.Context(), sdk.SetSessionModeRequest{SessionId: s.SessionId, ModeId: "plan"}); err != nil {
		t.Fatal(err)
	}
	home, ws := env.Home, env.Workspace
	env.Close()
	env2 := servertest.New(t, servertest.Options{Store: true, Home: home, Workspace: ws})
	h2 := start(t, env2, newFakeClient())
	h2.init(t, false)
	resp, err := h2.conn.LoadSession(t.Context(), sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Modes == nil || resp.Modes.CurrentModeId != "plan" || resp.ConfigOptions[0].Select.CurrentValue != "plan" {
		t.Errorf("the loaded session's mode is %+v / %v, want plan", resp.Modes, resp.ConfigOptions[0].Select.CurrentValue)
	}
}
