package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
)

// TestInstructionsFromOutside: the user's AGENTS.md and the workspace's
// (CLAUDE.md while it has no AGENTS.md) reach the system prompt of zero
// run, each under its name, with the subfolders that have their own; an
// edit shows in the next run; an instructions file that links out of the
// workspace is named, not read; zero prompt shows them and zero trust
// names them.
func TestInstructionsFromOutside(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		reply("IN-1", "response", `{"text": "ok"}`),
		reply("IN-2", "response", `{"text": "ok"}`),
	)
	home, ws, outside := t.TempDir(), t.TempDir(), t.TempDir()
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config")}
	mustWrite(t, filepath.Join(home, "config", "zero", "AGENTS.md"), "Sign every answer with -- Z.")
	mustWrite(t, filepath.Join(ws, "CLAUDE.md"), "Run make check before you commit.")
	mustWrite(t, filepath.Join(ws, "api", "AGENTS.md"), "The API keeps its own rules.")
	mustWrite(t, filepath.Join(outside, "credentials"), "TOKEN-FROM-OUTSIDE")
	mustWrite(t, filepath.Join(ws, ".a0proj", "instructions", "a.md"), "Prices are in cents.")
	if err := os.Symlink(filepath.Join(outside, "credentials"), filepath.Join(ws, ".a0proj", "instructions", "b.md")); err != nil {
		t.Fatal(err)
	}
	run := func(msg string) string {
		t.Helper()
		if out, err := zeroCmd(t, env, "run", "--workspace", ws, msg).CombinedOutput(); err != nil {
			t.Fatalf("zero run: %v\n%s", err, out)
		}
		reqs := srv.Requests()
		return reqs[len(reqs)-1].Messages[0].Content
	}
	sys := run("IN-1: hello")
	for _, want := range []string{
		"## project instructions", "(yours)\nSign every answer with -- Z.",
		"### CLAUDE.md\nRun make check before you commit.",
		"### .a0proj/instructions/a.md\nPrices are in cents.",
		"### .a0proj/instructions/b.md\n(not read: it is a link that leads out of the workspace",
		"- api/AGENTS.md",
	} {
		if !strings.Contains(sys, want) {
			t.Errorf("the system prompt lacks %q:\n%s", want, sys)
		}
	}
	if strings.Contains(sys, "TOKEN-FROM-OUTSIDE") || strings.Contains(sys, "The API keeps its own rules.") {
		t.Errorf("the system prompt has what it must not:\n%s", sys)
	}

	mustWrite(t, filepath.Join(ws, "AGENTS.md"), "Indent with tabs.")
	sys = run("IN-2: again")
	if !strings.Contains(sys, "### AGENTS.md\nIndent with tabs.") || strings.Contains(sys, "Run make check") {
		t.Errorf("after AGENTS.md was written, the system prompt is:\n%s", sys)
	}

	out, err := zeroCmd(t, env, "prompt", "--workspace", ws).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Indent with tabs.") || !strings.Contains(string(out), "Sign every answer") {
		t.Errorf("zero prompt does not show the instructions: %v\n%s", err, out)
	}
	out, err = zeroCmd(t, env, "trust", "--check", "--workspace", ws).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Instructions for the agent") ||
		!strings.Contains(string(out), "AGENTS.md") || !strings.Contains(string(out), "b.md  not read: it is a link") {
		t.Errorf("zero trust --check does not name the instructions: %v\n%s", err, out)
	}
}
