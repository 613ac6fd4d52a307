package mcpface

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/llm/llmtest"
)

// A client that cannot be asked (no elicitation) gets zero_run's answer at
// once when the run needs an approval, with the request and the next call
// to make; the run waits for zero_approve and then finishes.
func TestRunReturnsForApprovalWithoutElicitation(t *testing.T) {
	env := newEnv(t, askCommands,
		llmtest.Reply{Match: "risky", Content: command("risky step", "echo approved-$((40+2))")},
		llmtest.Reply{Match: "approved-42", Content: answer("ran: approved-42")})
	r := startStdio(t, env, clientOpts{})
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "risky", "workspace": env.Workspace})
	mustOK(t, res)
	if out["stop_reason"] != stopApproval {
		t.Fatalf("zero_run = %v", out)
	}
	pending, _ := out["pending_approvals"].([]any)
	next, _ := out["next"].(map[string]any)
	if len(pending) != 1 || next["tool"] != "zero_approve" {
		t.Fatalf("zero_run = %v", out)
	}
	args, _ := next["arguments"].(map[string]any)
	_, res = call(t, r.c, "zero_approve", args)
	mustOK(t, res)
	st, _ := poll(t, r.c, out["session"].(string), out["cursor"].(float64), finished)
	if result, _ := st["result"].(map[string]any); result["response"] != "ran: approved-42" {
		t.Errorf("after zero_approve: %v", st)
	}
}

// A zero_run that lasts its budget returns the run's cursor and the
// zero_status call to follow it; the run goes on and finishes.
func TestRunReturnsAfterBudget(t *testing.T) {
	env := newEnv(t, nil, llmtest.Reply{FirstDelay: llmtest.Duration(1500 * time.Millisecond), Content: answer("slow but done")})
	r := startStdioFace(t, env, clientOpts{}, func(f *face) { f.runBudget = 200 * time.Millisecond })
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "take your time", "workspace": env.Workspace})
	mustOK(t, res)
	next, _ := out["next"].(map[string]any)
	if out["stop_reason"] != stopRunning || next["tool"] != "zero_status" {
		t.Fatalf("zero_run = %v", out)
	}
	st, _ := poll(t, r.c, out["session"].(string), out["cursor"].(float64), finished)
	if result, _ := st["result"].(map[string]any); result["response"] != "slow but done" {
		t.Errorf("the run did not go on: %v", st)
	}
}

// What the client's model reads: annotations, the default profile, and the
// next call in zero_start's result.
func TestToolsForAModel(t *testing.T) {
	env := newEnv(t, nil, llmtest.Reply{Content: answer("ok")})
	r := startStdio(t, env, clientOpts{})
	ctx, cancel := context.WithTimeout(t.Context(), waitLong)
	defer cancel()
	tools, err := r.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		ro := tl.Annotations.ReadOnlyHint != nil && *tl.Annotations.ReadOnlyHint
		if want := tl.Name == "zero_status" || tl.Name == "zero_sessions"; ro != want {
			t.Errorf("%s readOnlyHint = %v, want %v", tl.Name, ro, want)
		}
		raw, _ := json.Marshal(tl)
		if tl.Name == "zero_start" && (!strings.Contains(string(raw), "cannot see this conversation") || !strings.Contains(string(raw), "Default: agent0")) {
			t.Errorf("zero_start's arguments should say the message stands alone and name the default profile: %s", raw)
		}
	}
	out, res := call(t, r.c, "zero_start", map[string]any{"message": "hi", "workspace": env.Workspace})
	mustOK(t, res)
	if next, _ := out["next"].(map[string]any); next["tool"] != "zero_status" {
		t.Errorf("zero_start result: %v", out)
	}
}
