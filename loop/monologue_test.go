package loop_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/tools"
)

// The seed's checklist for message_loop_start.
func TestMessageLoopStartChecklist(t *testing.T) {
	t.Parallel()
	model := &fakeModel{replies: []reply{
		{content: toolReq("one", "noop", map[string]any{"n": 1})},
		{content: toolReq("two", "noop", map[string]any{"n": 2})},
		{content: respond("first done")},
		{content: respond("second done")},
	}}
	reg := loop.Builtins()
	var (
		iterations   []int // LoopData.iteration seen at message_loop_start
		iterationNos []int // iteration_no seen after the built-in ran
		order        []string
		kept         []bool
	)
	reg.Register(hooks.MonologueStart, "_50_store", func(_ context.Context, p hooks.Payload) error {
		p.(*loop.LoopPayload).Loop.ParamsPersistent["stored"] = "by monologue_start"
		return nil
	})
	reg.Register(hooks.MessageLoopStart, "_30_c", func(context.Context, hooks.Payload) error {
		order = append(order, "_30_c")
		return nil
	})
	reg.Register(hooks.MessageLoopStart, "_20_b", func(_ context.Context, p hooks.Payload) error {
		lp := p.(*loop.LoopPayload)
		order = append(order, "_20_b")
		iterations = append(iterations, lp.Loop.Iteration)
		iterationNos = append(iterationNos, loop.IterationNo(lp.Agent))
		return nil
	})
	reg.Register(hooks.MessageLoopPromptsBefore, "_50_check", func(_ context.Context, p hooks.Payload) error {
		kept = append(kept, p.(*loop.LoopPayload).Loop.ParamsPersistent["stored"] == "by monologue_start")
		return nil
	})
	sess, _ := newSession(t, setup{model: model, registry: reg, tools: []loop.Tool{responseTool, noopTool("noop")}})

	for _, want := range []string{"first done", "second done"} {
		got, err := sess.Run(runCtx(t), "task")
		if err != nil || got != want {
			t.Fatalf("Run = %q, %v; want %q", got, err, want)
		}
	}
	if diff := cmp.Diff([]int{0, 1, 2, 0}, iterations); diff != "" {
		t.Errorf("LoopData.iteration at message_loop_start (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 2, 3, 4}, iterationNos); diff != "" {
		t.Errorf("iteration_no keeps growing across monologues (-want +got):\n%s", diff)
	}
	if got := loop.IterationNo(sess.Agent0()); got != 4 {
		t.Errorf("IterationNo = %d, want 4", got)
	}
	if diff := cmp.Diff([]bool{true, true, true, true}, kept); diff != "" {
		t.Errorf("monologue_start state after message_loop_start (-want +got):\n%s", diff)
	}
	wantOrder := strings.Repeat("_20_b _30_c ", 4)
	if got := strings.Join(order, " ") + " "; got != wantOrder {
		t.Errorf("extension order = %q, want %q", got, wantOrder)
	}
}

// allPointsRecorder registers an extension at every point that records
// the point's name.
func allPointsRecorder(reg *hooks.Registry, seq *[]string) {
	for _, point := range hooks.Points() {
		reg.Register(point, "_99_record", func(context.Context, hooks.Payload) error {
			*seq = append(*seq, point)
			return nil
		})
	}
}

// The exact sequence of extension points for one turn with one tool call,
// then the response turn, compared with Agent Zero's order (agent.py).
func TestExtensionPointSequence(t *testing.T) {
	t.Parallel()
	model := &fakeModel{replies: []reply{
		{reasoning: "let me think", content: toolReq("run it", "work", map[string]any{"x": 1})},
		{content: respond("done")},
	}}
	var seq []string
	reg := loop.Builtins()
	allPointsRecorder(reg, &seq)
	work := toolFunc{"work", func(ctx context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		c.Progress(ctx, "some output")
		return loop.ToolResult{Text: "worked"}, nil
	}}
	sess, _ := newSession(t, setup{model: model, registry: reg, tools: []loop.Tool{responseTool, work}})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"agent_init",      // Agent() constructor
		"hist_add_before", // the user message
		"monologue_start",
		// turn 1: a tool call
		"message_loop_start",
		"message_loop_prompts_before", "system_prompt", "message_loop_prompts_after",
		"before_main_llm_call",
		"chat_model_call_before",
		"reasoning_stream_chunk", "reasoning_stream",
		"response_stream_chunk", "response_stream",
		"chat_model_call_after",
		"reasoning_stream_end", "response_stream_end",
		"hist_add_before",    // the AI message
		"tool_output_update", // before_execution shows each argument (x)
		"tool_execute_before",
		"tool_output_update", // live output
		"tool_execute_after",
		"hist_add_tool_result", "hist_add_before",
		"message_loop_end",
		// turn 2: the response tool ends the monologue
		"message_loop_start",
		"message_loop_prompts_before", "system_prompt", "message_loop_prompts_after",
		"before_main_llm_call",
		"chat_model_call_before",
		"response_stream_chunk", "response_stream",
		"chat_model_call_after",
		"reasoning_stream_end", "response_stream_end",
		"hist_add_before",
		"tool_output_update", // the response's text argument
		"tool_execute_before", "tool_execute_after",
		"message_loop_end",
		"monologue_end",
		"process_chain_end",
	}
	if diff := cmp.Diff(want, seq); diff != "" {
		t.Errorf("extension point sequence (-want +got):\n%s", diff)
	}
}

func writeScript(t *testing.T, dir, point, name, body string) {
	t.Helper()
	d := filepath.Join(dir, point)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Layers: a .disabled file in the project layer removes a built-in, and a
// user-layer script is overridden by the project's script of the same name.
func TestLayerOverrideAndDisabled(t *testing.T) {
	t.Parallel()
	ws, user := t.TempDir(), t.TempDir()
	project := filepath.Join(ws, ".zero", "extensions")
	if err := os.MkdirAll(filepath.Join(project, "message_loop_start"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "message_loop_start", "_10_iteration_no.disabled"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	userExt := filepath.Join(user, "extensions")
	writeScript(t, userExt, "message_loop_prompts_after", "_20_extra.sh", `echo '{"extras_temporary": {"who": "user layer"}}'`)
	writeScript(t, project, "message_loop_prompts_after", "_20_extra.sh", `echo '{"extras_temporary": {"who": "project layer"}}'`)

	model := &fakeModel{replies: []reply{{content: respond("ok")}}}
	sess, rec := newSession(t, setup{model: model, layers: hooks.Layers(ws, "default", user)})
	if _, err := sess.Run(runCtx(t), "hi"); err != nil {
		t.Fatal(err)
	}
	if n := loop.IterationNo(sess.Agent0()); n != 0 {
		t.Errorf("IterationNo = %d with _10_iteration_no.disabled, want 0", n)
	}
	text := model.requestText(0)
	if !strings.Contains(text, "project layer") || strings.Contains(text, "user layer") {
		t.Errorf("the project script should replace the user script; prompt:\n%s", text)
	}
	if w := rec.ofType(loop.EventWarning); len(w) != 0 {
		t.Errorf("unexpected warnings: %+v", w)
	}
}

func TestScriptRewritesToolArgs(t *testing.T) {
	t.Parallel()
	ext := t.TempDir()
	writeScript(t, ext, "tool_execute_before", "_50_rewrite", `
input=$(cat)
case "$input" in *'"tool_name":"echo"'*) echo '{"tool_args": {"say": "rewritten"}}';; esac`)
	var got any
	echo := toolFunc{"echo", func(_ context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		got = c.Args["say"]
		return loop.ToolResult{Text: "said"}, nil
	}}
	model := &fakeModel{replies: []reply{
		{content: toolReq("say", "echo", map[string]any{"say": "original"})},
		{content: respond("ok")},
	}}
	sess, rec := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, echo}, layers: []hooks.Layer{{Name: "test", Dir: ext}}})
	if _, err := sess.Run(runCtx(t), "hi"); err != nil {
		t.Fatal(err)
	}
	if got != "rewritten" {
		t.Errorf("tool got say=%v, want the script's rewritten value", got)
	}
	// As in Agent Zero, the editor is shown the request before
	// tool_execute_before (which may unmask secrets into the arguments).
	calls := rec.ofType(loop.EventToolCall)
	if len(calls) == 0 || !strings.Contains(string(calls[0].Args), "original") {
		t.Errorf("tool_call event should show the requested args: %+v", calls)
	}
}

func TestScriptBlocksTool(t *testing.T) {
	t.Parallel()
	ext := t.TempDir()
	writeScript(t, ext, "tool_execute_before", "_50_guard", `
input=$(cat)
case "$input" in *'rm -rf'*) echo '{"block": "rm -rf is not allowed here"}';; esac`)
	ran := false
	danger := toolFunc{"danger", func(context.Context, *loop.ToolCall) (loop.ToolResult, error) {
		ran = true
		return loop.ToolResult{Text: "ran"}, nil
	}}
	model := &fakeModel{replies: []reply{
		{content: toolReq("clean", "danger", map[string]any{"code": "rm -rf /"})},
		{content: respond("ok")},
	}}
	sess, rec := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, danger}, layers: []hooks.Layer{{Name: "test", Dir: ext}}})
	if _, err := sess.Run(runCtx(t), "hi"); err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Error("the blocked tool ran")
	}
	if !strings.Contains(model.requestText(1), "rm -rf is not allowed here") {
		t.Errorf("the model should see the block message; request:\n%s", model.requestText(1))
	}
	res := rec.ofType(loop.EventToolResult)
	if len(res) == 0 || res[0].Status != loop.ToolFailed {
		t.Errorf("tool_result of a blocked tool: %+v", res)
	}
}

func TestHangingScriptIsSkipped(t *testing.T) {
	t.Parallel()
	ext := t.TempDir()
	writeScript(t, ext, "message_loop_start", "_50_hang", `sleep 60`)
	model := &fakeModel{replies: []reply{{content: respond("still answered")}}}
	sess, rec := newSession(t, setup{
		model:    model,
		layers:   []hooks.Layer{{Name: "test", Dir: ext}},
		hookOpts: hooks.Options{Timeout: 300 * time.Millisecond},
	})
	got, err := sess.Run(runCtx(t), "hi")
	if err != nil || got != "still answered" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	w := rec.ofType(loop.EventWarning)
	if len(w) != 1 || !strings.Contains(w[0].Text, "_50_hang") {
		t.Errorf("want one warning naming the hanging script, got %+v", w)
	}
}

func TestMisformatLimitEndsRun(t *testing.T) {
	t.Parallel()
	model := &fakeModel{replies: []reply{
		{content: "I think we should list the files."},
		{content: "Sure! Let me just explain instead."},
		{content: "Here is my plan in plain prose, no JSON at all."},
		{content: respond("never reached")},
	}}
	sess, rec := newSession(t, setup{model: model})
	_, err := sess.Run(runCtx(t), "list files")
	if !errors.Is(err, loop.ErrMisformat) {
		t.Fatalf("Run error = %v, want ErrMisformat", err)
	}
	if !strings.Contains(err.Error(), "Here is my plan") {
		t.Errorf("error should quote the last reply: %v", err)
	}
	if n := len(model.requests()); n != 3 {
		t.Errorf("model called %d times, want 3", n)
	}
	if w := rec.ofType(loop.EventWarning); len(w) != 2 {
		t.Errorf("want 2 misformat warnings before the end, got %d", len(w))
	}
	if !strings.Contains(model.requestText(1), "not a valid tool call") {
		t.Errorf("the warning should reach the model:\n%s", model.requestText(1))
	}
	end := rec.ofType(loop.EventRunEnded)
	if len(end) != 1 || end[0].StopReason != loop.StopError || !strings.Contains(end[0].Error, "Here is my plan") {
		t.Errorf("run_ended = %+v", end)
	}
}

func TestRepeatLimitEndsRun(t *testing.T) {
	t.Parallel()
	same := toolReq("again", "noop", map[string]any{"x": 1})
	model := &fakeModel{replies: []reply{{content: same}, {content: same}, {content: same}, {content: respond("x")}}}
	calls := 0
	counting := toolFunc{"noop", func(context.Context, *loop.ToolCall) (loop.ToolResult, error) {
		calls++
		return loop.ToolResult{Text: "ok"}, nil
	}}
	sess, rec := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, counting}})
	_, err := sess.Run(runCtx(t), "go")
	if !errors.Is(err, loop.ErrRepeat) {
		t.Fatalf("Run error = %v, want ErrRepeat", err)
	}
	if calls != 1 {
		t.Errorf("a repeated request must not run the tool again: ran %d times", calls)
	}
	if len(rec.ofType(loop.EventWarning)) != 1 {
		t.Errorf("want 1 repeat warning before the third identical request ends the run, got %+v", rec.ofType(loop.EventWarning))
	}
	if !strings.Contains(err.Error(), `"tool_name":"noop"`) {
		t.Errorf("error should quote the reply: %v", err)
	}
}

func TestRepairableErrorReachesModel(t *testing.T) {
	t.Parallel()
	failing := toolFunc{"read", func(context.Context, *loop.ToolCall) (loop.ToolResult, error) {
		return loop.ToolResult{}, loop.Repairable(errors.New("file notes.txt does not exist"))
	}}
	model := &fakeModel{replies: []reply{
		{content: toolReq("read", "read", map[string]any{"path": "notes.txt"})},
		{content: respond("fixed")},
	}}
	sess, _ := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, failing}})
	if _, err := sess.Run(runCtx(t), "read notes"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(model.requestText(1), "file notes.txt does not exist") {
		t.Errorf("the repairable error should reach the model:\n%s", model.requestText(1))
	}
}

func TestCriticalErrorRetriedOnceThenEnds(t *testing.T) {
	t.Parallel()
	boom := errors.New("upstream exploded")
	model := &fakeModel{replies: []reply{{err: boom}, {content: respond("recovered")}}}
	sess, _ := newSession(t, setup{model: model})
	if got, err := sess.Run(runCtx(t), "go"); err != nil || got != "recovered" {
		t.Fatalf("one critical error should be retried: %q, %v", got, err)
	}

	model = &fakeModel{replies: []reply{{err: boom}, {err: boom}, {content: respond("never")}}}
	sess, rec := newSession(t, setup{model: model})
	_, err := sess.Run(runCtx(t), "go")
	if !errors.Is(err, boom) {
		t.Fatalf("the second critical error should end the run: %v", err)
	}
	if end := rec.ofType(loop.EventRunEnded); end[0].StopReason != loop.StopError {
		t.Errorf("run_ended = %+v", end)
	}
}

// An unknown tool is reported to the model with the list of tools.
func TestUnknownTool(t *testing.T) {
	t.Parallel()
	model := &fakeModel{replies: []reply{
		{content: toolReq("x", "teleport", map[string]any{})},
		{content: respond("ok")},
	}}
	sess, _ := newSession(t, setup{model: model})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	if text := model.requestText(1); !strings.Contains(text, "teleport") || !strings.Contains(text, "response") {
		t.Errorf("the model should hear that teleport does not exist, and what does:\n%s", text)
	}
}

func TestStreamingEventsAndEarlyStop(t *testing.T) {
	t.Parallel()
	content := `{"thoughts": ["first thought", "second thought"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "the answer"}}` +
		"\nAnd some trailing prose the model should not have sent."
	model := &fakeModel{replies: []reply{{reasoning: "hmm", content: content, chunk: 7}}}
	sess, rec := newSession(t, setup{model: model})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	if got := rec.text(loop.EventThoughtsDelta); got != "first thought\nsecond thought" {
		t.Errorf("thoughts deltas = %q", got)
	}
	if got := rec.text(loop.EventResponseDelta); got != "the answer" {
		t.Errorf("response deltas = %q", got)
	}
	if got := rec.text(loop.EventReasoningDelta); got != "hmm" {
		t.Errorf("reasoning = %q", got)
	}
	hl := rec.ofType(loop.EventHeadline)
	if len(hl) == 0 || hl[len(hl)-1].Text != "Answering" {
		t.Errorf("headline events = %+v", hl)
	}
	if len(rec.ofType(loop.EventThoughtsDelta)) < 2 {
		t.Error("thoughts should stream in several deltas")
	}
	msgs := sess.Agent0().History.Messages()
	last := msgs[len(msgs)-1]
	if !last.AI || strings.Contains(last.Content, "trailing prose") {
		t.Errorf("history should keep exactly the tool request: %+v", last)
	}
	// Events: increasing seq, session id, items.
	var prev int64
	for _, e := range rec.all() {
		if e.Seq != prev+1 || e.Session != "test" {
			t.Fatalf("event %+v after seq %d", e, prev)
		}
		prev = e.Seq
	}
	all := rec.all()
	if all[0].Type != loop.EventRunStarted || all[len(all)-1].Type != loop.EventRunEnded || all[len(all)-1].StopReason != loop.StopResponse {
		t.Errorf("first/last events: %+v ... %+v", all[0], all[len(all)-1])
	}
	if u := rec.ofType(loop.EventUsage); len(u) != 1 || u[0].Usage.TotalTokens == 0 {
		t.Errorf("usage events = %+v", u)
	}
}

// Empty tool_args are allowed, name:method is split.
func TestToolNameMethodAndEmptyArgs(t *testing.T) {
	t.Parallel()
	var gotName, gotMethod string
	var gotArgs map[string]any
	ed := toolFunc{"text_editor", func(_ context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		gotName, gotMethod, gotArgs = c.Name, c.Method, c.Args
		return loop.ToolResult{Text: "ok"}, nil
	}}
	model := &fakeModel{replies: []reply{
		{content: `{"thoughts": [], "tool_name": "text_editor:read", "tool_args": {}}`},
		{content: respond("ok")},
	}}
	sess, _ := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, ed}})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	if gotName != "text_editor" || gotMethod != "read" || gotArgs == nil || len(gotArgs) != 0 {
		t.Errorf("name=%q method=%q args=%v", gotName, gotMethod, gotArgs)
	}
}

func TestInterventionMidStream(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	model := &fakeModel{replies: []reply{
		{fn: func(ctx context.Context, fn llm.StreamFunc) (llm.Result, error) {
			partial := `{"thoughts": ["I will delete the build folder`
			if err := fn(llm.Delta{Kind: llm.Content, Text: partial}); err != nil {
				return llm.Result{Content: partial}, err
			}
			close(started)
			<-ctx.Done() // a slow model: the intervention cuts the stream
			return llm.Result{Content: partial}, context.Cause(ctx)
		}},
		{content: respond("ok, keeping the build folder")},
	}}
	sess, rec := newSession(t, setup{model: model})
	go func() {
		<-started
		if err := sess.Intervene("wait, keep the build folder"); err != nil {
			t.Error(err)
		}
	}()
	got, err := sess.Run(runCtx(t), "clean up")
	if err != nil || got != "ok, keeping the build folder" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	text := model.requestText(1)
	if !strings.Contains(text, "I will delete the build folder") {
		t.Errorf("the partial reply should be kept in history:\n%s", text)
	}
	if !strings.Contains(text, "wait, keep the build folder") {
		t.Errorf("the intervention should reach the model:\n%s", text)
	}
	if got := rec.text(loop.EventIntervention); got != "wait, keep the build folder" {
		t.Errorf("intervention events = %q: editors replaying the session need the message", got)
	}
	if end := rec.ofType(loop.EventRunEnded); end[0].StopReason != loop.StopResponse {
		t.Errorf("run_ended = %+v", end)
	}
}

func TestInterventionMidTool(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	var sawIntervened bool
	slow := toolFunc{"slow", func(ctx context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		c.Progress(ctx, "step 1 done\n")
		close(started)
		<-ctx.Done()
		sawIntervened = loop.Intervened(ctx)
		return loop.ToolResult{Text: c.Output() + "(interrupted)"}, nil
	}}
	model := &fakeModel{replies: []reply{
		{content: toolReq("slow", "slow", map[string]any{})},
		{content: respond("adjusted")},
	}}
	sess, _ := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, slow}})
	go func() {
		<-started
		_ = sess.Intervene("use the fast path instead")
	}()
	if _, err := sess.Run(runCtx(t), "work"); err != nil {
		t.Fatal(err)
	}
	if !sawIntervened {
		t.Error("the tool's context should say it was interrupted by a message, not cancelled")
	}
	text := model.requestText(1)
	for _, want := range []string{"step 1 done", "use the fast path instead"} {
		if !strings.Contains(text, want) {
			t.Errorf("request after intervention lacks %q:\n%s", want, text)
		}
	}
}

func TestCancelMidTool(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	var cancelled bool
	slow := toolFunc{"slow", func(ctx context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		c.Progress(ctx, "working\n")
		close(started)
		<-ctx.Done()
		cancelled = !loop.Intervened(ctx)
		return loop.ToolResult{Text: "partial"}, nil
	}}
	model := &fakeModel{replies: []reply{{content: toolReq("slow", "slow", map[string]any{})}}}
	sess, rec := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, slow}})
	go func() {
		<-started
		sess.Cancel()
	}()
	_, err := sess.Run(runCtx(t), "work")
	if !errors.Is(err, loop.ErrCancelled) {
		t.Fatalf("Run error = %v, want ErrCancelled", err)
	}
	if !cancelled {
		t.Error("the tool should see a cancellation, not an intervention")
	}
	end := rec.ofType(loop.EventRunEnded)
	if len(end) != 1 || end[0].StopReason != loop.StopCancelled {
		t.Errorf("run_ended = %+v", end)
	}
	// History stays consistent: the request is followed by its result.
	msgs := sess.Agent0().History.Messages()
	last := msgs[len(msgs)-1]
	if last.AI || !strings.Contains(last.Content, "partial") || !strings.Contains(last.Content, "cancelled") {
		t.Errorf("last history message = %+v", last)
	}
	// The session is usable again.
	model.replies = append(model.replies, reply{content: respond("back")})
	if got, err := sess.Run(runCtx(t), "again"); err != nil || got != "back" {
		t.Errorf("Run after cancel = %q, %v", got, err)
	}
}

func TestRunWhileRunningIsBusy(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	model := &fakeModel{replies: []reply{{fn: func(ctx context.Context, fn llm.StreamFunc) (llm.Result, error) {
		close(started)
		<-ctx.Done()
		return llm.Result{}, context.Cause(ctx)
	}}}}
	sess, _ := newSession(t, setup{model: model})
	done := make(chan error)
	go func() {
		_, err := sess.Run(runCtx(t), "one")
		done <- err
	}()
	<-started
	if _, err := sess.Run(runCtx(t), "two"); !errors.Is(err, loop.ErrBusy) {
		t.Errorf("second Run = %v, want ErrBusy", err)
	}
	sess.Cancel()
	if err := <-done; !errors.Is(err, loop.ErrCancelled) {
		t.Errorf("first Run = %v", err)
	}
	if err := sess.Intervene("late"); !errors.Is(err, loop.ErrNotRunning) {
		t.Errorf("Intervene after the run = %v, want ErrNotRunning", err)
	}
}

// A response_stream_chunk script rewrites the streamed text before the
// engine sees it (Agent Zero's secret masking works this way).
func TestScriptRewritesStreamChunk(t *testing.T) {
	t.Parallel()
	ext := t.TempDir()
	writeScript(t, ext, "response_stream_chunk", "_10_mask", `
grep -q 'hunter2' && echo '{"chunk": "{\"thoughts\": [\"masked\"], \"tool_name\": \"response\", \"tool_args\": {\"text\": \"the password is ***\"}}"}'
exit 0`)
	model := &fakeModel{replies: []reply{{content: `{"thoughts": ["x"], "tool_name": "response", "tool_args": {"text": "the password is hunter2"}}`}}}
	sess, rec := newSession(t, setup{model: model, layers: []hooks.Layer{{Name: "test", Dir: ext}}})
	got, err := sess.Run(runCtx(t), "go")
	if err != nil || got != "the password is ***" {
		t.Fatalf("Run = %q, %v; warnings %+v", got, err, rec.ofType(loop.EventWarning))
	}
	for _, m := range sess.Agent0().History.Messages() {
		if strings.Contains(m.Content, "hunter2") {
			t.Errorf("history kept the unmasked chunk: %q", m.Content)
		}
	}
}

// TestNoneCounts: a count that may be none reads as config's does, 0 is
// none (nil the default): critical_retries 0 ends the run at the first
// unexpected error, subordinate_depth 0 offers no call_subordinate.
func TestNoneCounts(t *testing.T) {
	t.Parallel()
	boom := errors.New("upstream exploded")
	model := &fakeModel{replies: []reply{{err: boom}, {content: respond("never")}}}
	sess, _ := newSession(t, setup{model: model, limits: loop.Limits{CriticalRetries: new(0)}})
	if _, err := sess.Run(runCtx(t), "go"); !errors.Is(err, boom) || len(model.requests()) != 1 {
		t.Fatalf("critical retries 0 should end the run at once: %v after %d requests", err, len(model.requests()))
	}

	model = &fakeModel{replies: []reply{
		{content: delegate("down", "go", "", false)},
		{content: respond("did it myself")},
	}}
	sess, _ = newSession(t, setup{model: model, tools: []loop.Tool{responseTool, tools.CallSubordinate{}},
		limits: loop.Limits{SubordinateDepth: new(0)}})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(model.requests()[0][0].Content, "### call_subordinate") || sess.Agent0().Subordinate != nil {
		t.Error("subordinate depth 0 should offer no delegation and start no subordinate")
	}

	// A negative count, the old spelling of none, is none too.
	model = &fakeModel{replies: []reply{{err: boom}, {content: respond("never")}}}
	sess, _ = newSession(t, setup{model: model, limits: loop.Limits{CriticalRetries: new(-1)}})
	if _, err := sess.Run(runCtx(t), "go"); !errors.Is(err, boom) {
		t.Fatalf("critical retries -1: %v", err)
	}
}
