package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/zeroagent/zero/loop"
)

func todoCall(t *testing.T, method, args string) loop.ToolResult {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		t.Fatal(err)
	}
	res, err := Todo{}.Execute(t.Context(), &loop.ToolCall{ID: "1", Name: "todo", Method: method, Args: m})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestTodoWrite: a plan replaces the last, comes back to the model as a
// list, and travels as the result's Plan; what a model gets wrong (or a
// hostile one sends: a thousand steps, a novel per step, statuses and
// priorities that do not exist, another method) is refused, saying why,
// and leaves no plan.
func TestTodoWrite(t *testing.T) {
	t.Parallel()
	res := todoCall(t, "write", `{"items": [{"content": "Read the  test", "status": "completed"}, {"content": "Fix it", "status": "in_progress", "priority": "high"}, {"content": "Run go test", "status": "pending"}]}`)
	if res.IsError || res.Plan == nil || len(res.Plan.Items) != 3 {
		t.Fatalf("todo:write = %+v", res)
	}
	if it := res.Plan.Items[0]; it.Content != "Read the test" || it.Status != loop.PlanCompleted {
		t.Errorf("step 1 = %+v", it)
	}
	want := "The plan is now:\n1. [x] Read the test\n2. [~] Fix it (high)\n3. [ ] Run go test\n1 of 3 done."
	if res.Text != want {
		t.Errorf("text = %q, want %q", res.Text, want)
	}
	if res := todoCall(t, "write", `{"items": []}`); res.IsError || res.Plan == nil || len(res.Plan.Items) != 0 {
		t.Errorf("an empty plan = %+v", res)
	}
	many := make([]string, MaxPlanItems+1)
	for i := range many {
		many[i] = fmt.Sprintf(`{"content": "step %d", "status": "pending"}`, i)
	}
	for _, tt := range []struct{ method, args, says string }{
		{"read", `{"items": []}`, "one method, write"},
		{"write", `{}`, "needs tool_args.items"},
		{"write", `{"items": "do it"}`, "must be"},
		{"write", `{"items": [` + strings.Join(many, ",") + `]}`, "at most 50"},
		{"write", `{"items": [{"content": "` + strings.Repeat("x", MaxPlanItemText+1) + `", "status": "pending"}]}`, "at most 500"},
		{"write", `{"items": [{"content": "  ", "status": "pending"}]}`, "no content"},
		{"write", `{"items": [{"content": "x", "status": "done"}]}`, `status is "done"`},
		{"write", `{"items": [{"content": "x", "status": "pending", "priority": "urgent"}]}`, `priority is "urgent"`},
	} {
		res := todoCall(t, tt.method, tt.args)
		if !res.IsError || res.Plan != nil || !strings.Contains(res.Text, tt.says) {
			t.Errorf("todo:%s %.60s = %+v, want an error saying %q", tt.method, tt.args, res, tt.says)
		}
	}
	if !loop.ChangesNothing(Todo{}, "write") {
		t.Error("todo:write must be allowed in plan mode: it changes only the list")
	}
}
