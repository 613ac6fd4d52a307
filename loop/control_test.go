package loop_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
)

func TestPauseHoldsRunUntilResume(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := &fakeModel{replies: []reply{{content: respond("done")}}}
		sess, _ := newSession(t, setup{model: m})
		sess.Pause()
		if !sess.Paused() {
			t.Fatal("Paused() = false after Pause")
		}
		done := make(chan error, 1)
		go func() {
			_, err := sess.Run(runCtx(t), "hi")
			done <- err
		}()
		// Every goroutine of the run is blocked: it reached the pause and
		// stays there, with no model call.
		synctest.Wait()
		if !sess.Running() {
			t.Fatal("the run did not start")
		}
		if n := len(m.requests()); n != 0 {
			t.Fatalf("model called %d times while paused", n)
		}
		sess.Resume()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		if sess.Paused() {
			t.Fatal("still paused after Resume")
		}
	})
}

func TestCancelWhilePaused(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := &fakeModel{replies: []reply{{content: respond("done")}}}
		sess, rec := newSession(t, setup{model: m})
		sess.Pause()
		done := make(chan error, 1)
		go func() {
			_, err := sess.Run(runCtx(t), "hi")
			done <- err
		}()
		synctest.Wait() // the run waits at the pause
		sess.Cancel()
		if err := <-done; !errors.Is(err, loop.ErrCancelled) {
			t.Fatalf("Run = %v, want ErrCancelled", err)
		}
		if got := rec.ofType(loop.EventRunEnded)[0].StopReason; got != loop.StopCancelled {
			t.Fatalf("stop reason %q", got)
		}
	})
}

func TestResetForgetsHistory(t *testing.T) {
	t.Parallel()
	m := &fakeModel{replies: []reply{{content: respond("one")}, {content: respond("two")}}}
	sess, _ := newSession(t, setup{model: m})
	if _, err := sess.Run(runCtx(t), "remember the word BANANA"); err != nil {
		t.Fatal(err)
	}
	before := sess.Agent0()
	if err := sess.Reset(); err != nil {
		t.Fatal(err)
	}
	if sess.Agent0() == before {
		t.Fatal("Reset kept agent 0")
	}
	if _, err := sess.Run(runCtx(t), "what was the word?"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.requestText(1), "BANANA") {
		t.Fatal("the second request still holds the history from before the reset")
	}
}

func TestResetAndSetSetupRefusedWhileRunning(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	m := &fakeModel{replies: []reply{{fn: func(ctx context.Context, _ llm.StreamFunc) (llm.Result, error) {
		close(started)
		<-ctx.Done()
		return llm.Result{}, context.Cause(ctx)
	}}}}
	sess, _ := newSession(t, setup{model: m})
	done := make(chan error, 1)
	go func() {
		_, err := sess.Run(runCtx(t), "hi")
		done <- err
	}()
	<-started
	if err := sess.Reset(); !errors.Is(err, loop.ErrBusy) {
		t.Errorf("Reset during a run = %v, want ErrBusy", err)
	}
	if err := sess.SetSetup(loop.Setup{Model: m, Prompts: testPrompts()}); !errors.Is(err, loop.ErrBusy) {
		t.Errorf("SetSetup during a run = %v, want ErrBusy", err)
	}
	sess.Cancel()
	<-done
}

func TestSetSetupSwitchesProfileAndModel(t *testing.T) {
	t.Parallel()
	first := &fakeModel{replies: []reply{{content: respond("one")}}}
	second := &fakeModel{replies: []reply{{content: respond("two")}}}
	sess, _ := newSession(t, setup{model: first})
	if _, err := sess.Run(runCtx(t), "remember BANANA"); err != nil {
		t.Fatal(err)
	}
	if err := sess.SetSetup(loop.Setup{Profile: "researcher", Model: second, Prompts: testPrompts(), Tools: []loop.Tool{responseTool}}); err != nil {
		t.Fatal(err)
	}
	if got := sess.Profile(); got != "researcher" {
		t.Fatalf("Profile() = %q", got)
	}
	answer, err := sess.Run(runCtx(t), "and now?")
	if err != nil || answer != "two" {
		t.Fatalf("Run = %q, %v; want the second model's answer", answer, err)
	}
	if !strings.Contains(second.requestText(0), "BANANA") {
		t.Fatal("history was lost when the setup changed")
	}
}

// closer is a tool holding something per agent.
type closer struct {
	name   string
	closed *int
	_      func() // not comparable when held by value
}

func (c closer) Name() string { return c.name }
func (c closer) Execute(context.Context, *loop.ToolCall) (loop.ToolResult, error) {
	return loop.ToolResult{Text: "ok"}, nil
}
func (c closer) CloseAgent(*loop.Agent) { *c.closed++ }

type ptrCloser struct{ closer }

func TestSetSetupClosesOnlyReplacedTools(t *testing.T) {
	t.Parallel()
	var kept, replaced, byValue int
	keep := &ptrCloser{closer{name: "keep", closed: &kept}}
	swap := &ptrCloser{closer{name: "swap", closed: &replaced}}
	val := closer{name: "value", closed: &byValue}
	m := &fakeModel{}
	sess, _ := newSession(t, setup{model: m, tools: []loop.Tool{responseTool, keep, swap, val}})
	newSwap := &ptrCloser{closer{name: "swap", closed: new(int)}}
	if err := sess.SetSetup(loop.Setup{Model: m, Prompts: testPrompts(), Tools: []loop.Tool{responseTool, keep, newSwap, val}}); err != nil {
		t.Fatal(err)
	}
	if kept != 0 || replaced != 1 || byValue != 1 {
		t.Errorf("closed: kept %d, replaced %d, uncomparable %d; want 0, 1, 1", kept, replaced, byValue)
	}
}
