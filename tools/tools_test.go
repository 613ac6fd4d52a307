package tools_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroagent/zero/internal/proctest"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/sandbox"
	"github.com/zeroagent/zero/tools"
)

type harness struct {
	srv  *llmtest.Server
	sess *loop.Session
	ws   string

	mu     sync.Mutex
	events []loop.Event
}

func (h *harness) ofType(t loop.EventType) []loop.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []loop.Event
	for _, e := range h.events {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

// newHarness wires the real pieces: the OpenAI client against the scripted
// server, the default prompts, the local sandbox and the tools.
func newHarness(t *testing.T, timeouts tools.Timeouts, replies ...llmtest.Reply) *harness {
	t.Helper()
	ws := t.TempDir()
	backend, err := sandbox.NewLocal(sandbox.LocalOptions{Dir: ws})
	if err != nil {
		t.Fatal(err)
	}
	return newHarnessOn(t, ws, backend, timeouts, replies...)
}

// newHarnessOn is newHarness with the given backend for workspace ws.
func newHarnessOn(t *testing.T, ws string, backend sandbox.Backend, timeouts tools.Timeouts, replies ...llmtest.Reply) *harness {
	t.Helper()
	h := &harness{srv: llmtest.NewServer(t, replies...), ws: ws}
	client, err := llm.New(llm.Options{Model: "test", BaseURL: h.srv.URL(), APIKey: "k", RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backend.Close() })
	ce := tools.NewCodeExecution(backend, timeouts)
	t.Cleanup(func() { ce.Close() })
	h.sess = loop.NewSession("t", loop.Config{
		Setup: loop.Setup{
			Model:   client,
			Prompts: profiles.New(),
			Tools:   []loop.Tool{tools.Response{}, ce, ce.InputTool()},
		},
		Workspace: h.ws,
		Limits:    loop.Limits{CriticalRetryDelay: time.Millisecond},
	}, func(e loop.Event) {
		h.mu.Lock()
		h.events = append(h.events, e)
		h.mu.Unlock()
	})
	return h
}

func call(tool, args string) llmtest.Reply {
	return llmtest.Reply{Content: `{"thoughts": ["step"], "headline": "Working", "tool_name": "` + tool + `", "tool_args": ` + args + `}`}
}

// answer is the final reply; expect is what the request before it must
// contain (checked by the test, not used to pick the reply).
func answer(text string) llmtest.Reply {
	return call("response", `{"text": "`+text+`"}`)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), proctest.HangGuard)
	t.Cleanup(cancel)
	return c
}

// lastUserText is the last user message of the i-th request to the model.
func requestText(h *harness, i int) string {
	reqs := h.srv.Requests()
	if i >= len(reqs) {
		return ""
	}
	var b strings.Builder
	for _, m := range reqs[i].Messages {
		b.WriteString(m.Content + "\n")
	}
	return b.String()
}

func TestTerminalSessionPersistsAndReportsExitCode(t *testing.T) {
	t.Parallel()
	h := newHarness(t, tools.Timeouts{},
		call("code_execution_tool", `{"runtime": "terminal", "code": "mkdir sub && cd sub && export GREETING=hi"}`),
		call("code_execution_tool", `{"runtime": "terminal", "code": "pwd; echo $GREETING; false"}`),
		answer("done"),
	)
	if got, err := h.sess.Run(ctx(t), "go"); err != nil || got != "done" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	text := requestText(h, 2)
	if !strings.Contains(text, filepath.Join(h.ws, "sub")) || !strings.Contains(text, "hi") {
		t.Errorf("cd and export should persist:\n%s", text)
	}
	out := ""
	for _, e := range h.ofType(loop.EventToolOutputDelta) {
		out += e.Text
	}
	if !strings.Contains(out, "hi") {
		t.Errorf("output should stream as tool_output_delta: %q", out)
	}
}

func TestDialogThenInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t, tools.Timeouts{Terminal: sandbox.Timeouts{FirstOutput: 5 * time.Second, BetweenOutput: 5 * time.Second, Max: 10 * time.Second, Dialog: 200 * time.Millisecond}},
		call("code_execution_tool", `{"runtime": "terminal", "code": "read -p 'Proceed? [y/N] ' ans; echo answer=$ans"}`),
		call("input", `{"keyboard": "y", "session": 0}`),
		answer("confirmed"),
	)
	if got, err := h.sess.Run(ctx(t), "go"); err != nil || got != "confirmed" {
		t.Fatalf("Run = %q, %v\n%s", got, err, requestText(h, 1))
	}
	if text := requestText(h, 1); !strings.Contains(text, "Proceed?") {
		t.Errorf("the dialog should be shown to the model:\n%s", text)
	}
	if text := requestText(h, 2); !strings.Contains(text, "answer=y") {
		t.Errorf("input should reach the waiting program:\n%s", text)
	}
}

func TestOutputAndResetRuntimes(t *testing.T) {
	t.Parallel()
	// The first command outlasts the first-output timeout by seconds, and a
	// new shell's echo comes well within it, even on a loaded machine.
	short := sandbox.Timeouts{FirstOutput: 2 * time.Second, BetweenOutput: 2 * time.Second, Max: 30 * time.Second, Dialog: 30 * time.Second}
	h := newHarness(t, tools.Timeouts{Terminal: short, Output: sandbox.Timeouts{FirstOutput: time.Minute, BetweenOutput: time.Minute, Max: time.Minute, Dialog: time.Minute}},
		call("code_execution_tool", `{"runtime": "terminal", "code": "sleep 5; echo finished-late"}`),
		call("code_execution_tool", `{"runtime": "output", "session": 0}`),
		call("code_execution_tool", `{"runtime": "reset", "session": 0}`),
		call("code_execution_tool", `{"runtime": "terminal", "code": "echo fresh"}`),
		answer("ok"),
	)
	if got, err := h.sess.Run(ctx(t), "go"); err != nil || got != "ok" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	if text := requestText(h, 1); !strings.Contains(text, "SYSTEM") {
		t.Errorf("a timed-out wait should carry a note for the model:\n%s", text)
	}
	if text := requestText(h, 2); !strings.Contains(text, "finished-late") {
		t.Errorf("the output runtime should read the rest:\n%s", text)
	}
	if text := requestText(h, 4); !strings.Contains(text, "fresh") {
		t.Errorf("a reset session should run commands again:\n%s", text)
	}
}

func TestBusySessionIsReported(t *testing.T) {
	t.Parallel()
	// Long enough for a new shell's echo on a loaded machine; the sleep
	// outlasts it.
	short := sandbox.Timeouts{FirstOutput: 3 * time.Second, BetweenOutput: 3 * time.Second, Max: 30 * time.Second, Dialog: 30 * time.Second}
	h := newHarness(t, tools.Timeouts{Terminal: short},
		call("code_execution_tool", `{"runtime": "terminal", "code": "sleep 300"}`),
		call("code_execution_tool", `{"runtime": "terminal", "code": "echo other"}`),
		call("code_execution_tool", `{"runtime": "terminal", "code": "echo in-session-one", "session": 1}`),
		answer("ok"),
	)
	if _, err := h.sess.Run(ctx(t), "go"); err != nil {
		t.Fatal(err)
	}
	if text := requestText(h, 3); !strings.Contains(text, "in-session-one") {
		t.Errorf("another session should work while session 0 is busy:\n%s", text)
	}
	if text := requestText(h, 2); !strings.Contains(text, "running") {
		t.Errorf("a busy session should be reported to the model:\n%s", text)
	}
}

func TestCancelKillsCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t, tools.Timeouts{},
		call("code_execution_tool", `{"runtime": "terminal", "code": "sh -c 'echo $$ > pid; exec sleep 300'"}`),
	)
	pidFile := filepath.Join(h.ws, "pid")
	done := make(chan error)
	go func() {
		_, err := h.sess.Run(ctx(t), "go")
		done <- err
	}()
	pid, ok := proctest.ReadPID(pidFile, 10*time.Second)
	if !ok {
		t.Fatal("the command never started")
	}
	h.sess.Cancel()
	if err := <-done; !errors.Is(err, loop.ErrCancelled) {
		t.Fatalf("Run = %v, want ErrCancelled", err)
	}
	if !proctest.WaitGone(pid, 5*time.Second) {
		t.Errorf("the command (pid %d) survived the cancel", pid)
	}
}

func TestInterventionMidCommandKeepsItRunning(t *testing.T) {
	t.Parallel()
	h := newHarness(t, tools.Timeouts{},
		call("code_execution_tool", `{"runtime": "terminal", "code": "echo started; sleep 2; echo still-alive"}`),
		call("code_execution_tool", `{"runtime": "output"}`),
		answer("ok"),
	)
	go func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for _, e := range h.ofType(loop.EventToolOutputDelta) {
				if strings.Contains(e.Text, "started") {
					_ = h.sess.Intervene("how is it going?")
					return
				}
			}
		}
	}()
	if got, err := h.sess.Run(ctx(t), "go"); err != nil || got != "ok" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	text := requestText(h, 1)
	if !strings.Contains(text, "started") || !strings.Contains(text, "how is it going?") {
		t.Errorf("partial output and the intervention should reach the model:\n%s", text)
	}
}

func TestResponseNeedsText(t *testing.T) {
	t.Parallel()
	h := newHarness(t, tools.Timeouts{},
		call("response", `{}`),
		answer("now with text"),
	)
	if got, err := h.sess.Run(ctx(t), "go"); err != nil || got != "now with text" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	if text := requestText(h, 1); !strings.Contains(text, "tool_args.text") {
		t.Errorf("the model should hear that text is missing:\n%s", text)
	}
}

func TestWrongArgTypes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, tools.Timeouts{},
		call("code_execution_tool", `{"runtime": "terminal", "code": "echo hi", "session": "zero"}`),
		answer("ok"),
	)
	if _, err := h.sess.Run(ctx(t), "go"); err != nil {
		t.Fatal(err)
	}
	if text := requestText(h, 1); !strings.Contains(text, "session") || !strings.Contains(text, "number") {
		t.Errorf("a wrong argument type should be explained to the model:\n%s", text)
	}
}

// The stream is closed at the first complete tool request: the server sees
// the client go away instead of streaming the rest of a rambling reply.
func TestEarlyStopClosesStream(t *testing.T) {
	t.Parallel()
	ramble := strings.Repeat(" and then some more text the model should never have sent", 40)
	r := answer("short and done")
	r.Content += ramble
	r.ChunkSize = 16
	r.Delay = llmtest.Duration(2 * time.Millisecond)
	h := newHarness(t, tools.Timeouts{}, r)
	if got, err := h.sess.Run(ctx(t), "go"); err != nil || got != "short and done" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 1 || !reqs[0].ClientClosed {
		t.Fatalf("the server should see the client close the stream: %+v", reqs)
	}
	if total := len(r.Content) / 16; reqs[0].ChunksSent > total/4 {
		t.Errorf("sent %d of %d chunks: the stream was not stopped early", reqs[0].ChunksSent, total)
	}
}

func TestNodejsRuntime(t *testing.T) {
	t.Parallel()
	h := newHarness(t, tools.Timeouts{},
		call("code_execution_tool", `{"runtime": "nodejs", "code": "const s = \"it's five\"; console.log(s.length * 3, '=', 'twenty-seven')"}`),
		answer("ok"),
	)
	if _, err := h.sess.Run(ctx(t), "go"); err != nil {
		t.Fatal(err)
	}
	if text := requestText(h, 1); !strings.Contains(text, "27 = twenty-seven") {
		t.Errorf("node should run the code, quotes intact:\n%s", text)
	}
}
