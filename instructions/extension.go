package instructions

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/loop"
)

// Prompt is the prompt file the instructions are rendered with, Agent
// Zero's for an active project's (its variables: project_path,
// project_name, project_description, project_instructions), so that a
// profile overriding it for Agent Zero overrides it here too.
const Prompt = "agent.system.projects.active.md"

// Register adds system_prompt/_14_project_prompt to r (Agent Zero's name
// for the project's part of the system prompt): the instructions of set,
// rendered with [Prompt], read afresh for every request when a file
// changed; nothing when there are none.
func Register(r *hooks.Registry, set *Set) {
	r.Register(hooks.SystemPrompt, "_14_project_prompt", func(_ context.Context, p hooks.Payload) error {
		sp, ok := p.(*loop.SystemPromptPayload)
		if !ok || sp.Agent == nil || set == nil {
			return nil
		}
		text, err := set.Render(sp.Agent.Render)
		if err != nil {
			return fmt.Errorf("project prompt: %w", err)
		}
		if text != "" {
			*sp.System = append(*sp.System, text)
		}
		return nil
	})
}

// Render renders the instructions with render (a prompt renderer, such as
// loop.Agent.Render); "" when there are none.
func (s *Set) Render(render func(name string, vars map[string]any) (string, error)) (string, error) {
	text := Text(s.Files(), s.Nested())
	if text == "" {
		return "", nil
	}
	var main string
	if len(s.roots) > 0 {
		main = s.roots[0]
	}
	p := s.Project()
	name := p.Title
	if name == "" && main != "" {
		name = filepath.Base(main)
	}
	return render(Prompt, map[string]any{
		"project_path":         main,
		"project_name":         name,
		"project_description":  p.Description,
		"project_instructions": text,
	})
}
