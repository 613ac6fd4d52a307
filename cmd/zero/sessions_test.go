package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
)

// A session of zero run is stored: zero run --continue goes on with it
// (the model sees the earlier turn), zero sessions lists, shows and exports
// it, and rm deletes it with its spilled output.
func TestSessionsFromTheTerminal(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Match: "remember the word quokka", Content: `{"thoughts": ["noted"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "noted"}}`},
		// Only a request that carries the first turn gets this answer.
		llmtest.Reply{Match: "remember the word quokka", Content: `{"thoughts": ["recall"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "the word was quokka"}}`},
	)
	home, ws := t.TempDir(), t.TempDir()
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + filepath.Join(home, "data")}
	zero := func(args ...string) (string, string, int) {
		cmd := zeroCmd(t, env, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		_ = cmd.Run()
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}
	if out, errs, code := zero("run", "--workspace", ws, "remember the word quokka"); code != 0 {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errs)
	}
	out, errs, code := zero("run", "--workspace", ws, "--continue", "which word?")
	if code != 0 || !strings.Contains(out, "the word was quokka") {
		t.Fatalf("--continue: exit %d, the model did not see the first turn\n%s\n%s", code, out, errs)
	}
	list, _, code := zero("sessions", "ls", "--workspace", ws)
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if code != 0 || len(lines) != 2 || !strings.Contains(lines[1], "remember the word quokka") || !strings.Contains(lines[1], " 2 ") {
		t.Fatalf("zero sessions ls: exit %d\n%s", code, list)
	}
	id := strings.Fields(lines[1])[0]
	if other, _, _ := zero("sessions", "ls", "--workspace", t.TempDir()); strings.Contains(other, id) {
		t.Fatalf("another workspace lists the session:\n%s", other)
	}
	if all, _, _ := zero("sessions", "ls", "--all"); !strings.Contains(all, id) || !strings.Contains(all, ws) {
		t.Fatalf("--all does not list it:\n%s", all)
	}
	show, _, code := zero("sessions", "show", id)
	if code != 0 || !strings.Contains(show, "remember the word quokka") || !strings.Contains(show, "which word?") || !strings.Contains(show, "the word was quokka") {
		t.Fatalf("zero sessions show: exit %d\n%s", code, show)
	}
	exp, _, code := zero("sessions", "export", id)
	var x struct {
		Session   struct{ ID string }
		Events    []json.RawMessage
		Histories map[string]struct {
			Messages []struct{ Content string }
		}
	}
	if err := json.Unmarshal([]byte(exp), &x); err != nil || code != 0 || x.Session.ID != id || len(x.Events) == 0 || len(x.Histories["0"].Messages) < 4 {
		t.Fatalf("zero sessions export: exit %d, %v\n%s", code, err, exp)
	}
	spilled := filepath.Join(ws, ".zero", "output", id)
	if err := os.MkdirAll(spilled, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := zero("sessions", "rm", id); code != 0 {
		t.Fatalf("zero sessions rm: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(spilled); err == nil {
		t.Error("rm left the session's spilled output")
	}
	if list, _, _ := zero("sessions", "ls", "--workspace", ws); strings.Contains(list, id) {
		t.Fatalf("the deleted session is still listed:\n%s", list)
	}
	if _, errs, code := zero("run", "--workspace", ws, "--session", id, "hello"); code != 2 || !strings.Contains(errs, "no session") {
		t.Fatalf("--session of a deleted session: exit %d\n%s", code, errs)
	}
	if _, errs, code := zero("sessions", "show", "nope"); code != 1 || !strings.Contains(errs, `no session "nope"`) {
		t.Fatalf("show of an unknown id: exit %d\n%s", code, errs)
	}
}
