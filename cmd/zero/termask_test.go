package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/zeroagent/zero/internal/proctest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/server"
)

// oneRequest is a broker holding one request.
type oneRequest struct {
	req    server.Request
	answer string // "", "yes", "always" or "no: reason"
}

func (o *oneRequest) Pending(string) []server.Request {
	if o.answer != "" {
		return nil
	}
	return []server.Request{o.req}
}

func (o *oneRequest) Approve(id string, always bool) error {
	if o.answer != "" || id != o.req.ID {
		return server.ErrNotFound
	}
	o.answer = map[bool]string{false: "yes", true: "always"}[always]
	return nil
}

func (o *oneRequest) Deny(id, reason string) error {
	if o.answer != "" || id != o.req.ID {
		return server.ErrNotFound
	}
	o.answer = "no: " + reason
	return nil
}

// askOnTerminal puts req to a terminal that types typed (nil: no
// terminal) and returns what the terminal showed and what was answered.
func askOnTerminal(t *testing.T, req server.Request, typed string, interactive ...bool) (shown, answer string) {
	t.Helper()
	req.ID, req.Session = "s/tool-1", "s"
	b := &oneRequest{req: req}
	var out strings.Builder
	a := newTermAsker(b, nil, strings.NewReader(typed), &out, len(interactive) == 0 || interactive[0], make(chan struct{}))
	a.ask(t.Context(), server.Event{Type: server.EventApprovalRequested, Session: "s", Text: req.ID})
	return out.String(), b.answer
}

// The terminal's answers: y approves, a approves for always, anything
// else (or nothing, stdin closed) refuses; without a terminal the call is
// refused and the person is told how to allow it.
func TestTermAskerAnswers(t *testing.T) {
	t.Parallel()
	for typed, want := range map[string]string{"y\n": "yes", "YES\n": "yes", "a\n": "always", "n\n": "no: the user said no",
		"\n": "no: the user said no", "sure\n": "no: the user said no", "": "no: the user said no"} {
		shown, got := askOnTerminal(t, server.Request{Tool: "code_execution_tool", Subject: "make"}, typed)
		if got != want || !strings.Contains(shown, "allow? [y]es, [a]lways for code_execution_tool, [N]o: ") {
			t.Errorf("typed %q: answer %q, want %q; shown %q", typed, got, want, shown)
		}
	}
	shown, got := askOnTerminal(t, server.Request{Tool: "code_execution_tool", Subject: "make"}, "y\n", false)
	if !strings.HasPrefix(got, "no: ") || !strings.Contains(shown, "refused code_execution_tool: it needs approval and there is no terminal to ask on") {
		t.Errorf("no terminal: answer %q, shown %q", got, shown)
	}
}

// Where commands would run unconfined, zero run asks on the terminal: y
// runs the command, anything else refuses it; a lets this command and the
// next run; without a terminal the command is refused, the model is told
// why, and the run goes on to its answer.
func TestRunAsksOnTerminal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		answer string
		ran    bool
	}{{"y", true}, {"n", false}, {"", false}, {"a", true}} {
		t.Run("answer="+tc.answer, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			marker := filepath.Join(ws, "ran")
			replies := []llmtest.Reply{
				{Content: `{"thoughts": ["mark"], "headline": "Marking", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "echo yes > ` + marker + `"}}`},
				{Content: `{"thoughts": ["done"], "headline": "Done", "tool_name": "response", "tool_args": {"text": "done"}}`},
			}
			if tc.answer == "a" { // the second command is not asked about
				replies = append([]llmtest.Reply{{Content: `{"thoughts": ["first"], "headline": "First", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "true"}}`}}, replies...)
			}
			srv := llmtest.NewServer(t, replies...)
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Fatal("no pseudo-terminal (the local sandbox needs one too):", err)
			}
			defer ptmx.Close()
			// No bubblewrap on zero's PATH: the local backend is unconfined
			// (the command is a shell builtin).
			cmd := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "PATH=" + t.TempDir()}, "run", "--json", "--workspace", ws, "mark it")
			cmd.Stdin = tty
			stderr := &proctest.Buffer{}
			cmd.Stderr = stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(stderr.String(), "allow? [y]es") {
				if time.Now().After(deadline) {
					t.Fatalf("zero run never asked:\n%s", stderr.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			if _, err := ptmx.Write([]byte(tc.answer + "\n")); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("zero run: %v\n%s", err, stderr.String())
			}
			if _, err := os.Stat(marker); (err == nil) != tc.ran {
				t.Errorf("the command ran = %v, want %v\n%s", err == nil, tc.ran, stderr.String())
			}
			if n := strings.Count(stderr.String(), "allow? [y]es"); n != 1 {
				t.Errorf("asked %d times, want once:\n%s", n, stderr.String())
			}
		})
	}
	t.Run("no terminal", func(t *testing.T) {
		t.Parallel()
		ws := t.TempDir()
		marker := filepath.Join(ws, "ran")
		srv := llmtest.NewServer(t,
			llmtest.Reply{Content: `{"thoughts": ["mark"], "headline": "Marking", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "echo yes > ` + marker + `"}}`},
			llmtest.Reply{Content: `{"thoughts": ["done"], "headline": "Done", "tool_name": "response", "tool_args": {"text": "done"}}`},
		)
		cmd := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "PATH=" + t.TempDir()}, "run", "--json", "--workspace", ws, "mark it")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("zero run: %v\n%s", err, out)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Error("the command ran with nobody to ask")
		}
		if !strings.Contains(string(out), `"status":"denied"`) {
			t.Errorf("no approval_resolved denied event:\n%s", out)
		}
		reqs := srv.Requests()
		if last := reqs[len(reqs)-1].Messages; !strings.Contains(last[len(last)-1].Content, "no terminal to ask on") {
			t.Errorf("the model was not told why: %q", last[len(last)-1].Content)
		}
	})
}
