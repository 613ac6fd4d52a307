package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
)

// TestSkillsFromOutside: the user's skills are listed in the system prompt
// and skills_tool:load gives the agent a skill's instructions and files; a
// workspace's skills count only once the user trusted the workspace.
func TestSkillsFromOutside(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		reply("SK-1", "skills_tool:load", `{"skill_name": "release-notes"}`),
		reply("Loaded skill", "response", `{"text": "loaded"}`),
		reply("SK-2", "response", `{"text": "ok"}`),
	)
	home, ws := t.TempDir(), t.TempDir()
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "ZERO_SANDBOX=local"}
	skill := filepath.Join(home, "config", "zero", "skills", "release-notes")
	mustWrite(t, filepath.Join(skill, "SKILL.md"), "---\nname: release-notes\ndescription: Write the release notes from the git log.\n---\nRun scripts/notes.sh and edit NOTES.md.\n")
	mustWrite(t, filepath.Join(skill, "scripts", "notes.sh"), "#!/bin/sh\ngit log --oneline\n")
	mustWrite(t, filepath.Join(ws, ".zero", "skills", "deploy", "SKILL.md"), "---\nname: deploy\ndescription: Deploy this project to staging.\n---\nRun make deploy.\n")
	run := func(msg string) []llmtest.Recorded {
		t.Helper()
		if out, err := zeroCmd(t, env, "run", "--workspace", ws, msg).CombinedOutput(); err != nil {
			t.Fatalf("zero run: %v\n%s", err, out)
		}
		return srv.Requests()
	}
	reqs := run("SK-1: write the release notes")
	sys := reqs[0].Messages[0].Content
	if !strings.Contains(sys, "release-notes") || !strings.Contains(sys, "Write the release notes from the git log.") {
		t.Errorf("the system prompt does not list the user's skill:\n%s", sys)
	}
	if strings.Contains(sys, "Deploy this project") {
		t.Errorf("an untrusted workspace's skill is listed:\n%s", sys)
	}
	loaded := chatText(reqs, len(reqs)-1)
	if !strings.Contains(loaded, "Run scripts/notes.sh and edit NOTES.md.") || !strings.Contains(loaded, "scripts/notes.sh") {
		t.Errorf("skills_tool:load did not give the instructions and files:\n%s", loaded)
	}
	if out, err := zeroCmd(t, env, "trust", "--yes", "--workspace", ws).CombinedOutput(); err != nil || !strings.Contains(string(out), ".zero/skills/deploy/SKILL.md") {
		t.Fatalf("zero trust does not list the skill for review: %v\n%s", err, out)
	}
	reqs = run("SK-2: hello")
	if sys := reqs[len(reqs)-1].Messages[0].Content; !strings.Contains(sys, "Deploy this project to staging.") {
		t.Errorf("a trusted workspace's skill is not listed:\n%s", sys)
	}
}
