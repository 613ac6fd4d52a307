package loop

import (
	"context"
	"fmt"
	"strings"

	"github.com/zeroagent/zero/hooks"
)

const dataIterationNo = "iteration_no"

// Builtins returns a registry with Zero's built-in extensions, registered
// under Agent Zero's names so that a user can override or disable them
// (`_10_iteration_no.disabled`).
func Builtins() *hooks.Registry {
	r := hooks.NewRegistry()
	r.Register(hooks.MessageLoopStart, "_10_iteration_no", iterationNo)
	r.Register(hooks.SystemPrompt, "_10_main_prompt", mainPrompt)
	r.Register(hooks.SystemPrompt, "_11_tools_prompt", toolsPrompt)
	r.Register(hooks.MessageLoopPromptsAfter, "_60_include_current_datetime", includeCurrentDatetime)
	return r
}

// iterationNo counts the agent's message-loop turns across monologues.
func iterationNo(_ context.Context, p hooks.Payload) error {
	lp, ok := p.(*LoopPayload)
	if !ok || lp.Agent == nil {
		return nil
	}
	lp.Agent.Data[dataIterationNo] = IterationNo(lp.Agent) + 1
	return nil
}

// mainPrompt adds agent.system.main.md to the system prompt.
func mainPrompt(_ context.Context, p hooks.Payload) error {
	sp, ok := p.(*SystemPromptPayload)
	if !ok {
		return nil
	}
	text, err := cached(sp.Loop, "main", func() (string, error) { return sp.Agent.Render("agent.system.main.md", nil) })
	if err != nil {
		return fmt.Errorf("main prompt: %w", err)
	}
	*sp.System = append(*sp.System, text)
	return nil
}

// cached renders a system prompt part once per monologue.
func cached(ld *LoopData, key string, render func() (string, error)) (string, error) {
	if text, ok := ld.rendered[key]; ok {
		return text, nil
	}
	text, err := render()
	if err == nil {
		ld.rendered[key] = text
	}
	return text, err
}

// toolsPrompt adds agent.system.tools.md with every agent.system.tool.*.md
// of the profile.
func toolsPrompt(_ context.Context, p hooks.Payload) error {
	sp, ok := p.(*SystemPromptPayload)
	if !ok {
		return nil
	}
	a := sp.Agent
	text, err := cached(sp.Loop, "tools", func() (string, error) {
		var parts []string
		for _, name := range a.setup.Prompts.Names("agent.system.tool.*.md") {
			text, err := a.Render(name, nil)
			if err != nil {
				return "", err
			}
			parts = append(parts, strings.TrimSpace(text))
		}
		return a.Render("agent.system.tools.md", map[string]any{"tools": strings.Join(parts, "\n\n")})
	})
	if err != nil {
		return fmt.Errorf("tools prompt: %w", err)
	}
	*sp.System = append(*sp.System, text)
	return nil
}

// includeCurrentDatetime puts the current date and time into the extras of
// the next prompt.
func includeCurrentDatetime(_ context.Context, p hooks.Payload) error {
	lp, ok := p.(*LoopPayload)
	if !ok {
		return nil
	}
	a := lp.Agent
	now := a.session.cfg.Now()
	text, err := a.Render("agent.system.datetime.md", map[string]any{
		"date_time": now.Format("2006-01-02 15:04:05 -07:00"),
	})
	if err != nil {
		return fmt.Errorf("current datetime: %w", err)
	}
	lp.Loop.ExtrasTemporary.Set("current_datetime", text)
	return nil
}
