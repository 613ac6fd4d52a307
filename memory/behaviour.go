package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/loop"
)

// MaxRulesBytes bounds a scope's behaviour rules: they go into every
// system prompt.
const MaxRulesBytes = 16 << 10

// Behaviour returns the behaviour rules of scope ("" when none).
func (s *Service) Behaviour(scope string) (string, error) { return s.st.Behaviour(scope) }

// SetBehaviour replaces the behaviour rules of scope.
func (s *Service) SetBehaviour(scope, rules string) error {
	if len(rules) > MaxRulesBytes {
		return fmt.Errorf("behaviour rules of %d bytes: at most %d", len(rules), MaxRulesBytes)
	}
	return s.st.SetBehaviour(scope, strings.TrimSpace(rules))
}

// rules are the behaviour rules an agent of ws follows: the user's own
// (their behaviour.md, which only they write) and those the agent adjusted
// for this workspace; Agent Zero's default when there are none.
func (x *Extensions) rules(a *loop.Agent) string {
	var parts []string
	if x.UserRules != nil {
		if r := strings.TrimSpace(x.UserRules()); r != "" {
			parts = append(parts, r)
		}
	}
	if r, err := x.svc.Behaviour(x.Workspace(a)); err != nil {
		x.Logger.Warn("behaviour rules", "err", err)
	} else if r != "" {
		parts = append(parts, r)
	}
	if len(parts) == 0 {
		return a.Prompt("agent.system.behaviour_default.md", nil)
	}
	return strings.Join(parts, "\n\n")
}

// behaviourPrompt puts the behaviour rules first in the system prompt
// (Agent Zero's _20_behaviour_prompt).
func (x *Extensions) behaviourPrompt(_ context.Context, p hooks.Payload) error {
	sp, ok := p.(*loop.SystemPromptPayload)
	if !ok || sp.Agent == nil {
		return nil
	}
	text := sp.Agent.Prompt("agent.system.behaviour.md", map[string]any{"rules": x.rules(sp.Agent)})
	*sp.System = append([]string{text}, *sp.System...)
	return nil
}

// AdjustBehaviour merges adjustments into the workspace's behaviour rules
// with the utility model (behaviour.merge.*.md), as Agent Zero's
// behaviour_adjustment does, and returns the new rules.
func (x *Extensions) AdjustBehaviour(ctx context.Context, a *loop.Agent, adjustments string) (string, error) {
	ws := x.Workspace(a)
	current, err := x.svc.Behaviour(ws)
	if err != nil {
		return "", err
	}
	if current == "" {
		current = a.Prompt("agent.system.behaviour_default.md", nil)
	}
	merged, err := a.CallUtilityModel(ctx, a.Prompt("behaviour.merge.sys.md", nil),
		a.Prompt("behaviour.merge.msg.md", map[string]any{"current_rules": current, "adjustments": adjustments}))
	if err != nil {
		return "", err
	}
	merged = strings.TrimSpace(merged)
	if merged == "" {
		return "", fmt.Errorf("the utility model answered no rules")
	}
	if err := x.svc.SetBehaviour(ws, merged); err != nil {
		return "", err
	}
	return merged, nil
}
