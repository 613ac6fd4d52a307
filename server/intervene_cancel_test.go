package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
)

// waitTool stands in for a command that runs until the run is cancelled;
// started is closed once it runs.
func waitTool(started chan<- struct{}) toolFunc {
	return toolFunc{"code_execution_tool", func(ctx context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		c.Progress(ctx, "working\n")
		close(started)
		<-ctx.Done()
		return loop.ToolResult{Text: "working"}, nil
	}}
}

// cancelEnv is a manager whose one session runs waitTool.
func cancelEnv(t *testing.T, started chan<- struct{}) *Manager {
	t.Helper()
	set, err := hooks.Resolve(loop.Builtins(), nil, hooks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	model := &fakeModel{replies: []reply{{content: execCall("sleep 600")}}}
	m := NewManager(Options{
		Setup: func(context.Context, SessionSpec) (loop.Setup, error) {
			return loop.Setup{Model: model, Prompts: profiles.New(), Tools: []loop.Tool{responseTool, waitTool(started)}, Hooks: set}, nil
		},
		NewSession: func(_ context.Context, spec SessionSpec, sink func(loop.Event)) (*loop.Session, error) {
			return loop.NewSession(spec.ID, loop.Config{
				Setup:  loop.Setup{Model: model, Prompts: profiles.New(), Tools: []loop.Tool{responseTool, waitTool(started)}, Hooks: set},
				Limits: loop.Limits{CriticalRetryDelay: time.Millisecond},
			}, sink), nil
		},
	})
	t.Cleanup(m.CloseAll)
	return m
}

// A run is cancelled for a cause, and recorded as what it was: the user's
// cancel, a client that went away, Zero shutting down. Each is a
// cancellation (errors.Is ErrCancelled), and the tool's result, the
// history and run_ended say which.
func TestInterveneCancelCauses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cancel func(m *Manager, s *Session)
		cause  error
		said   string
	}{
		{"user", func(_ *Manager, s *Session) { s.Cancel() }, loop.ErrCancelled, "cancelled by the user"},
		{"disconnect", func(_ *Manager, s *Session) { s.CancelWith(loop.ErrDisconnected) }, loop.ErrDisconnected, "cancelled: the client disconnected"},
		{"shutdown", func(m *Manager, _ *Session) { m.CloseAll() }, loop.ErrShutdown, "cancelled: Zero is shutting down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			started := make(chan struct{})
			m := cancelEnv(t, started)
			s, err := m.Create(t.Context(), SessionSpec{Roots: []string{t.TempDir()}})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan RunResult, 1)
			go func() {
				res, _ := s.Prompt(testCtx(t), "run it")
				done <- res
			}()
			<-started
			tc.cancel(m, s)
			res := <-done
			if res.StopReason != loop.StopCancelled || !errors.Is(res.Err, loop.ErrCancelled) || !errors.Is(res.Err, tc.cause) {
				t.Errorf("result = %+v, want cancelled with %v", res, tc.cause)
			}
			if last, _ := s.Last(); !errors.Is(last.Err, tc.cause) {
				t.Errorf("Last().Err = %v, want %v", last.Err, tc.cause)
			}
			evs := mustEvents(s, 0)
			results := ofType(evs, loop.EventToolResult)
			if len(results) != 1 || results[0].Status != loop.ToolCancelled || !strings.Contains(results[0].Text, "["+tc.said+"]") {
				t.Errorf("tool_result = %+v, want it to say %q", results, tc.said)
			}
			ended := ofType(evs, loop.EventRunEnded)
			wantErr := tc.said
			if tc.cause == loop.ErrCancelled {
				wantErr = "" // the user's cancel is what cancelled means
			}
			if len(ended) != 1 || ended[0].StopReason != loop.StopCancelled || ended[0].Error != wantErr {
				t.Errorf("run_ended = %+v, want cancelled, error %q", ended, wantErr)
			}
			var hist strings.Builder
			for _, msg := range s.ls.Agent0().History.Output() {
				hist.WriteString(msg.Content)
			}
			if !strings.Contains(hist.String(), tc.said) || tc.cause != loop.ErrCancelled && strings.Contains(hist.String(), "by the user") {
				t.Errorf("the history should say %q:\n%s", tc.said, hist.String())
			}
		})
	}
}
