package skills

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/loop"
)

// Agent Zero's names for what the skills add to the prompts.
const (
	// DataLoaded is the key in loop.Agent.Data under which the names of the skills the agent
	// loaded are kept, oldest first, as a []string (Agent Zero's DATA_NAME_LOADED_SKILLS).
	DataLoaded = "loaded_skills"
	// ExtrasKey is the key of the loaded skills' text in the extras_persistent of the loop data.
	ExtrasKey = "loaded_skills"
	// MaxLoaded is how many skills an agent keeps loaded; loading one more drops the oldest.
	MaxLoaded = 5
	// MaxPromptSkills is how many skills the system prompt lists by name and description; the
	// rest are counted and found with skills_tool:list.
	MaxPromptSkills = 100
)

// Register adds the skills' built-in extensions to r under Agent Zero's names, so that a user can
// override or disable them like any built-in:
//
//   - system_prompt/_13_skills_prompt: the names and descriptions of the agent's skills, rendered
//     with agent.system.skills.md; nothing when the agent has none.
//   - message_loop_prompts_after/_65_include_loaded_skills: the full text of the skills the
//     agent loaded (see [MarkLoaded]), rendered with agent.system.skills.loaded.md into the
//     extras_persistent key "loaded_skills", afresh from the disk every turn.
//
// catalog returns the skills an agent may use; it is called every turn, so it should be cheap
// (return a catalog discovered when the agent's setup was built). A nil catalog means none.
func Register(r *hooks.Registry, catalog func(a *loop.Agent) Catalog) {
	r.Register(hooks.SystemPrompt, "_13_skills_prompt", skillsPrompt(catalog))
	r.Register(hooks.MessageLoopPromptsAfter, "_65_include_loaded_skills", includeLoadedSkills(catalog))
}

func catalogOf(catalog func(a *loop.Agent) Catalog, a *loop.Agent) Catalog {
	if catalog == nil || a == nil {
		return Catalog{}
	}
	return catalog(a)
}

// skillsPrompt is _13_skills_prompt.
func skillsPrompt(catalog func(a *loop.Agent) Catalog) hooks.Func {
	return func(_ context.Context, p hooks.Payload) error {
		sp, ok := p.(*loop.SystemPromptPayload)
		if !ok {
			return nil
		}
		text := PromptList(catalogOf(catalog, sp.Agent))
		if text == "" {
			return nil
		}
		out, err := sp.Agent.Render("agent.system.skills.md", map[string]any{"skills": text})
		if err != nil {
			return fmt.Errorf("skills prompt: %w", err)
		}
		*sp.System = append(*sp.System, out)
		return nil
	}
}

// PromptList is the list of skills for the system prompt, one "**name** description" line each
// (Agent Zero's format: names cut to 100 characters, descriptions to 500, on one line), at most
// [MaxPromptSkills] of them. It is "" for an empty catalog.
func PromptList(c Catalog) string {
	var lines []string
	for i, s := range c.entries {
		if i == MaxPromptSkills {
			lines = append(lines, fmt.Sprintf("(%d more: see skills_tool:list)", len(c.entries)-i))
			break
		}
		lines = append(lines, fmt.Sprintf("**%s** %s", oneLine(s.Name, 100), oneLine(s.Description, 500)))
	}
	return strings.Join(lines, "\n")
}

func oneLine(s string, runes int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > runes {
		s = string(r[:runes])
	}
	return s
}

// includeLoadedSkills is _65_include_loaded_skills.
func includeLoadedSkills(catalog func(a *loop.Agent) Catalog) hooks.Func {
	return func(_ context.Context, p hooks.Payload) error {
		lp, ok := p.(*loop.LoopPayload)
		if !ok || lp.Agent == nil || lp.Loop == nil {
			return nil
		}
		names := LoadedNames(lp.Agent)
		if len(names) == 0 {
			return nil
		}
		c := catalogOf(catalog, lp.Agent)
		parts := make([]string, 0, len(names))
		for _, name := range names {
			l, err := c.Load(name)
			if err != nil { // deleted or broken since: the agent is told, the others still load
				parts = append(parts, fmt.Sprintf("Error: skill '%s' could not be loaded: %v", name, err))
				continue
			}
			parts = append(parts, l.Text())
		}
		text, err := lp.Agent.Render("agent.system.skills.loaded.md", map[string]any{"skills": strings.Join(parts, "\n\n")})
		if err != nil {
			return fmt.Errorf("loaded skills: %w", err)
		}
		lp.Loop.ExtrasPersistent.Set(ExtrasKey, text)
		return nil
	}
}

// MarkLoaded records that agent a loaded the skill name (its canonical name), so that
// _65_include_loaded_skills puts its text into every later prompt of a. Loading a skill again
// makes it the newest; past [MaxLoaded] the oldest is dropped.
func MarkLoaded(a *loop.Agent, name string) {
	names := slices.DeleteFunc(LoadedNames(a), func(n string) bool { return n == name })
	names = append(names, name)
	if len(names) > MaxLoaded {
		names = names[len(names)-MaxLoaded:]
	}
	if a.Data == nil {
		a.Data = map[string]any{}
	}
	a.Data[DataLoaded] = names
}

// LoadedNames returns the names of the skills agent a loaded, oldest first (a fresh slice).
func LoadedNames(a *loop.Agent) []string {
	switch v := a.Data[DataLoaded].(type) {
	case []string:
		return slices.Clone(v)
	case []any: // agent data that went through JSON
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
