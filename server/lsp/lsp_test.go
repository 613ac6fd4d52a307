package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

func TestInitialize(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil)
	c := start(t, env, clientOpts{})
	res := c.initialize(env.Workspace)
	caps, _ := res["capabilities"].(map[string]any)
	got := map[string]any{"executeCommandProvider": caps["executeCommandProvider"], "serverInfo": res["serverInfo"]}
	want := map[string]any{
		"executeCommandProvider": map[string]any{"commands": []any{"zero.lsp.prompt", "zero.lsp.cancel", "zero.lsp.newSession"}},
		"serverInfo":             map[string]any{"name": "zero", "version": "test"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("initialize result (-want +got):\n%s", diff)
	}
	if e := c.rpcErr("initialize", map[string]any{}); e.Code != jsonrpc2.CodeInvalidRequest {
		t.Errorf("second initialize: code %d, want %d", e.Code, jsonrpc2.CodeInvalidRequest)
	}
}

// A run that executes a command: thoughts, the tool call and its live
// output arrive as zero/event before the answer, and the run is a
// work-done progress.
func TestPromptRunsCommand(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil,
		llmtest.Reply{Match: "say hello", Reasoning: "I should run echo", ChunkSize: 3, Content: command("run echo", "echo hello-out")},
		llmtest.Reply{Match: "hello-out", Content: answer("done: hello-out")})
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	id := c.newSession()
	var res PromptResult
	c.call("zero/prompt", map[string]any{"sessionId": id, "message": "say hello"}, &res)
	if res.Usage == nil || res.Usage.Calls != 2 || res.Usage.Roles == nil || res.Usage.Roles.Chat == nil || res.Usage.Roles.Chat.Calls != 2 {
		t.Errorf("zero/prompt result's usage = %+v, want the run's two chat calls", res.Usage)
	}
	res.Usage = nil
	if diff := cmp.Diff(PromptResult{StopReason: "response", Response: "done: hello-out", Run: 1}, res); diff != "" {
		t.Errorf("zero/prompt result (-want +got):\n%s", diff)
	}
	// The answer is sent after every event of the run: they are all here.
	ns := c.snapshot()
	evs := events(ns, id)
	thought := index(evs, ofType(loop.EventThoughtsDelta))
	call := index(evs, func(e server.Event) bool { return e.Type == loop.EventToolCall && e.Tool == "code_execution_tool" })
	out := index(evs, func(e server.Event) bool {
		return e.Type == loop.EventToolOutputDelta && strings.Contains(e.Text, "hello-out")
	})
	answerAt := index(evs, func(e server.Event) bool { return e.Type == loop.EventResponse && e.Agent == 0 })
	ended := index(evs, ofType(loop.EventRunEnded))
	if thought < 0 || call < 0 || out < 0 || answerAt < 0 || ended != len(evs)-1 ||
		!(thought < call && call < out && out < answerAt) {
		t.Errorf("event order: thoughts %d, tool_call %d, output %d, response %d, run_ended %d of %d: %s",
			thought, call, out, answerAt, ended, len(evs), summary(ns))
	}
	// In order; a gap is deltas joined into the next event, so the text
	// is all there.
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq <= evs[i-1].Seq {
			t.Fatalf("events out of order: seq %d after %d", evs[i].Seq, evs[i-1].Seq)
		}
	}
	if !strings.Contains(joined(evs, loop.EventToolOutputDelta), "hello-out") {
		t.Errorf("the command's output is not all there: %q", joined(evs, loop.EventToolOutputDelta))
	}
	// Progress: created, begun with the task, a report per headline, ended
	// with the outcome.
	ps := progresses(ns)
	c.mu.Lock()
	created := append([]string(nil), c.created...)
	c.mu.Unlock()
	if len(created) != 1 || len(ps) < 3 {
		t.Fatalf("created %v, progress %+v", created, ps)
	}
	var kinds []string
	for _, p := range ps {
		if p.Token != created[0] {
			t.Errorf("progress token %q, want the created %q", p.Token, created[0])
		}
		kinds = append(kinds, p.Value["kind"].(string))
	}
	if kinds[0] != "begin" || kinds[len(kinds)-1] != "end" || !strings.Contains(strings.Join(kinds, ","), "report") {
		t.Errorf("progress kinds %v", kinds)
	}
	if ps[0].Value["title"] != "Zero" || ps[0].Value["message"] != "say hello" || ps[0].Value["cancellable"] != true {
		t.Errorf("progress begin %v", ps[0].Value)
	}
	if !strings.Contains(ps[len(ps)-1].Value["message"].(string), "done: hello-out") {
		t.Errorf("progress end %v", ps[len(ps)-1].Value)
	}
	var reported []string
	for _, p := range ps[1 : len(ps)-1] {
		reported = append(reported, p.Value["message"].(string))
	}
	if !strings.Contains(strings.Join(reported, "|"), "H: run echo") {
		t.Errorf("progress reports %v lack the headline", reported)
	}
}

// workspace/executeCommand runs the same requests, and a client-given
// workDoneToken is used instead of creating one.
func TestExecuteCommand(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil, llmtest.Reply{Content: answer("hi there")})
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	var ns newSessionResult
	c.call("workspace/executeCommand", map[string]any{"command": "zero.lsp.newSession", "arguments": []any{map[string]any{}}}, &ns)
	var res PromptResult
	c.call("workspace/executeCommand", map[string]any{"command": "zero.prompt", "workDoneToken": "tok-1",
		"arguments": []any{map[string]any{"sessionId": ns.SessionID, "message": "hello"}}}, &res)
	if res.StopReason != "response" || res.Response != "hi there" {
		t.Errorf("zero.prompt: %+v", res)
	}
	c.call("workspace/executeCommand", map[string]any{"command": "zero.lsp.cancel", "arguments": []any{map[string]any{"sessionId": ns.SessionID}}}, nil)
	ps := progresses(c.snapshot())
	if len(ps) < 2 || ps[0].Token != "tok-1" || ps[len(ps)-1].Value["kind"] != "end" {
		t.Errorf("progress with the client's token: %+v", ps)
	}
	c.mu.Lock()
	created := len(c.created)
	c.mu.Unlock()
	if created != 0 {
		t.Errorf("created %d tokens although the client gave one", created)
	}
	e := c.rpcErr("workspace/executeCommand", map[string]any{"command": "zero.prompt", "arguments": []any{map[string]any{"sessionId": ns.SessionID}}})
	if e.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(e.Message, "arguments[0].message: required") {
		t.Errorf("zero.prompt without message: %d %q", e.Code, e.Message)
	}
}

// A message sent while a run goes on is an intervention: answered at once,
// and the run takes it.
func TestIntervention(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil,
		llmtest.Reply{Match: "long task", Content: command("working slowly", "echo slow"), ChunkSize: 4, HoldAfter: 12}, // held mid-stream, its thoughts begun, until the intervention cuts it
		llmtest.Reply{Match: "also say banana", Content: answer("banana noted")},
		llmtest.Reply{Match: "and cherry", Content: answer("cherry noted")})
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	id := c.newSession()
	first := c.promptAsync("p1", map[string]any{"sessionId": id, "message": "long task"})
	c.waitFor("the run to stream", hasEvent(id, ofType(loop.EventThoughtsDelta)))
	var res PromptResult
	c.call("zero/prompt", map[string]any{"sessionId": id, "message": "also say banana"}, &res)
	if res.StopReason != "intervened" || res.Run != 1 {
		t.Errorf("prompt during a run: %+v, want intervened in run 1", res)
	}
	o := wait(t, first, "the first prompt")
	if o.err != nil || o.res.Response != "banana noted" {
		t.Errorf("first prompt: %+v %v", o.res, o.err)
	}
	// zero/intervene with no run going on says so.
	if e := c.rpcErr("zero/intervene", map[string]any{"sessionId": id, "message": "and cherry"}); e.Code != codeRequestFailed {
		t.Errorf("zero/intervene without a run: %d %q", e.Code, e.Message)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"zero/cancel", "$/cancelRequest", "window/workDoneProgress/cancel"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			// The command outlasts the wait for the prompt's end (waitLong):
			// the prompt ends because the command was stopped.
			env := newEnv(t, nil, llmtest.Reply{Match: "wait a lot", Content: command("sleeping", "sleep 600")})
			c := start(t, env, clientOpts{})
			c.initialize(env.Workspace)
			id := c.newSession()
			done := c.promptAsync("slow", map[string]any{"sessionId": id, "message": "wait a lot"})
			c.waitFor("the command to start", hasEvent(id, ofType(loop.EventToolStarted)))
			switch how {
			case "zero/cancel":
				c.call("zero/cancel", map[string]any{"sessionId": id}, nil)
			case "$/cancelRequest":
				if err := c.rc.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": "slow"}); err != nil {
					t.Fatal(err)
				}
			default:
				ps := progresses(c.snapshot())
				if len(ps) == 0 {
					t.Fatal("no progress to cancel")
				}
				if err := c.rc.Notify(context.Background(), "window/workDoneProgress/cancel", map[string]any{"token": ps[0].Token}); err != nil {
					t.Fatal(err)
				}
			}
			o := wait(t, done, "the cancelled prompt")
			if how == "$/cancelRequest" {
				var e *jsonrpc2.Error
				if !errors.As(o.err, &e) || e.Code != codeRequestCancelled {
					t.Errorf("cancelled request: %v, want code %d", o.err, codeRequestCancelled)
				}
			} else if o.err != nil || o.res.StopReason != "cancelled" {
				t.Errorf("prompt: %+v %v, want stopReason cancelled", o.res, o.err)
			}
			evs := events(c.snapshot(), id)
			if last := evs[len(evs)-1]; last.Type != loop.EventRunEnded || last.StopReason != "cancelled" {
				t.Errorf("last event %+v, want run_ended cancelled", last)
			}
		})
	}
}

func TestApproval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		answer   any
		want     string
		approved bool
	}{
		{"allow", protocol.MessageActionItem{Title: "Allow"}, "ran: approved-42", true},
		{"allow always", protocol.MessageActionItem{Title: "Allow always"}, "ran: approved-42", true},
		{"deny", protocol.MessageActionItem{Title: "Deny"}, "not allowed", false},
		{"dismissed", nil, "not allowed", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t, askCommands,
				llmtest.Reply{Match: "risky", Content: command("risky step", "echo approved-$((40+2))")},
				llmtest.Reply{Match: "approved-42", Content: answer("ran: approved-42")},
				llmtest.Reply{Match: "refused by", Content: answer("not allowed")})
			c := start(t, env, clientOpts{answer: func(protocol.ShowMessageRequestParams) any { return tt.answer }})
			c.initialize(env.Workspace)
			id := c.newSession()
			var res PromptResult
			c.call("zero/prompt", map[string]any{"sessionId": id, "message": "risky"}, &res)
			if res.Response != tt.want {
				t.Errorf("response %q, want %q", res.Response, tt.want)
			}
			c.mu.Lock()
			asked := append([]protocol.ShowMessageRequestParams(nil), c.asked...)
			c.mu.Unlock()
			want := []protocol.ShowMessageRequestParams{{
				Type:    protocol.MessageTypeWarning,
				Message: asked0Message(asked),
				Actions: []protocol.MessageActionItem{{Title: "Allow"}, {Title: "Allow always"}, {Title: "Deny"}},
			}}
			if diff := cmp.Diff(want, asked); diff != "" || !strings.HasPrefix(want[0].Message, "Zero wants to run: ") {
				t.Errorf("showMessageRequest (-want +got):\n%s", diff)
			}
			evs := events(c.snapshot(), id)
			i := index(evs, ofType(server.EventApprovalResolved))
			wantStatus := map[bool]string{true: server.ApprovalApproved, false: server.ApprovalDenied}[tt.approved]
			if i < 0 || evs[i].Status != wantStatus {
				t.Errorf("approval_resolved %v, want %s", evs, wantStatus)
			}
		})
	}
}

func asked0Message(a []protocol.ShowMessageRequestParams) string {
	if len(a) == 0 {
		return ""
	}
	return a[0].Message
}

// A client that cannot show a message request answers with zero/approve.
func TestApproveFallback(t *testing.T) {
	t.Parallel()
	env := newEnv(t, askCommands,
		llmtest.Reply{Match: "risky", Content: command("risky step", "echo approved-$((40+2))")},
		llmtest.Reply{Match: "approved-42", Content: answer("ran: approved-42")})
	c := start(t, env, clientOpts{failAsk: true})
	c.initialize(env.Workspace)
	id := c.newSession()
	done := c.promptAsync("r", map[string]any{"sessionId": id, "message": "risky"})
	ns := c.waitFor("approval_requested", hasEvent(id, ofType(server.EventApprovalRequested)))
	req := events(ns, id)[index(events(ns, id), ofType(server.EventApprovalRequested))]
	if e := c.rpcErr("zero/approve", map[string]any{"id": req.Text}); e.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(e.Message, "approve: required") {
		t.Errorf("zero/approve without approve: %d %q", e.Code, e.Message)
	}
	c.call("zero/approve", map[string]any{"id": req.Text, "approve": true}, nil)
	o := wait(t, done, "the prompt")
	if o.err != nil || o.res.Response != "ran: approved-42" {
		t.Errorf("prompt: %+v %v", o.res, o.err)
	}
	if e := c.rpcErr("zero/approve", map[string]any{"id": req.Text, "approve": true}); e.Code != jsonrpc2.CodeInvalidParams {
		t.Errorf("approving twice: %d %q", e.Code, e.Message)
	}
}

// Files the agent wrote are shown without taking focus.
func TestShowDocument(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil,
		llmtest.Reply{Match: "write it", Content: toolReply("writing", "text_editor:write", map[string]any{"path": "notes.txt", "content": "hello\n"})},
		llmtest.Reply{Match: "notes.txt", Content: answer("written")})
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	id := c.newSession()
	var res PromptResult
	c.call("zero/prompt", map[string]any{"sessionId": id, "message": "write it"}, &res)
	if res.Response != "written" {
		t.Fatalf("prompt: %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(env.Workspace, "notes.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("file: %q %v", b, err)
	}
	deadline := time.Now().Add(waitLong)
	for {
		c.mu.Lock()
		shown := append([]json.RawMessage(nil), c.shown...)
		c.mu.Unlock()
		if len(shown) > 0 {
			var got map[string]any
			_ = json.Unmarshal(shown[0], &got)
			want := map[string]any{"uri": string(uri.File(filepath.Join(env.Workspace, "notes.txt"))), "takeFocus": false}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("showDocument (-want +got):\n%s", diff)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no window/showDocument")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client that shows diffs itself turns window/showDocument off.
func TestShowDocumentsOff(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil,
		llmtest.Reply{Match: "write it", Content: toolReply("writing", "text_editor:write", map[string]any{"path": "a.txt", "content": "x"})},
		llmtest.Reply{Match: "a.txt", Content: answer("written")})
	c := start(t, env, clientOpts{initOptions: map[string]any{"showDocuments": false}})
	c.initialize(env.Workspace)
	id := c.newSession()
	c.call("zero/prompt", map[string]any{"sessionId": id, "message": "write it"}, nil)
	c.call("zero/sessions", nil, nil) // one more round trip for anything late
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.shown) != 0 {
		t.Errorf("shown %d documents, want none", len(c.shown))
	}
}

// Without the capabilities, no progress and no showDocument.
func TestNoClientCapabilities(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil,
		llmtest.Reply{Match: "write it", Content: toolReply("writing", "text_editor:write", map[string]any{"path": "a.txt", "content": "x"})},
		llmtest.Reply{Match: "a.txt", Content: answer("written")})
	c := start(t, env, clientOpts{noProgress: true, noShowDocument: true})
	c.initialize(env.Workspace)
	id := c.newSession()
	c.call("zero/prompt", map[string]any{"sessionId": id, "message": "write it"}, nil)
	c.call("zero/sessions", nil, nil) // one more round trip for anything late
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.created) != 0 || len(c.shown) != 0 || len(progresses(c.notes)) != 0 {
		t.Errorf("created %v, shown %d, progress %d", c.created, len(c.shown), len(progresses(c.notes)))
	}
}

func TestLoadSession(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil, llmtest.Reply{Match: "remember", Content: answer("remembered")})
	first := start(t, env, clientOpts{})
	first.initialize(env.Workspace)
	id := first.newSession()
	first.call("zero/prompt", map[string]any{"sessionId": id, "message": "remember this"}, nil)
	// The replay joins the deltas the live stream may have sent apart.
	want := server.Coalesce(events(first.snapshot(), id))

	second := start(t, env, clientOpts{})
	second.initialize(env.Workspace)
	var list sessionsResult
	second.call("zero/sessions", nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != id || list.Sessions[0].Title != "remember this" {
		t.Errorf("zero/sessions: %+v", list)
	}
	var res loadSessionResult
	second.call("zero/loadSession", map[string]any{"sessionId": id}, &res)
	got := events(second.snapshot(), id)
	if res.SessionID != id || res.Events != len(want) {
		t.Errorf("loadSession result %+v, want %d events", res, len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replayed events (-want +got):\n%s", diff)
	}
	if e := second.rpcErr("zero/loadSession", map[string]any{"sessionId": "nope"}); e.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(e.Message, "sessionId") {
		t.Errorf("unknown session: %d %q", e.Code, e.Message)
	}
}

// Two sessions run at once; a cancel in one leaves the other alone.
func TestTwoSessions(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil,
		llmtest.Reply{Match: "slow one", Content: command("sleeping", "sleep 30")},
		llmtest.Reply{Match: "quick one", Content: command("quick", "echo quick-out")},
		llmtest.Reply{Match: "quick-out", Content: answer("quick done")})
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	a, b := c.newSession(), c.newSession()
	slow := c.promptAsync("slow", map[string]any{"sessionId": a, "message": "slow one"})
	c.waitFor("the slow command", hasEvent(a, ofType(loop.EventToolStarted)))
	var res PromptResult
	c.call("zero/prompt", map[string]any{"sessionId": b, "message": "quick one"}, &res)
	if res.Response != "quick done" {
		t.Errorf("second session: %+v", res)
	}
	for _, e := range events(c.snapshot(), b) {
		if e.Session != b {
			t.Fatalf("event of %s among %s's", e.Session, b)
		}
	}
	c.call("zero/cancel", map[string]any{"sessionId": a}, nil)
	if o := wait(t, slow, "the slow prompt"); o.res.StopReason != "cancelled" {
		t.Errorf("slow prompt: %+v %v", o.res, o.err)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil)
	c := start(t, env, clientOpts{})
	if e := c.rpcErr("zero/sessions", nil); e.Code != codeServerNotInitialized {
		t.Errorf("before initialize: %d %q", e.Code, e.Message)
	}
	c.initialize(env.Workspace)
	id := c.newSession()
	tests := []struct {
		name, method string
		params       any
		code         int64
		msg          string
	}{
		{"unknown method", "zero/nope", nil, jsonrpc2.CodeMethodNotFound, "zero/nope"},
		{"no sessionId", "zero/prompt", map[string]any{"message": "x"}, jsonrpc2.CodeInvalidParams, "sessionId: required"},
		{"message not a string", "zero/prompt", map[string]any{"sessionId": id, "message": 5}, jsonrpc2.CodeInvalidParams, "message: must be a string"},
		{"no message", "zero/prompt", map[string]any{"sessionId": id}, jsonrpc2.CodeInvalidParams, "message: required"},
		{"params not an object", "zero/cancel", []any{1}, jsonrpc2.CodeInvalidParams, "params: must be an object"},
		{"unknown session", "zero/cancel", map[string]any{"sessionId": "nope"}, jsonrpc2.CodeInvalidParams, "sessionId: unknown session"},
		{"bad folder", "zero/newSession", map[string]any{"workspaceFolders": []any{map[string]any{"uri": "http://x/y", "name": "y"}}}, jsonrpc2.CodeInvalidParams, "workspaceFolders[0].uri"},
		{"folders not an array", "zero/newSession", map[string]any{"workspaceFolders": "x"}, jsonrpc2.CodeInvalidParams, "workspaceFolders: must be an array"},
		{"unknown profile", "zero/newSession", map[string]any{"profile": "nobody"}, jsonrpc2.CodeInvalidParams, "profile: unknown profile"},
		{"unknown command", "workspace/executeCommand", map[string]any{"command": "zero.nope"}, jsonrpc2.CodeInvalidParams, "command: unknown command"},
	}
	for _, tt := range tests {
		e := c.rpcErr(tt.method, tt.params)
		if e.Code != tt.code || !strings.Contains(e.Message, tt.msg) {
			t.Errorf("%s: got %d %q, want %d containing %q", tt.name, e.Code, e.Message, tt.code, tt.msg)
		}
	}
	// Unknown notifications are ignored and the server still answers.
	if err := c.rc.Notify(context.Background(), "zero/whatever", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	c.call("zero/sessions", nil, nil)
}

// A new session takes the folders it is given, all of them as roots.
func TestNewSessionFolders(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil)
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	extra := t.TempDir()
	var res newSessionResult
	c.call("zero/newSession", map[string]any{"profile": "developer", "workspaceFolders": []any{
		map[string]any{"uri": string(uri.File(extra)), "name": "x"},
		map[string]any{"uri": string(uri.File(env.Workspace)), "name": "w"},
	}}, &res)
	sess, err := env.Manager.Get(res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	spec := sess.Spec()
	if diff := cmp.Diff([]string{extra, env.Workspace}, spec.Roots); diff != "" || spec.Profile != "developer" {
		t.Errorf("roots (-want +got):\n%s profile %q", diff, spec.Profile)
	}
}

// Malformed frames get a parse error with id null and the server goes on.
func TestMalformedFrames(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil)
	a, b := net.Pipe()
	served := make(chan error, 1)
	go func() { served <- Serve(context.Background(), a, a, Options{Manager: env.Manager}) }()
	frames := rawFrames(b)
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(b, s); err != nil {
			t.Fatal(err)
		}
	}
	next := func() map[string]any {
		t.Helper()
		select {
		case m := <-frames:
			return m
		case <-time.After(waitLong):
			t.Fatal("no answer")
			return nil
		}
	}
	send(frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	if m := next(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	tests := []struct {
		name, in string
		id       any
		code     float64
	}{
		{"bad json", frame(`{"jsonrpc":"2.0","id":2,"method":`), nil, -32700},
		{"not a message", frame(`{"hello":1}`), nil, -32600},
		{"batch", frame(`[{"jsonrpc":"2.0","id":3,"method":"zero/sessions"}]`), nil, -32600},
		{"no length", "Content-Type: x\r\n\r\n", nil, -32700},
	}
	for _, tt := range tests {
		send(tt.in)
		m := next()
		e, _ := m["error"].(map[string]any)
		if m["id"] != tt.id || e == nil || e["code"] != tt.code {
			t.Errorf("%s: got %v, want id %v code %v", tt.name, m, tt.id, tt.code)
		}
	}
	send(frame(`{"jsonrpc":"2.0","id":4,"method":"zero/sessions"}`))
	if m := next(); m["id"] != float64(4) || m["result"] == nil {
		t.Errorf("after bad frames: %v", m)
	}
	send(frame(`{"jsonrpc":"2.0","id":5,"method":"shutdown"}`))
	if m := next(); m["id"] != float64(5) || m["error"] != nil {
		t.Errorf("shutdown: %v", m)
	}
	send(frame(`{"jsonrpc":"2.0","id":6,"method":"zero/sessions"}`))
	if m := next(); m["error"].(map[string]any)["code"] != float64(jsonrpc2.CodeInvalidRequest) {
		t.Errorf("after shutdown: %v", m)
	}
	send(frame(`{"jsonrpc":"2.0","method":"exit"}`))
	if err := wait(t, served, "Serve after exit"); err != nil {
		t.Errorf("Serve after shutdown+exit: %v", err)
	}
	_ = b.Close()
}

// Serve returns promptly on exit, on EOF and on ctx, cancelling the runs.
func TestServeEnds(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"shutdown+exit", "exit", "eof", "ctx"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			// The command outlasts the wait for the prompt's end (waitLong):
			// the prompt ends because the command was stopped.
			env := newEnv(t, nil, llmtest.Reply{Match: "wait a lot", Content: command("sleeping", "sleep 600")})
			a, b := net.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			served := make(chan error, 1)
			go func() {
				served <- Serve(ctx, a, a, Options{Manager: env.Manager, Logger: slog.New(slog.DiscardHandler)})
			}()
			c := &client{t: t, raw: b, changed: make(chan struct{})}
			c.rc = jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(b, jsonrpc2.VSCodeObjectCodec{}), c)
			defer c.rc.Close()
			c.initialize(env.Workspace)
			id := c.newSession()
			c.promptAsync("slow", map[string]any{"sessionId": id, "message": "wait a lot"})
			c.waitFor("the command", hasEvent(id, ofType(loop.EventToolStarted)))
			switch how {
			case "shutdown+exit":
				c.call("shutdown", nil, nil)
				_ = c.rc.Notify(context.Background(), "exit", nil)
			case "exit":
				_ = c.rc.Notify(context.Background(), "exit", nil)
			case "eof":
				_ = c.rc.Close()
			case "ctx":
				cancel()
			}
			err := wait(t, served, "Serve to return")
			if want := map[string]error{"exit": ErrExitWithoutShutdown}[how]; !errors.Is(err, want) || (want == nil && err != nil) {
				t.Errorf("Serve: %v, want %v", err, want)
			}
			sess, _ := env.Manager.Get(id)
			deadline := time.Now().Add(waitLong)
			for sess.Running() {
				if time.Now().After(deadline) {
					t.Fatal("the run was not cancelled")
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// joined is the text of the events of type typ, in order.
func joined(evs []server.Event, typ loop.EventType) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == typ {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

// zero/renameSession keeps the person's title; zero/closeSession lets the
// session go (it is still listed, and loads again); zero/deleteSession
// removes it.
func TestRenameCloseDeleteSession(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Store: true, Replies: []llmtest.Reply{{Match: "first", Content: answer("done")}}})
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	id := c.newSession()
	c.call("zero/prompt", map[string]any{"sessionId": id, "message": "first task"}, nil)
	c.call("zero/renameSession", map[string]any{"sessionId": id, "title": "My refactoring"}, nil)
	var list sessionsResult
	c.call("zero/sessions", nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].Title != "My refactoring" {
		t.Fatalf("after rename: %+v", list.Sessions)
	}
	if e := c.rpcErr("zero/renameSession", map[string]any{"sessionId": id, "title": "  "}); e.Code != jsonrpc2.CodeInvalidParams {
		t.Errorf("a blank title: %d %q", e.Code, e.Message)
	}
	c.call("zero/closeSession", map[string]any{"sessionId": id}, nil)
	var res loadSessionResult
	c.call("zero/loadSession", map[string]any{"sessionId": id}, &res)
	if res.SessionID != id {
		t.Fatalf("a closed session does not load again: %+v", res)
	}
	c.call("zero/deleteSession", map[string]any{"sessionId": id}, nil)
	c.call("zero/sessions", nil, &list)
	if len(list.Sessions) != 0 {
		t.Fatalf("after delete: %+v", list.Sessions)
	}
	if e := c.rpcErr("zero/deleteSession", map[string]any{"sessionId": id}); e.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(e.Message, "unknown session") {
		t.Errorf("deleting it again: %d %q", e.Code, e.Message)
	}
	// A hostile client's path-like id is no session, and removes nothing.
	keep := filepath.Join(env.Workspace, "src")
	if err := os.MkdirAll(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	if e := c.rpcErr("zero/deleteSession", map[string]any{"sessionId": "../" + filepath.Base(env.Workspace) + "/src"}); e.Code != jsonrpc2.CodeInvalidParams {
		t.Errorf("a path-like id: %d %q", e.Code, e.Message)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("deleting a path-like session id touched the workspace: %v", err)
	}
}

// TestPlanMode: modes are advertised; a session made in plan mode refuses
// a command saying so and is listed as in plan mode; zero/setMode switches
// it back, every client gets mode_changed, and the command runs; a mode
// that does not exist is invalid params.
func TestPlanMode(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Store: true, Replies: []llmtest.Reply{
		{Match: "PLAN-1", Content: servertest.Command("try it", "touch ran.txt")},
		{Match: "plan mode is on", Content: answer("1. touch ran.txt")},
		{Match: "ACT-1", Content: servertest.Command("do it", "touch ran.txt")},
		{Content: answer("done")},
	}})
	c := start(t, env, clientOpts{})
	init := c.initialize(env.Workspace)
	if zc := init["capabilities"].(map[string]any)["experimental"].(map[string]any)["zero"].(map[string]any); fmt.Sprint(zc["modes"]) == "" || !strings.Contains(fmt.Sprint(zc["modes"]), "plan") {
		t.Fatalf("modes not advertised: %v", zc["modes"])
	}
	var ns newSessionResult
	c.call("zero/newSession", map[string]any{"mode": "plan"}, &ns)
	var res PromptResult
	c.call("zero/prompt", map[string]any{"sessionId": ns.SessionID, "message": "PLAN-1: make it"}, &res)
	if res.Response != "1. touch ran.txt" {
		t.Fatalf("plan mode answered %+v", res)
	}
	if _, err := os.Stat(filepath.Join(env.Workspace, "ran.txt")); err == nil {
		t.Fatal("a command ran in plan mode")
	}
	var list sessionsResult
	c.call("zero/sessions", nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].Mode != "plan" {
		t.Fatalf("sessions: %+v", list.Sessions)
	}
	c.call("zero/setMode", map[string]any{"sessionId": ns.SessionID, "mode": "default"}, nil)
	c.waitFor("mode_changed", hasEvent(ns.SessionID, func(e server.Event) bool { return e.Type == server.EventModeChanged && e.Text == "default" }))
	c.call("zero/prompt", map[string]any{"sessionId": ns.SessionID, "message": "ACT-1: go"}, &res)
	if _, err := os.Stat(filepath.Join(env.Workspace, "ran.txt")); err != nil {
		t.Errorf("the command did not run in the default mode: %v", err)
	}
	for _, bad := range []map[string]any{{"sessionId": ns.SessionID, "mode": "yolo"}, {"sessionId": ns.SessionID}} {
		if e := c.rpcErr("zero/setMode", bad); e.Code != jsonrpc2.CodeInvalidParams {
			t.Errorf("zero/setMode %v: %d %q", bad, e.Code, e.Message)
		}
	}
	if e := c.rpcErr("zero/newSession", map[string]any{"mode": "yolo"}); e.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(e.Message, "mode") {
		t.Errorf("zero/newSession with mode yolo: %d %q", e.Code, e.Message)
	}
}

// zero/commands lists the workspace's saved commands; zero/prompt with
// "/name arguments" runs one, its text expanded and the run narrowed to
// its allowed-tools; a message naming no command goes as it is.
func TestSavedCommands(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	dir := filepath.Join(ws, ".zero", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fix.md"), []byte("---\ndescription: Fix an issue\nargument-hint: ISSUE\nallowed-tools: [text_editor]\n---\nFIX-CMD issue $1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := servertest.New(t, servertest.Options{Workspace: ws, Replies: []llmtest.Reply{
		{Match: "FIX-CMD issue 42", Content: servertest.Command("try it", "touch ran.txt")},
		{Match: "allows only these tools", Content: answer("refused")},
		{Match: "/nosuch", Content: answer("plain text")},
	}})
	c := start(t, env, clientOpts{})
	c.initialize(ws)
	var list commandsResult
	c.call("zero/commands", map[string]any{}, &list) // before any session: the workspace's
	if len(list.Commands) != 1 {
		t.Fatalf("zero/commands without a session = %+v", list.Commands)
	}
	var ns newSessionResult
	c.call("zero/newSession", map[string]any{}, &ns)
	c.call("zero/commands", map[string]any{"sessionId": ns.SessionID}, &list)
	if len(list.Commands) != 1 || list.Commands[0] != (server.Command{Name: "fix", Description: "Fix an issue", Hint: "ISSUE", Source: ".zero/commands/fix.md"}) {
		t.Fatalf("zero/commands = %+v", list.Commands)
	}
	var res PromptResult
	c.call("zero/prompt", map[string]any{"sessionId": ns.SessionID, "message": "/fix 42"}, &res)
	if res.Response != "refused" {
		t.Fatalf("/fix answered %+v", res)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran.txt")); err == nil {
		t.Fatal("the command's allowed-tools was widened")
	}
	c.call("zero/prompt", map[string]any{"sessionId": ns.SessionID, "message": "/nosuch thing"}, &res)
	if res.Response != "plain text" {
		t.Errorf("a message naming no command: %+v", res)
	}
	if e := c.rpcErr("zero/commands", map[string]any{"sessionId": "nope"}); e.Code == 0 {
		t.Error("zero/commands of no session did not fail")
	}
}
