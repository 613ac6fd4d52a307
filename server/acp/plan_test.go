package acp

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
)

// TestPlanUpdates: todo:write goes out as ACP plan updates, the whole list
// every time (priority medium where the agent gave none); a subordinate's
// steps follow agent 0's, marked with its number; a session loaded again
// replays the last plan.
func TestPlanUpdates(t *testing.T) {
	t.Parallel()
	items := func(list ...map[string]any) map[string]any { return map[string]any{"items": list} }
	step := func(content, status string) map[string]any {
		return map[string]any{"content": content, "status": status}
	}
	env := servertest.New(t, servertest.Options{Store: true, Replies: []llmtest.Reply{
		{Match: "PLAN-A0", Content: toolReply("plan", "todo:write", items(step("Read the code", "in_progress"), map[string]any{"content": "Fix it", "status": "pending", "priority": "high"}))},
		{Match: "The plan is now", Content: toolReply("delegate", "call_subordinate", map[string]any{"message": "SUB-TASK: count the files", "reset": true})},
		{Match: "SUB-TASK", Content: toolReply("sub plan", "todo:write", items(step("Count", "completed")))},
		{Match: "1 of 1 done", Content: answer("3 files")},
		{Match: "3 files", Content: toolReply("plan", "todo:write", items(step("Read the code", "completed"), step("Fix it", "completed")))},
		{Match: "2 of 2 done", Content: answer("fixed")},
	}})
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	if resp, err := h.prompt(t.Context(), s.SessionId, "PLAN-A0: fix it"); err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", resp, err)
	}
	var plans []string
	for _, u := range h.client.of(s.SessionId) {
		if u.Plan != nil {
			var es []string
			for _, e := range u.Plan.Entries {
				es = append(es, e.Content+"/"+string(e.Status)+"/"+string(e.Priority))
			}
			plans = append(plans, strings.Join(es, ", "))
		}
	}
	want := []string{
		"Read the code/in_progress/medium, Fix it/pending/high",
		"Read the code/in_progress/medium, Fix it/pending/high, A1 · Count/completed/medium",
		"Read the code/completed/medium, Fix it/completed/medium, A1 · Count/completed/medium",
	}
	if strings.Join(plans, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan updates:\n%s\nwant:\n%s", strings.Join(plans, "\n"), strings.Join(want, "\n"))
	}

	other := start(t, env, newFakeClient())
	other.init(t, false)
	if _, err := other.conn.LoadSession(t.Context(), sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: env.Workspace, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	var last *sdk.SessionUpdatePlan
	for _, u := range other.client.of(s.SessionId) {
		if u.Plan != nil {
			last = u.Plan
		}
	}
	if last == nil || len(last.Entries) != 3 || last.Entries[0].Status != sdk.PlanEntryStatusCompleted {
		t.Errorf("the replay's last plan = %+v", last)
	}
}
