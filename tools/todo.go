package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/loop"
)

// Bounds of a plan: a model that writes a thousand steps or a novel per
// step is told, and the list every face shows stays readable.
const (
	MaxPlanItems    = 50
	MaxPlanItemText = 500
)

// Todo is Zero's todo tool: todo:write replaces the agent's plan, a list
// of steps with a status and a priority, which every face shows as it
// changes (ACP's plan, the VS Code view's checklist, the terminal's list,
// zero_status). It changes nothing but the list (kind think), so plan
// mode allows it.
type Todo struct{}

func (Todo) Name() string       { return "todo" }
func (Todo) Kind(string) string { return "think" }

// KeepsAliases: the list is shown in every face and kept with the session,
// so a §§secret(NAME) in it stays an alias (loop.AliasKeeper).
func (Todo) KeepsAliases() bool { return true }

type (
	todoArgs struct {
		Items []todoItem `json:"items" jsonschema:"the whole plan, in order"`
	}
	todoItem struct {
		Content  string `json:"content" jsonschema:"the step, in a few words"`
		Status   string `json:"status"`
		Priority string `json:"priority,omitempty"`
	}
)

var (
	planStatuses   = []string{loop.PlanPending, loop.PlanInProgress, loop.PlanCompleted}
	planPriorities = []string{"high", "medium", "low"}
)

var todoSpecs = sync.OnceValue(func() []loop.ToolSpec {
	return []loop.ToolSpec{{Method: "write", Parameters: argsSchema[todoArgs](func(s *jsonschema.Schema) {
		items := s.Properties["items"]
		items.MaxItems = jsonschema.Ptr(MaxPlanItems)
		item := items.Items
		item.Properties["status"].Enum = anys(planStatuses)
		item.Properties["priority"].Enum = anys(planPriorities)
	})}}
})

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// Specs: todo:write.
func (Todo) Specs() []loop.ToolSpec { return todoSpecs() }

func (Todo) Execute(_ context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	if call.Method != "write" {
		return failed("todo has one method, write (todo:write), not %q", call.Method)
	}
	var args todoArgs
	if err := call.DecodeArgs(&args); err != nil {
		return failed("todo:write: %v; send {\"items\": [{\"content\": \"...\", \"status\": \"pending\"}]}", err)
	}
	if _, ok := call.Args["items"]; !ok {
		return failed("todo:write needs tool_args.items: the whole plan, a list of {content, status, priority}")
	}
	if len(args.Items) > MaxPlanItems {
		return failed("todo:write: %d steps; a plan holds at most %d: group them", len(args.Items), MaxPlanItems)
	}
	plan := &loop.Plan{Items: make([]loop.PlanItem, 0, len(args.Items))}
	for i, it := range args.Items {
		content := strings.Join(strings.Fields(it.Content), " ")
		switch {
		case content == "":
			return failed("todo:write: step %d has no content", i+1)
		case len(content) > MaxPlanItemText:
			return failed("todo:write: step %d is %d bytes; say it in at most %d", i+1, len(content), MaxPlanItemText)
		case !slices.Contains(planStatuses, it.Status):
			return failed("todo:write: step %d's status is %q; it is one of pending, in_progress, completed", i+1, cut.Clip(it.Status, 40))
		case it.Priority != "" && !slices.Contains(planPriorities, it.Priority):
			return failed("todo:write: step %d's priority is %q; it is one of high, medium, low", i+1, cut.Clip(it.Priority, 40))
		}
		plan.Items = append(plan.Items, loop.PlanItem{Content: content, Status: it.Status, Priority: it.Priority})
	}
	return loop.ToolResult{Text: PlanText(plan), Plan: plan}, nil
}

// PlanText is a plan as the model reads it back, one step a line.
func PlanText(p *loop.Plan) string {
	if len(p.Items) == 0 {
		return "The plan is empty now."
	}
	var b strings.Builder
	b.WriteString("The plan is now:")
	done := 0
	for i, it := range p.Items {
		mark := "[ ]"
		switch it.Status {
		case loop.PlanInProgress:
			mark = "[~]"
		case loop.PlanCompleted:
			mark = "[x]"
			done++
		}
		fmt.Fprintf(&b, "\n%d. %s %s", i+1, mark, it.Content)
		if it.Priority != "" {
			fmt.Fprintf(&b, " (%s)", it.Priority)
		}
	}
	fmt.Fprintf(&b, "\n%d of %d done.", done, len(p.Items))
	return b.String()
}
