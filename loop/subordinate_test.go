package loop_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/tools"
)

func delegate(thought, message, profile string, reset bool) string {
	return toolReq(thought, "call_subordinate", map[string]any{"message": message, "profile": profile, "reset": reset})
}

func TestDelegation(t *testing.T) {
	t.Parallel()
	model := &fakeModel{replies: []reply{
		{content: delegate("delegate", "find the answer", "researcher", false)}, // A0
		{content: toolReq("look", "noop", map[string]any{})},                    // A1
		{content: respond("the answer is 42")},                                  // A1
		{content: respond("my researcher says 42")},                             // A0
	}}
	var profiles []string
	sess, rec := newSession(t, setup{
		model: model,
		tools: []loop.Tool{responseTool, noopTool("noop"), tools.CallSubordinate{}},
		subordinate: func(profile string) (loop.Setup, error) {
			profiles = append(profiles, profile)
			return loop.Setup{Model: model, Prompts: testPrompts(), Tools: []loop.Tool{responseTool, noopTool("noop")}}, nil
		},
	})
	got, err := sess.Run(runCtx(t), "what is the answer?")
	if err != nil || got != "my researcher says 42" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	if len(profiles) != 1 || profiles[0] != "researcher" {
		t.Errorf("subordinate profiles resolved: %v", profiles)
	}
	if text := model.requestText(3); !strings.Contains(text, "the answer is 42") {
		t.Errorf("the superior should get the subordinate's answer as the tool result:\n%s", text)
	}
	if text := model.requestText(1); strings.Contains(text, "what is the answer?") || !strings.Contains(text, "find the answer") {
		t.Errorf("the subordinate starts with its own history and the task:\n%s", text)
	}
	started, ended := rec.ofType(loop.EventSubordinateStarted), rec.ofType(loop.EventSubordinateEnded)
	if len(started) != 1 || started[0].Agent != 1 || started[0].Profile != "researcher" || started[0].Text != "find the answer" {
		t.Errorf("subordinate_started = %+v", started)
	}
	if len(ended) != 1 || ended[0].Agent != 1 || ended[0].Text != "the answer is 42" {
		t.Errorf("subordinate_ended = %+v", ended)
	}
	for _, e := range rec.ofType(loop.EventToolCall) {
		if want := map[string]int{"call_subordinate": 0, "noop": 1}[e.Tool]; e.Tool != "response" && e.Agent != want {
			t.Errorf("%s ran as agent %d, want %d", e.Tool, e.Agent, want)
		}
	}
	sub := sess.Agent0().Subordinate
	if sub == nil || sub.Profile != "researcher" || sub.Number != 1 {
		t.Fatalf("subordinate = %+v", sub)
	}
	if a0, a1 := loop.IterationNo(sess.Agent0()), loop.IterationNo(sub); a0 != 2 || a1 != 2 {
		t.Errorf("iteration_no A0=%d A1=%d, want 2 and 2: each agent counts its own turns", a0, a1)
	}
	if n := sub.History.Topics(); n != 1 {
		t.Errorf("subordinate topics = %d after one delegation, want 1 (sealed)", n)
	}
}

func TestDelegationReuseAndReset(t *testing.T) {
	t.Parallel()
	model := &fakeModel{replies: []reply{
		{content: delegate("first", "remember the word apple", "", false)},
		{content: respond("noted")},
		{content: delegate("second", "what was the word?", "", false)}, // same subordinate
		{content: respond("apple")},
		{content: delegate("third", "what was the word?", "", true)}, // fresh one
		{content: respond("I do not know")},
		{content: respond("done")},
	}}
	sess, _ := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, tools.CallSubordinate{}}})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	if text := model.requestText(3); !strings.Contains(text, "remember the word apple") {
		t.Errorf("a reused subordinate keeps its history:\n%s", text)
	}
	if text := model.requestText(5); strings.Contains(text, "remember the word apple") {
		t.Errorf("reset must give a fresh subordinate:\n%s", text)
	}
	if p := sess.Agent0().Subordinate.Profile; p != loop.DefaultSubordinateProfile {
		t.Errorf("a subordinate without a profile gets %q, want %q", p, loop.DefaultSubordinateProfile)
	}
}

func TestDelegationDepthLimit(t *testing.T) {
	t.Parallel()
	model := &fakeModel{replies: []reply{
		{content: delegate("down", "go deeper", "", false)},        // A0 → A1
		{content: delegate("deeper", "go even deeper", "", false)}, // A1 may not
		{content: respond("did it myself")},                        // A1
		{content: respond("ok")},                                   // A0
	}}
	sess, _ := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, tools.CallSubordinate{}},
		limits: loop.Limits{SubordinateDepth: new(1)}})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	// At the limit the tool is neither described nor run.
	if sys0, sys1 := model.requests()[0][0].Content, model.requests()[1][0].Content; !strings.Contains(sys0, "### call_subordinate") || strings.Contains(sys1, "### call_subordinate") {
		t.Error("call_subordinate should be offered to A0 and not to A1 at the depth limit")
	}
	if text := model.requestText(2); !strings.Contains(text, "call_subordinate") || !strings.Contains(text, "response") {
		t.Errorf("the model should hear that call_subordinate is not available to it:\n%s", text)
	}
	if sess.Agent0().Subordinate.Subordinate != nil {
		t.Error("an agent past the depth limit was created")
	}
}

func TestInterventionReachesWorkingSubordinate(t *testing.T) {
	t.Parallel()
	var sess *loop.Session
	model := &fakeModel{}
	model.replies = []reply{
		{content: delegate("delegate", "write the report", "", false)},
		{fn: func(ctx context.Context, fn llm.StreamFunc) (llm.Result, error) { // A1 streaming
			if err := fn(llm.Delta{Kind: llm.Content, Text: `{"thoughts": ["writing`}); err != nil {
				return llm.Result{}, err
			}
			_ = sess.Intervene("make it short")
			<-ctx.Done()
			return llm.Result{}, context.Cause(ctx)
		}},
		{content: respond("short report")}, // A1, after the intervention
		{content: respond("here it is")},   // A0
	}
	sess, _ = newSession(t, setup{model: model, tools: []loop.Tool{responseTool, tools.CallSubordinate{}}})
	if got, err := sess.Run(runCtx(t), "report"); err != nil || got != "here it is" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	if text := model.requestText(2); !strings.Contains(text, "make it short") {
		t.Errorf("the working subordinate should get the message:\n%s", text)
	}
	if text := model.requestText(3); strings.Contains(text, "make it short") {
		t.Errorf("the superior should not get it a second time:\n%s", text)
	}
}

func TestCancelStopsWholeChain(t *testing.T) {
	t.Parallel()
	var sess *loop.Session
	model := &fakeModel{}
	model.replies = []reply{
		{content: delegate("delegate", "work", "", false)},
		{fn: func(ctx context.Context, fn llm.StreamFunc) (llm.Result, error) {
			sess.Cancel()
			<-ctx.Done()
			return llm.Result{}, context.Cause(ctx)
		}},
	}
	sess, rec := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, tools.CallSubordinate{}}})
	_, err := sess.Run(runCtx(t), "go")
	if !errors.Is(err, loop.ErrCancelled) {
		t.Fatalf("Run = %v, want ErrCancelled", err)
	}
	ended := rec.ofType(loop.EventSubordinateEnded)
	if len(ended) != 1 || ended[0].Error == "" {
		t.Errorf("subordinate_ended should carry the cancel: %+v", ended)
	}
	if end := rec.ofType(loop.EventRunEnded); end[0].StopReason != loop.StopCancelled {
		t.Errorf("run_ended = %+v", end)
	}
	if n := len(model.requests()); n != 2 {
		t.Errorf("%d model calls after cancel, want 2", n)
	}
}

// A message sent while the subordinate is between its model calls and
// tools (here: during its message_loop_start) waits for its next
// checkpoint; it does not abort the superior's call_subordinate.
func TestInterventionBetweenSubordinatePhases(t *testing.T) {
	t.Parallel()
	reg := loop.Builtins()
	var sess *loop.Session
	sent := false
	reg.Register(hooks.MessageLoopStart, "_50_speak", func(_ context.Context, p hooks.Payload) error {
		if lp := p.(*loop.LoopPayload); lp.Agent.Number == 1 && !sent {
			sent = true
			_ = sess.Intervene("use metric units")
		}
		return nil
	})
	model := &fakeModel{replies: []reply{
		{content: delegate("delegate", "measure the room", "", false)},
		{content: respond("4 by 5 metres")}, // A1, having heard the person
		{content: respond("the room is 4 by 5 metres")},
	}}
	sess, rec := newSession(t, setup{model: model, registry: reg, tools: []loop.Tool{responseTool, tools.CallSubordinate{}}})
	if got, err := sess.Run(runCtx(t), "how big is the room?"); err != nil || got != "the room is 4 by 5 metres" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	if text := model.requestText(1); !strings.Contains(text, "use metric units") {
		t.Errorf("the subordinate should get the message at its checkpoint:\n%s", text)
	}
	if ended := rec.ofType(loop.EventSubordinateEnded); len(ended) != 1 || ended[0].Error != "" || ended[0].Text != "4 by 5 metres" {
		t.Errorf("the subordinate should finish normally: %+v", ended)
	}
}

type closingTool struct {
	toolFunc
	closed []*loop.Agent
}

func (c *closingTool) CloseAgent(a *loop.Agent) { c.closed = append(c.closed, a) }

// A replaced subordinate's resources are released, and a message sent while
// the subordinate's profile loads reaches the subordinate.
func TestSubordinateReplacedAndMessageDuringSetup(t *testing.T) {
	t.Parallel()
	closer := &closingTool{toolFunc: noopTool("noop")}
	var sess *loop.Session
	spoke := false
	model := &fakeModel{replies: []reply{
		{content: delegate("first", "task one", "", false)},
		{content: respond("one done")},
		{content: delegate("second", "task two", "", true)},
		{content: respond("two done")},
		{content: respond("all done")},
	}}
	sess, rec := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, closer, tools.CallSubordinate{}},
		subordinate: func(profile string) (loop.Setup, error) {
			if !spoke {
				spoke = true
				_ = sess.Intervene("be brief") // while the profile loads
			}
			return loop.Setup{Model: model, Prompts: testPrompts(), Tools: []loop.Tool{responseTool, closer}}, nil
		},
	})
	if got, err := sess.Run(runCtx(t), "go"); err != nil || got != "all done" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	if text := model.requestText(1); !strings.Contains(text, "be brief") {
		t.Errorf("the subordinate should get the message sent while it was set up:\n%s", text)
	}
	for _, e := range rec.ofType(loop.EventSubordinateEnded) {
		if e.Error != "" {
			t.Errorf("subordinate ended with %q", e.Error)
		}
	}
	if len(closer.closed) != 1 || closer.closed[0].Number != 1 || closer.closed[0] == sess.Agent0().Subordinate {
		t.Errorf("the replaced subordinate should be closed once: %v", closer.closed)
	}
}
