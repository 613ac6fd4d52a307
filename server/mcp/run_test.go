package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/internal/servertest"
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
	// The model holds mid-reply until released: the run cannot end before
	// the budget does.
	env := newEnv(t, nil, llmtest.Reply{Content: answer("slow but done"), ChunkSize: 8, HoldAfter: 1})
	r := startStdioFace(t, env, clientOpts{}, func(f *face) { f.runBudget = 200 * time.Millisecond })
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "take your time", "workspace": env.Workspace})
	mustOK(t, res)
	next, _ := out["next"].(map[string]any)
	if out["stop_reason"] != stopRunning || next["tool"] != "zero_status" {
		t.Fatalf("zero_run = %v", out)
	}
	env.Model.Release()
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
	for _, tl := range listTools(t, r.c) {
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

// On the stateless 2026-07-28 protocol a server cannot send requests: the
// approval goes back as an input-required result with an elicitation, the
// client asks the user and calls again with the answer, and the run goes
// on (mcp-go's client does the round trip by itself).
func TestModernClientApprovesByInputRequests(t *testing.T) {
	for _, tt := range []struct {
		action mcp.ElicitationResponseAction
		want   string
	}{
		{mcp.ElicitationResponseActionAccept, "ran: approved-42"},
		{mcp.ElicitationResponseActionDecline, "not allowed"},
	} {
		t.Run(string(tt.action), func(t *testing.T) {
			env := newRiskyEnv(t)
			el := &elicitor{action: tt.action}
			c := startModern(t, env, client.WithElicitationHandler(el))
			out, cres := call(t, c, "zero_run", map[string]any{"message": "risky", "workspace": env.Workspace})
			mustOK(t, cres)
			if out["response"] != tt.want {
				t.Errorf("zero_run = %v, want %q", out, tt.want)
			}
			if len(el.asked) != 1 || !strings.Contains(el.asked[0], "Allow") {
				t.Errorf("elicitations = %q", el.asked)
			}
		})
	}
}

// A stateless 2026-07-28 request declares its client's capabilities in its
// own _meta (there is no initialize): one that can elicit gets the approval
// as an input request, one that cannot gets the pending approval and next.
func TestModernCapabilitiesFromMeta(t *testing.T) {
	for _, tt := range []struct {
		caps, want string
	}{
		{`{"elicitation":{}}`, `"resultType":"input_required"`},
		{`{}`, `"stop_reason":"approval_required"`},
	} {
		env := newRiskyEnv(t)
		cw, lines := serveRaw(t, env)
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + tt.caps + `}`
		r := rawCall(t, cw, lines, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"zero_run","arguments":{"message":"risky","workspace":`+
			strconv.Quote(env.Workspace)+`},`+meta+`}}`)
		if r.Error != nil || !strings.Contains(string(r.Result), tt.want) {
			t.Errorf("capabilities %s: zero_run = %+v %s; want %s", tt.caps, r.Error, r.Result, tt.want)
		}
	}
}

// zero_run with mode plan: the command the model asks for is refused, the
// answer is the plan, zero_status says plan; continuing the session with
// mode default lets the command run; a mode that does not exist is an
// argument error the client's model can read.
func TestRunInPlanMode(t *testing.T) {
	env := newEnv(t, nil,
		llmtest.Reply{Match: "PLAN-1", Content: command("make it", "touch made.txt")},
		llmtest.Reply{Match: "plan mode is on", Content: answer("1. touch made.txt")},
		llmtest.Reply{Match: "ACT-1", Content: command("make it", "touch made.txt")},
		llmtest.Reply{Content: answer("made")})
	r := startStdio(t, env, clientOpts{})
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "PLAN-1: make the file", "workspace": env.Workspace, "mode": "plan"})
	mustOK(t, res)
	if out["response"] != "1. touch made.txt" {
		t.Fatalf("zero_run in plan mode = %v", out)
	}
	if _, err := os.Stat(filepath.Join(env.Workspace, "made.txt")); err == nil {
		t.Fatal("the command ran in plan mode")
	}
	session := out["session"].(string)
	st, res := call(t, r.c, "zero_status", map[string]any{"session": session})
	mustOK(t, res)
	if st["mode"] != "plan" {
		t.Errorf("zero_status mode = %v", st["mode"])
	}
	out, res = call(t, r.c, "zero_run", map[string]any{"message": "ACT-1: now do it", "session": session, "mode": "default"})
	mustOK(t, res)
	if _, err := os.Stat(filepath.Join(env.Workspace, "made.txt")); err != nil || out["response"] != "made" {
		t.Errorf("back in the default mode: %v, %v", out, err)
	}
	_, res = call(t, r.c, "zero_start", map[string]any{"message": "x", "workspace": env.Workspace, "mode": "yolo"})
	if !res.IsError || !strings.Contains(text(res), "mode") {
		t.Errorf("mode yolo: %v", text(res))
	}
}

// zero_status carries each agent's last plan (todo:write), and its events
// say it once: by the tool's result, not a plan event besides.
func TestStatusHasThePlan(t *testing.T) {
	env := newEnv(t, nil,
		llmtest.Reply{Match: "PLAN-MCP", Content: servertest.ToolReply("plan", "todo:write", map[string]any{"items": []any{
			map[string]any{"content": "Write the test", "status": "completed"}, map[string]any{"content": "Make it pass", "status": "in_progress"}}})},
		llmtest.Reply{Match: "The plan is now", Content: answer("planned")})
	r := startStdio(t, env, clientOpts{})
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "PLAN-MCP: go", "workspace": env.Workspace})
	mustOK(t, res)
	st, res := call(t, r.c, "zero_status", map[string]any{"session": out["session"].(string)})
	mustOK(t, res)
	plans, _ := st["plan"].([]any)
	if len(plans) != 1 {
		t.Fatalf("zero_status plan = %v", st["plan"])
	}
	p := plans[0].(map[string]any)
	items, _ := p["items"].([]any)
	if p["agent"] != float64(0) || len(items) != 2 || items[1].(map[string]any)["status"] != "in_progress" {
		t.Errorf("zero_status plan = %v", p)
	}
	evs, _ := st["events"].([]any)
	for _, e := range evs {
		if e.(map[string]any)["type"] == "plan" {
			t.Errorf("a plan event in zero_status's events: %v", e)
		}
	}
}
