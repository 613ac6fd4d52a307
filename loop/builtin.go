package loop

import (
	"context"
	"fmt"
	"slices"
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
	r.Register(hooks.SystemPrompt, "_13_secrets_prompt", secretsPrompt)
	r.Register(hooks.SystemPrompt, "_15_plan_mode_prompt", planModePrompt)
	r.Register(hooks.MessageLoopPromptsBefore, "_90_organize_history_wait", organizeHistoryWait)
	r.Register(hooks.MessageLoopPromptsAfter, "_60_include_current_datetime", includeCurrentDatetime)
	r.Register(hooks.MessageLoopEnd, "_10_organize_history", organizeHistory)
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
	text, err := cached(sp.Loop, "main:"+sp.Agent.protocol(), func() (string, error) { return sp.Agent.Render("agent.system.main.md", nil) })
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

// toolsPrompt adds agent.system.tools.md with the prompt of every tool the
// agent has (agent.system.tool.<name>.md, or the file the tool names), in
// file-name order as Agent Zero collects them. A profile that denies a tool
// thus also hides its description.
func toolsPrompt(_ context.Context, p hooks.Payload) error {
	sp, ok := p.(*SystemPromptPayload)
	if !ok {
		return nil
	}
	a := sp.Agent
	if a.native.Load() {
		return nil // the request offers them as functions, each with its prompt as its description
	}
	text, err := cached(sp.Loop, "tools", func() (string, error) {
		files := a.setup.Prompts.Names("agent.system.tool.*.md")
		var wanted []string
		for _, name := range a.toolNames() {
			file := "agent.system.tool." + name + ".md"
			if pf, ok := a.setup.tools[name].(PromptFiler); ok {
				file = pf.PromptFile()
			}
			if slices.Contains(files, file) {
				wanted = append(wanted, file)
			}
		}
		slices.Sort(wanted)
		wanted = slices.Compact(wanted) // tools sharing a file (memory_*) show it once
		var parts []string
		for _, file := range wanted {
			text, err := a.Render(file, nil)
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

// secretsPrompt adds agent.system.secrets.md with the names of the secrets
// the agent may use (Config.Secrets; never their values), when there are
// any. Zero has no plain variables (Agent Zero's "vars" part of the file):
// they are passed empty, so that part is left out.
func secretsPrompt(_ context.Context, p hooks.Payload) error {
	sp, ok := p.(*SystemPromptPayload)
	if !ok || sp.Agent == nil {
		return nil
	}
	a := sp.Agent
	set := a.session.cfg.Secrets
	if set == nil {
		return nil
	}
	text, err := cached(sp.Loop, "secrets", func() (string, error) {
		names := set.Prompt()
		if names == "" {
			return "", nil
		}
		text, err := a.Render("agent.system.secrets.md", map[string]any{"secrets": names, "vars": ""})
		return strings.TrimSpace(text), err
	})
	if err != nil {
		return fmt.Errorf("secrets prompt: %w", err)
	}
	if text != "" {
		*sp.System = append(*sp.System, text)
	}
	return nil
}

// planModePrompt adds agent.system.plan_mode.md while plan mode is on (see
// [Session.SetPlanning]). It tells the model; the approval gate refuses.
func planModePrompt(_ context.Context, p hooks.Payload) error {
	sp, ok := p.(*SystemPromptPayload)
	if !ok || sp.Agent == nil || !sp.Agent.session.Planning() {
		return nil
	}
	text, err := sp.Agent.Render("agent.system.plan_mode.md", nil)
	if err != nil {
		return fmt.Errorf("plan mode prompt: %w", err)
	}
	*sp.System = append(*sp.System, strings.TrimSpace(text))
	return nil
}

// PromptFiler is implemented by tools whose prompt file is not named after
// them (Agent Zero's agent.system.tool.code_exe.md for code_execution_tool).
type PromptFiler interface {
	PromptFile() string
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
