package loop_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
)

// pollTool answers `output` polls with the next of its results; it says
// such calls are meant to be repeated.
type pollTool struct {
	results []string
	n       int
}

func (p *pollTool) Name() string { return "poll" }
func (p *pollTool) Execute(context.Context, *loop.ToolCall) (loop.ToolResult, error) {
	r := p.results[min(p.n, len(p.results)-1)]
	p.n++
	return loop.ToolResult{Text: r}, nil
}
func (p *pollTool) RepeatSafe(string, map[string]any) bool { return true }

func TestRepeatSafePollingRunsWhileOutputChanges(t *testing.T) {
	t.Parallel()
	same := toolReq("still building", "poll", map[string]any{"runtime": "output"})
	poll := &pollTool{results: []string{"10%", "50%", "90%", "done"}}
	model := &fakeModel{replies: []reply{{content: same}, {content: same}, {content: same}, {content: same}, {content: respond("built")}}}
	sess, rec := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, poll}})
	if got, err := sess.Run(runCtx(t), "build"); err != nil || got != "built" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	if poll.n != 4 || len(rec.ofType(loop.EventWarning)) != 0 {
		t.Errorf("polls run = %d (want 4), warnings = %+v", poll.n, rec.ofType(loop.EventWarning))
	}

	// The same polls with nothing changing any more are a loop.
	stuck := &pollTool{results: []string{"10%"}}
	model = &fakeModel{replies: []reply{{content: same}, {content: same}, {content: same}, {content: same}}}
	sess, _ = newSession(t, setup{model: model, tools: []loop.Tool{responseTool, stuck}})
	if _, err := sess.Run(runCtx(t), "build"); !errors.Is(err, loop.ErrRepeat) {
		t.Errorf("stuck polling: Run error = %v, want ErrRepeat", err)
	}
}

func TestRepeatResetByIntervention(t *testing.T) {
	t.Parallel()
	same := toolReq("deploy", "noop", map[string]any{})
	var sess *loop.Session
	model := &fakeModel{}
	model.replies = []reply{
		{content: same},
		{fn: func(ctx context.Context, fn llm.StreamFunc) (llm.Result, error) {
			_ = sess.Intervene("do it again please")
			<-ctx.Done()
			return llm.Result{}, context.Cause(ctx)
		}},
		{content: same},
		{content: same},
		{content: respond("deployed twice")},
	}
	sess, _ = newSession(t, setup{model: model, tools: []loop.Tool{responseTool, noopTool("noop")}})
	if got, err := sess.Run(runCtx(t), "deploy"); err != nil || got != "deployed twice" {
		t.Fatalf("Run = %q, %v: after the user asked, the same request is not a loop", got, err)
	}
}

// A reply cut off by the token limit is not executed half-way.
func TestTruncatedByLengthNotExecuted(t *testing.T) {
	t.Parallel()
	ran := false
	danger := toolFunc{"shell", func(context.Context, *loop.ToolCall) (loop.ToolResult, error) {
		ran = true
		return loop.ToolResult{Text: "ran"}, nil
	}}
	model := &fakeModel{replies: []reply{
		{fn: func(_ context.Context, fn llm.StreamFunc) (llm.Result, error) {
			text := `{"thoughts": ["clean"], "tool_name": "shell", "tool_args": {"code": "rm -rf build`
			err := fn(llm.Delta{Kind: llm.Content, Text: text})
			return llm.Result{Content: text, FinishReason: "length"}, err
		}},
		{content: respond("ok")},
	}}
	sess, _ := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, danger}})
	if _, err := sess.Run(runCtx(t), "clean"); err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Error("a request cut off by the token limit was executed")
	}
	if !strings.Contains(model.requestText(1), "cut off") {
		t.Errorf("the model should hear why:\n%s", model.requestText(1))
	}
}

// A message sent after the last checkpoint (here while monologue_end runs)
// is not lost: it starts the next monologue.
func TestLateMessageStartsNextMonologue(t *testing.T) {
	t.Parallel()
	reg := loop.Builtins()
	var sess *loop.Session
	sent := false
	reg.Register(hooks.MonologueEnd, "_50_late", func(context.Context, hooks.Payload) error {
		if !sent {
			sent = true
			if err := sess.Intervene("one more thing: add tests"); err != nil {
				t.Errorf("Intervene during monologue_end: %v", err)
			}
		}
		return nil
	})
	model := &fakeModel{replies: []reply{{content: respond("first")}, {content: respond("tests added")}}}
	sess, _ = newSession(t, setup{model: model, registry: reg})
	got, err := sess.Run(runCtx(t), "fix it")
	if err != nil || got != "tests added" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	if !strings.Contains(model.requestText(1), "one more thing: add tests") {
		t.Errorf("the late message should reach the model:\n%s", model.requestText(1))
	}
}

func TestUndeliveredMessageIsReported(t *testing.T) {
	t.Parallel()
	reg := loop.Builtins()
	var sess *loop.Session
	reg.Register(hooks.MonologueEnd, "_50_late", func(context.Context, hooks.Payload) error {
		_ = sess.Intervene("are you there?")
		return nil
	})
	model := &fakeModel{replies: []reply{{err: &llm.APIError{StatusCode: 401, Message: "bad key"}}}}
	sess, rec := newSession(t, setup{model: model, registry: reg})
	if _, err := sess.Run(runCtx(t), "go"); err == nil {
		t.Fatal("want the 401 to end the run")
	}
	w := rec.ofType(loop.EventWarning)
	if len(w) != 1 || !strings.Contains(w[0].Text, "are you there?") {
		t.Errorf("the undelivered message should be reported: %+v", w)
	}
	if n := len(model.requests()); n != 1 {
		t.Errorf("a 401 should not be retried: %d requests", n)
	}
}

func TestLongResultSpilledToFile(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a", 3000) + "MIDDLE" + strings.Repeat("b", 3000)
	flood := toolFunc{"flood", func(context.Context, *loop.ToolCall) (loop.ToolResult, error) {
		return loop.ToolResult{Text: big}, nil
	}}
	var spilled string
	model := &fakeModel{replies: []reply{{content: toolReq("flood", "flood", map[string]any{})}, {content: respond("ok")}}}
	rec := &recorder{}
	sess := loop.NewSession("s", loop.Config{
		Setup:  loop.Setup{Model: model, Prompts: testPrompts(), Tools: []loop.Tool{responseTool, flood}},
		Limits: loop.Limits{ToolResult: 1000},
		Spill: func(_ *loop.Agent, tool, text string) (string, error) {
			spilled = text
			return "/tmp/zero/flood-1.txt", nil
		},
	}, rec.sink)
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	if spilled != big {
		t.Error("the whole result should be handed to Spill")
	}
	if text := model.requestText(1); strings.Contains(text, "MIDDLE") || !strings.Contains(text, "/tmp/zero/flood-1.txt") ||
		!strings.Contains(text, fmt.Sprintf("all %d bytes the tool returned", len(big))) {
		t.Errorf("history should hold the head and tail and the file's path, named for what it holds")
	}
}

func TestToolResultCappedInHistory(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 200) + strings.Repeat("y", 10000) + strings.Repeat("z", 200)
	flood := toolFunc{"flood", func(ctx context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		for range 1000 {
			c.Progress(ctx, strings.Repeat("o", 99)+"\n")
		}
		return loop.ToolResult{Text: big}, nil
	}}
	model := &fakeModel{replies: []reply{{content: toolReq("flood", "flood", map[string]any{})}, {content: respond("ok")}}}
	sess, rec := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, flood},
		limits: loop.Limits{ToolResult: 1000, LiveOutput: 5000}})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	text := model.requestText(1)
	if strings.Contains(text, strings.Repeat("y", 1000)) || !strings.Contains(text, "omitted") ||
		!strings.Contains(text, "xxxx") || !strings.Contains(text, "zzzz") {
		t.Errorf("history should keep the head and tail of a long result")
	}
	streamed := 0
	for _, e := range rec.ofType(loop.EventToolOutputDelta) {
		streamed += len(e.Text)
	}
	if streamed > 5200 {
		t.Errorf("streamed %d bytes of live output, want about the 5000-byte limit", streamed)
	}
}

// tool_output_update can mask what the editor is shown of the arguments.
func TestArgsMaskedForDisplay(t *testing.T) {
	t.Parallel()
	reg := loop.Builtins()
	reg.Register(hooks.ToolOutputUpdate, "_10_mask", func(_ context.Context, p hooks.Payload) error {
		op := p.(*loop.ToolOutputPayload)
		op.Content = strings.ReplaceAll(op.Content, "hunter2", "***")
		return nil
	})
	var got string
	login := toolFunc{"login", func(_ context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		got, _ = c.Args["password"].(string)
		return loop.ToolResult{Text: "in"}, nil
	}}
	model := &fakeModel{replies: []reply{{content: toolReq("login", "login", map[string]any{"password": "hunter2"})}, {content: respond("ok")}}}
	sess, rec := newSession(t, setup{model: model, registry: reg, tools: []loop.Tool{responseTool, login}})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	if got != "hunter2" {
		t.Errorf("the tool should get the real value, got %q", got)
	}
	if args := string(rec.ofType(loop.EventToolCall)[0].Args); strings.Contains(args, "hunter2") || !strings.Contains(args, "***") {
		t.Errorf("tool_call shows %s", args)
	}
}

func TestProcessChainEndOnlyOnSuccess(t *testing.T) {
	t.Parallel()
	reg := loop.Builtins()
	calls := 0
	reg.Register(hooks.ProcessChainEnd, "_50_count", func(context.Context, hooks.Payload) error {
		calls++
		return nil
	})
	model := &fakeModel{replies: []reply{{content: "prose"}, {content: "prose"}, {content: "prose"}}}
	sess, _ := newSession(t, setup{model: model, registry: reg})
	if _, err := sess.Run(runCtx(t), "go"); err == nil {
		t.Fatal("want a misformat error")
	}
	if calls != 0 {
		t.Errorf("process_chain_end ran %d times after a failed run", calls)
	}
}

func TestSystemPrompt(t *testing.T) {
	t.Parallel()
	sess, _ := newSession(t, setup{model: &fakeModel{}, tools: []loop.Tool{responseTool}})
	text, err := sess.Agent0().SystemPrompt(runCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tool_name", "### response"} {
		if !strings.Contains(text, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	if strings.Contains(text, "### code_execution_tool") {
		t.Error("the prompt describes a tool the agent does not have")
	}
}
