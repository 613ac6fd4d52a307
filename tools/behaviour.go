package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/zeroagent/zero/loop"
)

// BehaviourAdjuster merges adjustments into the workspace's behaviour rules
// (memory.Extensions).
type BehaviourAdjuster interface {
	AdjustBehaviour(ctx context.Context, a *loop.Agent, adjustments string) (string, error)
}

// Behaviour is Agent Zero's behaviour_adjustment tool: the agent changes
// the rules it follows in this workspace (the utility model merges the
// change into them); they lead every system prompt from then on.
type Behaviour struct{ Adjuster BehaviourAdjuster }

func (Behaviour) Name() string       { return "behaviour_adjustment" }
func (Behaviour) Kind(string) string { return "edit" }
func (Behaviour) PromptFile() string { return "agent.system.tool.behaviour.md" }

// KeepsAliases: the rules are stored and lead every system prompt, so an
// adjustment keeps §§secret(NAME) as written (loop.AliasKeeper).
func (Behaviour) KeepsAliases() bool { return true }

type behaviourArgs struct {
	Adjustments string `json:"adjustments" jsonschema:"what to add to or remove from your rules"`
}

var behaviourSpecs = specOf[behaviourArgs](nil)

// Specs: adjustments is a string, as the prompt says, though Execute
// takes any value as its text.
func (Behaviour) Specs() []loop.ToolSpec { return behaviourSpecs() }

func (t Behaviour) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	var text string
	switch v := call.Args["adjustments"].(type) {
	case string:
		text = v
	case nil:
	default: // Agent Zero stringifies what it gets
		text = fmt.Sprint(v)
	}
	if strings.TrimSpace(text) == "" {
		return failed("behaviour_adjustment needs tool_args.adjustments: what to add to or remove from your rules")
	}
	if len(text) > 8<<10 {
		return failed("behaviour_adjustment: the adjustments are %d bytes; describe the change in at most 8192", len(text))
	}
	if _, err := t.Adjuster.AdjustBehaviour(ctx, call.Agent, text); err != nil {
		return failed("behaviour_adjustment: %v", err)
	}
	return loop.ToolResult{Text: call.Agent.Prompt("behaviour.updated.md", nil)}, nil
}
