package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/skills"
)

// SkillsTool is Agent Zero's `skills_tool` with its methods list and load. Loading a skill returns
// its instructions, its folder and its files, and keeps it loaded: its text is then in the prompt
// extras of every later turn (skills' _65_include_loaded_skills). Zero never runs a skill's
// scripts; the agent does, in its sandbox, with code_execution_tool.
type SkillsTool struct {
	catalog func(a *loop.Agent) skills.Catalog
}

var (
	_ loop.Tool        = (*SkillsTool)(nil)
	_ loop.ToolKinder  = (*SkillsTool)(nil)
	_ loop.PromptFiler = (*SkillsTool)(nil)
)

// NewSkillsTool returns the tool over the skills catalog returns for the calling agent (the same
// function given to skills.Register); nil means no skills.
func NewSkillsTool(catalog func(a *loop.Agent) skills.Catalog) *SkillsTool {
	return &SkillsTool{catalog: catalog}
}

// Name is the tool name the model calls, with a method: skills_tool:load.
func (*SkillsTool) Name() string { return "skills_tool" }

// Kind is "read": the tool only reads skill folders.
func (*SkillsTool) Kind(string) string { return "read" }

// PromptFile is Agent Zero's name for the tool's prompt.
func (*SkillsTool) PromptFile() string { return "agent.system.tool.skills.md" }

// skillListDescription caps a description in the list (Agent Zero's 200 characters).
const skillListDescription = 200

// skillsLoadArgs are the arguments of skills_tool:load.
type skillsLoadArgs struct {
	SkillName *string `json:"skill_name,omitempty" jsonschema:"the skill to load, as skills_tool:list names it"`
	Name      *string `json:"name,omitempty" jsonschema:"another name of skill_name"`
}

// skillsSpecs: list takes no arguments, load the skill's name.
var skillsSpecs = sync.OnceValue(func() []loop.ToolSpec {
	return []loop.ToolSpec{
		{Method: "list", Parameters: argsSchema[struct{}](nil)},
		{Method: "load", Parameters: argsSchema[skillsLoadArgs](nil)},
	}
})

func (*SkillsTool) Specs() []loop.ToolSpec { return skillsSpecs() }

// Execute runs skills_tool:list or skills_tool:load; the method may also come as tool_args.method,
// as Agent Zero accepts it. Every mistake of the model is an error result, never a Go error.
func (t *SkillsTool) Execute(_ context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	var args struct {
		Method *string `json:"method"`
		skillsLoadArgs
	}
	if err := call.DecodeArgs(&args); err != nil {
		return loop.ToolResult{IsError: true, Text: err.Error()}, nil
	}
	method := call.Method
	if method == "" && args.Method != nil { // Agent Zero also takes the method as an argument
		method = *args.Method
	}
	var c skills.Catalog
	if t.catalog != nil && call.Agent != nil {
		c = t.catalog(call.Agent)
	}
	switch strings.ToLower(strings.TrimSpace(method)) {
	case "list":
		return loop.ToolResult{Text: skillsList(c)}, nil
	case "load":
		name := ""
		if args.SkillName != nil {
			name = *args.SkillName
		}
		if strings.TrimSpace(name) == "" && args.Name != nil {
			name = *args.Name
		}
		return skillsLoad(c, call.Agent, name), nil
	}
	return loop.ToolResult{IsError: true, Text: "Error: missing or invalid method. Call skills_tool:list or skills_tool:load."}, nil
}

func skillsList(c skills.Catalog) string {
	all := c.List()
	if len(all) == 0 {
		return "No skills found."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Available skills (%d):\n", len(all))
	for _, s := range all {
		b.WriteString("- " + s.Name)
		if s.Version != "" {
			b.WriteString(" v" + s.Version)
		}
		if len(s.Tags) > 0 {
			b.WriteString(" tags=" + strings.Join(s.Tags, ","))
		}
		desc := strings.Join(strings.Fields(s.Description), " ")
		if r := []rune(desc); len(r) > skillListDescription {
			desc = strings.TrimRight(string(r[:skillListDescription]), " ") + "…"
		}
		b.WriteString(": " + desc + "\n")
	}
	b.WriteString("\nTip: use skills_tool:load with skill_name to load a skill's instructions.")
	return b.String()
}

func skillsLoad(c skills.Catalog, a *loop.Agent, name string) loop.ToolResult {
	if strings.TrimSpace(name) == "" {
		return loop.ToolResult{IsError: true, Text: "Error: skills_tool:load needs the skill's name in tool_args.skill_name."}
	}
	l, err := c.Load(name)
	if errors.Is(err, skills.ErrNotFound) {
		return loop.ToolResult{IsError: true, Text: fmt.Sprintf("Error: skill not found: %q. Try skills_tool:list.", cut.Clip(strings.TrimSpace(name), 100))}
	}
	if err != nil {
		return loop.ToolResult{IsError: true, Text: "Error: " + err.Error()}
	}
	if a != nil {
		skills.MarkLoaded(a, l.Name)
	}
	return loop.ToolResult{Text: fmt.Sprintf("Loaded skill '%s'; its instructions stay in your extras from now on.\n\n%s", l.Name, l.Text())}
}
