package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
)

// The chat shows what each run used in one line once it ends, and /cost
// the session's totals by role.
func TestChatCost(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		// A reply without a tool request is read to its end, usage included.
		llmtest.Reply{Content: "Let me think first.", Usage: &llmtest.Usage{PromptTokens: 12000, CompletionTokens: 300, TotalTokens: 12300, CachedTokens: 9000, Cost: 0.05}},
		llmtest.Reply{Content: chatAnswer("COST-DONE")},
	)
	// Agent Zero's JSON protocol: a reply without a tool request is asked
	// again, and a reply is cut at its request, so the second is counted by
	// Zero (~) and the cost is "at least".
	ct := startChat(t, srv, t.TempDir(), "--tool-protocol", "json")
	ct.ready()
	at := ct.send("spend a little")
	ct.answered(at, "COST-DONE")
	ct.waitFor(at, "used ~")
	line := regexp.MustCompile(`used ~[0-9.]+k tokens in \(\d+% cached\), [0-9.k]+ out, cost at least 0\.0500`)
	if !line.MatchString(ct.text()[at:]) {
		t.Errorf("no usage line after the run:\n%s", ct.text()[at:])
	}
	at = ct.send("/cost")
	ct.waitFor(at, "chat")
	out := ct.text()[at:]
	for _, re := range []string{`all +\d+ calls +~[0-9.]+k tokens in`, `chat +2 calls +~`, `some calls' cost is unknown|counted by Zero`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("/cost lacks %s:\n%s", re, out)
		}
	}
	ct.send("/exit")
	if code := ct.wait(); code != 0 {
		t.Errorf("/exit: exit %d", code)
	}
}

// zero sessions show prints a stored session's usage, costed by the
// configured price; a run over a workspace's limits.tokens ends with its
// budget, said.
func TestSessionsShowUsage(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: "Thinking.", Usage: &llmtest.Usage{PromptTokens: 2000, CompletionTokens: 100, TotalTokens: 2100}},
		llmtest.Reply{Content: `{"thoughts": ["done"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "priced"}}`},
		llmtest.Reply{Content: "Thinking again.", Usage: &llmtest.Usage{PromptTokens: 2000, CompletionTokens: 100, TotalTokens: 2100}},
	)
	home, ws, cfg := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfg, "zero"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "zero", "config.yaml"), []byte("models:\n  chat:\n    price: {input: 1, output: 4}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + filepath.Join(home, "data"), "XDG_CONFIG_HOME=" + cfg,
		"ZERO_TOOL_PROTOCOL=json"} // "Thinking." is no tool request: asked again
	zero := func(args ...string) (string, string, int) {
		cmd := zeroCmd(t, env, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		_ = cmd.Run()
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}
	if out, errs, code := zero("run", "--workspace", ws, "price it"); code != 0 || !strings.Contains(out, "priced") {
		t.Fatalf("zero run: exit %d\n%s\n%s", code, out, errs)
	}
	list, _, _ := zero("sessions", "ls", "--workspace", ws)
	lines := strings.Split(strings.TrimSpace(list), "\n")
	id := strings.Fields(lines[len(lines)-1])[0]
	show, errs, code := zero("sessions", "show", id)
	if code != 0 {
		t.Fatalf("zero sessions show: exit %d\n%s", code, errs)
	}
	// 2000 in at 1 and 100 out at 4 a million, and the answer's call,
	// counted by Zero and costed by the same price.
	if !regexp.MustCompile(`Usage: ~[0-9.]+k tokens in, [0-9]+ out, cost 0\.00[2-9][0-9]`).MatchString(show) ||
		!regexp.MustCompile(`- chat \(2 calls\): `).MatchString(show) {
		t.Errorf("zero sessions show lacks the session's usage:\n%s", show)
	}

	// A workspace may set a budget (only lower one than the user's).
	tight := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tight, ".zero"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tight, ".zero", "config.yaml"), []byte("limits:\n  tokens: 1000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code := zero("run", "--workspace", tight, "over budget")
	if code != 1 || !strings.Contains(errs, "limits.tokens") || !strings.Contains(errs, "2100 tokens") {
		t.Errorf("a run over limits.tokens: exit %d\n%s\n%s", code, out, errs)
	}
}
