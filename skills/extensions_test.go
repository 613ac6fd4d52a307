package skills_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/skills"
)

// noModel is never called: these tests run extensions, not the loop.
type noModel struct{}

func (noModel) Stream(context.Context, llm.Request, llm.StreamFunc) (llm.Result, error) {
	return llm.Result{}, errors.New("no model in this test")
}

// agentWith returns agent 0 of a session whose extensions are loop's built-ins plus the skills'
// over c.
func agentWith(t *testing.T, c skills.Catalog) (*loop.Agent, *hooks.Set) {
	t.Helper()
	r := loop.Builtins()
	skills.Register(r, func(*loop.Agent) skills.Catalog { return c })
	set, err := hooks.Resolve(r, nil, hooks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := loop.NewSession("t", loop.Config{Setup: loop.Setup{Model: noModel{}, Prompts: profiles.New(), Hooks: set, ToolProtocol: loop.ProtocolJSON}}, nil)
	return s.Agent0(), set
}

func newLoopData() *loop.LoopData {
	return &loop.LoopData{Iteration: -1, ExtrasTemporary: loop.NewExtras(), ExtrasPersistent: loop.NewExtras(),
		ParamsTemporary: map[string]any{}, ParamsPersistent: map[string]any{}}
}

func TestRegister(t *testing.T) {
	t.Parallel()
	_, set := agentWith(t, skills.Catalog{})
	if got := set.Names(hooks.SystemPrompt); !slices.Contains(got, "_13_skills_prompt") {
		t.Errorf("system_prompt extensions = %v", got)
	}
	if got := set.Names(hooks.MessageLoopPromptsAfter); !slices.Contains(got, "_65_include_loaded_skills") {
		t.Errorf("message_loop_prompts_after extensions = %v", got)
	}
}

func TestSkillsPrompt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"pdf/SKILL.md":  skillMD("pdf", "Fill and merge PDF forms.", "body"),
		"docx/SKILL.md": "---\nname: docx\ndescription: |\n  Edit Word files,\n  keeping tracked changes.\n---\n",
	})
	c, _ := skills.Discover(skills.Dir{Path: dir, Layer: "user"})
	a, _ := agentWith(t, c)
	// Agent.SystemPrompt runs the system_prompt point with loop data the loop's own built-ins
	// accept (a LoopData built here lacks their private render cache).
	sys, err := a.SystemPrompt(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## skills", "skills_tool:load",
		"**docx** Edit Word files, keeping tracked changes.\n**pdf** Fill and merge PDF forms.",
	} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	if strings.Contains(sys, "{{") {
		t.Errorf("leftover template braces:\n%s", sys)
	}

	// No skills: no skills part at all.
	a, _ = agentWith(t, skills.Catalog{})
	if sys, err = a.SystemPrompt(t.Context()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sys, "## skills") || !strings.Contains(sys, "## Tools") {
		t.Errorf("system prompt without skills has a skills part:\n%s", sys)
	}
}

func TestPromptList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{}
	for i := range skills.MaxPromptSkills + 3 {
		files[fmt.Sprintf("s%03d/SKILL.md", i)] = skillMD(fmt.Sprintf("s%03d", i), strings.Repeat("word ", 200), "")
	}
	write(t, dir, files)
	c, _ := skills.Discover(skills.Dir{Path: dir, Layer: "user"})
	lines := strings.Split(skills.PromptList(c), "\n")
	if len(lines) != skills.MaxPromptSkills+1 || lines[len(lines)-1] != "(3 more: see skills_tool:list)" {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
	if n := len([]rune(lines[0])); n > len("**s000** ")+500 {
		t.Errorf("a line is %d characters, want the description cut to 500", n)
	}
	if skills.PromptList(skills.Catalog{}) != "" {
		t.Error("PromptList of no skills is not empty")
	}
}

func TestIncludeLoadedSkills(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"pdf/SKILL.md":        skillMD("pdf", "Fill PDF forms.", "# PDF\nRun scripts/fill.py with the form."),
		"pdf/scripts/fill.py": "",
		"docx/SKILL.md":       skillMD("docx", "Edit Word files.", "# DOCX body"),
		"gone/SKILL.md":       skillMD("gone", "Deleted later.", "gone body"),
	})
	c, _ := skills.Discover(skills.Dir{Path: dir, Layer: "user"})
	a, set := agentWith(t, c)
	call := func() (string, bool) {
		t.Helper()
		ld := newLoopData()
		if err := set.Call(t.Context(), hooks.MessageLoopPromptsAfter, &loop.LoopPayload{Agent: a, Loop: ld}); err != nil {
			t.Fatal(err)
		}
		v, ok := ld.ExtrasPersistent.Get(skills.ExtrasKey)
		s, _ := v.(string)
		return s, ok
	}

	if text, ok := call(); ok {
		t.Errorf("nothing loaded, yet extras hold %q", text)
	}

	skills.MarkLoaded(a, "pdf")
	skills.MarkLoaded(a, "docx")
	text, ok := call()
	if !ok {
		t.Fatal("no loaded_skills in extras_persistent")
	}
	for _, want := range []string{
		"# loaded skills", "explicitly loaded via skills_tool",
		"Skill: pdf\nPath: " + dir, "# PDF\nRun scripts/fill.py with the form.", "- scripts/fill.py",
		"Skill: docx", "# DOCX body",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("extras lack %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "Skill: pdf") > strings.Index(text, "Skill: docx") {
		t.Errorf("skills not in load order:\n%s", text)
	}

	// A loaded skill deleted since is reported, the others still included.
	skills.MarkLoaded(a, "gone")
	write(t, dir, map[string]string{"gone/SKILL.md": "no front matter"})
	text, _ = call()
	if !strings.Contains(text, "Error: skill 'gone' could not be loaded") || !strings.Contains(text, "# DOCX body") {
		t.Errorf("extras after a broken skill:\n%s", text)
	}
}

func TestMarkLoaded(t *testing.T) {
	t.Parallel()
	a, _ := agentWith(t, skills.Catalog{})
	for _, n := range []string{"a", "b", "c", "a", "d", "e", "f"} {
		skills.MarkLoaded(a, n)
	}
	// "a" was loaded again (moved to the end), then "b" dropped as the oldest past five.
	if got, want := skills.LoadedNames(a), []string{"c", "a", "d", "e", "f"}; !slices.Equal(got, want) {
		t.Errorf("LoadedNames = %v, want %v", got, want)
	}
	a.Data[skills.DataLoaded] = []any{"x", 3, "y"} // as agent data looks after a JSON round trip
	if got := skills.LoadedNames(a); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("LoadedNames from []any = %v", got)
	}
}
