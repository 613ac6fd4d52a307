package tools

import (
	"context"
	"errors"
	"strings"

	"github.com/zeroagent/zero/loop"
)

// CallSubordinate is Agent Zero's `call_subordinate`: it hands a task to
// agent N+1, optionally of another profile, and returns its answer.
type CallSubordinate struct{}

var _ loop.Tool = CallSubordinate{}

func (CallSubordinate) Name() string       { return "call_subordinate" }
func (CallSubordinate) Kind(string) string { return "think" }

type subordinateArgs struct {
	Message      *string      `json:"message" jsonschema:"the subtask with everything needed to do it: goal, facts, files, constraints and what to return"`
	Profile      string       `json:"profile,omitempty" jsonschema:"the profile the subordinate uses; optional"`
	AgentProfile string       `json:"agent_profile,omitempty" jsonschema:"another name of profile"`
	Reset        boolOrString `json:"reset,omitempty" jsonschema:"true (or \"true\") starts a new subordinate; false sends a follow-up to the current one"`
}

var subordinateSpecs = specOf[subordinateArgs](nil)

func (CallSubordinate) Specs() []loop.ToolSpec { return subordinateSpecs() }

func (CallSubordinate) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	var args subordinateArgs
	if err := call.DecodeArgs(&args); err != nil {
		return loop.ToolResult{IsError: true, Text: err.Error()}, nil
	}
	if args.Message == nil || strings.TrimSpace(*args.Message) == "" {
		return loop.ToolResult{IsError: true, Text: "tool_args.message is required: the task for the subordinate, with the context it needs"}, nil
	}
	profile := args.Profile
	if profile == "" {
		profile = args.AgentProfile
	}
	reset := false
	switch r := args.Reset.(type) {
	case bool:
		reset = r
	case string:
		reset = strings.EqualFold(strings.TrimSpace(r), "true")
	}
	answer, err := call.Agent.Delegate(ctx, *args.Message, profile, reset)
	switch {
	case err == nil:
		return loop.ToolResult{Text: answer}, nil
	case ctx.Err() != nil:
		// Cancelled or interrupted: the loop records this and goes on.
		return loop.ToolResult{Text: "[the subordinate stopped: " + context.Cause(ctx).Error() + "]"}, nil
	case errors.Is(err, loop.ErrDepth):
		return loop.ToolResult{IsError: true, Text: err.Error() + ". Do this part of the task yourself."}, nil
	default:
		// The subordinate failed (an unknown profile, a model that kept
		// misformatting...): the superior decides what to do next.
		return loop.ToolResult{IsError: true, Text: "the subordinate failed: " + err.Error()}, nil
	}
}

// PromptFile is Agent Zero's name for the tool's prompt.
func (CallSubordinate) PromptFile() string { return "agent.system.tool.call_sub.md" }

// AvailableTo hides the tool from an agent at the depth limit.
func (CallSubordinate) AvailableTo(a *loop.Agent) bool { return a.CanDelegate() }
