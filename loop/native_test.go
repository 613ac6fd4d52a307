package loop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/tools"
	"github.com/zeroagent/zero/tools/texteditor"
)

// nativeEnv is a session over the real model client and the scripted
// server, with the response tool and text_editor, in a workspace holding
// a.txt and b.txt.
type nativeEnv struct {
	srv     *llmtest.Server
	client  *llm.Client
	sess    *loop.Session
	ws      string
	journal *recordingJournal
	rec     *recorder
}

func newNativeEnv(t *testing.T, protocol string, replies ...llmtest.Reply) *nativeEnv {
	t.Helper()
	e := &nativeEnv{srv: llmtest.NewServer(t, replies...), ws: t.TempDir(), journal: &recordingJournal{}, rec: &recorder{}}
	for name, text := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"} {
		if err := os.WriteFile(filepath.Join(e.ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	// A model name of the test's own: the endpoint's refusal of tools is
	// remembered per endpoint and model for the process.
	e.client, err = llm.New(llm.Options{Model: "m-" + t.Name(), BaseURL: e.srv.URL(), APIKey: "k", RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e.sess = e.session(protocol)
	return e
}

func (e *nativeEnv) session(protocol string) *loop.Session {
	return loop.NewSession("native", loop.Config{
		Setup: loop.Setup{Model: e.client, Prompts: profiles.New(), ToolProtocol: protocol,
			Tools: []loop.Tool{tools.Response{}, texteditor.New(e.ws)}},
		Workspace: e.ws,
		Journal:   e.journal,
		Limits:    loop.Limits{CriticalRetryDelay: time.Millisecond},
	}, e.rec.sink)
}

// recordingJournal keeps the history changes of agent 0.
type recordingJournal struct {
	mu   sync.Mutex
	msgs []loop.HistoryMessage
}

func (j *recordingJournal) AddMessage(agent int, m loop.HistoryMessage) {
	if agent == 0 {
		j.mu.Lock()
		j.msgs = append(j.msgs, m)
		j.mu.Unlock()
	}
}
func (j *recordingJournal) AddSummary(int, loop.HistorySummary) {}
func (j *recordingJournal) CountTokens(int, int, int)           {}

func (j *recordingJournal) state() loop.HistoryState {
	j.mu.Lock()
	defer j.mu.Unlock()
	return loop.HistoryState{Messages: slices.Clone(j.msgs)}
}

func read(id, path string) llmtest.ScriptedCall {
	return llmtest.ScriptedCall{ID: id, Name: "text_editor_read", Arguments: `{"path": "` + path + `"}`}
}

// TestNativeCalls: one call, then several in one answer, then an answer in
// text: each call runs with the events the JSON protocol gives, its result
// returns as a tool message with its id, and the text is the answer.
func TestNativeCalls(t *testing.T) {
	e := newNativeEnv(t, loop.ProtocolNative,
		llmtest.Reply{ToolCalls: []llmtest.ScriptedCall{read("c1", "b.txt")}},
		llmtest.Reply{Content: "Reading both files.", ToolCalls: []llmtest.ScriptedCall{read("c2", "a.txt"), read("c3", "b.txt")}, ChunkSize: 5},
		llmtest.Reply{Content: "a.txt says alpha and b.txt says beta."},
	)
	answer, err := e.sess.Run(runCtx(t), "what do a.txt and b.txt say?")
	if err != nil {
		t.Fatal(err)
	}
	if answer != "a.txt says alpha and b.txt says beta." {
		t.Errorf("answer = %q", answer)
	}

	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	first := reqs[0]
	for _, want := range []string{"text_editor_read", "text_editor_write", "text_editor_patch", "response"} {
		if !slices.Contains(first.Tools, want) {
			t.Errorf("the request does not offer %s: %v", want, first.Tools)
		}
	}
	sys := first.Messages[0].Content
	if !strings.Contains(sys, "## Calling tools") || strings.Contains(sys, "## Reply format") || strings.Contains(sys, "### text_editor") {
		t.Errorf("the native system prompt teaches the JSON protocol or lists the tools:\n%s", sys)
	}
	body := string(first.Body)
	if strings.Contains(body, `\"tool_name\"`) || strings.Contains(body, "text_editor:read") {
		t.Error("a function's description shows a JSON-protocol example or a name the API refuses")
	}
	if n := strings.Count(body, "patch rules"); n != 1 {
		t.Errorf("text_editor's prompt is sent %d times, want once (its other methods point to it)", n)
	}

	last := reqs[2].Messages
	var calls []string
	results := map[string]string{}
	for _, m := range last {
		for _, c := range m.ToolCalls {
			calls = append(calls, c.ID+" "+c.Name+" "+c.Arguments)
		}
		if m.Role == llm.Tool {
			results[m.ToolCallID] = m.Content
		}
	}
	want := []string{`c1 text_editor_read {"path": "b.txt"}`, `c2 text_editor_read {"path": "a.txt"}`, `c3 text_editor_read {"path": "b.txt"}`}
	if !slices.Equal(calls, want) {
		t.Errorf("calls sent back = %q, want %q", calls, want)
	}
	if !strings.Contains(results["c2"], "alpha") || !strings.Contains(results["c3"], "beta") || len(results) != 3 {
		t.Errorf("results = %q", results)
	}

	var toolCalls []string
	for _, ev := range e.rec.ofType(loop.EventToolCall) {
		toolCalls = append(toolCalls, ev.Tool+":"+ev.Method+" "+ev.Title)
	}
	if !slices.Equal(toolCalls, []string{"text_editor:read text_editor:read", "text_editor:read Reading both files.", "text_editor:read text_editor:read", "response: response"}) {
		t.Errorf("tool calls: %q", toolCalls)
	}
	if got := len(e.rec.ofType(loop.EventToolResult)); got != 4 {
		t.Errorf("%d tool results, want 4 (three reads and the answer)", got)
	}
	if hl := e.rec.text(loop.EventHeadline); hl != "Reading both files." {
		t.Errorf("headline = %q", hl)
	}
	if th := e.rec.text(loop.EventThoughtsDelta); th != "Reading both files." {
		t.Errorf("thoughts = %q", th)
	}
	if resp := e.rec.ofType(loop.EventResponse); len(resp) != 1 || resp[0].Text != answer {
		t.Errorf("response events = %+v", resp)
	}

	// The store's copy: the calls and their results, by id.
	var stored []string
	for _, m := range e.journal.state().Messages {
		switch {
		case len(m.Calls) > 0:
			for _, c := range m.Calls {
				stored = append(stored, "call "+c.ID+" "+c.Name)
			}
		case m.CallID != "":
			stored = append(stored, "result "+m.CallID)
		}
	}
	if !slices.Equal(stored, []string{"call c1 text_editor:read", "result c1", "call c2 text_editor:read", "call c3 text_editor:read", "result c2", "result c3"}) {
		t.Errorf("stored = %q", stored)
	}
}

// TestNativeLongAnswerStreams: an answer without calls streams as the
// answer once it is long enough to be one, and is not also shown as
// thoughts.
func TestNativeLongAnswerStreams(t *testing.T) {
	long := strings.Repeat("All is well here. ", 30)
	e := newNativeEnv(t, loop.ProtocolNative, llmtest.Reply{Content: long, ChunkSize: 7})
	answer, err := e.sess.Run(runCtx(t), "how is it?")
	if err != nil || answer != strings.TrimSpace(long) {
		t.Fatalf("answer %q, err %v", answer, err)
	}
	if got := e.rec.text(loop.EventResponseDelta); got != long {
		t.Errorf("streamed answer = %q", got)
	}
	if th := e.rec.text(loop.EventThoughtsDelta); th != "" {
		t.Errorf("thoughts = %q", th)
	}
}

// TestNativeHistoryAcrossProtocols: a session restored from its stored
// history goes on in either protocol: natively its calls are sent back as
// calls, in the JSON protocol as Agent Zero's tool requests and results.
func TestNativeHistoryAcrossProtocols(t *testing.T) {
	e := newNativeEnv(t, loop.ProtocolNative,
		llmtest.Reply{ToolCalls: []llmtest.ScriptedCall{read("c1", "a.txt")}},
		llmtest.Reply{Content: "alpha."},
	)
	if _, err := e.sess.Run(runCtx(t), "read a.txt"); err != nil {
		t.Fatal(err)
	}
	st := e.journal.state()
	for _, proto := range []string{loop.ProtocolJSON, loop.ProtocolNative} {
		e.srv.Push(llmtest.Reply{Content: `{"tool_name": "response", "tool_args": {"text": "again"}}`})
		sess := e.session(proto)
		if err := sess.RestoreHistory(0, st); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.Run(runCtx(t), "and again?"); err != nil {
			t.Fatal(err)
		}
		reqs := e.srv.Requests()
		msgs := reqs[len(reqs)-1].Messages
		var roles []string
		for _, m := range msgs {
			roles = append(roles, string(m.Role))
		}
		text := ""
		for _, m := range msgs {
			text += m.Content + "\n"
		}
		switch proto {
		case loop.ProtocolJSON:
			if slices.Contains(roles, "tool") || !strings.Contains(text, `{"tool_name": "text_editor:read", "tool_args": {"path": "a.txt"}}`) {
				t.Errorf("JSON protocol: roles %v, text:\n%s", roles, text)
			}
		case loop.ProtocolNative:
			if !slices.Contains(roles, "tool") || msgs[2].ToolCalls[0].Name != "text_editor_read" {
				t.Errorf("native: roles %v, messages %+v", roles, msgs)
			}
		}
	}
}

// TestNativeApprovals: the approval gate decides each call; a refused
// call's result says so, under its id, and the next call still runs.
func TestNativeApprovals(t *testing.T) {
	e := newNativeEnv(t, loop.ProtocolNative,
		llmtest.Reply{ToolCalls: []llmtest.ScriptedCall{
			{ID: "w1", Name: "text_editor_write", Arguments: `{"path": "c.txt", "content": "gamma\n"}`},
			read("r1", "a.txt"),
		}},
		llmtest.Reply{Content: "done"},
	)
	var asked []string
	e.sess.SetGate(func(_ context.Context, p *loop.ToolBeforePayload) error {
		asked = append(asked, p.ToolName+":"+p.Method+" "+p.Kind)
		if p.Kind == "edit" {
			p.Block = "the user refused this edit"
		}
		return nil
	})
	if _, err := e.sess.Run(runCtx(t), "write c.txt"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []string{"text_editor:write edit", "text_editor:read read", "response: think"}) {
		t.Errorf("the gate was asked %q", asked)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "c.txt")); !os.IsNotExist(err) {
		t.Error("the refused write ran")
	}
	msgs := e.srv.Requests()[1].Messages
	results := map[string]string{}
	for _, m := range msgs {
		if m.Role == llm.Tool {
			results[m.ToolCallID] = m.Content
		}
	}
	if !strings.Contains(results["w1"], "the user refused this edit") || !strings.Contains(results["r1"], "alpha") {
		t.Errorf("results = %q", results)
	}
}

// TestAutoFallsBackToJSON: under auto, an endpoint that refuses tools gets
// the same turn again in the JSON protocol, with a warning; the refusal is
// remembered, so the next run does not offer tools.
func TestAutoFallsBackToJSON(t *testing.T) {
	e := newNativeEnv(t, loop.ProtocolAuto,
		llmtest.Reply{Status: 400, Message: "registry.ollama.ai/library/gemma:2b does not support tools"},
		llmtest.Reply{Content: `{"thoughts": ["answer"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "hi"}}`},
		llmtest.Reply{Content: `{"tool_name": "response", "tool_args": {"text": "hi again"}}`},
	)
	if answer, err := e.sess.Run(runCtx(t), "hello"); err != nil || answer != "hi" {
		t.Fatalf("answer %q, err %v", answer, err)
	}
	if w := e.rec.text(loop.EventWarning); !strings.Contains(w, "refused native tool calls") || !strings.Contains(w, "JSON protocol") {
		t.Errorf("warning = %q", w)
	}
	if answer, err := e.sess.Run(runCtx(t), "again"); err != nil || answer != "hi again" {
		t.Fatalf("answer %q, err %v", answer, err)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 || len(reqs[0].Tools) == 0 || len(reqs[1].Tools) != 0 || len(reqs[2].Tools) != 0 {
		t.Fatalf("tools offered per request: %v", func() (n []int) {
			for _, r := range reqs {
				n = append(n, len(r.Tools))
			}
			return
		}())
	}
	if sys := reqs[1].Messages[0].Content; !strings.Contains(sys, "## Reply format") || !strings.Contains(sys, "### text_editor") {
		t.Errorf("the retry's system prompt is not the JSON protocol's:\n%s", sys)
	}
}

// TestNativeHostileReplies: what real servers and confused or hostile
// models send is handled, never crashing the run and never losing the
// pairing of calls and results.
func TestNativeHostileReplies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reply  llmtest.Reply
		result string // in the result of the first call, or the warning
	}{
		{"unknown function", llmtest.Reply{ToolCalls: []llmtest.ScriptedCall{{ID: "x", Name: "rm_rf", Arguments: `{}`}}}, "rm_rf"},
		{"arguments not JSON", llmtest.Reply{ToolCalls: []llmtest.ScriptedCall{{ID: "x", Name: "text_editor_read", Arguments: `path=a.txt`}}}, "not a JSON object"},
		{"arguments cut", llmtest.Reply{ToolCalls: []llmtest.ScriptedCall{{ID: "x", Name: "text_editor_read", Arguments: `{"path": "a.t`}}}, "ended before"},
		{"null arguments", llmtest.Reply{ToolCallStyle: "null_arguments", ToolCalls: []llmtest.ScriptedCall{{ID: "x", Name: "text_editor_read", Arguments: `{"path": "a.txt"}`}}}, "alpha"},
		{"whole calls", llmtest.Reply{ToolCallStyle: "whole", ToolCalls: []llmtest.ScriptedCall{read("x", "a.txt")}}, "alpha"},
		{"no index", llmtest.Reply{ToolCallStyle: "no_index", ToolCalls: []llmtest.ScriptedCall{read("x", "a.txt"), read("y", "b.txt")}}, "alpha"},
		{"path outside", llmtest.Reply{ToolCalls: []llmtest.ScriptedCall{read("x", "../../etc/passwd")}}, "outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newNativeEnv(t, loop.ProtocolNative, tc.reply, llmtest.Reply{Content: "done"})
			if _, err := e.sess.Run(runCtx(t), "go"); err != nil {
				t.Fatal(err)
			}
			msgs := e.srv.Requests()[1].Messages
			var calls, results []string
			first := ""
			for _, m := range msgs {
				for _, c := range m.ToolCalls {
					calls = append(calls, c.ID)
				}
				if m.Role == llm.Tool {
					results = append(results, m.ToolCallID)
					if first == "" {
						first = m.Content
					}
				}
			}
			if !slices.Equal(calls, results) {
				t.Errorf("calls %v, results %v", calls, results)
			}
			if !strings.Contains(first+e.rec.text(loop.EventWarning), tc.result) {
				t.Errorf("result %q and warnings %q lack %q", first, e.rec.text(loop.EventWarning), tc.result)
			}
		})
	}
}

// TestNativeTextFormats: a model offered functions that still writes
// Agent Zero's JSON request, or a server that leaves Hermes' <tool_call>
// blocks in the text, still gets its call run.
func TestNativeTextFormats(t *testing.T) {
	for name, reply := range map[string]llmtest.Reply{
		"json request":   {Content: `{"thoughts": ["read it"], "headline": "Reading a.txt", "tool_name": "text_editor:read", "tool_args": {"path": "a.txt"}}`},
		"tool_call tags": {ToolCallsInText: true, ToolCalls: []llmtest.ScriptedCall{read("", "a.txt")}},
	} {
		t.Run(name, func(t *testing.T) {
			e := newNativeEnv(t, loop.ProtocolNative, reply, llmtest.Reply{Content: "alpha it is"})
			answer, err := e.sess.Run(runCtx(t), "read a.txt")
			if err != nil || answer != "alpha it is" {
				t.Fatalf("answer %q, err %v", answer, err)
			}
			text := ""
			for _, m := range e.srv.Requests()[1].Messages {
				text += m.Content
			}
			if !strings.Contains(text, "alpha") {
				t.Errorf("the read's result did not reach the model:\n%s", text)
			}
			if r := e.rec.text(loop.EventResponseDelta); strings.Contains(r, "tool_call") || strings.Contains(r, "tool_name") {
				t.Errorf("the call was shown as the answer: %q", r)
			}
		})
	}
}

// TestNativeJSONAnswer: with native calls, an answer that is JSON but no
// tool request (the user asked for JSON) is the answer.
func TestNativeJSONAnswer(t *testing.T) {
	e := newNativeEnv(t, loop.ProtocolNative, llmtest.Reply{Content: "```json\n{\"name\": \"zero\", \"ok\": true}\n```"})
	answer, err := e.sess.Run(runCtx(t), "give me a JSON object")
	if err != nil || answer != "```json\n{\"name\": \"zero\", \"ok\": true}\n```" {
		t.Fatalf("answer %q, err %v", answer, err)
	}
	if w := e.rec.text(loop.EventWarning); w != "" {
		t.Errorf("warning = %q", w)
	}
}

// TestNativeEmptyReplies: replies with nothing in them end the run as the
// misformat limit says, each one told to the model.
func TestNativeEmptyReplies(t *testing.T) {
	e := newNativeEnv(t, loop.ProtocolNative, llmtest.Reply{}, llmtest.Reply{Reasoning: "hmm"}, llmtest.Reply{Content: "  \n"})
	_, err := e.sess.Run(runCtx(t), "go")
	if err == nil || !strings.Contains(err.Error(), "were not usable") {
		t.Fatalf("err = %v", err)
	}
	if n := len(e.srv.Requests()); n != 3 {
		t.Errorf("%d requests", n)
	}
	if !strings.Contains(e.srv.Requests()[1].Messages[len(e.srv.Requests()[1].Messages)-1].Content, "Your reply was empty") {
		t.Error("the model was not told its reply was empty")
	}
}

var _ = json.Valid

// capturingExec records the arguments code_execution_tool is run with.
type capturingExec struct {
	mu   sync.Mutex
	args []map[string]any
}

func (*capturingExec) Name() string       { return "code_execution_tool" }
func (*capturingExec) Kind(string) string { return "execute" }
func (c *capturingExec) Execute(_ context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	c.mu.Lock()
	c.args = append(c.args, call.Args)
	c.mu.Unlock()
	code, _ := call.Args["code"].(string)
	return loop.ToolResult{Text: "ran: " + code}, nil
}

// TestNativeSecrets: a native call's arguments are masked and expanded as
// the JSON protocol's are: an alias becomes its value for the tool only,
// and a value the model writes out (a hostile model, split across pieces)
// reaches no event, no history and no request as itself.
func TestNativeSecrets(t *testing.T) {
	srv := llmtest.NewServer(t,
		llmtest.Reply{ChunkSize: 3, ToolCalls: []llmtest.ScriptedCall{
			{ID: "s1", Name: "code_execution_tool", Arguments: `{"runtime": "terminal", "code": "deploy --token §§secret(API_TOKEN)"}`},
			{ID: "s2", Name: "code_execution_tool", Arguments: `{"runtime": "terminal", "code": "echo ` + secretToken + ` \u0022` + jsonEscaped(secretToken) + `\u0022"}`},
			{ID: "s3", Name: "response", Arguments: `{"text": "the token is ` + secretToken + `"}`},
		}},
	)
	client, err := llm.New(llm.Options{Model: "m", BaseURL: srv.URL(), APIKey: "k", RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	exec := &capturingExec{}
	var j recordingJournal
	rec := &recorder{}
	sess := loop.NewSession("sec", loop.Config{
		Setup:   loop.Setup{Model: client, Prompts: profiles.New(), ToolProtocol: loop.ProtocolNative, Tools: []loop.Tool{tools.Response{}, exec}},
		Secrets: secretSet(t),
		Journal: &j,
		Limits:  loop.Limits{CriticalRetryDelay: time.Millisecond},
	}, rec.sink)
	answer, err := sess.Run(runCtx(t), "deploy")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(answer, secretToken) {
		t.Errorf("the answer holds the value: %q", answer)
	}
	if len(exec.args) != 2 || exec.args[0]["code"] != "deploy --token "+secretToken {
		t.Fatalf("the tool got %v, want the value in place of the alias", exec.args)
	}
	for _, ev := range rec.all() {
		raw, _ := json.Marshal(ev)
		if strings.Contains(string(raw), secretToken) {
			t.Errorf("event %s holds the value: %s", ev.Type, raw)
		}
	}
	for _, m := range j.state().Messages {
		raw, _ := json.Marshal(m)
		if strings.Contains(string(raw), secretToken) {
			t.Errorf("history holds the value: %s", raw)
		}
		for _, c := range m.Calls { // decoded: a value written in escapes is the value
			var args map[string]any
			if err := json.Unmarshal([]byte(c.Args), &args); err != nil || strings.Contains(fmt.Sprint(args), secretToken) {
				t.Errorf("a call in history holds the value (%v): %s", err, c.Args)
			}
		}
	}
}

// TestAutoFallsBackWithAnyModel: a model that does not remember refusals
// itself still gets the JSON protocol after its endpoint refused tools,
// for the rest of the session.
func TestAutoFallsBackWithAnyModel(t *testing.T) {
	model := &fakeModel{replies: []reply{
		{err: &llm.APIError{StatusCode: 400, Message: "model does not support tools"}},
		{content: respond("one")},
		{content: respond("two")},
	}}
	sess, rec := newSession(t, setup{model: model, protocol: loop.ProtocolAuto})
	for _, want := range []string{"one", "two"} {
		if answer, err := sess.Run(runCtx(t), "hi"); err != nil || answer != want {
			t.Fatalf("answer %q, err %v", answer, err)
		}
	}
	if n := len(model.requests()); n != 3 {
		t.Errorf("%d requests, want 3 (the refused one, then one per run)", n)
	}
	if !strings.Contains(rec.text(loop.EventWarning), "refused native tool calls") {
		t.Error("no warning")
	}
}

// jsonEscaped writes every character of s as a \u escape, as a model
// hiding a value from a text masker would.
func jsonEscaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, "\\u%04x", r)
	}
	return b.String()
}

// nativeCalls is a fake model's answer with native calls.
func nativeCalls(calls ...llm.ToolCall) reply {
	return reply{fn: func(_ context.Context, fn llm.StreamFunc) (llm.Result, error) {
		for i, c := range calls {
			if err := fn(llm.Delta{Kind: llm.ToolCallArgs, Call: i, ID: c.ID, Name: c.Name, Text: c.Arguments}); err != nil {
				return llm.Result{}, err
			}
		}
		return llm.Result{ToolCalls: calls, FinishReason: "tool_calls"}, nil
	}}
}

// TestNativeInterventionMidCall: a message that comes while the first of
// two native calls runs interrupts it; its output so far is its result,
// the second call's result says it did not run, and the next request
// pairs both calls with their results, then the message.
func TestNativeInterventionMidCall(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	slow := toolFunc{"slow", func(ctx context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		c.Progress(ctx, "step 1 done\n")
		close(started)
		<-ctx.Done()
		return loop.ToolResult{Text: c.Output() + "(interrupted)"}, nil
	}}
	model := &fakeModel{replies: []reply{
		nativeCalls(llm.ToolCall{ID: "a", Name: "slow", Arguments: `{}`}, llm.ToolCall{ID: "b", Name: "noop", Arguments: `{"x": 1}`}),
		{content: "adjusted"},
	}}
	sess, _ := newSession(t, setup{model: model, protocol: loop.ProtocolNative, tools: []loop.Tool{responseTool, slow, noopTool("noop")}})
	go func() {
		<-started
		_ = sess.Intervene("use the fast path instead")
	}()
	if answer, err := sess.Run(runCtx(t), "work"); err != nil || answer != "adjusted" {
		t.Fatalf("Run = %q, %v", answer, err)
	}
	msgs := model.requests()[1]
	var shape []string
	for _, m := range msgs[1:] {
		switch {
		case len(m.ToolCalls) > 0:
			shape = append(shape, "calls")
		case m.Role == llm.Tool:
			shape = append(shape, "result "+m.ToolCallID)
		default:
			shape = append(shape, string(m.Role))
		}
	}
	if !slices.Equal(shape, []string{"user", "calls", "result a", "result b", "user"}) {
		t.Fatalf("messages: %v", shape)
	}
	if !strings.Contains(msgs[3].Content, "step 1 done") || !strings.Contains(msgs[4].Content, "not run") ||
		!strings.Contains(msgs[5].Content, "use the fast path instead") {
		t.Errorf("results and message: %q / %q / %q", msgs[3].Content, msgs[4].Content, msgs[5].Content)
	}
}

// TestNativeSubordinate: a native call of call_subordinate runs a
// subordinate, whose own answer in text comes back as the call's result.
func TestNativeSubordinate(t *testing.T) {
	t.Parallel()
	model := &fakeModel{replies: []reply{
		nativeCalls(llm.ToolCall{ID: "d", Name: "call_subordinate", Arguments: `{"message": "count the files", "profile": "developer"}`}),
		{content: "There are 3 files."},       // the subordinate's answer
		{content: "The subordinate found 3."}, // agent 0's
	}}
	sess, rec := newSession(t, setup{model: model, protocol: loop.ProtocolNative, tools: []loop.Tool{responseTool, tools.CallSubordinate{}}})
	if answer, err := sess.Run(runCtx(t), "how many files?"); err != nil || answer != "The subordinate found 3." {
		t.Fatalf("Run = %q, %v", answer, err)
	}
	if n := len(rec.ofType(loop.EventSubordinateStarted)); n != 1 {
		t.Errorf("%d subordinates started", n)
	}
	last := model.requests()[2]
	var result string
	for _, m := range last {
		if m.Role == llm.Tool && m.ToolCallID == "d" {
			result = m.Content
		}
	}
	if !strings.Contains(result, "There are 3 files.") {
		t.Errorf("the call's result = %q", result)
	}
}

// TestNativeTooManyCalls: an answer with more calls than run (a hostile or
// looping model) has the first 64 run and every other one answered as not
// run, each call still paired with its result, and the user told once.
func TestNativeTooManyCalls(t *testing.T) {
	t.Parallel()
	var calls []llm.ToolCall
	for i := range 70 {
		calls = append(calls, llm.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "noop", Arguments: fmt.Sprintf(`{"i": %d}`, i)})
	}
	var ran atomic.Int32
	counting := toolFunc{"noop", func(context.Context, *loop.ToolCall) (loop.ToolResult, error) {
		ran.Add(1)
		return loop.ToolResult{Text: "ok"}, nil
	}}
	model := &fakeModel{replies: []reply{nativeCalls(calls...), {content: "done"}}}
	sess, rec := newSession(t, setup{model: model, protocol: loop.ProtocolNative, tools: []loop.Tool{responseTool, counting}})
	if answer, err := sess.Run(runCtx(t), "go"); err != nil || answer != "done" {
		t.Fatalf("Run = %q, %v", answer, err)
	}
	if n := ran.Load(); n != 64 {
		t.Errorf("%d calls ran, want 64", n)
	}
	results, notRun := 0, 0
	for _, m := range model.requests()[1] {
		if m.Role == llm.Tool {
			results++
			if strings.Contains(m.Content, "not run") {
				notRun++
			}
		}
	}
	if results != 70 || notRun != 6 {
		t.Errorf("%d results, %d not run; want 70 and 6", results, notRun)
	}
	if w := rec.ofType(loop.EventWarning); len(w) != 1 || !strings.Contains(w[0].Text, "70 calls") {
		t.Errorf("warnings = %+v", w)
	}
}
