package mcpface

import (
	"testing"
	"time"

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
